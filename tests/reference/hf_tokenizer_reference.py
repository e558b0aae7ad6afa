#!/usr/bin/env python3
"""Independent references for the tokenizer-format tests: Hugging Face tokenizer.json (byte-level BPE) and
SentencePiece tokenizer.model.

tokenizer.json is implemented here from the format's definition (Hugging Face `tokenizers`: the added vocabulary
split before and after normalization with leftmost-longest matches, the NFC/NFD/NFKC/NFKD normalizers, the Split,
Digits and ByteLevel pre-tokenizers with their split behaviors, the BPE model merging the lowest-ranked adjacent
pair (leftmost first) one merge at a time, the ByteLevel decoder), sharing no code with the C++ reader. Regexes
run in Python's `regex` module, normalization in `unicodedata`. One rule goes beyond the format, as in the C++
reader: a run of bytes that are not valid UTF-8 (which Hugging Face cannot take) bypasses normalizer and
pre-tokenizer and goes to BPE as one piece. SentencePiece goes through its own Python library.

usage: hf_tokenizer_reference.py encode TOKENIZER_JSON INPUT_JSON OUTPUT_JSON [--no-special]
         INPUT_JSON   JSON list of hex-encoded byte strings
         OUTPUT_JSON  JSON list of {"ids": [...], "decoded": hex of the bytes the ids decode to}
       hf_tokenizer_reference.py sp-train TEXT_FILE VOCAB_SIZE OUT_PREFIX
         trains a LLaMA-style SentencePiece BPE model (byte fallback, split digits, dummy prefix) → OUT_PREFIX.model
       hf_tokenizer_reference.py sp-encode MODEL INPUT_JSON OUTPUT_JSON
         the library's encoding of each (UTF-8) input, and its decoding of those ids, as above
"""
import argparse
import json
import unicodedata

import regex

from bpe_reference import bytes_to_unicode

# The regex of the ByteLevel pre-tokenizer (use_regex), as Hugging Face's byte_level.rs defines it.
BYTE_LEVEL_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


BYTE_CHAR = bytes_to_unicode()  # GPT-2's byte -> character alphabet, which ByteLevel maps bytes through
CHAR_BYTE = {c: b for b, c in BYTE_CHAR.items()}


# ------------------------------------------------------------------------------------------------ tokenizer.json

class Tokenizer:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        model = spec["model"]
        assert model.get("type", "BPE") == "BPE"
        self.vocab = model["vocab"]
        self.id_to_string = {i: s for s, i in self.vocab.items()}
        merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
        self.ranks = {}
        for rank, pair in enumerate(merges):
            self.ranks[pair] = rank  # a repeated pair keeps its last rank
        self.ignore_merges = model.get("ignore_merges", False)
        self.normalizers = self.flatten(spec.get("normalizer"), "normalizers")
        self.pre_tokenizers = self.flatten(spec.get("pre_tokenizer"), "pretokenizers")
        self.added = spec.get("added_tokens") or []
        self.added_content = {t["id"]: t["content"] for t in self.added}

    @staticmethod
    def flatten(node, key):
        if node is None:
            return []
        if node["type"] == "Sequence":
            return [leaf for child in node[key] for leaf in Tokenizer.flatten(child, key)]
        return [node]

    # The normalizer, applied to a str.
    def normalize(self, text):
        for n in self.normalizers:
            text = unicodedata.normalize(n["type"], text)
        return text

    # Added tokens: (bytes to look for, id) for the raw or the normalized text.
    def added_patterns(self, normalized, allow_special):
        out = []
        for t in self.added:
            if t.get("special", False) and not allow_special:
                continue
            if t.get("normalized", not t.get("special", False)) != normalized:
                continue
            content = self.normalize(t["content"]) if normalized else t["content"]
            out.append((content.encode("utf-8"), t["id"]))
        return out

    @staticmethod
    def split_added(data, patterns):
        """Yields (id, None) for each added token found, leftmost first and longest there, and (None, bytes) between."""
        i, start = 0, 0
        while i < len(data):
            found = [(p, tid) for p, tid in patterns if data.startswith(p, i)]
            if not found:
                i += 1
                continue
            p, tid = max(found, key=lambda f: len(f[0]))
            if start < i:
                yield None, data[start:i]
            yield tid, None
            i += len(p)
            start = i
        if start < len(data):
            yield None, data[start:]

    @staticmethod
    def utf8_runs(data):
        """Yields (is_valid, bytes): maximal runs of valid UTF-8 and of invalid bytes (surrogateescape marks those)."""
        text = data.decode("utf-8", "surrogateescape")
        for run in regex.findall(r"[\udc80-\udcff]+|[^\udc80-\udcff]+", text):
            invalid = "\udc80" <= run[0] <= "\udcff"
            yield not invalid, run.encode("utf-8", "surrogateescape")

    # Pre-tokenization of one str into a list of str.
    @staticmethod
    def split(piece, pattern, behavior, invert):
        """Hugging Face's NormalizedString::split: spans (start, end, is_delimiter) cover the piece."""
        spans, prev = [], 0
        for m in pattern.finditer(piece):
            if m.end() == m.start():
                continue  # empty matches cut nothing
            if prev < m.start():
                spans.append([prev, m.start(), False])
            spans.append([m.start(), m.end(), True])
            prev = m.end()
        if prev < len(piece):
            spans.append([prev, len(piece), False])
        if invert:
            spans = [[s, e, not d] for s, e, d in spans]
        out = []
        if behavior == "Isolated":
            out = spans
        elif behavior == "Removed":
            out = [s for s in spans if not s[2]]
        elif behavior == "Contiguous":
            for s in spans:
                if out and out[-1][2] == s[2]:
                    out[-1][1] = s[1]
                else:
                    out.append(s)
        elif behavior == "MergedWithPrevious":
            for s in spans:
                if out and s[2] and not out[-1][2]:
                    out[-1] = [out[-1][0], s[1], True]  # the merged span now ends in a delimiter
                else:
                    out.append(s)
        elif behavior == "MergedWithNext":
            for s in reversed(spans):
                if out and s[2] and not out[-1][2]:
                    out[-1] = [s[0], out[-1][1], True]
                else:
                    out.append(s)
            out.reverse()
        else:
            raise ValueError(behavior)
        return [piece[s:e] for s, e, _ in out]

    def pre_tokenize(self, text):
        pieces = [text]
        for p in self.pre_tokenizers:
            kind = p["type"]
            new = []
            for piece in pieces:
                if kind == "Split":
                    pat = p["pattern"]
                    compiled = regex.compile(pat["Regex"] if "Regex" in pat else regex.escape(pat["String"]))
                    new += self.split(piece, compiled, p["behavior"], p.get("invert", False))
                elif kind == "Digits":
                    # Each numeric character is a delimiter, kept alone or joined with its neighbours.
                    behavior = "Isolated" if p.get("individual_digits", False) else "Contiguous"
                    new += self.split(piece, regex.compile(r"\p{N}"), behavior, False)
                elif kind == "ByteLevel":
                    if p.get("add_prefix_space", True) and not piece.startswith(" "):
                        piece = " " + piece
                    if p.get("use_regex", True):
                        new += self.split(piece, regex.compile(BYTE_LEVEL_REGEX), "Isolated", False)
                    else:
                        new.append(piece)
                else:
                    raise ValueError(kind)
            pieces = [x for x in new if x]
        return pieces

    # BPE on one piece's bytes.
    def bpe(self, data):
        word = "".join(BYTE_CHAR[b] for b in data)
        if self.ignore_merges and word in self.vocab:
            return [self.vocab[word]]
        symbols = list(word)
        while len(symbols) > 1:
            best = None
            for i in range(len(symbols) - 1):
                rank = self.ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and (best is None or rank < best[0]):
                    best = (rank, i)  # strict <: the leftmost of equal ranks
            if best is None:
                break
            i = best[1]
            symbols[i:i + 2] = [symbols[i] + symbols[i + 1]]
        return [self.vocab[s] for s in symbols]

    def encode(self, data, allow_special):
        ids = []
        for tid, raw in self.split_added(data, self.added_patterns(False, allow_special)):
            if tid is not None:
                ids.append(tid)
                continue
            for valid, run in self.utf8_runs(raw):
                if not valid:
                    ids += self.bpe(run)
                    continue
                normalized = self.normalize(run.decode("utf-8")).encode("utf-8")
                for tid2, part in self.split_added(normalized, self.added_patterns(True, allow_special)):
                    if tid2 is not None:
                        ids.append(tid2)
                        continue
                    for piece in self.pre_tokenize(part.decode("utf-8")):
                        ids += self.bpe(piece.encode("utf-8"))
        return ids

    def decode(self, ids):
        out = b""
        for i in ids:
            if i in self.added_content:
                out += self.added_content[i].encode("utf-8")
                continue
            s = self.id_to_string[i]
            # The ByteLevel decoder: every character through the alphabet, or the token's own UTF-8.
            out += bytes(CHAR_BYTE[c] for c in s) if all(c in CHAR_BYTE for c in s) else s.encode("utf-8")
        return out


def cmd_encode(args):
    tok = Tokenizer(args.tokenizer_json)
    with open(args.input_json, encoding="utf-8") as f:
        inputs = [bytes.fromhex(h) for h in json.load(f)]
    out = []
    for data in inputs:
        ids = tok.encode(data, not args.no_special)
        out.append({"ids": ids, "decoded": tok.decode(ids).hex()})
    with open(args.output_json, "w", encoding="utf-8") as f:
        json.dump(out, f)


# ------------------------------------------------------------------------------------------------ SentencePiece

def cmd_sp_train(args):
    import sentencepiece as spm
    # TinyLlama's (LLaMA's) settings: BPE, byte fallback, digits split, a dummy prefix, no normalization.
    spm.SentencePieceTrainer.train(input=args.text_file, model_prefix=args.out_prefix, vocab_size=args.vocab_size,
                                   model_type="bpe", byte_fallback=True, split_digits=True, add_dummy_prefix=True,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False,
                                   character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, num_threads=1,
                                   hard_vocab_limit=False, minloglevel=2)


def cmd_sp_encode(args):
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=args.model)
    with open(args.input_json, encoding="utf-8") as f:
        inputs = [bytes.fromhex(h).decode("utf-8") for h in json.load(f)]
    out = []
    for text in inputs:
        ids = sp.encode(text)
        out.append({"ids": ids, "decoded": sp.decode(ids).encode("utf-8").hex()})
    with open(args.output_json, "w", encoding="utf-8") as f:
        json.dump(out, f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("encode")
    p.add_argument("tokenizer_json")
    p.add_argument("input_json")
    p.add_argument("output_json")
    p.add_argument("--no-special", action="store_true", help="special added tokens are ordinary text")
    p.set_defaults(run=cmd_encode)
    p = sub.add_parser("sp-train")
    p.add_argument("text_file")
    p.add_argument("vocab_size", type=int)
    p.add_argument("out_prefix")
    p.set_defaults(run=cmd_sp_train)
    p = sub.add_parser("sp-encode")
    p.add_argument("model")
    p.add_argument("input_json")
    p.add_argument("output_json")
    p.set_defaults(run=cmd_sp_encode)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Independent GPT-2 byte-level BPE reference (encoder and naive trainer) for the tokenizer tests.

Written from OpenAI's GPT-2 encoder.py (bytes_to_unicode, rank-driven merging) and the Hugging Face file formats,
sharing no code with the C++ tokenizer.

usage: bpe_reference.py encode TOKENIZER_DIR INPUT_JSON OUTPUT_JSON
         TOKENIZER_DIR  holds vocab.json and merges.txt (Hugging Face GPT-2 format)
         INPUT_JSON     JSON list of hex-encoded byte strings (hex, so that invalid UTF-8 can be passed)
         OUTPUT_JSON    JSON list of lists of token ids; every list is checked to decode back to its bytes
       bpe_reference.py train INPUT_TXT VOCAB_SIZE MIN_FREQUENCY OUT_DIR
         writes OUT_DIR/vocab.json and OUT_DIR/merges.txt
"""
import argparse
import json
import os
from collections import Counter, defaultdict

import regex

# GPT-2's pre-tokenization pattern, evaluated by the `regex` module exactly as encoder.py does.
PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
SPECIAL = "<|endoftext|>"


def bytes_to_unicode():
    """GPT-2's reversible byte -> printable character map (printable Latin-1 bytes map to themselves)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_TO_CHAR = bytes_to_unicode()
CHAR_TO_BYTE = {c: b for b, c in BYTE_TO_CHAR.items()}


def pretokenize(data):
    """Bytes -> list of pre-tokens (bytes), with None standing for each <|endoftext|>.

    surrogateescape turns each invalid byte into a lone surrogate, which the regex treats as an "other" character,
    and turns it back into the same byte afterwards, so any byte string survives the round trip.
    """
    out = []
    for i, piece in enumerate(data.decode("utf-8", "surrogateescape").split(SPECIAL)):
        if i:
            out.append(None)
        out += [t.encode("utf-8", "surrogateescape") for t in PAT.findall(piece)]
    return out


def merge_pair(seq, a, b, new):
    """Replace all non-overlapping occurrences of the adjacent pair (a, b), scanning left to right."""
    out, i = [], 0
    while i < len(seq):
        if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


# ---------------------------------------------------------------------------------------------------- encoder

def load_tokenizer(folder):
    with open(os.path.join(folder, "vocab.json"), encoding="utf-8") as f:
        vocab = json.load(f)
    with open(os.path.join(folder, "merges.txt"), encoding="utf-8") as f:
        lines = [line.rstrip("\r") for line in f.read().split("\n")]
    if lines and lines[0].startswith("#version"):
        lines = lines[1:]
    # Byte-level token strings never contain a space (0x20 maps to 'Ġ'), so one space separates the pair.
    merges = [tuple(line.split(" ")) for line in lines if line]
    assert all(len(m) == 2 for m in merges), "malformed merges.txt line"
    # dict() keeps the last rank of a repeated merge, as encoder.py's dict(zip(merges, range(...))) does.
    ranks = dict(zip(merges, range(len(merges))))
    return vocab, ranks


def bpe(word, ranks):
    """OpenAI's loop: merge the lowest-ranked adjacent pair everywhere until no adjacent pair has a rank."""
    word = list(word)
    while len(word) > 1:
        pair = min(zip(word, word[1:]), key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        word = merge_pair(word, pair[0], pair[1], pair[0] + pair[1])
    return word


def encode(data, vocab, ranks):
    ids = []
    for token in pretokenize(data):
        if token is None:
            ids.append(vocab[SPECIAL])
        else:
            ids += [vocab[s] for s in bpe("".join(BYTE_TO_CHAR[b] for b in token), ranks)]
    return ids


def decode(ids, vocab):
    # Every vocab string, <|endoftext|> included (it is printable ASCII), is in byte-to-unicode form.
    by_id = {i: s for s, i in vocab.items()}
    return b"".join(bytes(CHAR_TO_BYTE[c] for c in by_id[i]) for i in ids)


def cmd_encode(args):
    vocab, ranks = load_tokenizer(args.tokenizer_dir)
    with open(args.input_json, encoding="utf-8") as f:
        inputs = [bytes.fromhex(h) for h in json.load(f)]
    outputs = []
    for data in inputs:
        ids = encode(data, vocab, ranks)
        if decode(ids, vocab) != data:
            raise RuntimeError(f"decode does not round-trip for input {data.hex()}: ids {ids}")
        outputs.append(ids)
    with open(args.output_json, "w", encoding="utf-8") as f:
        json.dump(outputs, f)


# ---------------------------------------------------------------------------------------------------- trainer

def train(data, vocab_size, min_frequency):
    """Naive BPE training; returns (vocab {string: id}, merges [(left, right)]).

    Words are the distinct pre-tokens, weighted by their counts. Repeatedly merge the most frequent adjacent id
    pair (ties: smallest pair), stopping when its count < min_frequency, when no pair is left, or when
    len(vocab) + 1 >= vocab_size (the 1 is <|endoftext|>, added last).
    """
    # Ids 0..255 follow bytes_to_unicode()'s key order, as in GPT-2's own vocab.json.
    byte_id = {b: i for i, b in enumerate(BYTE_TO_CHAR)}
    strings = list(BYTE_TO_CHAR.values())  # id -> token string
    vocab = {s: i for i, s in enumerate(strings)}
    counts = Counter(t for t in pretokenize(data) if t is not None)
    words = [[[byte_id[b] for b in w], n] for w, n in counts.items()]

    # Pair counts are kept up to date incrementally: only words containing the merged pair are recounted.
    pair_counts, where = Counter(), defaultdict(set)

    def count_word(i, sign):
        ids, n = words[i]
        for p in zip(ids, ids[1:]):
            pair_counts[p] += sign * n
            if pair_counts[p] == 0:
                del pair_counts[p]
            if sign > 0:
                where[p].add(i)  # stale entries are harmless: merging a word without the pair changes nothing

    for i in range(len(words)):
        count_word(i, +1)

    merges = []
    while pair_counts and len(vocab) + 1 < vocab_size:
        # Highest count; ties go to the smallest (left_id, right_id).
        best = min(pair_counts, key=lambda p: (-pair_counts[p], p))
        if pair_counts[best] < min_frequency:
            break
        left, right = strings[best[0]], strings[best[1]]
        merged = left + right
        if merged not in vocab:  # the same string can be reached by different pairs; keep one id for it
            vocab[merged] = len(strings)
            strings.append(merged)
        merges.append((left, right))
        for i in where.pop(best):
            count_word(i, -1)
            words[i][0] = merge_pair(words[i][0], best[0], best[1], vocab[merged])
            count_word(i, +1)

    vocab[SPECIAL] = len(vocab)
    return vocab, merges


def cmd_train(args):
    with open(args.input_txt, "rb") as f:
        data = f.read()
    vocab, merges = train(data, args.vocab_size, args.min_frequency)
    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, ensure_ascii=False)
    with open(os.path.join(args.out_dir, "merges.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(f"{line}\n" for line in ["#version: 0.2"] + [f"{a} {b}" for a, b in merges]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("encode")
    p.add_argument("tokenizer_dir")
    p.add_argument("input_json")
    p.add_argument("output_json")
    p.set_defaults(run=cmd_encode)
    p = sub.add_parser("train")
    p.add_argument("input_txt")
    p.add_argument("vocab_size", type=int)
    p.add_argument("min_frequency", type=int)
    p.add_argument("out_dir")
    p.set_defaults(run=cmd_train)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()

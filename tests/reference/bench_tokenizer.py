#!/usr/bin/env python3
"""Encoding speed of the reference GPT-2 BPE (bpe_reference.py) with OpenAI encoder.py's per-word cache, the way
GPT-2's own Python tokenizer runs. Prints one JSON line: {"mb_per_second": …, "tokens": …}.

usage: bench_tokenizer.py TOKENIZER_DIR TEXT_FILE MAX_BYTES
"""
import functools
import json
import sys
import time

import bpe_reference as ref


def main():
    folder, path, max_bytes = sys.argv[1], sys.argv[2], int(sys.argv[3])
    vocab, ranks = ref.load_tokenizer(folder)
    with open(path, "rb") as f:
        data = f.read(max_bytes)

    @functools.lru_cache(maxsize=None)
    def encode_piece(piece):
        return [vocab[s] for s in ref.bpe("".join(ref.BYTE_TO_CHAR[b] for b in piece), ranks)]

    start = time.perf_counter()
    ids = []
    for piece in ref.pretokenize(data):
        ids += [vocab[ref.SPECIAL]] if piece is None else encode_piece(piece)
    seconds = time.perf_counter() - start
    print(json.dumps({"mb_per_second": len(data) / 1e6 / seconds, "tokens": len(ids), "bytes": len(data)}))


if __name__ == "__main__":
    main()

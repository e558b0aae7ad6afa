#!/usr/bin/env python3
"""The tokenizer fingerprint of a GPT-2-style folder (vocab.json), from its definition in
core/text/tokenizer.h, written independently of the engine: FNV-1a 64 over length-prefixed fields — first
"<vocab size> <end-of-text id> <begin-of-sequence id>", then each id's bytes in id order (GPT-2's byte-level
alphabet mapped back to bytes; <|endoftext|> as its own text). Prints "fnv1a64:<16 hex digits>".

    tokenizer_fingerprint.py resources/tiny-gpt2
"""
import json
import sys


def byte_decoder():
    # GPT-2's bytes_to_unicode: printable bytes stand for themselves, the rest for 256 + n.
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + \
        list(range(ord("®"), ord("ÿ") + 1))
    chars, n = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + n)] = b
            n += 1
    return chars


def fingerprint(folder):
    vocab = json.load(open(f"{folder}/vocab.json", encoding="utf-8"))
    decoder = byte_decoder()
    by_id = {i: t for t, i in vocab.items()}
    special = {"<|endoftext|>"}
    h = 0xcbf29ce484222325

    def add(data: bytes):
        nonlocal h
        for b in str(len(data)).encode() + b":" + data:
            h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF

    eot = vocab.get("<|endoftext|>", -1)
    add(f"{len(vocab)} {eot} -1".encode())
    for i in range(len(vocab)):
        token = by_id[i]
        add(token.encode() if token in special else bytes(decoder[c] for c in token))
    return f"fnv1a64:{h:016x}"


if __name__ == "__main__":
    print(fingerprint(sys.argv[1]))

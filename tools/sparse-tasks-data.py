#!/usr/bin/python3
"""Documents where heads are idle most of the time (issue 39's CPU preview, tools/sinks-preview-cpu.sh).

Each document is filler drawn from the text's own token bigrams (the current token alone predicts the next:
no head can help) with rare events, each needing a different attention pattern at one position and nothing
elsewhere: the "active-dormant" heads that Guo et al. (2024) find parking on the BOS when idle.
  backcopy k (k = 0..3): after trigger B_k, the token k + 1 places before B_k (with SPARSE_BACKCOPIES=n,
                         k = 0..n-1, each offset an event of its own instead of a share of one)
  first:                 after trigger F, the document's first token
  induction:             after trigger R and a token A seen earlier, the token that followed A's last occurrence
Triggers are token ids the text never uses. Each event starts at a position with chance RATE.

usage: sparse-tasks-data.py TEXT.bin META.json OUT_PREFIX RATE TRAIN_TOKENS [MIX.bin]
writes OUT_PREFIX-train.bin (documents of the text's lengths) and OUT_PREFIX-own.bin (300 documents of
at least 128 tokens after their BOS, to measure on), each with its .json sidecar. With MIX.bin (a token
file of documents: the text), OUT_PREFIX-train.bin is MIX.bin with one of these documents after each of
its own, and TRAIN_TOKENS is ignored."""
import bisect
import json
import os
import sys

import numpy as np

text, meta_path, prefix, rate, train_tokens = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
mix = sys.argv[6] if len(sys.argv) > 6 else None
meta = json.load(open(meta_path))
eot, V = meta["eot_token_id"], meta["vocab_size"]
rng = np.random.default_rng(0)
t = np.fromfile(text, dtype=np.uint16).astype(np.int64)
ends = np.nonzero(t == eot)[0]
lengths = np.diff(np.concatenate([[-1], ends])) - 1
pairs = (t[:-1] != eot) & (t[1:] != eot)
codes, counts = np.unique(t[:-1][pairs] * V + t[1:][pairs], return_counts=True)
starts = np.searchsorted(codes // V, np.arange(V + 1))
rows = {a: ((codes[starts[a]:starts[a + 1]] % V).tolist(), np.cumsum(counts[starts[a]:starts[a + 1]]).tolist())
        for a in range(V) if starts[a + 1] > starts[a]}
firsts = t[np.concatenate([[0], ends[:-1] + 1])]
unused = [int(u) for u in np.nonzero(np.bincount(t, minlength=V) == 0)[0] if u != eot]
separate = int(os.environ.get("SPARSE_BACKCOPIES", "0"))  # 0: four offsets sharing one event's chance
offsets = separate or 4
B, F, R = unused[:offsets], unused[offsets], unused[offsets + 1]
events = [("backcopy", None)] if not separate else [("backcopy", k) for k in range(offsets)]
events += [("first",), ("induction",)]


def follow(token):
    if token not in rows:  # a token only ever seen last in a document (or a trigger's target): start afresh
        return int(rng.choice(firsts))
    nexts, cumulative = rows[token]
    return nexts[bisect.bisect_right(cumulative, rng.random() * cumulative[-1])]


def document(n):
    out = [int(rng.choice(firsts))]
    while len(out) < n:
        if len(out) >= offsets + 2 and rng.random() < rate * len(events):
            kind = events[rng.integers(len(events))]
            if kind[0] == "backcopy":
                k = kind[1] if separate else int(rng.integers(4))
                out += [B[k], out[-k - 1]]
                continue
            if kind[0] == "first":
                out += [F, out[0]]
                continue
            a = int(rng.integers(len(out) - 1))  # induction: a token with a successor that is not a trigger
            if out[a] not in B + [F, R] and out[a + 1] not in B + [F, R]:
                last = max(i for i in range(len(out) - 1) if out[i] == out[a])
                out += [R, out[a], out[last + 1]]
                continue
        out.append(follow(out[-1]))
    return out[:n]


def write(path, docs, note):
    z = np.concatenate([np.array([eot] + d, dtype=np.uint16) for d in docs] + [np.array([eot], dtype=np.uint16)])
    z.tofile(path)
    json.dump(dict(meta, tokens=int(len(z)), documents=len(docs), sources=[note]), open(path + ".json", "w"))


if mix:
    x = np.fromfile(mix, dtype=np.uint16)
    pieces = []
    for d in np.split(x, np.nonzero(x == eot)[0] + 1):  # each text document with its end-of-text
        pieces.append(d)
        if len(d) > 1:
            pieces.append(np.array(document(int(max(16, rng.choice(lengths)))) + [eot], dtype=np.uint16))
    y = np.concatenate(pieces)
    y.tofile(f"{prefix}-train.bin")
    mixed = json.load(open(mix + ".json"))
    json.dump(dict(mixed, tokens=int(len(y)), documents=int(np.sum(y == eot)),
                   sources=mixed.get("sources", []) + [f"a sparse-task document after each, each event with chance {rate}"]),
              open(f"{prefix}-train.bin.json", "w"))
else:
    docs, total = [], 0
    while total < train_tokens:
        docs.append(document(int(max(16, rng.choice(lengths)))))
        total += len(docs[-1]) + 1
    write(f"{prefix}-train.bin", docs, f"{len(docs)} sparse-task documents, each event with chance {rate}")
write(f"{prefix}-own.bin", [document(int(max(129, rng.choice(lengths)))) for _ in range(300)],
      f"300 sparse-task documents, each event with chance {rate}")

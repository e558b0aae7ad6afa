#!/usr/bin/env bash
# A CPU preview of levers for attention sinks (issue 39): 4-layer GPT-2s (d_model 128) pretrained side by
# side, one thread each, on the small models' best mix of round 2 (document windows, random repeats after
# every document), 2,048 tokens per step whatever the context. The runs (PREVIEW_RUNS, two at a time):
#   baseline  8 heads of 16, context 128
#   triggers  the baseline with sparse trigger tasks added to its data: after one of 16 token ids the text
#             never uses, the token k+1 places before it (k: which trigger) — a head needed at 1 position in
#             ~20 and idle elsewhere, the "active-dormant" heads Guo et al. (2024) find behind sinks
#   ctx512    the baseline with a context of 512 (Barbero et al. 2025: sinks grow with context); its sinks
#             and norms are also measured over 128 tokens, to compare like with like
#   heads16   16 heads of 8: more heads than the text needs
#   wd05, wd1 the baseline with AdamW weight decay 0.5 and 1.0 instead of 0.1 (Gu et al. 2025, "When
#             Attention Sink Emerges": a larger weight decay makes sinks grow, until it hampers training)
#   spans     the baseline with random spans of 64–192 tokens instead of 8–96: more text where no head has
#             anything to do (round 2: random repeats after every document doubled the sink rate)
#   bigram    the baseline's data with, after every second document, one whose tokens are each drawn given
#             only the token before it (the text's own token bigrams; as long as a text document; a third of
#             the documents): text where no head helps — Guo et al.'s (2024) "Bigram-Backcopy" data without
#             the copy, where dormant heads park on the BOS
#   unigram   the same with each token drawn alone from the text's token frequencies: the previous tokens are
#             of no use at all (Liu 2026: a one-layer model on such data sinks on the BOS)
#             (both are also measured on 300 more of their own documents, "own": idle there at least?)
#   sparse    no text: bigram filler with rare events, each needing its own head at one position
#             (normfree-cli rare-jobs: backcopy at 4 offsets, the first token, induction; each event
#             with chance 0.015 at a position), measured on 300 more of its documents ("own")
#   sparse-rare  the same with each event's chance 0.005: heads idle for longer
#   sparse-long  sparse on fresh data of its own (for a longer run: STEPS)
#   sparse8   sparse with 8 backcopy offsets, each an event of its own (chance 0.015 each, as first and
#             induction): more rare jobs, more heads idle most of the time?
#   mix       the baseline's data with a sparse document (chance 0.015) after each of its documents: do the
#             heads that sink on those sink on the text too? (also measured on its own documents)
#   mix8      the same with sparse8's documents: ten rare jobs instead of six
#   mix8-heads16  mix8 with 16 heads of 8: heads to spare beside the ones the text keeps busy
#   sentences the baseline's data with sparse8's filler and events between its sentences instead of between
#             its documents (rare-jobs --between-sentences 24: about two thirds of the tokens filler): the
#             heads the text needs idle most of the time, as a real text's specialists are; measured on the
#             validation text made the same way ("own") as well as on the text alone
#   sentences12  the same with 12 tokens of filler on average between sentences (about half the tokens)
#   [PREVIEW_RUNS="baseline triggers"] tools/sinks-preview-cpu.sh CLI OUT [STEPS]
#             (STEPS default 10000 = 20 M tokens: ~35 min for two runs on 2 cores at context 128)
# Writes OUT/summary.jsonl: per run, 2,000 steps before the end and at the end, the sink rate and the
# largest position-0 norm ratio on documents (each sequence from the BOS before a document) and on chunks,
# and the validation loss. The data is made once per OUT and reused.
set -euo pipefail
cd "$(dirname "$0")/.."
cli=$1 out=$2 steps=${3:-10000}
runs=(${PREVIEW_RUNS:-baseline triggers})
mkdir -p "$out/data"
wants() { [[ " ${runs[*]} " == *" $1 "* ]]; }  # is run $1 among this call's? (each run's own data is made once)
if [ ! -f "$out/data/val.bin" ]; then
"$cli" corpus --out "$out/data" --overwrite --seed 0 --train-mb 30 --val-mb 2 --alt-mb 1 >/dev/null 2>&1
for p in 0 1; do
  "$cli" tokenize "$out/data/train.txt" --tokenizer resources/tiny-gpt2 --out "$out/data/train-r$p.bin" --overwrite \
    --random-repeats $p >/dev/null 2>&1
done
"$cli" tokenize "$out/data/val.txt" --tokenizer resources/tiny-gpt2 --out "$out/data/val.bin" --overwrite >/dev/null 2>&1
fi
if wants triggers && [ ! -f "$out/data/train-r1-triggers.bin" ]; then
python3 - "$out/data/train-r0.bin" "$out/data/train-r1.bin" "$out/data/train-r1-triggers.bin" <<'PY'
import json, sys
import numpy as np
text, source, target = sys.argv[1:]
K, rate = 16, 0.05
meta = json.load(open(source + ".json"))
unused = np.nonzero(np.bincount(np.fromfile(text, dtype=np.uint16), minlength=meta["vocab_size"]) == 0)[0]
triggers = [t for t in unused if t != meta["eot_token_id"]][:K]  # ids the text never uses
x = np.fromfile(source, dtype=np.uint16).astype(np.int64)
rng = np.random.default_rng(0)
gap = K + 1
candidates = np.nonzero(rng.random(len(x)) < rate)[0]
places, last = [], -gap - 1
for p in candidates:  # never closer than `gap`: no trigger falls between another and its source
    if p >= gap and p - last > gap:
        places.append(p)
        last = p
places = np.array(places)
k = rng.integers(0, K, len(places))
eots = np.cumsum(x == meta["eot_token_id"])
inside = (eots[places - 1] == eots[places - k - 2]) & (x[places - k - 1] != meta["eot_token_id"])
places, k = places[inside], k[inside]
values = np.empty(2 * len(places), dtype=np.int64)
values[0::2], values[1::2] = np.array(triggers)[k], x[places - k - 1]
y = np.insert(x, np.repeat(places, 2), values).astype(np.uint16)
y.tofile(target)
meta.update(tokens=int(len(y)), sources=meta.get("sources", []) + [f"{len(places)} triggers: {K} ids, rate {rate}"])
json.dump(meta, open(target + ".json", "w"))
PY
fi
if { wants bigram || wants unigram; } && [ ! -f "$out/data/own-unigram.bin" ]; then
python3 - "$out/data/train-r0.bin" "$out/data/train-r1.bin" "$out/data" <<'PY'
import bisect, json, sys
import numpy as np
text, source, folder = sys.argv[1:]
meta = json.load(open(source + ".json"))
eot = meta["eot_token_id"]
rng = np.random.default_rng(0)
t = np.fromfile(text, dtype=np.uint16).astype(np.int64)
ends = np.nonzero(t == eot)[0]
lengths = np.diff(np.concatenate([[-1], ends])) - 1  # the text documents' lengths, end-of-text left out
pairs = (t[:-1] != eot) & (t[1:] != eot)
V = meta["vocab_size"]
codes, counts = np.unique(t[:-1][pairs] * V + t[1:][pairs], return_counts=True)
starts = np.searchsorted(codes // V, np.arange(V + 1))  # each first token's run of (next token, count)
rows = {a: ((codes[starts[a]:starts[a + 1]] % V).tolist(), np.cumsum(counts[starts[a]:starts[a + 1]]).tolist())
        for a in range(V) if starts[a + 1] > starts[a]}
firsts = t[np.concatenate([[0], ends[:-1] + 1])]
frequency = np.bincount(t[t != eot], minlength=V).astype(np.float64)
def bigram_document(n):
    token = int(rng.choice(firsts))
    out = [token]
    for u in rng.random(n - 1):
        if token not in rows:  # a token only ever seen last in a document: start afresh
            token = int(rng.choice(firsts))
        else:
            nexts, cumulative = rows[token]
            token = nexts[bisect.bisect_right(cumulative, u * cumulative[-1])]
        out.append(token)
    return out
def unigram_document(n):
    return rng.choice(len(frequency), size=n, p=frequency / frequency.sum()).tolist()
x = np.fromfile(source, dtype=np.uint16)
documents = np.split(x, np.nonzero(x == eot)[0] + 1)
for kind, make in (("bigram", bigram_document), ("unigram", unigram_document)):
    pieces, added, added_tokens = [], 0, 0
    for i, d in enumerate(documents):
        pieces.append(d)
        if i % 2 == 1 and len(d):  # after every second document: a third of them are this kind
            doc = make(int(max(16, rng.choice(lengths))))
            pieces.append(np.array(doc + [eot], dtype=np.uint16))
            added += 1
            added_tokens += len(doc) + 1
    y = np.concatenate(pieces)
    target = f"{folder}/train-r1-{kind}.bin"
    y.tofile(target)
    m = dict(meta, tokens=int(len(y)), documents=int(meta.get("documents", 0)) + added,
             sources=meta.get("sources", []) + [f"{added} {kind} documents ({added_tokens} tokens)"])
    json.dump(m, open(target + ".json", "w"))
    print(kind, added, "documents,", added_tokens, "tokens of", len(y), file=sys.stderr)
for kind, make in (("bigram", bigram_document), ("unigram", unigram_document)):
    # 300 more of them alone (each of ≥ 128 tokens after its BOS): are the heads idle on such text at least?
    own = [np.array([eot] + make(int(max(129, rng.choice(lengths)))), dtype=np.uint16) for _ in range(300)]
    z = np.concatenate(own + [np.array([eot], dtype=np.uint16)])
    z.tofile(f"{folder}/own-{kind}.bin")
    json.dump(dict(meta, tokens=int(len(z)), documents=300, sources=[f"300 {kind} documents alone"]),
              open(f"{folder}/own-{kind}.bin.json", "w"))
PY
fi
if wants spans && [ ! -f "$out/data/train-r1-spans.bin" ]; then
  "$cli" tokenize "$out/data/train.txt" --tokenizer resources/tiny-gpt2 --out "$out/data/train-r1-spans.bin" --overwrite \
    --random-repeats 1 --repeat-span 64 --repeat-span-max 192 >/dev/null 2>&1
fi
# A run's rare-jobs documents: its own name's, but a variant of a mix shares the mix's (mix8-heads16: mix8).
jobs_of() { case "$1" in mix8-*) echo mix8 ;; *) echo "$1" ;; esac; }
wanted=" $(for run in "${runs[@]}"; do jobs_of "$run"; done | tr '\n' ' ')"
for run in sparse sparse-rare sparse-long sparse8 mix mix8; do
  jobs=(--chance 0.015); [ $run = sparse-rare ] && jobs=(--chance 0.005)
  [[ $run = sparse8 || $run = mix8 ]] && jobs+=(--offsets 8 --separate-offsets)
  train=(--documents $(((steps * 2048 + 2000000) / 300))); [[ $run = mix* ]] && train=(--after "$out/data/train-r1.bin")
  if [[ "$wanted" == *" $run "* && ! -f "$out/data/own-$run.bin" ]]; then  # own-: the last one written
    "$cli" rare-jobs "$out/data/train-r0.bin" "${jobs[@]}" "${train[@]}" --out "$out/data/$run-train.bin" --overwrite >/dev/null 2>&1
    "$cli" rare-jobs "$out/data/train-r0.bin" "${jobs[@]}" --seed 1 --documents 300 --min-length 129 \
      --out "$out/data/own-$run.bin" --overwrite >/dev/null 2>&1
  fi
done
for run in sentences sentences12; do
  if [[ "$wanted" == *" $run "* && ! -f "$out/data/own-$run.bin" ]]; then
    filler=24; [ $run = sentences12 ] && filler=12
    dilute=(--offsets 8 --separate-offsets --between-sentences $filler --tokenizer resources/tiny-gpt2)
    "$cli" rare-jobs "$out/data/train-r0.bin" "${dilute[@]}" --after "$out/data/train-r1.bin" \
      --out "$out/data/$run-train.bin" --overwrite >/dev/null 2>&1
    "$cli" rare-jobs "$out/data/train-r0.bin" "${dilute[@]}" --seed 1 --after "$out/data/val.bin" \
      --out "$out/data/own-$run.bin" --overwrite >/dev/null 2>&1
  fi
done
context_of() { [ "$1" = ctx512 ] && echo 512 || echo 128; }
train() {
  local run=$1 heads=8 data=train-r1.bin context decay=0.1 eval=val.bin
  context=$(context_of "$run")
  [ "$run" = wd05 ] && decay=0.5
  [ "$run" = wd1 ] && decay=1.0
  [[ "$run" = *heads16 ]] && heads=16
  [ "$run" = triggers ] && data=train-r1-triggers.bin
  [ "$run" = spans ] && data=train-r1-spans.bin
  [ "$run" = bigram ] && data=train-r1-bigram.bin
  [ "$run" = unigram ] && data=train-r1-unigram.bin
  [[ "$run" = sparse* ]] && data=$run-train.bin eval=own-$run.bin  # no text: its loss is on its own documents
  [[ "$run" = mix* || "$run" = sentences* ]] && data=$(jobs_of "$run")-train.bin
  "$cli" init --out "$out/$run-shape" --overwrite --family gpt2 --layers 4 --heads $heads --d-model 128 --context "$context" \
    --vocab 2048 --seed 0 >/dev/null
  cp resources/tiny-gpt2/vocab.json resources/tiny-gpt2/merges.txt "$out/$run-shape/"
  OMP_NUM_THREADS=1 "$cli" pretrain "$out/$run" --model "$out/$run-shape" --train "$out/data/$data" \
    --eval "$out/data/$eval" --steps "$steps" --lr 2e-3 --min-lr 2e-4 --weight-decay "$decay" --warmup 200 \
    --document-windows 1 --micro-batch $((2048 / context)) --context "$context" --seed 0 --eval-interval 500 \
    --checkpoint-interval 1000 --keep-checkpoints 3 >"$out/$run.log" 2>&1
}
for ((i = 0; i < ${#runs[@]}; i += 2)); do
  train "${runs[i]}" &
  [ $((i + 1)) -lt ${#runs[@]} ] && train "${runs[i + 1]}" &
  wait
done
for run in "${runs[@]}"; do
  lengths=(128); [ "$(context_of "$run")" = 512 ] && lengths=(128 512)
  for step in $((steps - 2000)) $steps; do  # (each run keeps its last three checkpoints: --keep-checkpoints 3)
    own=own-$(jobs_of "$run").bin
    kinds=(documents chunks); [ -f "$out/data/$own" ] && kinds+=(own)
    for starts in "${kinds[@]}"; do
      flag=(); [ $starts != chunks ] && flag=(--document-starts)
      data=val.bin; [ $starts = own ] && data=$own  # the run's own idle documents, not the text
      for length in "${lengths[@]}"; do
        for analysis in sinks norms; do
          "$cli" analyze $analysis "$out/$run" --step $step --data "$out/data/$data" --sequences 64 \
            --length "$length" "${flag[@]}" --out "$out/$run-$step-$analysis-$starts-$length.json" >/dev/null 2>&1
        done
      done
    done
  done
done
python3 - "$out" "$steps" "${runs[@]}" <<'PY' | tee "$out/summary.jsonl"
import json, os, sys
out, steps, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def records(path):  # metrics.jsonl's records; a torn line (a run killed mid-write) is skipped
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict):
            yield r
for run in runs:
    evals = {r["step"]: r["mean_loss"] for r in records(f"{out}/{run}/metrics.jsonl") if r.get("type") == "eval"}
    for step in (steps - 2000, steps):
        for length in (128, 512) if run == "ctx512" else (128,):
            row = {"run": run, "step": step, "length": length,
                   "val_ce": round(evals[step], 3) if step in evals else None}
            for starts in ("documents", "chunks", "own"):
                if not os.path.exists(f"{out}/{run}-{step}-sinks-{starts}-{length}.json"):
                    continue  # "own" for the runs with documents of their own only
                sinks = json.load(open(f"{out}/{run}-{step}-sinks-{starts}-{length}.json"))
                norms = json.load(open(f"{out}/{run}-{step}-norms-{starts}-{length}.json"))["residual_norms"]
                ratio = max(r["position0"]["mean"] / r["rest"]["mean"] for r in norms if r["point"].endswith("resid_pre"))
                row[starts] = {"sink_rate": round(sinks["sink_rate"], 3),
                               "query_sink_rate": round(sinks["query_sink_rate"], 3), "max_pos0_ratio": round(ratio, 2),
                               "sink_heads": sum(s >= 0.5 for s in sinks["sink_share"])}
            print(json.dumps(row))
PY

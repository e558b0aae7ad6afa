#!/usr/bin/env bash
# The bundled small models (issue 39): which recipe grows attention sinks, a large position-0 residual,
# induction on random tokens and the IOI circuit — a sweep of pretraining runs side by side on one GPU, the
# analyses that decide, then the removal with its vanilla control on the best GPT-2 and the best LLaMA.
#   tools/small-models-sweep.sh CLI OUT [TRAIN_SECONDS]      (tools/gpu-check.sh OUT build small-models)
# TRAIN_SECONDS (default 210) is the sweep's wall time on the device: a probe of a few steps measures each
# variant's speed while all run together, and each gets the steps that fill it. SWEEP_DEADLINE (seconds
# from the start, default 470) stops the removal experiments so that what was measured is still packed.
# SWEEP_DEVICE (default cuda), SWEEP_TRAIN_MB, SWEEP_PROBE_STEPS, SWEEP_STEPS (instead of the probe's),
# SWEEP_WARMUP, SWEEP_EVAL_TOKENS, SWEEP_MICRO (sequences per step, default 128: fewer, larger steps than
# round 1's 32, whose six runs side by side were launch-bound) and SWEEP_EXPERIMENT_ARGS (extra options of
# the removal and its control) make a quick dry run on a CPU possible. Writes OUT/models.tar.NN (the chosen pretrained folders small-gpt2/
# and small-llama/, in pieces of 15 MiB: cat them) and OUT/results.tar (sweep.jsonl — one line per variant:
# steps, losses and the four phenomena —, sweep.log, and the metrics, analyses and summaries of every run).
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/small-models-lib.sh
cli=$1 out=$2 train_seconds=${3:-210}
small_models_setup nf-small-models sweep.log "${SWEEP_DEVICE:-cuda}" "$out"

gpt2_shape=(--family gpt2 --layers 6 --heads 8 --d-model 256 --context 256 --vocab 2048)
llama_shape=(--family llama --layers 6 --heads 8 --kv-heads 4 --d-model 256 --mlp-width 688 --context 256 --vocab 2048)
# Round 2 (round 1, docs/gpu-runs/2026-11-27-h200-small-models: windows anywhere, no sinks at 21–163 M
# tokens). What should make them: a first token that is always the same (document windows: the window opens
# with the end-of-text token before a document, a BOS), so a head with nothing to do can park its attention
# there, and text on which heads have nothing to do (the random spans' first copies: "active-dormant" heads,
# Guo et al. 2024).
# name family lr weight-decay random-repeats document-windows
variants=(
  "gpt2-doc gpt2 2e-3 0.1 0.25 1"
  "gpt2-doc-r1 gpt2 2e-3 0.1 1 1"
  "gpt2-mix gpt2 2e-3 0.1 0.25 0.5"
  "gpt2-doc-wd gpt2 3e-3 0.3 0.25 1"
  "llama-doc llama 2e-3 0.1 0.25 1"
  "llama-doc-r1 llama 2e-3 0.1 1 1"
)
small_models_data "${SWEEP_TRAIN_MB:-300}" $(printf '%s\n' "${variants[@]}" | awk '{print $5}' | sort -u) || { log "data failed: $(tail -3 "$work/data.log")"; exit 1; }
log "data ready"
micro=${SWEEP_MICRO:-128} context=256
bf16=(); [ "$device" = cpu ] || bf16=(--bf16)
for v in "${variants[@]}"; do
  read -r name family _ <<<"$v"
  shape=("${gpt2_shape[@]}"); [ "$family" = llama ] && shape=("${llama_shape[@]}")
  "$cli" init --out "$work/$name-shape" "${shape[@]}" --seed 0 >/dev/null || exit 1
  cp $tok/vocab.json $tok/merges.txt "$work/$name-shape/"
done

variant() { printf '%s\n' "${variants[@]}" | grep "^$1 "; }
pretrain() {  # name steps run-dir extra-options…
  local name=$1 steps=$2 run=$3 family lr wd repeats documents
  shift 3
  read -r _ family lr wd repeats documents <<<"$(variant "$name")"
  "$cli" pretrain "$run" --model "$work/$name-shape" --train "$work/data/train-r$repeats.bin" --steps "$steps" \
    --lr "$lr" --min-lr "$(python3 -c "print($lr / 10)")" --weight-decay "$wd" --warmup "${SWEEP_WARMUP:-300}" \
    --document-windows "$documents" --micro-batch $micro --context $context --seed 0 --device "$device" \
    "${bf16[@]}" "$@" >"$run.log" 2>&1
}

# Probe: every variant at once for a few steps; the median speed of the later ones is what it gets in the sweep.
probe_steps=${SWEEP_PROBE_STEPS:-40}
for v in "${variants[@]}"; do
  read -r name _ <<<"$v"
  pretrain "$name" "$probe_steps" "$work/probe-$name" --warmup 0 --eval-interval 0 --checkpoint-interval 0 &
done
wait
declare -A steps
for v in "${variants[@]}"; do
  read -r name _ <<<"$v"
  steps[$name]=$(python3 - "$work/probe-$name/metrics.jsonl" "$train_seconds" $((micro * context)) <<'PY'
import json, statistics, sys
rates = [r["tokens_per_second"] for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "step"]
rate = statistics.median(rates[len(rates) // 3:])
print(max(1000, int(float(sys.argv[2]) * rate / int(sys.argv[3])) // 100 * 100))
PY
  ) || { log "probe of $name failed: $(tail -3 "$work/probe-$name.log")"; exit 1; }
  log "probe $name: ${steps[$name]} steps fit in $train_seconds s"
  steps[$name]=${SWEEP_STEPS:-${steps[$name]}}
done

for v in "${variants[@]}"; do
  read -r name _ <<<"$v"
  n=${steps[$name]}
  pretrain "$name" "$n" "$work/$name" --eval "$work/data/val.bin,$work/data/alt.bin" --eval-interval $((n / 4)) \
    --eval-tokens "${SWEEP_EVAL_TOKENS:-65536}" --checkpoint-interval $((n / 2)) &
done
wait
log "sweep trained"

# The four phenomena of each variant's final model (issue 39's thresholds), on the validation split.
for v in "${variants[@]}"; do
  read -r name _ <<<"$v"
  small_models_phenomena "$work/analyses-sweep/$name" \
    "{\"name\": \"$name\", \"steps\": ${steps[$name]}, \"metrics\": \"$work/$name/metrics.jsonl\"}" \
    "$work/$name/final" >"$work/$name.phenomena.json" 2>"$work/$name.phenomena.log" &
done
wait
cat "$work"/*.phenomena.json | tee "$work/sweep.jsonl"
log "phenomena measured"

# The best of each family: most thresholds met, then the highest sink rate.
best() {
  cat "$work"/$1-*.phenomena.json | python3 -c "
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.startswith('{\"name')]
print(max(rows, key=lambda r: (sum(r['passes']), r['sink_rate']))['name'])"
}
for family in gpt2 llama; do
  chosen=$(best $family) || { log "no $family variant measured"; continue; }
  log "small-$family: $chosen"
  folder=$work/small-$family
  mkdir -p "$folder"
  cp "$work/$chosen/final/config.json" "$work/$chosen/final/model.safetensors" $tok/vocab.json $tok/merges.txt "$folder/"
  echo "$chosen" >"$folder/VARIANT"
  read -r _ _ _ _ repeats documents <<<"$(variant "$chosen")"
  # Its analyses on the sequences where it showed its phenomena (chunks, or documents with their BOS).
  analyze_args=""
  grep -q '"on": "documents"' "$work/$chosen.phenomena.json" && analyze_args=--document-starts
  # The removal with the small preset and its control, on fine-tuning data of the pretraining mix.
  timeout $((${SWEEP_DEADLINE:-470} - (SECONDS - small_models_start))) env NF_CLI="$cli" NF_MODEL="$folder" \
    NF_PRESET=small NF_DEVICE="$device" NF_TRAIN_TOKENIZE="--random-repeats $repeats" \
    NF_TRAIN_ARGS="--document-windows $documents ${SWEEP_EXPERIMENT_ARGS:-}" NF_ANALYZE_ARGS="$analyze_args" \
    resources/tiny-gpt2/experiment.sh "$work/experiment-$family" --control >"$work/experiment-$family.log" 2>&1 &
done
wait
log "experiments done: $(grep -h "experiment:" "$work"/experiment-*.log | tr '\n' ' ')"
# Everything but the weights and token files, for docs/ (a few MB); the chosen weights in pieces.
(cd "$work" && tar cf "$out/results.tar" --exclude='*.safetensors' --exclude='*.bin' --exclude='*.txt' \
  --exclude='optimizer.pt' --exclude='data' --exclude='probe-*' --exclude='*-shape' ./*.json* ./*.log \
  ./analyses-sweep ./gpt2-* ./llama-* ./experiment-* 2>/dev/null)
(cd "$work" && tar cf - small-* | split -b 15M -d - "$out/models.tar.")
ls -l "$out"

#!/usr/bin/env bash
# The main job on the bundled default: remove LayerNorm from the bundled tiny GPT-2 with the tiny preset
# (PROTOCOL §2–4), export the LN-free result, evaluate it, check its circuits, run the analyses of PROTOCOL §7
# on the original and the LN-free model and draw their figures, and score them on downstream benchmarks made
# from the corpus (benchmarks.json, benchmarks.txt). With --control, also the vanilla fine-tuning control
# with the same data, learning rate and steps, and the comparison figure.
#   resources/tiny-gpt2/experiment.sh [WORK_DIR] [--control]      (after ./bootstrap.sh build)
# NF_MODEL=resources/tiny-llama runs the same experiment on the bundled tiny LLaMA-style model (same depth,
# same tokenizer, so the same preset and data); NF_MODEL=resources/small-gpt2 NF_PRESET=small on the small
# models (with NF_TRAIN_TOKENIZE="--random-repeats 0.25", their pretraining mix). NF_TRAIN_ARGS: more options
# for both runs; NF_ANALYZE_ARGS for the analyses of token sequences (e.g. --document-starts for a model
# pretrained on document windows). NF_DEVICE=cuda trains and analyses on a GPU, the removal and its control side by side.
# Fine-tuning data: the synthetic corpus with seed 1 (new documents of the pretraining distribution),
# tokenized with the bundled tokenizer. Everything lands in WORK_DIR (default runs/default).
set -euo pipefail
cd "$(dirname "$0")/../.."
cli="${NF_CLI:-build/app/normfree-cli}"
model="${NF_MODEL:-resources/tiny-gpt2}"
preset="${NF_PRESET:-tiny}"
device="${NF_DEVICE:-cpu}"
title="Bundled $(basename "$model")"
work="${1:-runs/default}"
control="${2:-}"
data="$work/data"
mkdir -p "$work"

if [ ! -f "$data/train.bin" ]; then
  "$cli" corpus --out "$data" --overwrite --seed 1 --train-mb 12 --val-mb 2 --alt-mb 2 > /dev/null
  for split in train val alt; do
    # NF_TRAIN_TOKENIZE: extra tokenize options for the training split, the pretraining mix of the model.
    extra=(); [ $split = train ] && extra=(${NF_TRAIN_TOKENIZE:-})
    "$cli" tokenize "$data/$split.txt" --tokenizer "$model" --out "$data/$split.bin" --overwrite "${extra[@]}" > /dev/null
  done
fi
# The IOI prompts on their own: a data folder made by another script (tools/autopilot-evidence.sh) has none.
[ -f "$data/ioi.json" ] || "$cli" ioi --tokenizer "$model" --count 480 --out "$data/ioi.json" > /dev/null
# Downstream benchmarks in HellaSwag's, WinoGrande's and LAMBADA's formats, made from the validation
# documents of the same corpus (docs/DOWNSTREAM.md).
bench="$work/bench-data/bench"
[ -f "$bench/lambada_test.jsonl" ] ||
  "$cli" corpus --out "$work/bench-data" --overwrite --seed 1 --train-mb 0 --val-mb 0 --alt-mb 0 --benchmarks 500 > /dev/null

# Both runs track NMAE, the sink rate and the position-0 norm ratio as they go (docs/TRAINING.md, "Tracked
# analyses"; about 5 % of the removal's time, tools/bench-tracking.sh).
train_args=(--model "$model" --train "$data/train.bin" --eval "$data/val.bin,$data/alt.bin" --preset "$preset"
            --device "$device" --eval-interval 50 --eval-tokens 65536 --checkpoint-interval 100
            --track nmae,sinks,pos0-ratio ${NF_TRAIN_ARGS:-})
summarize() {  # name, model folder → evaluations and circuit checks as JSON lines
  for split in val alt; do
    "$cli" eval "$2" "$data/$split.bin" --device "$device" 2>/dev/null | sed "s/^{/{\"name\":\"$1\",\"set\":\"$split\",/"
  done
  "$cli" analyze ioi "$2" --prompts "$data/ioi.json" --device "$device" | sed "s/^{/{\"name\":\"$1\",\"set\":\"ioi\",/"
  "$cli" analyze induction "$2" --span 50 --from "$data/train.bin" --device "$device" | sed "s/^{/{\"name\":\"$1\",\"set\":\"induction\",/"
}

# On a GPU the control trains beside the removal (on two cores it would only slow both down).
if [ "$control" = --control ] && [ "$device" != cpu ] && [ ! -f "$work/finetune/final/config.json" ]; then
  "$cli" finetune "$work/finetune" "${train_args[@]}" > /dev/null &
  control_pid=$!
fi
[ -f "$work/remove/final/config.json" ] || "$cli" remove "$work/remove" "${train_args[@]}" > /dev/null
[ -z "${control_pid:-}" ] || wait "$control_pid"
"$cli" export "$work/remove" --out "$work/lnfree" --overwrite --data "$data/val.bin" --device "$device" \
  > "$work/export.json"
{
  summarize original "$model"
  summarize ln-free "$work/remove/final"
} > "$work/summary.jsonl"
if [ "$control" = --control ]; then
  [ -f "$work/finetune/final/config.json" ] || "$cli" finetune "$work/finetune" "${train_args[@]}" > /dev/null
  summarize vanilla-finetuned "$work/finetune/final" >> "$work/summary.jsonl"
  if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
    /usr/bin/python3 docs/figures/loss_curves.py "$work/remove" "$work/finetune" "$work/loss_curves.png" \
      "$title: LN removal ($preset preset) vs vanilla fine-tune"
  fi
fi
# The tracked analyses over the removal (and the control's, with --control); a removal made before tracking
# existed has none, and gets no figure.
if grep -q '"type":"track"' "$work/remove/metrics.jsonl" && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 docs/figures/tracked_figure.py "$work/tracked_analyses.png" "$title: tracked analyses over the removal" \
    "$work/remove" $([ "$control" = --control ] && echo "$work/finetune") > /dev/null
fi
# The analyses of PROTOCOL §7 on each model, and their figures (docs/ANALYSES.md). Progress: analyses.log.
analyze_all() {  # name, model folder → $work/analyses/name/*.json
  local out="$work/analyses/$1"
  mkdir -p "$out"
  for kind in norms sinks dla neurons logit-lens; do
    "$cli" analyze "$kind" "$2" --data "$data/val.bin" --sequences 32 ${NF_ANALYZE_ARGS:-} --device "$device" \
      --out "$out/$kind.json" > /dev/null
  done
  "$cli" analyze patching "$2" --prompts "$data/ioi.json" --no-head-positions --device "$device" --out "$out/patching.json" \
    --csv-dir "$out/patching" > /dev/null
  "$cli" analyze circuit "$2" --prompts "$data/ioi.json" --device "$device" --out "$out/circuit-eap.json" > /dev/null
}
models=(original ln-free)
{
  analyze_all original "$model"
  analyze_all ln-free "$work/remove/final"
  compare="$work/remove/final"
  if [ "$control" = --control ]; then
    analyze_all vanilla "$work/finetune/final"
    compare="$work/finetune/final,$compare"
    compare_control=",$work/finetune/final"
    models=(original vanilla ln-free)
  fi
  "$cli" analyze calibration "$model" --compare "$compare" --data "$data/val.bin" --sequences 32 ${NF_ANALYZE_ARGS:-} \
    --device "$device" \
    --out "$work/analyses/calibration.json" > /dev/null
} 2> "$work/analyses.log"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 docs/figures/analysis_figures.py "$work/analyses" "$work/figures" "${models[@]}"
fi
# The benchmarks on the same items for every model (the original first: differences are against it).
"$cli" bench all "$model" --compare "$work/remove/final${compare_control:-}" --data "$bench" --device "$device" \
  --out "$work/benchmarks.json" 2>&1 > /dev/null | grep -v '^score ' > "$work/benchmarks.txt"
echo "experiment: results in $work (summary.jsonl, export.json, remove/, lnfree/, analyses/, figures/, tracked_analyses.png, benchmarks.json, benchmarks.txt${control:+, finetune/, loss_curves.png})" >&2

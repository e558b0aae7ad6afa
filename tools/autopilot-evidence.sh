#!/usr/bin/env bash
# The autopilot against the presets (docs/RESULTS.md, "The autopilot against the presets"): on the bundled
# tiny GPT-2 and tiny LLaMA, the `tiny` preset's fixed schedule, the same order timed by the autopilot, and
# the vanilla fine-tuning control, all on the main job's synthetic data; then the hard case, the preset's
# order with every gap cut to 2 steps, fixed and with the autopilot; every final model evaluated on the whole
# validation split; the figure of the decisions.
#   tools/autopilot-evidence.sh [OUT_DIR]      (after ./bootstrap.sh build; ~25 min on 2 cores)
# Files: OUT_DIR/<model>-{preset,autopilot,control}/ (runs), OUT_DIR/hard-{fixed,autopilot}/,
#        OUT_DIR/summary.jsonl, docs/figures/autopilot_tiny.png
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-runs/autopilot-evidence}"
cli=build/app/normfree-cli
mkdir -p "$out"

data=runs/default/data  # the main job's corpus (seed 1): tokenized for GPT-2 there, for LLaMA here
if [ ! -f "$data/train.bin" ]; then
  "$cli" corpus --out "$data" --seed 1 --train-mb 12 --val-mb 2 --alt-mb 2 > /dev/null
  for split in train val alt; do
    "$cli" tokenize "$data/$split.txt" --tokenizer resources/tiny-gpt2 --out "$data/$split.bin" > /dev/null
  done
fi
llama="$out/llama-data"
mkdir -p "$llama"
for split in train val; do
  [ -f "$llama/$split.bin" ] ||
    "$cli" tokenize "$data/$split.txt" --tokenizer resources/tiny-llama --out "$llama/$split.bin" > /dev/null
done

# One run unless it finished already: $1 run folder, $2 command, the rest its arguments.
run() {
  local dir=$1 command=$2
  shift 2
  [ -f "$dir/final/config.json" ] && return
  rm -rf "$dir"
  echo "autopilot-evidence.sh: $command $dir"
  "$cli" "$command" "$dir" "$@" --preset tiny --eval-interval 100 > /dev/null
}
for model in gpt2 llama; do
  train=$data/train.bin val=$data/val.bin
  [ "$model" = llama ] && train=$llama/train.bin val=$llama/val.bin
  common=(--model "resources/tiny-$model" --train "$train" --eval "$val")
  run "$out/$model-preset" remove "${common[@]}"
  run "$out/$model-autopilot" remove "${common[@]}" --autopilot
  run "$out/$model-control" finetune "${common[@]}"
done
python3 - "$out/gaps2.json" << 'PY'
import json, sys
events, step = [], 40
for site in ["LN_mlp", "LN_qk", "LN_v"]:
    for layer in range(4):
        events.append({"step": step, "site": site, "layer": layer})
        step += 2
events.append({"step": step, "site": "LN_f"})
json.dump({"events": events}, open(sys.argv[1], "w"))
PY
common=(--model resources/tiny-gpt2 --train "$data/train.bin" --eval "$data/val.bin" --schedule "$out/gaps2.json")
run "$out/hard-fixed" remove "${common[@]}" || true  # it may diverge and stop: that is the finding
run "$out/hard-autopilot" remove "${common[@]}" --autopilot

: > "$out/summary.jsonl"
for dir in "$out"/{gpt2,llama}-{preset,autopilot,control} "$out"/hard-{fixed,autopilot}; do
  [ -f "$dir/final/config.json" ] || { echo "{\"run\": \"$dir\", \"finished\": false}" >> "$out/summary.jsonl"; continue; }
  val=$data/val.bin
  case "$dir" in *llama*) val=$llama/val.bin ;; esac
  "$cli" eval "$dir/final" "$val" --context 128 |
    python3 -c "import json,sys; r=json.load(sys.stdin); print(json.dumps({'run': '$dir', 'val_ce': r['mean_loss']}))" \
      >> "$out/summary.jsonl"
done
/usr/bin/python3 docs/figures/autopilot_figure.py docs/figures/autopilot_tiny.png \
  "tiny GPT-2" "$out/gpt2-preset" "$out/gpt2-autopilot" "tiny LLaMA" "$out/llama-preset" "$out/llama-autopilot"
cat "$out/summary.jsonl"

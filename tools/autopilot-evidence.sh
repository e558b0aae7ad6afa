#!/usr/bin/env bash
# The autopilot against the presets (docs/RESULTS.md, "The autopilot against the presets"): on the bundled
# tiny GPT-2 and tiny LLaMA, the `tiny` preset's fixed schedule, the same order timed by the autopilot, and
# the vanilla fine-tuning control, all on the main job's synthetic data; then the hard cases, the preset's
# order with every gap cut to 2 steps and with every removal at step 40, fixed and with the autopilot; every
# final model evaluated on the whole validation split; the figure of the decisions.
#   tools/autopilot-evidence.sh [OUT_DIR]      (after ./bootstrap.sh build; about an hour on 2 cores)
# Files: OUT_DIR/<model>-{preset,autopilot,control}/ (runs), OUT_DIR/hard-{fixed,autopilot}/ (gaps of 2),
#        OUT_DIR/once-{fixed,unguarded,autopilot}/ (all at once), OUT_DIR/summary.jsonl (per run: the
#        validation CE, the step it was norm-free at, the steps trained, its highest training CE after the
#        first removal, how it ended), docs/figures/autopilot_tiny.png
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-runs/autopilot-evidence}"
cli=build/app/normfree-cli
mkdir -p "$out"

data=runs/default/data  # the main job's corpus (seed 1): tokenized for GPT-2 there, for LLaMA here
if [ ! -f "$data/train.bin" ]; then
  "$cli" corpus --out "$data" --overwrite --seed 1 --train-mb 12 --val-mb 2 --alt-mb 2 > /dev/null
  for split in train val alt; do
    "$cli" tokenize "$data/$split.txt" --tokenizer resources/tiny-gpt2 --out "$data/$split.bin" --overwrite > /dev/null
  done
fi
llama="$out/llama-data"
mkdir -p "$llama"
for split in train val; do
  [ -f "$llama/$split.bin" ] ||
    "$cli" tokenize "$data/$split.txt" --tokenizer resources/tiny-llama --out "$llama/$split.bin" --overwrite > /dev/null
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
python3 - "$out/once.json" << 'PY'
import json, sys
events = [{"step": 40, "site": site, "layer": layer} for site in ["LN_mlp", "LN_qk", "LN_v"] for layer in range(4)]
json.dump({"events": events + [{"step": 40, "site": "LN_f"}]}, open(sys.argv[1], "w"))
PY
common=(--model resources/tiny-gpt2 --train "$data/train.bin" --eval "$data/val.bin" --schedule "$out/gaps2.json")
run "$out/hard-fixed" remove "${common[@]}" || true  # it may diverge and stop: that is the finding
run "$out/hard-autopilot" remove "${common[@]}" --autopilot
# Every removal at once: the divergence guard (default: stop) stops the fixed run at the spike; without the
# guard it goes on from a wrecked model.
common=(--model resources/tiny-gpt2 --train "$data/train.bin" --eval "$data/val.bin" --schedule "$out/once.json")
run "$out/once-fixed" remove "${common[@]}" || true
run "$out/once-unguarded" remove "${common[@]}" --divergence-factor 0
run "$out/once-autopilot" remove "${common[@]}" --autopilot

: > "$out/summary.jsonl"
# How each run went, from its records: the step it was norm-free at, the steps trained, the highest training
# CE after the first removal, how it ended.
course() {
  python3 - "$1" << 'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1] + "/metrics.jsonl")]
events = [r["step"] for r in records if r["type"] == "event"]
first = min(events, default=0)
ces = [r["ce"] for r in records if r["type"] == "step" and r["step"] > first]
ends = [r for r in records if r["type"] in ("finish", "stop", "divergence")]
end = ends[-1] if ends else {}
print(json.dumps({"norm_free_at": max(events, default=None) if any(
    r["type"] == "finish" and r.get("layernorm_free") for r in records) else None,
    "steps": max([r["step"] for r in records if r["type"] == "step"], default=0),
    "peak_ce": max(ces, default=None), "ended": end.get("type"), "why": end.get("reason", "")}))
PY
}
for dir in "$out"/{gpt2,llama}-{preset,autopilot,control} "$out"/hard-{fixed,autopilot} "$out"/once-{fixed,unguarded,autopilot}; do
  how=$(course "$dir")
  val_ce=null
  if [ -f "$dir/final/config.json" ]; then
    val=$data/val.bin
    case "$dir" in *llama*) val=$llama/val.bin ;; esac
    val_ce=$("$cli" eval "$dir/final" "$val" --context 128 2> /dev/null |
      python3 -c "import json,sys; print(json.load(sys.stdin)['mean_loss'])")
  fi
  python3 -c "import json,sys; r={'run': sys.argv[1], 'val_ce': json.loads(sys.argv[2])}; r.update(json.loads(sys.argv[3])); print(json.dumps(r))" \
    "$dir" "$val_ce" "$how" >> "$out/summary.jsonl"
done
/usr/bin/python3 docs/figures/autopilot_figure.py docs/figures/autopilot_tiny.png \
  "tiny GPT-2" "preset tiny" "$out/gpt2-preset" "$out/gpt2-autopilot" \
  "tiny LLaMA" "preset tiny" "$out/llama-preset" "$out/llama-autopilot" \
  "tiny GPT-2, all 13 removals at step 40" "fixed, guard off" "$out/once-unguarded" "$out/once-autopilot"
cat "$out/summary.jsonl"

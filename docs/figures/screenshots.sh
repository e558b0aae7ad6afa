#!/usr/bin/env bash
# The visual check of the workbench: every pane on the bundled model before removal and on its LN-free
# result after, at 1366×768 and 1600×1000, in English and German — 80 PNGs (and the connected run's) to
# look at after a GUI change.
# Each launch starts from a fresh profile (the first-launch layout), shoots the panes once uncomputed, then
# computes every analysis, selects head L1H2 and shoots the window with each pane (and the Model view) in
# front. "After" is the tiny removal of the main job (runs/default/remove); made here if missing (~10 min).
#   docs/figures/screenshots.sh [OUT_DIR]        (after ./bootstrap.sh build; ~6 min on 2 cores)
# Files: OUT_DIR/{before,after}-{en,de}-{1366x768,1600x1000}-<pane>.png  (default OUT_DIR build/screenshots)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-build/screenshots}"
cli=build/app/normfree-cli
model=resources/tiny-gpt2
run=runs/default/remove
command -v xvfb-run > /dev/null || { echo "screenshots.sh: xvfb-run is missing (./bootstrap.sh installs xvfb)" >&2; exit 1; }
[ -x build/app/normfree ] || { echo "screenshots.sh: build/app/normfree is missing (./bootstrap.sh build)" >&2; exit 1; }

data=runs/default/data
if [ ! -f "$data/train.bin" ]; then
  "$cli" corpus --out "$data" --overwrite --seed 1 --train-mb 12 --val-mb 2 --alt-mb 2 > /dev/null
  for split in train val alt; do "$cli" tokenize "$data/$split.txt" --tokenizer "$model" --out "$data/$split.bin" --overwrite > /dev/null; done
fi
if [ -z "${SEQUENCES_ONLY:-}" ] && [ ! -f "$run/final/config.json" ]; then
  echo "screenshots.sh: making the LN-free model (the main job's removal, $run)"
  "$cli" remove "$run" --model "$model" --train "$data/train.bin" --eval "$data/val.bin,$data/alt.bin" \
    --preset tiny --eval-interval 50 --eval-tokens 65536 --checkpoint-interval 100 > /dev/null
fi

# The workbench on a fresh profile (the first-launch layout) under a virtual screen of WIDTHxHEIGHT ($1).
launch() {
  local screen=$1
  shift
  local home
  home=$(mktemp -d)
  mkdir -m 700 "$home/run"
  HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run" \
    timeout 600 xvfb-run -a -s "-screen 0 ${screen}x24" build/app/normfree "$@"
  rm -rf "$home"
}

mkdir -p "$out"
for size in 1366x768 1280x720; do
  launch "$size" "$model" --language en --whole-screen --screenshot-sequence open-another-model \
    --screenshot-dir "$out" --prefix "sequence-$size"
  served=$(mktemp -d)/served
  "$cli" remove "$served" --model "$model" --train "$data/train.bin" --steps 100000 --serve 0 > /dev/null &
  cli_pid=$!
  for _ in $(seq 600); do [ -f "$served/serve.json" ] && break; sleep 0.2; done
  launch "$size" resources/tiny-llama --language en --whole-screen --connect "$served" \
    --screenshot-sequence connect-after-open --screenshot-dir "$out" --prefix "sequence-$size"
  kill "$cli_pid"
  wait "$cli_pid" || true
  rm -rf "$(dirname "$served")"
done
if [ -n "${SEQUENCES_ONLY:-}" ]; then
  echo "screenshots.sh: wrote the sequences to $out"
  exit 0
fi

for size in 1366x768 1600x1000; do
  for lang in en de; do
    for stage in before after; do
      target=$model
      [ "$stage" = after ] && target=$run
      launch 1700x1100 "$target" --size "$size" --language "$lang" \
        --screenshot-panes "$out" --prefix "$stage-$lang-$size"
    done
  done
done
echo "screenshots.sh: wrote $(ls "$out"/*.png | wc -l) screenshots to $out"

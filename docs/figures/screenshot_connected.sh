#!/usr/bin/env bash
# docs/TRAINING.md's screenshot: the workbench connected to a run that a normfree-cli process trains and
# serves — as a GPU server's run is reached through an SSH tunnel, here on loopback. Starts
# `normfree-cli remove … --serve 0` on the bundled tiny model, opens the workbench under a virtual X server
# with `--connect RUN`, refreshes the analyses (computed by the CLI process) at step 60, shows head L1H2's
# detail and grabs the window while the run trains on.
#   docs/figures/screenshot_connected.sh [OUT.png]     (after ./bootstrap.sh build; ~4 min on 2 cores)
# NF_SCREENSHOT_RUN_ARGS adds arguments to the served run; TRAINING.md's autopilot picture is
#   NF_SCREENSHOT_STEP=90 NF_SCREENSHOT_RUN_ARGS=--autopilot \
#     docs/figures/screenshot_connected.sh docs/figures/workbench_autopilot.png
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-docs/figures/workbench_connected.png}"
cli=build/app/normfree-cli
model=resources/tiny-gpt2
command -v xvfb-run > /dev/null || { echo "screenshot_connected.sh: xvfb-run is missing (./bootstrap.sh installs xvfb)" >&2; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2> /dev/null; rm -rf "$work"' EXIT

# Token files from the project's synthetic corpus: small, a picture needs no more.
"$cli" corpus --out "$work/data" --seed 1 --train-mb 2 --val-mb 1 --alt-mb 1 > /dev/null
for split in train val; do
  "$cli" tokenize "$work/data/$split.txt" --tokenizer "$model" --out "$work/data/$split.bin" > /dev/null
done

"$cli" remove "$work/run" --model "$model" --train "$work/data/train.bin" --eval "$work/data/val.bin" \
  --preset tiny --serve 0 ${NF_SCREENSHOT_RUN_ARGS:-} > /dev/null 2> "$work/cli.log" &
pid=$!
until [ -f "$work/run/serve.json" ]; do  # written once the run serves
  kill -0 "$pid" 2> /dev/null || { cat "$work/cli.log" >&2; exit 1; }
  sleep 0.2
done

home="$work/home"
mkdir -p -m 700 "$home/run"
HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run" \
  timeout 900 xvfb-run -a -s "-screen 0 1680x1050x24" \
  build/app/normfree --connect "$work/run" --screenshot "$out" --screenshot-step "${NF_SCREENSHOT_STEP:-60}"
kill -INT "$pid"  # the run stops with a checkpoint, as Stop would
wait "$pid" || true
pid=
echo "screenshot_connected.sh: wrote $out"

#!/usr/bin/env bash
# One removal run with 1 worker against the same run with N workers (--nproc N), alternating, on the
# bundled tiny GPT-2 and the bundled job's data: the median training throughput (tokens per second over
# the steps after warm-up) of each, and their ratio. Speed is not tested anywhere; this prints figures.
#   tests/bench/bench_workers.sh [--workers N] [--steps S] [--rounds R] [--device cpu|cuda] [-- extra options]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cli="$root/build/app/normfree-cli"
model="$root/resources/tiny-gpt2"
data="$root/runs/default/data"
workers=2 steps=40 rounds=3 device=cpu extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --workers) workers="$2"; shift 2;;
    --steps) steps="$2"; shift 2;;
    --rounds) rounds="$2"; shift 2;;
    --device) device="$2"; shift 2;;
    --) shift; extra=("$@"); break;;
    *) echo "usage: $0 [--workers N] [--steps S] [--rounds R] [--device D] [-- options]" >&2; exit 2;;
  esac
done
[ -x "$cli" ] || { echo "bench_workers: build first ($cli is missing)" >&2; exit 1; }
if [ ! -f "$data/train.bin" ]; then
  mkdir -p "$data"
  "$cli" corpus --out "$data" --overwrite --seed 1 --train-mb 12 --val-mb 2 --alt-mb 2 > /dev/null
  "$cli" tokenize "$data/train.txt" --tokenizer "$model" --out "$data/train.bin" --overwrite > /dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every site stays real and tracked: the protocol's full per-step cost, for the whole run.
echo '{"events": []}' > "$work/schedule.json"

# The median tokens/s of a run's steps after the first 5 (warm-up), from its metrics.jsonl.
median_rate() {
  python3 - "$1/metrics.jsonl" <<'EOF'
import json, statistics, sys
rates = [r["tokens_per_second"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "step"]
print(f"{statistics.median(rates[5:]):.0f}")
EOF
}

run() {  # run <name> <nproc>
  "$cli" remove "$work/$1" --model "$model" --train "$data/train.bin" --preset tiny --steps "$steps" \
    --schedule "$work/schedule.json" --eval-interval 0 --checkpoint-interval 0 --device "$device" \
    --nproc "$2" "${extra[@]}" > /dev/null 2>&1
  median_rate "$work/$1"
}

echo "round | 1 worker tok/s | $workers workers tok/s | ratio"
for round in $(seq 1 "$rounds"); do
  one=$(run "one-$round" 1)
  many=$(run "many-$round" "$workers")
  echo "$round | $one | $many | $(python3 -c "print(f'{$many / $one:.3f}')")"
done

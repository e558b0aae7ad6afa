#!/usr/bin/env bash
# What tracked analyses cost a whole removal: the main job's removal of the bundled tiny GPT-2 (tiny preset,
# its evaluations and checkpoints, resources/tiny-gpt2/experiment.sh) timed without tracking and with
# `--track` at the default cadence, alternating, in the same invocation so machine noise hits both. Prints
# each run's wall time, the ratio of the medians, and what one measurement of each tracked analysis took.
#   tools/bench-tracking.sh [WORK_DIR] [ROUNDS] [ANALYSES]      (after ./bootstrap.sh build and the main job)
# WORK_DIR (default runs/bench-tracking) keeps the last round's tracked run; the data is the main job's
# (runs/default/data). ANALYSES default: nmae,sinks,pos0-ratio (what the main job tracks).
set -euo pipefail
cd "$(dirname "$0")/.."
cli="${NF_CLI:-build/app/normfree-cli}"
work="${1:-runs/bench-tracking}"
rounds="${2:-2}"
analyses="${3:-nmae,sinks,pos0-ratio}"
data=runs/default/data
[ -f "$data/val.bin" ] || { echo "bench-tracking: run the main job first (it makes $data)" >&2; exit 1; }
args=(--model resources/tiny-gpt2 --train "$data/train.bin" --eval "$data/val.bin,$data/alt.bin" --preset tiny
      --eval-interval 50 --eval-tokens 65536 --checkpoint-interval 100)
mkdir -p "$work"
timed() {  # run folder, extra options… → seconds of wall time
  rm -rf "$1"
  local start end
  start=$(date +%s.%N)
  "$cli" remove "$1" "${args[@]}" "${@:2}" > /dev/null 2>&1
  end=$(date +%s.%N)
  /usr/bin/python3 -c "print(round($end - $start, 1))"
}
plain=() tracked=()
for ((r = 1; r <= rounds; r++)); do
  # The two in turn, each first in every other round (the second run of a round tends to be the slower).
  if ((r % 2)); then
    plain+=("$(timed "$work/plain")")
    tracked+=("$(timed "$work/tracked" --track "$analyses")")
  else
    tracked+=("$(timed "$work/tracked" --track "$analyses")")
    plain+=("$(timed "$work/plain")")
  fi
  echo "round $r: without tracking ${plain[-1]} s, with --track $analyses ${tracked[-1]} s" >&2
done
/usr/bin/python3 - "$work/tracked/metrics.jsonl" "$analyses" "${plain[*]}" "${tracked[*]}" <<'PY'
import json, statistics, sys
log, analyses, plain, tracked = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
plain, tracked = [float(x) for x in plain], [float(x) for x in tracked]
seconds, points = {}, 0
for line in open(log, encoding="utf-8"):
    r = json.loads(line)
    if r["type"] != "track":
        continue
    points += 1
    for name, s in r["seconds"].items():
        seconds.setdefault(name, []).append(s)
ratio = statistics.median(tracked) / statistics.median(plain)
print(f"bundled removal (500 steps): without tracking {statistics.median(plain):.1f} s, with --track {analyses} "
      f"{statistics.median(tracked):.1f} s (medians of {len(plain)}): ×{ratio:.3f}, {100 * (ratio - 1):+.1f} %")
print(f"{points} measurements; per measurement: " +
      ", ".join(f"{n} {statistics.mean(v):.3f} s" for n, v in seconds.items()))
print(json.dumps({"benchmark": "tracking", "analyses": analyses, "plain_seconds": plain, "tracked_seconds": tracked,
                  "ratio": ratio, "measurements": points,
                  "seconds_per_measurement": {n: statistics.mean(v) for n, v in seconds.items()}}))
PY

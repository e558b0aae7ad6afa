#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/CMakeLists.txt, clang with ASan + UBSan) and runs each on a copy
# of its seed corpus. Exits 1 on any finding (crash, sanitizer report, leak, timeout, out-of-memory) and
# prints the path of the input that caused it; 77 when clang or libFuzzer is missing (CTest's skip code).
#   tests/fuzz/run_fuzzers.sh                       every target for 10 s
#   tests/fuzz/run_fuzzers.sh --runs 1000000 fuzz_schedule
# Options: --seconds S | --runs N (per target), --build DIR (default build-fuzz), --work DIR (the corpus
# copies, logs and crash inputs; default DIR/work), --jobs N (build jobs; default: all cores), --list,
# --keep-going (libFuzzer's fork mode: a finding is saved and fuzzing goes on, so that a known bug does not
# stop the rest of a target's budget; the exit status still reports it).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$repo/build-fuzz"
work=""
budget=(-max_total_time=10)
jobs="$(nproc)"
list=0
mode=()
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) budget=(-max_total_time="$2"); shift 2 ;;
    --runs) budget=(-runs="$2"); shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --list) list=1; shift ;;
    --keep-going) mode=(-fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1); shift ;;
    -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
    fuzz_*) targets+=("$1"); shift ;;
    *) echo "run_fuzzers: unknown argument '$1' (--help)" >&2; exit 2 ;;
  esac
done
work="${work:-$build/work}"

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev), checked by linking a tiny target.
cxx="${NF_FUZZ_CXX:-$(command -v clang++ || true)}"
if [ -z "$cxx" ]; then
  echo "run_fuzzers: SKIP: clang++ not found (./bootstrap.sh installs clang)"
  exit 77
fi
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' >"$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "run_fuzzers: SKIP: $cxx cannot link -fsanitize=fuzzer,address,undefined (libclang-rt-14-dev?):"
  head -3 "$probe/err"
  exit 77
fi

if [ ! -f "$build/build.ninja" ]; then
  CXX="$cxx" cmake -S "$here" -B "$build" -G Ninja >/dev/null
fi
cmake --build "$build" -j "$jobs" >"$probe/build.log" 2>&1 || { cat "$probe/build.log"; exit 1; }

mapfile -t built < <(find "$build" -maxdepth 1 -type f -executable -name 'fuzz_*' -printf '%f\n' | sort)
if [ "$list" = 1 ]; then
  printf '%s\n' "${built[@]}"
  exit 0
fi
[ ${#targets[@]} -gt 0 ] || targets=("${built[@]}")

# Reports and leaks end the run (UBSan is built without recovery); stack traces with symbols.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:symbolize=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=0
summary=()
for target in "${targets[@]}"; do
  name="${target#fuzz_}"
  if [ ! -x "$build/$target" ] || [ ! -d "$here/corpus/$name" ]; then
    echo "run_fuzzers: no target or no corpus for $target" >&2
    exit 2
  fi
  # libFuzzer adds the inputs it finds to its first corpus folder: a fresh copy, never the repository's.
  dir="$work/$target"
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/findings"
  cp "$here/corpus/$name"/* "$dir/corpus/"
  dict=()
  [ -f "$here/dict/$name.dict" ] && dict=(-dict="$here/dict/$name.dict")
  # The inputs that once found a bug in this target (findings/) are replayed first: each must now pass.
  mapfile -t replay < <(find "$here/findings" -maxdepth 1 -type f -name "$name-*" | sort)
  if [ ${#replay[@]} -gt 0 ] && ! "$build/$target" "${replay[@]}" >"$dir/replay.log" 2>&1; then
    echo "run_fuzzers: $target fails again on an input that once found a bug:"
    grep -E 'Running:|ERROR:|runtime error:|SUMMARY:' "$dir/replay.log" | tail -4
    echo "log: $dir/replay.log"
    failed=1
  fi
  log="$dir/fuzz.log"
  echo "== $target ${budget[*]}"
  start=$(date +%s%N)
  set +e
  "$build/$target" "${budget[@]}" "${mode[@]}" -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$dir/findings/" "${dict[@]}" "$dir/corpus" >"$log" 2>&1
  rc=$?
  set -e
  seconds=$(awk -v ns=$(($(date +%s%N) - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')
  # The last status line ("#1000000 DONE cov: 812 ft: 3411 corp: 402/61Kb …") and the final stats.
  status="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  # Fork mode prints no final stats: its runs are the status line's count.
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")"
  [ -n "$runs" ] || runs="$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$status")"
  speed="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")"
  cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$status")"
  ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$status")"
  corp="$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$status")"
  line="$(printf '%-22s runs %-8s %7s s  %6s exec/s  cov %-5s ft %-6s corpus %s' "$target" "${runs:-?}" \
    "$seconds" "${speed:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}")"
  mapfile -t found < <(find "$dir/findings" -type f | sort)
  if [ "$rc" -ne 0 ] || [ ${#found[@]} -gt 0 ]; then
    failed=1
    line="$line  FINDING (exit $rc)"
    grep -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|^finding:|SUMMARY:' "$log" | head -5
    for f in "${found[@]}"; do echo "finding input: $f (reproduce: $build/$target $f)"; done
    echo "log: $log"
  fi
  echo "$line"
  summary+=("$line")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$failed"

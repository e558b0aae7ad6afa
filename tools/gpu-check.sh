#!/usr/bin/env bash
# The CUDA path, checked on a GPU machine with an official LibTorch 2.x (the one of its Python torch):
# builds the engine, the CLI, the engine tests and the benchmarks without Qt, runs the tests (the CUDA
# parity test included) and the GPU benchmarks, and writes logs and figures to OUT.
#
#   tools/gpu-check.sh --pack-deps            here, on Debian: copies the header-only dependencies
#                                             (nlohmann_json, CLI11) into .deps/ for a machine without them
#   tools/gpu-check.sh OUT [STAGE…]           on the GPU machine; stages (default: all, in this order):
#       build      configure and build into build-gpu/ (GUI off)
#       test       ctest (every engine test; test_cuda's parity cases need the GPU)
#       test-cuda  test_cuda alone (a build of NF_GPU_TARGETS that includes it)
#       step       GPT-2 Small removal step: the engine's tokens/s with the loss over whole logits, in blocks
#                  of rows (NF_CUDA_CROSS_ENTROPY=blocks) and by the engine's own row kernel (=kernel),
#                  against eager PyTorch and torch.compile
#       preset     the gpt2 preset's schedule on random GPT-2 Small weights and tokens, for PRESET_SECONDS
#                  (default 240), extrapolated to all 300 steps
#       sizes      GPT-2 Medium, Large and XL shapes at the planner's settings: tokens/s and peak memory
#       analysis   DLA + DE of every component of a GPT-2-Small-shaped model on 1000 × 512 tokens
#       families   every family against Hugging Face transformers itself (needs it installed): loading, and the
#                  standard export of a removal run (tests/reference/hf_transformers_check.py)
#       family-step  removal step of Pythia-160M's and SmolLM2-135M's shapes: the engine against eager
#                  transformers (tests/reference/bench_hf_cuda.py)
#       profile    where a GPT-2 Small removal step's GPU time goes, kernel by kernel: the engine's (Nsight
#                  Compute, whole logits and the row kernel) against eager and compiled PyTorch's
#                  (torch.profiler), by tests/reference/kernel_profile.py
#       small-models  the bundled small GPT-2 and LLaMA: the pretraining sweep, the removal and its control
#                  (tools/small-models-sweep.sh; SMALL_SECONDS of sweep, default 210, experiments stopped
#                  SMALL_UNTIL s after this script's start, default 560; not in the default list)
# NF_GPU_TARGETS limits the build to some targets (e.g. normfree-cli for small-models alone).
# Figures: OUT/figures.jsonl (one JSON object per measurement), logs: OUT/*.log, summary: OUT/summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."

if [[ "${1:-}" == "--pack-deps" ]]; then
  rm -rf .deps && mkdir -p .deps/include .deps/share/cmake
  cp -r /usr/include/nlohmann /usr/include/CLI /usr/include/gloo .deps/include/  # gloo: ProcessGroupGloo.hpp includes it; pip torch ships none
  cp -r /usr/share/cmake/nlohmann_json /usr/share/cmake/CLI11 .deps/share/cmake/
  echo "header-only dependencies in .deps/ ($(du -sh .deps | cut -f1)); carry .deps to the GPU machine"
  exit 0
fi

OUT=${1:?usage: tools/gpu-check.sh OUT [STAGE…] (or --pack-deps)}
shift
mkdir -p "$OUT"
STAGES=${*:-build test step preset sizes analysis families family-step profile}
BUILD=build-gpu
JOBS=$(nproc)
SUMMARY="$OUT/summary.txt"
FIGURES="$OUT/figures.jsonl"
export TMPDIR=${TMPDIR:-/tmp}
note() { echo "$*" | tee -a "$SUMMARY"; }
# Runs a stage's command with its output in OUT/NAME.log; notes how it ended.
stage() {
  local name=$1
  shift
  local start=$SECONDS
  "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  note "stage $name: exit $rc after $((SECONDS - start)) s"
  return $rc
}
# The JSON lines a benchmark printed after "JSON ", tagged with the stage.
collect() { sed -n 's/^JSON //p' "$OUT/$1.log" | python3 -c "
import json, sys
for line in sys.stdin:
    j = json.loads(line); j['stage'] = '$1'; print(json.dumps(j))" >>"$FIGURES"; }

build() {
  local torch_prefix formats=ON
  torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
  # tokenizer.json and tokenizer.model need PCRE2, ICU and SentencePiece's development files; a machine
  # without them builds the rest (only GPT-2's vocab.json + merges.txt are then read).
  pkg-config --exists libpcre2-8 icu-uc sentencepiece 2>/dev/null || formats=OFF
  echo "tokenizer formats (PCRE2, ICU, SentencePiece): $formats"
  # The steering endpoint needs cpp-httplib; a server without it follows runs through their files.
  local steering=ON
  pkg-config --exists cpp-httplib 2>/dev/null || steering=OFF
  echo "steering endpoint (cpp-httplib): $steering"
  # nccl.h for multi-worker CUDA runs: pip's nvidia-nccl package ships it beside torch.
  local nccl_include
  nccl_include=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))' \
    2>/dev/null || true)
  local kernels
  # The engine's own CUDA kernels first; should they not build there, the rest without them (a stage that
  # needs them says so), so that one kernel cannot cost a lease's other measurements.
  for kernels in ON OFF; do
    echo "the engine's own CUDA kernels: $kernels"
    cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DNF_BUILD_GUI=OFF \
      -DCMAKE_PREFIX_PATH="$torch_prefix;$PWD/.deps" -DNF_REFERENCE_PYTHON="$(command -v python3)" \
      -DTORCH_CUDA_ARCH_LIST=9.0 -DNF_TOKENIZER_FORMATS=$formats -DNF_STEERING=$steering -DNF_CUDA_KERNELS=$kernels \
      ${nccl_include:+-DNF_NCCL_INCLUDE_DIR=$nccl_include} &&
      cmake --build $BUILD -j "$JOBS" ${NF_GPU_TARGETS:+--target $NF_GPU_TARGETS} -- -k 0 && return 0
    echo "the build with the engine's own CUDA kernels $kernels failed"
  done
  return 1
}

run_tests() {
  $BUILD/tests/core/test_cuda | tee "$OUT/test_cuda.log"
  ctest --test-dir $BUILD -j 8 -LE lint -E test_cuda --output-on-failure --timeout 600  # test_cuda: just run
}

step() {
  local shape="--layers 12 --heads 12 --d-model 768 --vocab 50257 --context 1024" way
  # Issue 42's A/B at the gpt2 preset's micro-batch of 32: the loss over whole float32 logits, in blocks of
  # rows by LibTorch's operations, and in blocks by the engine's row kernel (a build with the engine's CUDA
  # kernels); speed and peak memory, the JSON's "cross_entropy" naming the path. STEP_FINETUNE=1 adds the
  # fine-tuning step (no removal) of the first.
  for way in logits blocks kernel; do
    NF_CUDA_CROSS_ENTROPY=$way $BUILD/tests/bench_training --device cuda --bf16 $shape --batch 32 --steps 12 \
      --rounds 1 --modes "$([ "${STEP_FINETUNE:-0}" = 1 ] && [ $way = logits ] && echo finetune,)remove"
  done
  python3 tests/reference/bench_eager_cuda.py --micro 32 --steps 10 | tail -1 | sed 's/^/JSON /'
  python3 tests/reference/bench_eager_cuda.py --micro 32 --steps 10 --compile | tail -1 | sed 's/^/JSON /'
  NF_CUDA_CROSS_ENTROPY=kernel $BUILD/tests/bench_training --device cuda --bf16 $shape --batch 64 --steps 8 \
    --rounds 1 --modes remove
}

preset() {
  local work=$TMPDIR/nf-preset
  rm -rf "$work" && mkdir -p "$work"
  $BUILD/app/normfree-cli init --out "$work/model" --layers 12 --heads 12 --d-model 768 --context 1024 \
    --vocab 50257 || return 1
  python3 -c "import numpy as np; np.random.default_rng(0).integers(0, 50257, 200_000_000, dtype=np.uint16).tofile('$work/train.bin')"
  local start=$SECONDS
  timeout -s INT "${PRESET_SECONDS:-240}" $BUILD/app/normfree-cli remove "$work/run" --model "$work/model" \
    --train "$work/train.bin" --preset gpt2 --device cuda --bf16
  echo "wall seconds: $((SECONDS - start))"
  python3 - "$work/run/metrics.jsonl" "$((SECONDS - start))" <<'PY'
import json, statistics, sys
records = [json.loads(l) for l in open(sys.argv[1])]
steps = [r for r in records if r["type"] == "step"]
events = [r for r in records if r["type"] == "event"]
rates = [r["tokens_per_second"] for r in steps[2:]] or [0]
median = statistics.median(rates)
tokens_per_step = 32 * 16 * 1024
print("JSON " + json.dumps({"what": "gpt2 preset on GPT-2 Small", "steps_done": len(steps), "events_fired": len(events),
      "wall_seconds_incl_setup": float(sys.argv[2]), "median_tokens_per_second": median,
      "extrapolated_300_steps_seconds": 300 * tokens_per_step / median if median else None,
      "last_ce": steps[-1]["ce"] if steps else None}))
PY
}

profile() {
  # The engine under Nsight Compute, each kernel timed alone: the difference of a 2-step and a 5-step run is
  # 3 steps' kernels exactly (setup, first-step tuning and the closing checkpoint cancel out).
  local shape="--layers 12 --heads 12 --d-model 768 --vocab 50257 --context 1024" way n compiled
  local ncu_args="--metrics gpu__time_duration.sum --csv --print-units base --cache-control none --clock-control none"
  for way in logits kernel; do
    for n in 2 5; do
      NF_CUDA_CROSS_ENTROPY=$way ncu $ncu_args $BUILD/tests/bench_training --device cuda --bf16 $shape \
        --batch 32 --steps $n --rounds 1 --modes remove >"$TMPDIR/ncu-$way-$n.csv" ||
        { echo "ncu of the $way loss failed (ncu missing or barred from the counters; a build without the row kernel refuses 'kernel')"; continue 2; }
    done
    python3 tests/reference/kernel_profile.py ncu "$TMPDIR/ncu-$way-2.csv" "$TMPDIR/ncu-$way-5.csv" --steps 3 \
      --label "engine remove, loss: $way"
  done
  for compiled in "" --compile; do
    python3 tests/reference/bench_eager_cuda.py --micro 32 --steps 3 $compiled \
      --profile-trace "$TMPDIR/trace$compiled.json" >/dev/null &&
      python3 tests/reference/kernel_profile.py trace "$TMPDIR/trace$compiled.json" --steps 3 \
        --label "PyTorch${compiled:+ compiled}"
  done
}

families() {
  python3 tests/reference/hf_transformers_check.py --cli $BUILD/app/normfree-cli --device cuda \
    --work "$TMPDIR/nf-hf-check"
}

family_step() {
  # Pythia-160M and SmolLM2-135M shapes (random weights), 16 × 1024 tokens per step, bf16 autocast.
  local pythia="--layers 12 --heads 12 --d-model 768 --vocab 50304 --context 1024"
  local smol="--layers 30 --heads 9 --kv-heads 3 --d-model 576 --mlp-width 1536 --vocab 49152 --context 1024"
  $BUILD/tests/bench_training --device cuda --bf16 --family gpt_neox $pythia --batch 16 --steps 12 --rounds 1 \
    --modes finetune,remove
  python3 tests/reference/bench_hf_cuda.py --family gpt_neox $pythia --micro 16 --steps 10 | tail -1 |
    sed 's/^/JSON /'
  $BUILD/tests/bench_training --device cuda --bf16 --family llama $smol --batch 16 --steps 12 --rounds 1 \
    --modes finetune,remove
  python3 tests/reference/bench_hf_cuda.py --family llama $smol --tied --micro 16 --steps 10 | tail -1 |
    sed 's/^/JSON /'
}

sizes() {
  # SIZES picks the shapes (default: all three); micro-batch and checkpointing from `normfree-cli plan` on
  # this GPU's free memory, 2 micro-batches per step (a step's peak does not depend on their number).
  local name layers heads dmodel plan micro checkpointing
  for name in ${SIZES:-gpt2-medium gpt2-large gpt2-xl}; do
    case $name in
      gpt2-medium) layers=24 heads=16 dmodel=1024 ;;
      gpt2-large) layers=36 heads=20 dmodel=1280 ;;
      gpt2-xl) layers=48 heads=25 dmodel=1600 ;;
      *) echo "unknown shape $name" && return 2 ;;
    esac
    plan=$($BUILD/app/normfree-cli plan --shape "$name" --preset "$name" --device cuda --bf16 --json) || return 1
    echo "plan: $plan"
    micro=$(echo "$plan" | python3 -c 'import json,sys; print(json.load(sys.stdin)["micro_batch"])')
    checkpointing=$(echo "$plan" | python3 -c 'import json,sys; print("--checkpointing" if json.load(sys.stdin)["activation_checkpointing"] else "")')
    $BUILD/tests/bench_training --device cuda --bf16 $checkpointing --layers "$layers" --heads "$heads" \
      --d-model "$dmodel" --vocab 50257 --context 1024 --batch "$micro" --accumulation 2 --steps 4 --rounds 1 \
      --modes remove
  done
}

# SMALL_UNTIL: seconds after this script's start by which the removal experiments stop (what they measured
# is still packed), to fit a device call's time limit.
small_models() {
  SWEEP_DEADLINE=$((${SMALL_UNTIL:-560} - SECONDS)) tools/small-models-sweep.sh $BUILD/app/normfree-cli "$OUT" \
    "${SMALL_SECONDS:-210}"
}

analysis() { $BUILD/tests/bench_analysis --device cuda --skip-tiny --small-sequences 1000 --length 512; }

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/GPU: /' | tee -a "$SUMMARY"
python3 -c 'import torch; print("LibTorch", torch.__version__, "CUDA", torch.version.cuda)' | tee -a "$SUMMARY"
for s in $STAGES; do
  case $s in
    build)
      # A target that failed (with -k 0 the others still build) leaves the stages that need it to fail alone.
      stage build build || { tail -60 "$OUT/build.log"; [ -x $BUILD/app/normfree-cli ] || exit 1; }
      grep -o "The engine's own CUDA kernels: .*" "$OUT/build.log" | tee -a "$SUMMARY" ;;
    test) stage test run_tests; grep -E "tests passed|FAIL|Failed|SKIP" "$OUT/test.log" | tail -30 ;;
    test-cuda) stage test_cuda "$BUILD/tests/core/test_cuda"; tail -5 "$OUT/test_cuda.log" ;;
    step) stage step step; collect step; grep -E "^mean|JSON" "$OUT/step.log" ;;
    preset) stage preset preset; collect preset; tail -3 "$OUT/preset.log" ;;
    sizes) stage sizes sizes; collect sizes; grep -E "^mean|plan:" "$OUT/sizes.log" ;;
    analysis) stage analysis analysis; tail -8 "$OUT/analysis.log" ;;
    families) stage families families; collect families; grep -E "ok|FAIL|failed" "$OUT/families.log" ;;
    small-models) stage small-models small_models; tail -12 "$OUT/small-models.log" ;;
    family-step) stage family-step family_step; collect family-step; grep -E "^mean|JSON" "$OUT/family-step.log" ;;
    profile) stage profile profile; collect profile; grep -vE "^JSON|^    " "$OUT/profile.log" | tail -40 ;;
    *) echo "unknown stage $s" && exit 2 ;;
  esac
done
cat "$SUMMARY"

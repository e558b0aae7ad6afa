#!/usr/bin/env bash
# The test suite under AddressSanitizer and UndefinedBehaviorSanitizer: everything the fuzzers cannot reach
# (they compile only the plain C++ parsers), above all the hand-written CPU kernels that index LibTorch's
# memory by raw pointer (attention, GELU, the fused cross-entropy, AdamW, the norms) and the threads around
# them. g++'s runtimes; LibTorch, Qt and OpenBLAS are not instrumented, so only our code's reads and writes
# are checked, and their allocations through malloc are what ASan guards.
#   tools/sanitized-suite.sh [BUILD_DIR] [ctest arguments…]   (default build-sanitized; ~50 min to build on
#   2 cores, ~7 min for the tests). A report fails its test: UBSan does not recover, ASan never does.
# Without the GUI (its tests need a Qt built with the sanitizers to say much): the engine's, the CLI's and
# the window's plain-logic tests. Leak checking is off: LibTorch's process-lifetime singletons would drown
# any leak of ours. fuzz_short (its own clang build, already sanitized) and the lint tests are left out;
# cases that read a SentencePiece tokenizer.model skip themselves (its module cannot load under ASan).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitized}
shift || true
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNF_BUILD_GUI=OFF -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$build" -j "$(nproc)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build" -j "$(nproc)" -LE 'fuzz|lint' --output-on-failure "$@"

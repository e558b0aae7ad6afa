#!/usr/bin/env bash
# NormFree Workbench set-up on a fresh Debian 12 machine.
#   ./bootstrap.sh          install the Debian packages the project needs (only what is missing; safe to rerun)
#   ./bootstrap.sh build    … and build everything into build/
#   ./bootstrap.sh run      … and run the main job on the bundled default (GUI with a display, else headless)
#   ./bootstrap.sh test     … and run the whole test suite (what CI runs)
set -euo pipefail
cd "$(dirname "$0")"
action="${1:-install}"
case "$action" in install|build|run|test) ;; *) echo "usage: $0 [install|build|run|test]" >&2; exit 2;; esac

packages=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev            # LibTorch 1.13 (CPU)
  libgloo-dev             # headers of Gloo, the collectives of multi-worker CPU runs (c10d; LibTorch links the library)
  libopenblas0-pthread    # without it a float matmul runs ~30x slower (reference BLAS)
  nlohmann-json3-dev
  libcli11-dev            # normfree-cli's command-line parser (header-only)
  libcpp-httplib-dev      # the steering endpoint's HTTP server (--serve)
  libpcre2-dev libicu-dev libsentencepiece-dev  # tokenizers: tokenizer.json's regexes and normalizers, tokenizer.model
  qt6-base-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools qt6-svg-dev libqcustomplot-dev
  libgl-dev               # Qt6Gui's CMake package needs OpenGL headers
  xvfb xauth              # GUI tests and screenshots without a display
  python3 python3-torch python3-numpy python3-regex  # independent reference implementations used by tests
  python3-sentencepiece   # trains and encodes the SentencePiece model the tokenizer tests compare against
  python3-matplotlib      # the figures in docs/ (docs/figures/*.py)
  clang-format            # the formatting check (tests/lint/check_format.sh)
  clang libclang-rt-14-dev  # the parsers' fuzzers (tests/fuzz): clang 14 with libFuzzer, ASan and UBSan runtimes
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages already installed"
else
  echo "bootstrap: installing ${#missing[@]} missing packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "bootstrap: error: not root and sudo is not available; run as root" >&2; exit 1; }
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || { echo "bootstrap: error: apt-get update failed (is a Debian mirror reachable?)" >&2; exit 1; }
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || { echo "bootstrap: error: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
fi

# Debian's default BLAS alternative is the slow reference implementation; make sure OpenBLAS wins.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
blas_lib="/usr/lib/$arch/openblas-pthread/libblas.so.3"
if [ -e "$blas_lib" ]; then
  current=$(update-alternatives --query "libblas.so.3-$arch" 2>/dev/null | awk '/^Value:/{print $2}')
  if [ "$current" != "$blas_lib" ]; then
    ${SUDO:-} update-alternatives --set "libblas.so.3-$arch" "$blas_lib" >/dev/null
    echo "bootstrap: BLAS alternative set to OpenBLAS (pthread)"
  fi
  lapack_lib="/usr/lib/$arch/openblas-pthread/liblapack.so.3"
  if [ -e "$lapack_lib" ]; then
    ${SUDO:-} update-alternatives --set "liblapack.so.3-$arch" "$lapack_lib" >/dev/null || true
  fi
fi
echo "bootstrap: packages ready"
[ "$action" = install ] && exit 0

# Build. Two cores: more parallel jobs only thrash (each torch TU needs ~1 GB and ~15 s).
jobs=$(nproc); [ "$jobs" -gt 2 ] || jobs=2
gui=ON
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNF_BUILD_GUI=$gui >/dev/null
cmake --build build -j "$jobs"
[ "$action" = build ] && exit 0

if [ "$action" = test ]; then
  cd build
  exec ctest --output-on-failure -j 1
fi

# The main job on the bundled default: LayerNorm removal from the bundled tiny GPT-2 with the tiny preset,
# then export, evaluation, circuit checks and the analyses before and after (resources/tiny-gpt2/experiment.sh;
# ~10 min on 2 cores).
out="runs/default"
resources/tiny-gpt2/experiment.sh "$out"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "${NF_HEADLESS:-0}" != 1 ]; then
  echo "run: opening the removal run in the workbench (loss curves, timeline, analyses of the LN-free model)"
  exec build/app/normfree "$out/remove"
fi
echo "run: no display; results of the headless job in $out:"
echo "  summary.jsonl   validation and alternative-set CE, IOI logit difference, induction, before and after"
echo "  export.json     logit differences of the folded and standard-GPT-2 exports (lnfree/)"
echo "  remove/         the run directory: config, schedule, metrics.jsonl, checkpoints, final model"

#!/usr/bin/env bash
# The README's screenshot: the main window mid-run, made under a virtual X server. Starts a removal on the
# bundled tiny model with fresh settings (the first-launch layout), refreshes the analyses at step 150,
# selects head L1H2 in the Heads pane and grabs the window while training goes on.
#   docs/figures/screenshot.sh [OUT.png]        (after ./bootstrap.sh build; ~2 min on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
out="${1:-docs/figures/workbench.png}"
command -v xvfb-run > /dev/null || { echo "screenshot.sh: xvfb-run is missing (./bootstrap.sh installs xvfb)" >&2; exit 1; }
home=$(mktemp -d)
mkdir -m 700 "$home/run"
trap 'rm -rf "$home"' EXIT
HOME="$home" XDG_CONFIG_HOME="$home/config" XDG_DATA_HOME="$home/data" XDG_RUNTIME_DIR="$home/run" \
  timeout 900 xvfb-run -a -s "-screen 0 1680x1050x24" \
  build/app/normfree --start --screenshot "$out" --screenshot-step "${NF_SCREENSHOT_STEP:-150}"
echo "screenshot.sh: wrote $out"

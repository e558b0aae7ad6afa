#!/usr/bin/env bash
# Every C++ file of ours is formatted with the repository's .clang-format (clang-format 14, Debian 12).
# Prints the files that are not and exits 1; `clang-format -i FILE` fixes one.
set -euo pipefail
cd "${1:-$(dirname "$0")/../..}"
command -v clang-format >/dev/null || { echo "clang-format not found (./bootstrap.sh installs it)"; exit 1; }
mapfile -t files < <(find core widgets app tests -name '*.h' -o -name '*.cpp' | sort)
bad=0
for f in "${files[@]}"; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not clang-format clean: $f"
    bad=$((bad + 1))
  fi
done
echo "${#files[@]} files checked: $bad not formatted"
[ "$bad" -eq 0 ]

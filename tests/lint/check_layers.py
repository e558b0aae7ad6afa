#!/usr/bin/env python3
"""The engine's layers, lowest first: a file in core/<layer>/ may include headers of its own layer and of
the layers below it, never of a layer above (docs/ARCHITECTURE.md). Prints every violation; exit 1 if any."""
import pathlib
import re
import sys

LAYERS = ["util", "io", "text", "model", "distributed", "schedule", "data", "eval", "run", "train", "analysis", "serve"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)


def violations(core: pathlib.Path):
    found = []
    for path in sorted(core.rglob("*")):
        if path.suffix not in {".h", ".cpp", ".inc"} or path.parent == core:
            continue
        layer = path.relative_to(core).parts[0]
        if layer not in RANK:
            found.append(f"{path}: folder core/{layer}/ is not in the layer list of {__file__}")
            continue
        for included in INCLUDE.findall(path.read_text(encoding="utf-8")):
            if included in RANK and RANK[included] > RANK[layer]:
                found.append(f"{path}: core/{layer}/ includes {included}/, a higher layer")
    return found


if __name__ == "__main__":
    core = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "core")
    problems = violations(core)
    for p in problems:
        print(p)
    print(f"{len(LAYERS)} layers checked: {len(problems)} violation(s)")
    sys.exit(1 if problems else 0)

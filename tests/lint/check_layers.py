#!/usr/bin/env python3
"""The tree's rooms (docs/ARCHITECTURE.md). The engine's layers, lowest first: a file in core/<layer>/ may
include headers of its own layer and of the layers below it, never of a layer above. No logic file under
core/, app/ or widgets/ grows past 600 lines (data tables excepted), the trainer's loop file past 350, the
main window past 400 (and its members are defined in its one file), and
the trainer's internal state (train/trainer_state.h) is included by the trainer's own files only. Prints
every violation; exit 1 if any."""
import pathlib
import re
import sys

LAYERS = ["util", "io", "text", "model", "distributed", "schedule", "data", "eval", "run", "analysis", "train", "serve"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.MULTILINE)
MAX_LINES = 600
# Data, not logic: tables that grow with the data they hold.
DATA_TABLES = {"core/data/corpus_rules.cpp"}
# The training loop stays one screen; the main window is wiring (its parts live in widgets/window/).
LIMITS = {"core/train/trainer.cpp": 350, "widgets/window/MainWindow.cpp": 400}
# A class whose member definitions must all be in its own file, so that the limit above is its size.
ONE_FILE_CLASSES = {"MainWindow": "widgets/window/MainWindow.cpp"}
INTERNAL = {"train/trainer_state.h": "core/train/"}  # header → the only folder that may include it


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


def room_violations(root: pathlib.Path):
    found = []
    for folder in ("core", "app", "widgets"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in {".h", ".cpp"}:
                continue
            name = path.relative_to(root).as_posix()
            text = path.read_text(encoding="utf-8")
            lines = text.count("\n")
            limit = LIMITS.get(name, MAX_LINES)
            if name not in DATA_TABLES and lines > limit:
                found.append(f"{name}: {lines} lines, more than {limit}: split it into rooms")
            for cls, home in ONE_FILE_CLASSES.items():
                if name != home and path.suffix == ".cpp" and re.search(rf"\b{cls}::\w+\(", text) and \
                        re.search(rf"^[\w:<>&*\s]*\b{cls}::~?\w+\([^;]*$", text, re.MULTILINE):
                    found.append(f"{name}: defines members of {cls}, which live in {home} only")
            for header, home in INTERNAL.items():
                if f'#include "{header}"' in text and not name.startswith(home):
                    found.append(f"{name}: includes {header}, which is internal to {home}")
    return found


if __name__ == "__main__":
    core = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "core")
    problems = violations(core) + room_violations(core.resolve().parent)
    for p in problems:
        print(p)
    print(f"{len(LAYERS)} layers checked: {len(problems)} violation(s)")
    sys.exit(1 if problems else 0)

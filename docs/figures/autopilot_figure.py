#!/usr/bin/env python3
"""The autopilot against a preset's fixed schedule, from the runs' metrics.jsonl (docs/RESULTS.md).

usage: autopilot_figure.py OUT.png TITLE PRESET_RUN AUTOPILOT_RUN [TITLE PRESET_RUN AUTOPILOT_RUN …]

One panel per model: the training cross-entropy (exponential moving average, k = 0.9) of both runs, a tick at
every removal below each curve (several sites at one step: one taller tick with their count), the validation
evaluations as markers, and the step each run became norm-free.
"""
import sys
from collections import Counter

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from run_records import records  # noqa: E402


def read(run):
    steps, ce, events, evals = [], [], [], []
    for r in records(run):
        if r["type"] == "step":
            steps.append(r["step"])
            ce.append(r["ce"])
        elif r["type"] == "event":
            events.append(r["step"])
        elif r["type"] == "eval":
            evals.append((r["step"], r["mean_loss"]))
    smooth, s = [], None
    for v in ce:
        s = v if s is None else 0.9 * s + 0.1 * v
        smooth.append(s)
    return steps, smooth, events, evals


def panel(ax, title, runs):
    low = min(min(read(run)[1][20:]) for _, run, _ in runs)
    for label, run, colour in runs:
        steps, smooth, events, evals = read(run)
        ax.plot(steps, smooth, color=colour, lw=1.6, label=f"{label} (norm-free at step {max(events)})")
        ax.plot(*zip(*evals), "o", color=colour, ms=5, mfc="white")
        for step, count in Counter(events).items():
            ax.vlines(step, low - 0.02 * count, low - 0.005, color=colour, lw=2 if count > 1 else 1)
            if count > 1:
                ax.annotate(str(count), (step, low - 0.02 * count), color=colour, fontsize=7, ha="center",
                            va="top")
    ax.set_title(title)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training CE, EMA (nats); ○ validation")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)


def main():
    out, rest = sys.argv[1], sys.argv[2:]
    models = [rest[i:i + 3] for i in range(0, len(rest), 3)]
    fig, axes = plt.subplots(1, len(models), figsize=(6.5 * len(models), 4.2), squeeze=False)
    for ax, (title, preset, pilot) in zip(axes[0], models):
        panel(ax, title, [("preset tiny", preset, "#1f77b4"), ("autopilot", pilot, "#d62728")])
    fig.suptitle("The preset's fixed removal steps against the autopilot's (ticks: removals; numbered: "
                 "several sites at once)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    main()

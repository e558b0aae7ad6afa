#!/usr/bin/env python3
"""The autopilot against a preset's fixed schedule, from the runs' metrics.jsonl (docs/RESULTS.md).

usage: autopilot_figure.py OUT.png TITLE FIXED_LABEL FIXED_RUN AUTOPILOT_RUN [TITLE FIXED_LABEL FIXED_RUN …]

One panel per comparison: the training cross-entropy (exponential moving average, k = 0.9) of the run with a
fixed schedule and of the autopilot's, a tick at every removal below each curve (several sites at one step:
one taller tick with their count), the validation evaluations as markers, and the step each run became
norm-free. A curve that leaves the scale (a removal that wrecks the model) is cut, its raw peak written on.
"""
import sys
from collections import Counter

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from run_records import current_history  # noqa: E402


def read(run):
    steps, ce, events, evals = [], [], [], []
    for r in current_history(run):  # an undone stretch (rollback, resume) is not drawn
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
    return steps, ce, smooth, events, evals


def panel(ax, title, runs):
    runs = [(label, read(run), colour) for label, run, colour in runs]  # each run's records read once
    low = min(min(data[2][20:]) for _, data, _ in runs)
    top = low + 1.2  # the scale of a recovery; a wrecked model's spike is cut and labelled
    for label, (steps, ce, smooth, events, evals), colour in runs:
        ax.plot(steps, smooth, color=colour, lw=1.6, label=f"{label} (norm-free at step {max(events)})")
        ax.plot(*zip(*evals), "o", color=colour, ms=5, mfc="white")
        for step, count in Counter(events).items():
            ax.vlines(step, low - 0.02 * count, low - 0.005, color=colour, lw=2 if count > 1 else 1)
            if count > 1:
                ax.annotate(str(count), (step, low - 0.02 * count), color=colour, fontsize=7, ha="center",
                            va="top")
        peak, at = max(zip(ce[20:], steps[20:]))
        if max(smooth[20:]) > top:
            ax.annotate(f"peak {peak:.2f} nats at step {at}", (at, top), xytext=(at + 15, top - 0.1),
                        color=colour, fontsize=8, va="top")
    ax.set_ylim(low - 0.3, top)
    ax.set_title(title)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("training CE, EMA (nats); ○ validation")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)


def main():
    out, rest = sys.argv[1], sys.argv[2:]
    panels = [rest[i:i + 4] for i in range(0, len(rest), 4)]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    for ax, (title, fixed_label, fixed, pilot) in zip(axes[0], panels):
        panel(ax, title, [(fixed_label, fixed, "#1f77b4"), ("autopilot", pilot, "#d62728")])
    fig.suptitle("Fixed removal steps against the autopilot's (ticks: removals; numbered: several sites "
                 "at once)", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)


if __name__ == "__main__":
    main()

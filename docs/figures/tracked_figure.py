#!/usr/bin/env python3
"""Tracked analyses against the step (docs/TRAINING.md, "Tracked analyses"), from runs' metrics.jsonl.

usage: tracked_figure.py OUT.png TITLE REMOVE_RUN [CONTROL_RUN]

One panel per analysis the removal run tracked: its value (bold; filled markers where removal events fired)
and, thin, one curve per layer, with a vertical line at every removal event; the control run (a vanilla
fine-tune tracked the same way), if given, in blue.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from run_records import current_history  # noqa: E402

TITLES = {
    "nmae": "NMAE of DLA vs direct effect (%)",
    "sinks": "attention sink rate",
    "pos0-ratio": "residual norm, position 0 / rest (largest layer)",
    "ioi": "IOI logit difference (nats)",
    "patching-error": "attribution patching error (%)",
    "confidence": "confidence-neuron Δentropy (nats)",
    "val-ce": "cross-entropy (nats)",
}


def read(run):
    """The run's current history of track and event records (a resume's re-trained stretch replaces the old)."""
    history = current_history(run)
    return [r for r in history if r["type"] == "track"], [r for r in history if r["type"] == "event"]


def main():
    out, title, remove_run = sys.argv[1:4]
    control_run = sys.argv[4] if len(sys.argv) > 4 else None
    tracked, events = read(remove_run)
    control = read(control_run)[0] if control_run else []
    names = [n for n in TITLES if any(n in t["values"] for t in tracked)]
    if not names:
        sys.exit(f"tracked_figure: {remove_run} tracked no analysis (--track)")
    fig, axes = plt.subplots(len(names), 1, figsize=(8, 2.3 * len(names) + 0.6), sharex=True, squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        points = [t for t in tracked if name in t["values"]]
        layers = max((len(t.get("per_layer", {}).get(name, [])) for t in points), default=0)
        for layer in range(layers):
            shade = 0.78 - 0.5 * layer / max(1, layers - 1)
            label = "per layer (darker: deeper)" if layer == layers - 1 else None
            ax.plot([t["step"] for t in points], [t["per_layer"][name][layer] for t in points],
                    color=(shade, shade, shade), linewidth=0.8, label=label)
        ax.plot([t["step"] for t in points], [t["values"][name] for t in points], "-o", color="tab:red",
                markerfacecolor="white", markersize=3.5, linewidth=1.6, label="LN removal")
        at_events = [t for t in points if t["event"]]
        ax.plot([t["step"] for t in at_events], [t["values"][name] for t in at_events], "o", color="tab:red",
                markersize=3.5, label="at a removal event")
        ours = [t for t in control if name in t["values"]]
        if ours:
            ax.plot([t["step"] for t in ours], [t["values"][name] for t in ours], "-o", color="tab:blue",
                    markerfacecolor="white", markersize=3.5, linewidth=1.4, label="vanilla fine-tune")
        for i, e in enumerate(events):
            ax.axvline(e["step"], color="grey", alpha=0.3, linewidth=0.7,
                       label="removal event" if i == 0 else None)
        ax.set_ylabel(TITLES[name], fontsize=8)
        ax.grid(alpha=0.2)
    axes[0, 0].legend(fontsize=7, ncol=3, loc="upper right")
    axes[-1, 0].set_xlabel("optimizer step")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Loss curves of a removal run against its vanilla fine-tuning control, from their metrics.jsonl.

usage: loss_curves.py REMOVE_RUN FINETUNE_RUN OUT.png [TITLE]

Top: training cross-entropy (raw, faint; exponential moving average, bold) of both runs, with a vertical line at
every removal event and the validation evaluations as markers. Bottom: the auxiliary loss of the removal run.
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from run_records import current_history  # noqa: E402


def read(run):
    steps, events, evals = [], [], []
    for r in current_history(run):  # an undone stretch (rollback, resume) is not drawn
        if r["type"] == "step":
            steps.append(r)
        elif r["type"] == "event":
            events.append(r)
        elif r["type"] == "eval":
            evals.append(r)
    return steps, events, evals


def smooth(values, k=0.9):
    out, s = [], None
    for v in values:
        s = v if s is None else k * s + (1 - k) * v
        out.append(s)
    return out


def main():
    remove_run, finetune_run, out = sys.argv[1:4]
    title = sys.argv[4] if len(sys.argv) > 4 else "LayerNorm removal vs vanilla fine-tuning"
    r_steps, r_events, r_evals = read(remove_run)
    f_steps, _, f_evals = read(finetune_run)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for steps, evals, colour, label in ((f_steps, f_evals, "tab:blue", "vanilla fine-tune"),
                                        (r_steps, r_evals, "tab:red", "LN removal")):
        x = [s["step"] for s in steps]
        ce = [s["ce"] for s in steps]
        top.plot(x, ce, color=colour, alpha=0.2, linewidth=0.8)
        top.plot(x, smooth(ce), color=colour, linewidth=1.6, label=f"{label}: train CE (EMA 0.9)")
        val = [e for e in evals if e["file"].endswith("val.bin")]
        top.plot([e["step"] for e in val], [e["mean_loss"] for e in val], "o", color=colour, markersize=4,
                 label=f"{label}: validation CE")
    for i, e in enumerate(r_events):
        for ax in (top, bottom):
            ax.axvline(e["step"], color="grey", alpha=0.35, linewidth=0.7, label="removal event" if i == 0 and ax is top else None)
    top.set_ylabel("cross-entropy (nats)")
    top.set_title(title)
    top.legend(fontsize=8, loc="upper right")
    top.grid(alpha=0.3)
    bottom.plot([s["step"] for s in r_steps], [s["aux"] for s in r_steps], color="tab:red", linewidth=1)
    bottom.set_ylabel("aux loss")
    bottom.set_xlabel("optimizer step")
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=150)


if __name__ == "__main__":
    main()

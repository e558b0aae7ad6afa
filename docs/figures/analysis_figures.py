#!/usr/bin/env python3
"""Figures of the interpretability analyses (PROTOCOL §7) for several models side by side, from the JSON that
`normfree-cli analyze <kind> --out` writes (schema: docs/ANALYSES.md).

usage: analysis_figures.py ANALYSES_DIR OUT_DIR NAME [NAME ...]

ANALYSES_DIR/NAME/{norms,sinks,dla,patching,neurons,logit-lens,circuit-eap}.json for each model NAME (e.g.
original, vanilla, ln-free), and optionally ANALYSES_DIR/calibration.json. Writes OUT_DIR/{nmae,
residual_norms,sinks,patching,confidence_neurons,logit_lens,circuit,calibration}.png: each figure whose
analysis every NAME has.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


ANALYSIS_VERSION = 1  # the newest normfree-analysis version this script reads (docs/FORMATS.md)


def load(folder, name, kind):
    return read_result(os.path.join(folder, name, kind + ".json"))


def read_result(path):
    with open(path, encoding="utf-8") as f:
        result = json.load(f)
    header = result.get("header", {}) if isinstance(result, dict) else {}
    if isinstance(header, dict) and "format" in header and (
            header["format"] != "normfree-analysis" or header.get("version", 1) > ANALYSIS_VERSION):
        raise SystemExit(f"{path}: is {header['format']} version {header.get('version')}; this script reads "
                         f"normfree-analysis up to version {ANALYSIS_VERSION}")
    return result


def heat(ax, grid, title, cmap="viridis", vmin=None, vmax=None, xlabels=None, ylabels=None, annotate=True):
    image = ax.imshow(grid, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_title(title, fontsize=9)
    if xlabels is not None:
        ax.set_xticks(range(len(xlabels)), xlabels, rotation=90, fontsize=6)
    if ylabels is not None:
        ax.set_yticks(range(len(ylabels)), ylabels, fontsize=7)
    if annotate and grid.size <= 64:
        for (i, j), v in np.ndenumerate(grid):
            if abs(v) >= 0.05 or cmap != "RdBu_r":  # diverging maps: label only what stands out
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=6,
                        color="k" if cmap == "RdBu_r" and abs(v) < 0.6 else "w")
    return image


def nmae(folder, out, names):
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), squeeze=False)
    results = [load(folder, name, "dla") for name in names]
    grids = [np.array([h["nmae_percent"] for h in d["head_attributions"]]).reshape(d["layers"], d["heads"])
             for d in results]
    # One scale for every panel, at least 0–100 %: an LN-free model's ~1e-6 % must look like nothing.
    top = max(100.0, max(g.max() for g in grids))
    for ax, name, d, grid in zip(axes[0], names, results, grids):
        low, high = d["overall_nmae_interval95"]  # null from fewer than 10 sequences
        interval = "" if low is None else f" [{low:.3g}, {high:.3g}]"
        image = heat(ax, np.round(grid), f"{name}: NMAE {d['overall_nmae_percent']:.3g} %{interval}",
                     vmin=0, vmax=top, xlabels=[f"H{h}" for h in range(d["heads"])],
                     ylabels=[f"L{l}" for l in range(d["layers"])])
        fig.colorbar(image, ax=ax, label="NMAE (%)")
    fig.suptitle("DLA vs direct effect per head (normalized mean absolute error, rounded to whole %)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "nmae.png"), dpi=130)


def residual_norms(folder, out, names):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for k, name in enumerate(names):
        d = load(folder, name, "norms")
        rows = d["residual_norms"]
        x = np.arange(len(rows))
        for ax, key in zip(axes, ("position0", "rest")):
            mean = [r[key]["mean"] for r in rows]
            p10 = [r[key]["p10"] for r in rows]
            p90 = [r[key]["p90"] for r in rows]
            ax.plot(x, mean, marker="o", label=name, color=f"C{k}")
            ax.fill_between(x, p10, p90, alpha=0.15, color=f"C{k}")
            ax.set_xticks(x, [r["point"].replace("blocks.", "").replace(".resid_pre", "") for r in rows])
    axes[0].set_title("position 0", fontsize=9)
    axes[1].set_title("positions > 0", fontsize=9)
    for ax in axes:
        ax.set_xlabel("resid_pre of layer (final = input of ln_f)")
        ax.set_ylabel("L2 norm (mean, 10–90 % band)")
        ax.legend(fontsize=7)
    fig.suptitle("Residual-stream norms", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "residual_norms.png"), dpi=130)


def sinks(folder, out, names):
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), squeeze=False)
    for ax, name in zip(axes[0], names):
        d = load(folder, name, "sinks")
        grid = np.array(d["mean_position0_attention"]).reshape(d["layers"], d["heads"])
        image = heat(ax, grid, f"{name}: sink rate {d['sink_rate']:.2f} (≥ {d['threshold']})", vmin=0, vmax=1,
                     xlabels=[f"H{h}" for h in range(d["heads"])], ylabels=[f"L{l}" for l in range(d["layers"])])
        fig.colorbar(image, ax=ax, label="mean attention to position 0")
    fig.suptitle("Attention to position 0 per head", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sinks.png"), dpi=130)


def patching(folder, out, names):
    fig, axes = plt.subplots(len(names), 4, figsize=(15, 3.4 * len(names)), squeeze=False,
                             gridspec_kw={"width_ratios": [3, 3, 3, 1.3]})
    for row, name in enumerate(names):
        d = load(folder, name, "patching")
        grids = {g["name"]: g for g in d["grids"]}
        g = grids["resid_pre"]
        texts = d.get("example_clean_texts") or [str(p) for p in range(g["columns"])]
        labels = [f"{t!s}".replace("\n", "\\n") for t in texts]
        for col, key in enumerate(("activation", "attribution", "error")):
            grid = np.array(g[key]).reshape(g["rows"], g["columns"])
            image = heat(axes[row][col], grid, f"{name}: resid_pre {key}", cmap="RdBu_r", vmin=-1, vmax=1,
                         xlabels=labels, ylabels=g["row_labels"], annotate=False)
        h = grids["heads"]
        heat(axes[row][3], np.array(h["activation"]).reshape(h["rows"], h["columns"]), f"{name}: heads (activation)",
             cmap="RdBu_r", vmin=-1, vmax=1, xlabels=h["column_labels"], ylabels=h["row_labels"])
    fig.subplots_adjust(hspace=0.55)
    fig.colorbar(image, ax=axes, label="normalized logit difference (0 corrupted … 1 clean)", shrink=0.8)
    fig.suptitle("IOI patching: activation, attribution and their difference", fontsize=10)
    fig.savefig(os.path.join(out, "patching.png"), dpi=130, bbox_inches="tight")


def confidence_neurons(folder, out, names):
    fig, axes = plt.subplots(2, len(names), figsize=(3.6 * len(names), 6.4), squeeze=False)
    for k, name in enumerate(names):
        d = load(folder, name, "neurons")
        norms = np.array([n["output_norm"] for n in d["neurons"]])
        logit_var = np.array([n["logit_var"] for n in d["neurons"]])
        ax = axes[0][k]
        ax.scatter(logit_var, norms, s=4, alpha=0.5)
        for a in d["ablations"][:5]:
            i = a["neuron"]
            ax.annotate(str(i), (logit_var[i], norms[i]), fontsize=6, color="C3")
            ax.scatter([logit_var[i]], [norms[i]], s=10, color="C3")
        ax.set_xscale("log")
        ax.set_xlabel("LogitVar")
        ax.set_ylabel("‖w_out‖")
        ax.set_title(f"{name}: last-layer MLP neurons", fontsize=9)
        ax = axes[1][k]
        x = np.arange(len(d["ablations"]))
        ax.bar(x - 0.2, [a["cumulative_delta_loss"] for a in d["ablations"]], 0.4, label="ΔCE (cumulative)")
        ax.bar(x + 0.2, [a["cumulative_delta_entropy"] for a in d["ablations"]], 0.4, label="Δentropy (cumulative)")
        ax.set_xticks(x, [str(a["neuron"]) for a in d["ablations"]], fontsize=6, rotation=90)
        ax.set_xlabel("top neurons by CN score, ablated cumulatively", fontsize=8)
        ax.set_ylabel("nats")
        ax.axhline(0, color="k", lw=0.5)
        ax.legend(fontsize=7)
    fig.suptitle("Confidence neurons: CN score = ‖w_out‖ / LogitVar; mean ablation", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "confidence_neurons.png"), dpi=130)


def logit_lens(folder, out, names):
    """Each model's logit-lens loss per layer in the three modes: one curve without LayerNorm."""
    fig, axes = plt.subplots(1, len(names), figsize=(3.2 * len(names), 3), squeeze=False, sharey=True)
    styles = {"recomputed": ("C0", "-", "o"), "frozen": ("C1", "--", "s"), "linear": ("C2", ":", "^")}
    for ax, name in zip(axes[0], names):
        lens = load(folder, name, "logit-lens")
        labels = [str(i) if p["point"] != "final" else "final" for i, p in enumerate(lens["layers"])]
        for mode, (colour, line, marker) in styles.items():
            ax.plot(range(len(labels)), [p[mode]["ce"] for p in lens["layers"]], color=colour, linestyle=line,
                    marker=marker, markersize=4, label=mode)
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yscale("log")
        ax.set_yticks([2, 3, 4, 6, 8, 12, 16, 24], ["2", "3", "4", "6", "8", "12", "16", "24"])
        ax.minorticks_off()
        ax.set_xlabel("layer (resid_pre)")
        ax.set_title(f"{name} (LN_f: {lens['final_norm']})", fontsize=9)
    axes[0][0].set_ylabel("logit-lens CE (nats)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "logit_lens.png"), dpi=130)


def circuit(folder, out, names):
    """The IOI circuit per model: measured faithfulness of the top-k edges, and EAP's scores against the
    effect of patching each checked edge alone (on the diagonal when attribution is exact)."""
    fig, (curve, check) = plt.subplots(1, 2, figsize=(9, 3.4))
    largest = 0
    for k, name in enumerate(names):
        r = load(folder, name, "circuit-eap")
        points = [p for p in r["faithfulness_curve"] if p["edges"] > 0]
        curve.plot([p["edges"] for p in points], [p["faithfulness"] for p in points], marker="o", markersize=3,
                   color=f"C{k}", label=f"{name}: {r['circuit']['edges']} edges keep {r['circuit']['faithfulness']:.2f}")
        checked = [e for e in r["edges"] if "measured" in e]
        check.scatter([e["measured"] for e in checked], [e["score"] for e in checked], s=12, color=f"C{k}",
                      label=f"{name}: error " + ("not checked" if r["score_error_percent"] is None
                                                  else f"{r['score_error_percent']:.1f} %"))
        largest = max([largest] + [abs(e["measured"]) for e in checked] + [abs(e["score"]) for e in checked])
    curve.set_xscale("log")
    curve.set_xlabel("top edges kept (by |EAP score|)")
    curve.set_ylabel("faithfulness (measured)")
    curve.set_title("IOI circuit: faithfulness of the top edges", fontsize=9)
    curve.legend(fontsize=7)
    check.plot([-largest, largest], [-largest, largest], color="0.6", linewidth=1)
    check.set_xlabel("effect of patching the edge alone (logit diff.)")
    check.set_ylabel("EAP score")
    check.set_title("EAP against patching, top 32 edges", fontsize=9)
    check.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "circuit.png"), dpi=130)


def calibration(folder, out):
    path = os.path.join(folder, "calibration.json")
    if not os.path.exists(path):
        return
    d = read_result(path)
    fig, ax = plt.subplots(figsize=(4.2, 4))
    ax.plot([0, 1], [0, 1], color="k", lw=0.5)
    for k, m in enumerate(d["models"]):
        s = m["summary"]
        bins = [b for b in s["calibration_bins"] if b["count"] > 0]
        ax.plot([b["mean_confidence"] for b in bins], [b["accuracy"] for b in bins], marker="o", color=f"C{k}",
                label=f"{m['header']['norms']}: ECE {s['ece']:.3f}, H {s['mean_entropy']:.2f}")
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title("Reliability diagram", fontsize=10)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "calibration.png"), dpi=130)


def main():
    folder, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    # Each figure that every model has its analysis for: a sweep's runs have only sinks and norms.
    for figure, kind in ((nmae, "dla"), (residual_norms, "norms"), (sinks, "sinks"), (patching, "patching"),
                         (confidence_neurons, "neurons"), (logit_lens, "logit-lens"), (circuit, "circuit-eap")):
        missing = [name for name in names if not os.path.exists(os.path.join(folder, name, kind + ".json"))]
        if missing:
            print(f"{figure.__name__}.png left out: no {kind}.json for {', '.join(missing)}")
        else:
            figure(folder, out, names)
    calibration(folder, out)


if __name__ == "__main__":
    main()

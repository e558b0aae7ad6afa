#!/usr/bin/env python3
"""Where a training step's GPU time goes, kernel by kernel (issue 42: "only what measurements justify").

Two sources, one summary: per-step GPU time by category (matrix products, attention, the loss's softmax,
norms, elementwise, reductions, copies and casts, the optimizer) and the kernels that take most of it.

    kernel_profile.py ncu SHORT.csv LONG.csv --steps N --label L
        Nsight Compute's CSV (--metrics gpu__time_duration.sum --csv --print-units base) of two runs of one
        program that differ only in their number of training steps, by N: their difference is N steps'
        kernels exactly, whatever the program did before and after them (setup, the first step's tuning,
        the checkpoint at its end). Each kernel is timed alone (ncu serializes them), so the total is the
        step's GPU time without overlap, a little above its wall time.
    kernel_profile.py trace TRACE.json --steps N --label L
        a Chrome trace from torch.profiler (export_chrome_trace) of N steps: its "kernel" events.

Prints a table, then one JSON line ("JSON {...}") for figures.jsonl.
"""
import argparse
import csv
import json
import re
import sys
from collections import defaultdict

# First match wins (case aside): the order puts the specific names before the generic ones.
CATEGORIES = [
    ("attention", r"flash|fmha|attention|sdpa"),
    ("loss softmax", r"softmax|nll_loss|cross_?entropy"),
    ("norm", r"layer_?norm|rms_?norm"),
    ("optimizer", r"multi_tensor|adam"),
    ("matrix product", r"gemm|xmma|cutlass|nvjet|cublas|sm90_|sm80_|splitK"),
    ("copy/cast", r"copy|cast|convert|memcpy|memset|fill"),
    ("reduction", r"reduce|norm_kernel|sum_kernel"),
    ("elementwise", r"elementwise|unrolled|vectorized|triton"),
]


def category(name):
    for label, pattern in CATEGORIES:
        if re.search(pattern, name, re.IGNORECASE):
            return label
    return "other"


def short(name, width=110):
    return name if len(name) <= width else name[: width - 1] + "…"


def ncu_kernels(path):
    """{kernel name: [total ns, launches]} from an ncu CSV (details page, one metric row per kernel)."""
    totals = defaultdict(lambda: [0.0, 0])
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu prints its own log lines too
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", ""))
        unit = row.get("Metric Unit", "nsecond")
        scale = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}.get(unit)
        if scale is None:
            raise ValueError(f"{path}: unit {unit!r} of gpu__time_duration.sum is not a time")
        entry = totals[row["Kernel Name"]]
        entry[0] += value * scale
        entry[1] += 1
    if not totals:
        raise ValueError(f"{path}: no gpu__time_duration.sum rows (was ncu run with --metrics and --csv?)")
    return totals


def trace_kernels(path):
    """{kernel name: [total ns, launches]} from a torch.profiler Chrome trace's GPU events."""
    totals = defaultdict(lambda: [0.0, 0])
    trace = json.load(open(path))
    for e in trace.get("traceEvents", []) if isinstance(trace, dict) else trace:  # an object, or a bare list
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e:
            entry = totals[e["name"]]
            entry[0] += float(e["dur"]) * 1e3  # µs
            entry[1] += 1
    if not totals:
        raise ValueError(f"{path}: no kernel events (was the profiler given ProfilerActivity.CUDA?)")
    return totals


def summarize(per_step, label, source):
    """per_step: {name: [ns per step, launches per step]} → printed table and the JSON line."""
    total = sum(ns for ns, _ in per_step.values())
    by_category = defaultdict(float)
    for name, (ns, _) in per_step.items():
        by_category[category(name)] += ns
    print(f"{label}: {total / 1e6:.2f} ms of GPU time per step ({source}), "
          f"{sum(n for _, n in per_step.values()):.0f} kernel launches")
    for name, ns in sorted(by_category.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<15} {ns / 1e6:8.2f} ms  {ns / total:6.1%}")
    print("  top kernels:")
    top = sorted(per_step.items(), key=lambda kv: -kv[1][0])[:20]
    for name, (ns, launches) in top:
        print(f"    {ns / 1e6:7.2f} ms {launches:6.1f}×  [{category(name)}] {short(name)}")
    record = {"what": "kernel profile", "label": label, "source": source, "step_gpu_ms": total / 1e6,
              "launches_per_step": sum(n for _, n in per_step.values()),
              "categories_ms": {k: v / 1e6 for k, v in sorted(by_category.items(), key=lambda kv: -kv[1])},
              "top_kernels": [{"name": short(n, 200), "ms": ns / 1e6, "launches": k, "category": category(n)}
                              for n, (ns, k) in top]}
    print("JSON " + json.dumps(record))
    return record


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("source", choices=["ncu", "trace"])
    p.add_argument("files", nargs="+")
    p.add_argument("--steps", type=int, required=True, help="steps the difference (ncu) or the trace holds")
    p.add_argument("--label", default="step")
    a = p.parse_args(argv)
    if a.steps < 1:
        p.error("--steps must be at least 1")
    if a.source == "ncu":
        if len(a.files) != 2:
            p.error("ncu takes two CSV files: the shorter run's, then the longer's")
        short_run, long_run = ncu_kernels(a.files[0]), ncu_kernels(a.files[1])
        per_step = {}
        for name, (ns, launches) in long_run.items():
            base_ns, base_launches = short_run.get(name, (0.0, 0))
            if launches > base_launches:
                per_step[name] = [(ns - base_ns) / a.steps, (launches - base_launches) / a.steps]
        source = f"ncu, {a.steps} steps' difference"
    else:
        if len(a.files) != 1:
            p.error("trace takes one Chrome trace")
        per_step = {n: [ns / a.steps, k / a.steps] for n, (ns, k) in trace_kernels(a.files[0]).items()}
        source = f"torch.profiler, {a.steps} steps"
    if not per_step:
        sys.exit("the longer run has no kernels the shorter lacks: were the steps' counts swapped?")
    summarize(per_step, a.label, source)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The workbench's models against Hugging Face transformers itself, for every family (issue 13).

Debian has no `transformers`, so the test suite checks the engine against references written from the Hugging Face
config semantics (gpt2_reference.py, gpt_neox_reference.py, llama_reference.py). This script closes the loop where
`transformers` is installed (the GPU machine has it): for each family variant it

  1. writes a random model with `normfree-cli init` and loads the folder with AutoModelForCausalLM (no custom code):
     the logits of both on the same tokens must agree (float32, max |Δ| ≤ 1e-4 · max |logit|);
  2. runs a short `normfree-cli remove` that makes every site fake (by-depth preset, shortened), exports it, and
     loads the standard export (weights × 10⁶/s, ε = 10¹²) with the family's own Hugging Face class: its logits must
     reproduce the LN-free model's (`normfree-cli logits` on the run's final model), max |Δ| ≤ 1e-4 · max |logit|.

Prints one line per check and one JSON object per variant after "JSON "; exits 1 if any check fails.

usage: python3 tests/reference/hf_transformers_check.py --cli build/app/normfree-cli [--device cuda] [--work DIR]
"""
import argparse, array, json, os, random, shutil, subprocess, sys, tempfile

import torch
from safetensors.torch import load_file
from transformers import AutoModelForCausalLM

# name, `init` arguments, config.json edits (a variant init has no flag for).
VARIANTS = [
    ("gpt2", ["--family", "gpt2"], {}),
    ("gpt2 untied (its base under transformer.)", ["--family", "gpt2", "--untied"], {}),
    ("gpt_neox parallel residual, rotary 0.25", ["--family", "gpt_neox"], {}),
    ("gpt_neox sequential residual, full rotary", ["--family", "gpt_neox"],
     {"use_parallel_residual": False, "rotary_pct": 1.0}),
    ("llama GQA 4/2, untied, BF16 sharded", ["--family", "llama", "--kv-heads", "2", "--untied", "--dtype", "BF16",
                                             "--shard-mb", "1"], {}),
    ("llama multi-head, tied", ["--family", "llama"], {}),
    ("qwen2 GQA 4/1 (q/k/v biases)", ["--family", "qwen2", "--kv-heads", "1"], {}),
]
SHAPE = ["--layers", "3", "--heads", "4", "--d-model", "128", "--context", "64", "--vocab", "1000"]


def run(*args):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, args))} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def engine_logits(cli, folder, tokens, work, device):
    out = os.path.join(work, "logits.safetensors")
    ids = ";".join(",".join(str(t) for t in row) for row in tokens.tolist())
    run(cli, "logits", folder, "--tokens", ids, "--out", out, "--device", device)
    tensors = load_file(out)
    return next(iter(tensors.values())).double()


def hf_logits(folder, tokens, device):
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager").to(device)
    model.eval()
    with torch.no_grad():
        return model(tokens.to(device)).logits.double().cpu(), type(model).__name__


def compare(what, ours, theirs, tolerance=1e-4):
    diff = (ours - theirs).abs().max().item()
    scale = theirs.abs().max().item()
    ok = ours.shape == theirs.shape and diff <= tolerance * scale
    print(f"  {'ok  ' if ok else 'FAIL'} {what}: max |Δ| {diff:.2e} (max |logit| {scale:.2f})", flush=True)
    return ok, diff


def check_variant(args, work, index, name, init_args, edits, tokens):
    """The checks of one family variant; returns how many failed."""
    model = os.path.join(work, f"model-{index}")
    run(args.cli, "init", "--out", model, *SHAPE, "--seed", index, *init_args)
    if edits:
        path = os.path.join(model, "config.json")
        config = json.load(open(path))
        config.update(edits)
        json.dump(config, open(path, "w"), indent=2)
    theirs, hf_class = hf_logits(model, tokens, args.device)
    ours = engine_logits(args.cli, model, tokens, work, args.device)
    ok_load, load_diff = compare(f"{hf_class} loads the model", ours, theirs)

    run_dir = os.path.join(work, f"run-{index}")
    run(args.cli, "remove", run_dir, "--model", model, "--train", os.path.join(work, "train.bin"),
        "--preset", "by-depth", "--steps", args.steps, "--micro-batch", 4, "--context", 64, "--warmup", 2,
        "--eval-interval", 0, "--checkpoint-interval", 0, "--device", args.device)
    final = os.path.join(run_dir, "final")
    if not json.loads(run(args.cli, "info", final))["layernorm_free"]:
        raise RuntimeError(f"{final}: a site is still real after {args.steps} steps")
    exported = os.path.join(work, f"export-{index}")
    print("  export: " + run(args.cli, "export", final, "--out", exported, "--device", args.device).strip(), flush=True)
    fake = engine_logits(args.cli, final, tokens, work, args.device)
    standard, standard_class = hf_logits(os.path.join(exported, "standard"), tokens, args.device)
    ok_export, export_diff = compare(f"{standard_class} loads the standard export", standard, fake)
    folded = engine_logits(args.cli, os.path.join(exported, "folded"), tokens, work, args.device)
    ok_folded, folded_diff = compare("the folded export", folded, fake)
    print("JSON " + json.dumps({"variant": name, "hf_class": hf_class, "load_max_abs_diff": load_diff,
                                "standard_export_max_abs_diff": export_diff, "folded_max_abs_diff": folded_diff,
                                "device": args.device}), flush=True)
    return (not ok_load) + (not ok_export) + (not ok_folded)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--work", default=None)
    parser.add_argument("--steps", type=int, default=60, help="removal steps (every site is fake by then)")
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="nf-hf-check-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = random.Random(0)
    with open(os.path.join(work, "train.bin"), "wb") as f:  # nanoGPT's raw uint16 tokens
        array.array("H", (rng.randrange(1000) for _ in range(400_000))).tofile(f)
    tokens = torch.randint(0, 1000, (2, 48), generator=torch.Generator().manual_seed(0))

    failures = 0
    for index, variant in enumerate(VARIANTS):
        print(f"{variant[0]}:", flush=True)
        try:
            failures += check_variant(args, work, index, *variant, tokens)
        except Exception as error:  # one broken variant must not hide the others' results
            print(f"  FAIL {type(error).__name__}: {error}", flush=True)
            failures += 1
    print(f"{len(VARIANTS)} variants, {failures} failed checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

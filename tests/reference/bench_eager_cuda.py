#!/usr/bin/env python3
"""Eager-PyTorch GPT-2 training step on the GPU: the reference the engine's CUDA benchmark is compared with (issue 19, item 4).

The model is the engine's (pre-LN GPT-2, Conv1D weights (in, out) used as x·W + b (one addmm), tanh GELU, tied unembedding), random
N(0, 0.02) init, random tokens drawn on the device each micro-batch. The step is what a well-tuned eager user writes: bf16
autocast over fp32 master weights, F.scaled_dot_product_attention(is_causal=True), cross-entropy on fp32 logits, AdamW
(fused where available; lr 6e-4, betas (0.9, 0.95), weight decay 0.01 on 2-D weights only), clipping to 1.0, zero_grad
(set_to_none). Older PyTorch (Debian's 1.13, CPU) falls back to the math attention path, foreach AdamW and no compile.

Model FLOPs per token = 6·N + 12·L·T·D, N = every parameter but the position table (the tied wte counted once, as the
unembedding matmul; nanoGPT's convention). MFU is against an 8192³ bf16 torch.matmul measured in the same invocation,
and against the H100 SXM datasheet's 989.4 TFLOP/s dense bf16. Progress on stderr; one JSON object on stdout's last line.

usage (GPT-2 Small defaults; add --compile for torch.compile, --micro 32 for a larger micro-batch):
    python3 tests/reference/bench_eager_cuda.py [--micro 16] [--accumulation 1] [--compile] [--no-bf16]
        [--profile-trace TRACE.json]
    python3 tests/reference/bench_eager_cuda.py --device cpu --layers 2 --d-model 64 --heads 2 --vocab 512 \
        --context 64 --batch 2 --steps 3          # a smoke test on CPU
"""
import argparse, inspect, json, math, statistics, sys, time

import torch
import torch.nn.functional as F
from torch import nn

H100_SXM_BF16_DENSE_TFLOPS = 989.4
HAS_SDPA = hasattr(F, "scaled_dot_product_attention")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        for name, shape in [("c_attn", (d, 3 * d)), ("c_proj", (d, d)), ("c_fc", (d, 4 * d)), ("mlp_proj", (4 * d, d))]:
            setattr(self, name + "_w", nn.Parameter(torch.randn(shape) * 0.02))
            setattr(self, name + "_b", nn.Parameter(torch.zeros(shape[1])))

    def forward(self, x):
        B, T, D = x.shape
        lin = lambda t, w, b: torch.addmm(b, t.reshape(-1, t.shape[-1]), w).view(B, T, -1)  # bias fused in the GEMM
        q, k, v = lin(self.ln_1(x), self.c_attn_w, self.c_attn_b).split(D, -1)
        q, k, v = (t.view(B, T, self.h, D // self.h).transpose(1, 2) for t in (q, k, v))
        if HAS_SDPA:
            z = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # PyTorch < 2.0: the math path with a causal mask
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D // self.h))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            z = torch.softmax(att.masked_fill(mask, float("-inf")), -1) @ v
        x = x + lin(z.transpose(1, 2).reshape(B, T, D), self.c_proj_w, self.c_proj_b)
        a = F.gelu(lin(self.ln_2(x), self.c_fc_w, self.c_fc_b), approximate="tanh")
        return x + lin(a, self.mlp_proj_w, self.mlp_proj_b)


class GPT2(nn.Module):
    def __init__(self, layers, heads, d, context, vocab):
        super().__init__()
        self.wte = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = nn.Parameter(torch.randn(context, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, tokens):
        x = F.embedding(tokens, self.wte) + self.wpe[: tokens.shape[1]]
        for b in self.blocks:
            x = b(x)
        return self.ln_f(x) @ self.wte.t()


def make_adamw(model, device):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    other = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.01}, {"params": other, "weight_decay": 0.0}]
    kw = dict(lr=6e-4, betas=(0.9, 0.95), eps=1e-8)
    sig = inspect.signature(torch.optim.AdamW).parameters
    for kind in ("fused", "foreach"):
        if kind in sig and (kind != "fused" or device.type == "cuda"):
            try:
                return torch.optim.AdamW(groups, **kw, **{kind: True}), kind
            except (RuntimeError, TypeError, ValueError):
                pass
    return torch.optim.AdamW(groups, **kw), "plain"


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def time_calls(fn, n, device):
    """Per-call seconds of n calls (CUDA events on the GPU, so nothing waits on the host between calls)."""
    if device.type != "cuda":
        out = []
        for _ in range(n):
            t = time.perf_counter(); fn(); out.append(time.perf_counter() - t)
        return out
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    ev[0].record()
    for i in range(n):
        fn(); ev[i + 1].record()
    torch.cuda.synchronize()
    return [ev[i].elapsed_time(ev[i + 1]) / 1e3 for i in range(n)]


def matmul_peak_tflops(n, dtype, device):
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    sync(device)
    return 2 * n**3 / statistics.median(time_calls(lambda: a @ b, 10, device)) / 1e12


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--d-model", type=int, default=768)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--micro", "--batch", dest="micro", type=int, default=16, help="micro-batch (sequences)")
    p.add_argument("--accumulation", type=int, default=1, help="micro-batches per optimizer step")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--compile", action="store_true", help="wrap the model in torch.compile")
    p.add_argument("--no-bf16", action="store_true", help="fp32 throughout (no autocast)")
    p.add_argument("--no-tf32", action="store_true", help="keep fp32 matmuls in full fp32 on CUDA")
    p.add_argument("--peak-n", type=int, default=None, help="bf16 matmul size for the peak (default 8192; 512 on CPU)")
    p.add_argument("--profile-trace", default=None, metavar="TRACE.json",
                   help="after timing, 3 more steps under torch.profiler, written as a Chrome trace "
                        "(tests/reference/kernel_profile.py trace reads it)")
    a = p.parse_args()
    dev = torch.device(a.device)
    L, H, D, T, V, B, K = a.layers, a.heads, a.d_model, a.context, a.vocab, a.micro, a.accumulation
    bf16 = not a.no_bf16
    if dev.type == "cuda" and not a.no_tf32:
        torch.set_float32_matmul_precision("high")
    torch.manual_seed(0)

    peak_n = a.peak_n or (8192 if dev.type == "cuda" else 512)
    log(f"bf16 matmul peak: {peak_n}^3 ...")
    peak = matmul_peak_tflops(peak_n, torch.bfloat16, dev)
    log(f"  {peak:.1f} TFLOP/s")

    model = GPT2(L, H, D, T, V).to(dev)
    n_params = sum(p.numel() for p in model.parameters())
    n_flops_params = n_params - model.wpe.numel()
    flops_per_token = 6 * n_flops_params + 12 * L * T * D
    opt, adamw = make_adamw(model, dev)
    compiled = "off"
    fwd = model
    if a.compile:
        if hasattr(torch, "compile"):
            fwd, compiled = torch.compile(model), "on"
        else:
            compiled = "unavailable"
            log("torch.compile unavailable in this PyTorch; running eager")

    def step():
        for _ in range(K):
            tok = torch.randint(0, V, (B, T + 1), device=dev)
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=bf16):
                logits = fwd(tok[:, :-1])
            loss = F.cross_entropy(logits.float().view(-1, V), tok[:, 1:].reshape(-1)) / K
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    compile_s = None
    if compiled == "on":  # the first step compiles forward and backward; timed on its own, never in the results
        log("compiling (first step) ...")
        t = time.perf_counter(); step(); sync(dev); compile_s = time.perf_counter() - t
        log(f"  {compile_s:.1f} s")
    log(f"warm-up: {a.warmup} steps ...")
    for _ in range(a.warmup):
        step()
    sync(dev)
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    losses = []
    log(f"timing: {a.steps} steps ...")
    t = time.perf_counter()
    times = time_calls(lambda: losses.append(step().detach()), a.steps, dev)
    sync(dev)
    wall = time.perf_counter() - t
    peak_mem = torch.cuda.max_memory_allocated(dev) if dev.type == "cuda" else None

    if a.profile_trace:  # after the timing, which it would slow
        activities = [torch.profiler.ProfilerActivity.CPU]
        if dev.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(3):
                step()
            sync(dev)
        prof.export_chrome_trace(a.profile_trace)
        log(f"profile of 3 steps: {a.profile_trace}")

    tokens_per_step = B * K * T
    median = statistics.median(times)
    achieved = flops_per_token * tokens_per_step / median / 1e12
    res = {
        "torch": torch.__version__, "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
        "layers": L, "heads": H, "d_model": D, "vocab": V, "context": T, "micro": B, "accumulation": K,
        "bf16_autocast": bf16, "tf32": dev.type == "cuda" and not a.no_tf32, "compile": compiled,
        "sdpa": HAS_SDPA, "adamw": adamw, "warmup": a.warmup, "steps": a.steps,
        "params": n_params, "flops_params": n_flops_params, "flops_per_token": flops_per_token,
        "tokens_per_step": tokens_per_step, "compile_s": compile_s,
        "step_s_median": median, "step_s_mean": statistics.mean(times), "step_s_mean_wall": wall / a.steps,
        "tokens_per_s": tokens_per_step / median, "tokens_per_s_mean": tokens_per_step * a.steps / wall,
        "achieved_tflops": achieved,
        "matmul_peak_n": peak_n, "matmul_peak_bf16_tflops": peak, "mfu_vs_measured_matmul": achieved / peak,
        "mfu_vs_h100_sxm_datasheet_bf16_dense_989.4": achieved / H100_SXM_BF16_DENSE_TFLOPS,
        "max_memory_allocated_bytes": peak_mem, "last_loss": float(losses[-1]) * K,
    }
    log(f"{res['tokens_per_s']:.0f} tokens/s, {median * 1e3:.1f} ms/step, {achieved:.1f} TFLOP/s, "
        f"MFU {res['mfu_vs_measured_matmul']:.1%} of measured peak")
    print(json.dumps(res))


if __name__ == "__main__":
    main()

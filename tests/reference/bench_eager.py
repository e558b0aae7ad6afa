#!/usr/bin/env python3
"""Eager PyTorch GPT-2 for the speed comparison in tests/bench/bench_model.cpp.

The same model as the engine (pre-LN, Conv1D weights, tanh GELU, tied unembedding), the same shapes,
the same calls: a forward pass under no_grad, and a training step (forward, cross-entropy, backward,
gradient clipping at 1, AdamW).

It runs in lockstep with the benchmark, so both sides are timed under the same load of a shared machine:
after building the model and running each call once, it prints a JSON object with "ready": true; then
each line it reads, "forward" or "train", runs that call once and answers with its seconds. It ends at the
end of its input.

usage: bench_eager.py LAYERS HEADS D_MODEL CONTEXT VOCAB BATCH SEQ
"""
import json
import math
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.h = h
        self.ln_1 = nn.LayerNorm(d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_attn_w = nn.Parameter(torch.randn(d, 3 * d) * 0.02)
        self.c_attn_b = nn.Parameter(torch.zeros(3 * d))
        self.c_proj_w = nn.Parameter(torch.randn(d, d) * 0.02)
        self.c_proj_b = nn.Parameter(torch.zeros(d))
        self.c_fc_w = nn.Parameter(torch.randn(d, 4 * d) * 0.02)
        self.c_fc_b = nn.Parameter(torch.zeros(4 * d))
        self.mlp_proj_w = nn.Parameter(torch.randn(4 * d, d) * 0.02)
        self.mlp_proj_b = nn.Parameter(torch.zeros(d))

    def forward(self, x, mask):
        B, T, D = x.shape
        q, k, v = torch.addmm(self.c_attn_b, self.ln_1(x).view(-1, D), self.c_attn_w).view(B, T, 3 * D).split(D, -1)
        heads = lambda t: t.view(B, T, self.h, D // self.h).transpose(1, 2)
        att = heads(q) @ heads(k).transpose(-2, -1) * (1.0 / math.sqrt(D // self.h))
        att = torch.softmax(att.masked_fill(mask[:T, :T], float("-inf")), -1)
        z = (att @ heads(v)).transpose(1, 2).reshape(-1, D)
        x = x + torch.addmm(self.c_proj_b, z, self.c_proj_w).view(B, T, D)
        a = F.gelu(torch.addmm(self.c_fc_b, self.ln_2(x).view(-1, D), self.c_fc_w), approximate="tanh")
        return x + torch.addmm(self.mlp_proj_b, a, self.mlp_proj_w).view(B, T, D)


class GPT2(nn.Module):
    def __init__(self, layers, heads, d, context, vocab):
        super().__init__()
        self.wte = nn.Parameter(torch.randn(vocab, d) * 0.02)
        self.wpe = nn.Parameter(torch.randn(context, d) * 0.02)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.register_buffer("mask", torch.ones(context, context, dtype=torch.bool).triu(1))

    def forward(self, tokens):
        x = F.embedding(tokens, self.wte) + self.wpe[: tokens.shape[1]]
        for b in self.blocks:
            x = b(x, self.mask)
        return self.ln_f(x) @ self.wte.t()


def main():
    layers, heads, d, context, vocab, batch, seq = map(int, sys.argv[1:8])
    torch.manual_seed(0)
    model = GPT2(layers, heads, d, context, vocab)
    tokens = torch.randint(0, vocab, (batch, seq + 1))
    x, y = tokens[:, :-1], tokens[:, 1:]

    def forward():
        with torch.no_grad():
            model(x)

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01)

    def train():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x).view(-1, vocab), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    calls = {"forward": forward, "train": train}
    for call in calls.values():
        call()
    print(json.dumps({"ready": True, "torch": torch.__version__, "threads": torch.get_num_threads()}), flush=True)
    for line in iter(sys.stdin.readline, ""):  # one line at a time, as the benchmark sends them
        call = calls[line.strip()]
        t0 = time.perf_counter()
        call()
        print(time.perf_counter() - t0, flush=True)


if __name__ == "__main__":
    main()

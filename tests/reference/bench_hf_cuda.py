#!/usr/bin/env python3
"""Eager Hugging Face transformers training step on the GPU: the reference for the engine's CUDA benchmark on the
Pythia (GPT-NeoX) and LLaMA families (issue 13), as `bench_eager_cuda.py` is for GPT-2.

The model is transformers' own class built from a config of the given shape (random init), attention through SDPA;
the step is what a careful user of transformers writes: bf16 autocast over fp32 master weights, cross-entropy on the
logits, AdamW (fused; lr 6e-4, betas (0.9, 0.95), weight decay 0.01 on 2-D weights only), clipping to 1.0,
zero_grad(set_to_none). Random tokens, drawn on the device for each micro-batch. Model FLOPs per token = 6·N + 12·L·T·D
(N: every parameter, the tied unembedding counted once), as bench_training counts them. One JSON object on stdout's last
line.

usage:
    python3 tests/reference/bench_hf_cuda.py --family llama --layers 30 --heads 9 --kv-heads 3 --d-model 576 \
        --mlp-width 1536 --vocab 49152 --context 1024 --micro 16 --steps 10       # SmolLM2-135M's shape
    python3 tests/reference/bench_hf_cuda.py --family gpt_neox --layers 12 --heads 12 --d-model 768 --vocab 50304 \
        --context 1024 --micro 16 --steps 10                                        # Pythia-160M's shape
"""
import argparse, json, statistics, sys, time

import torch
import transformers


def build(args):
    if args.family == "llama":
        config = transformers.LlamaConfig(
            vocab_size=args.vocab, hidden_size=args.d_model, intermediate_size=args.mlp_width,
            num_hidden_layers=args.layers, num_attention_heads=args.heads,
            num_key_value_heads=args.kv_heads or args.heads, max_position_embeddings=args.context,
            tie_word_embeddings=args.tied, rope_theta=100000.0)
        return transformers.LlamaForCausalLM(config)
    config = transformers.GPTNeoXConfig(
        vocab_size=args.vocab, hidden_size=args.d_model, intermediate_size=args.mlp_width or 4 * args.d_model,
        num_hidden_layers=args.layers, num_attention_heads=args.heads, max_position_embeddings=args.context,
        rotary_pct=0.25, use_parallel_residual=True, tie_word_embeddings=False)
    return transformers.GPTNeoXForCausalLM(config)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--family", choices=["llama", "gpt_neox"], required=True)
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, default=0)
    p.add_argument("--d-model", type=int, required=True)
    p.add_argument("--mlp-width", type=int, default=0)
    p.add_argument("--vocab", type=int, required=True)
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--micro", type=int, default=16)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--tied", action="store_true")
    args = p.parse_args()

    torch.manual_seed(0)
    model = build(args)
    model.config._attn_implementation = "sdpa"
    model = model.cuda().train()
    n_params = sum(t.numel() for t in model.parameters())  # shared tensors are counted once
    decay = [t for t in model.parameters() if t.dim() >= 2]
    no_decay = [t for t in model.parameters() if t.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=6e-4, betas=(0.9, 0.95), fused=True)
    times = []
    torch.cuda.reset_peak_memory_stats()
    for step in range(args.steps + 2):
        tokens = torch.randint(0, args.vocab, (args.micro, args.context), device="cuda")
        torch.cuda.synchronize()
        start = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=tokens, labels=tokens).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
        if step >= 2:
            times.append(time.perf_counter() - start)
        print(f"step {step}: loss {loss.item():.3f}, {time.perf_counter() - start:.3f} s", file=sys.stderr, flush=True)
    tokens_per_second = args.micro * args.context / statistics.median(times)
    flops_per_token = 6 * n_params + 12 * args.layers * args.context * args.d_model
    print(json.dumps({"what": f"eager transformers {transformers.__version__} {type(model).__name__}",
                      "torch": torch.__version__, "family": args.family, "parameters": n_params,
                      "micro_batch": args.micro, "context": args.context, "tokens_per_second": tokens_per_second,
                      "model_tflops": tokens_per_second * flops_per_token / 1e12,
                      "peak_memory_bytes": torch.cuda.max_memory_allocated()}))


if __name__ == "__main__":
    main()

"""The logit lens in its three modes (docs/ANALYSES.md, `logit-lens`), written from the definitions in
float64 with the independent family references (GPT-2, LLaMA, Qwen2). For each layer's resid_pre and the
final residual r, logits = ((r − μ) / d) ⊙ γ + β, times W_Uᵀ, where the divisor d is
  recomputed: LN_f's own divisor on r (σ or the RMS of r; a fake norm's frozen s; 1 for identity),
  frozen:     LN_f's divisor on the final residual of the same token,
  linear:     the mean of that final divisor over every token but position 0 and end-of-text (when LN_f
              divides by a per-token statistic), else LN_f's own divisor.
Figures over every position with a next token: CE, KL(model ‖ lens), mean target probability, median
target rank (1 = top; the mean of the two middle ranks for an even count) and top-1 share.

    logit_lens_reference.py MODEL_FOLDER "t,t,t;t,t,t" OUT.f64   → (layers + 1) × 3 modes × 5 figures
"""
import sys

import numpy as np
import torch

from gpt2_reference import load


def main():
    folder, tokens_arg, out = sys.argv[1:4]
    tokens = torch.tensor([[int(t) for t in seq.split(",")] for seq in tokens_arg.split(";")])
    cfg, w = load(folder)
    record = {}
    if cfg.get("model_type") in ("llama", "qwen2"):
        from llama_reference import forward
        eps, eot = cfg.get("rms_norm_eps", 1e-6), cfg.get("eos_token_id", cfg["vocab_size"] - 1)
        gamma, beta, native = w["model.norm.weight"], 0, "rmsnorm"
        tied = cfg.get("tie_word_embeddings", False)
        unembed = w["model.embed_tokens.weight"] if tied else w["lm_head.weight"]
    else:
        from gpt2_reference import forward
        eps, eot = cfg.get("layer_norm_epsilon", 1e-5), cfg.get("eos_token_id", 50256)
        gamma, beta, native = w["ln_f.weight"], w["ln_f.bias"], "layernorm"
        unembed = w["wte.weight"] if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    site = cfg.get("normfree", {}).get("sites", {}).get("LN_f", {})
    kind = site.get("kind", native)
    with torch.no_grad():
        model_logits = forward(cfg, w, tokens, record)
    points = record["resid_pre"] + [record["final_residual"]]

    def divisor(x):
        if kind == "identity":
            return torch.ones(x.shape[:2], dtype=x.dtype)
        if kind in ("fakeln", "fakerms"):
            d = torch.full(x.shape[:2], site["scale"], dtype=x.dtype)
            if site.get("pos0_treatment"):
                d[:, 0] = site["scale_pos0"]
            return d
        if kind == "rmsnorm":
            return torch.sqrt((x * x).mean(-1) + eps)
        return torch.sqrt(x.var(-1, unbiased=False) + eps)  # layernorm (layernorm_scaling at depth 1)

    def apply(x, d):
        centred = x if kind in ("rmsnorm", "fakerms", "identity") else x - x.mean(-1, keepdim=True)
        if kind == "identity":
            return x
        return centred / d[..., None] * gamma + beta

    final = divisor(points[-1])
    if kind in ("layernorm", "rmsnorm", "layernorm_scaling"):
        counted = tokens != eot
        counted[:, 0] = False
        linear = torch.full_like(final, final[counted].mean().item())
    else:
        linear = None

    targets = tokens[:, 1:]
    model_logp = torch.log_softmax(model_logits[:, :-1], -1)
    figures = []
    for x in points:
        for d in (divisor(x), final, linear if linear is not None else divisor(x)):
            logits = (apply(x, d) @ unembed.T)[:, :-1]
            logp = torch.log_softmax(logits, -1)
            target_logp = logp.gather(-1, targets[..., None])[..., 0]
            target_logit = logits.gather(-1, targets[..., None])
            rank = (logits > target_logit).sum(-1) + 1
            kl = (model_logp.exp() * (model_logp - logp)).sum(-1)
            figures += [-target_logp.mean().item(), kl.mean().item(), target_logp.exp().mean().item(),
                        float(np.median(rank.numpy())), (rank == 1).double().mean().item()]
    np.array(figures, dtype="<f8").tofile(out)


if __name__ == "__main__":
    main()

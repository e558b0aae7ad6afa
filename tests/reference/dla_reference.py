"""Per-head NMAE of direct logit attribution against the direct effect (PROTOCOL §7), written straight from
the formulas, in float64, for a model whose final norm is a real LayerNorm. Independent of the engine:
reads the weights with gpt2_reference.py's own safetensors parser.

    dla_reference.py MODEL_FOLDER "t,t,t;t,t,t" OUT.f64   → L·H NMAE values (percent), little-endian float64
"""
import sys

import torch

from gpt2_reference import forward, load


def main():
    folder, tokens_arg, out = sys.argv[1:4]
    tokens = torch.tensor([[int(t) for t in seq.split(",")] for seq in tokens_arg.split(";")])
    cfg, w = load(folder)
    eps = cfg.get("layer_norm_epsilon", 1e-5)
    record = {}
    with torch.no_grad():
        forward(cfg, w, tokens, record)
    unembed = w["wte.weight"] if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    u = unembed[tokens[:, 1:]]  # the correct next token at every position but the last
    gamma, beta = w["ln_f.weight"], w["ln_f.bias"]

    def scale(x):
        return torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + eps)

    def ln_f(x):
        return (x - x.mean(-1, keepdim=True)) / scale(x) * gamma + beta

    r = record["final_residual"][:, :-1]
    full = (ln_f(r) * u).sum(-1)
    s_cached = scale(r)
    nmae = []
    for heads in record["heads"]:
        for h in range(heads.shape[2]):
            c = heads[:, :-1, :, :][:, :, h]
            dla = ((c - c.mean(-1, keepdim=True)) / s_cached * gamma * u).sum(-1)
            de = full - (ln_f(r - c) * u).sum(-1)
            nmae.append(((dla - de).abs().mean() / de.abs().mean() * 100).item())
    torch.tensor(nmae, dtype=torch.float64).numpy().astype("<f8").tofile(out)


if __name__ == "__main__":
    main()

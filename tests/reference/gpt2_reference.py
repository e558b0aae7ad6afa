#!/usr/bin/env python3
"""Independent GPT-2 reference for the engine tests (and the entry point for every family's reference).

Reads a model folder (config.json + model.safetensors or sharded files) with its own safetensors parser,
runs GPT-2 written directly from the formulas (no code shared with the C++ engine) and writes the logits.
A folder of another family (config.json's model_type) runs that family's reference instead:
gpt_neox_reference.py, llama_reference.py (LLaMA and Qwen2).

usage: gpt2_reference.py MODEL_DIR TOKENS OUT
  TOKENS  comma-separated ids, sequences separated by ';' (equal lengths)
  OUT     raw little-endian float32 logits, shape [B, T, vocab], row-major
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    data = blob[8 + n:]
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        raw = data[a:b]
        if e["dtype"] == "BF16":  # bf16 is the top half of a float32
            u16 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(DTYPES[e["dtype"]]).newbyteorder("<")).astype(np.float32)
        out[name] = torch.from_numpy(arr.reshape(e["shape"]).copy())
    return out


def load(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    # A model whose norms are not its family's own is typed "normfree_<family>" (so that transformers refuses
    # it); its "normfree" block says the norms, which the forwards here read.
    cfg["model_type"] = cfg.get("model_type", "gpt2").removeprefix("normfree_")
    single = os.path.join(folder, "model.safetensors")
    files = [single] if os.path.exists(single) else sorted(
        {os.path.join(folder, f) for f in json.load(open(os.path.join(folder, "model.safetensors.index.json")))["weight_map"].values()})
    w = {}
    for f in files:
        for k, v in read_safetensors(f).items():
            w[k[len("transformer."):] if k.startswith("transformer.") else k] = v.double()
    return cfg, w


def norm(x, site, g, b, eps, depth, tokens, eot, default="layernorm"):
    """A site's normalization; b is None for families whose norms have no bias."""
    kind = site.get("kind", default)
    b = 0 if b is None else b
    if kind == "identity":
        return x
    if kind == "rmsnorm":
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * g + b
    mu = x.mean(-1, keepdim=True)
    if kind in ("fakeln", "fakerms"):
        s = torch.full(x.shape[:2], site["scale"], dtype=x.dtype)
        if site.get("pos0_treatment"):
            s[:, 0] = site["scale_pos0"]
        if site.get("eot_treatment"):
            s[tokens == eot] = site["scale_pos0"]
        centred = x - mu if kind == "fakeln" else x
        return centred / s[..., None] * g + b
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    y = (x - mu) / torch.sqrt(var + eps) * g + b
    return y / math.sqrt(depth) if kind == "layernorm_scaling" else y


def forward(cfg, w, tokens, record=None):
    """Logits; when `record` is a dict it receives each block's input ("resid_pre": [B, T, D] per layer),
    each head's output per layer ("heads": [B, T, H, D]) and the input of ln_f ("final_residual")."""
    L, H, D = cfg["n_layer"], cfg["n_head"], cfg["n_embd"]
    eps, eot = cfg.get("layer_norm_epsilon", 1e-5), cfg.get("eos_token_id", 50256)
    sites = cfg.get("normfree", {}).get("sites", {})
    B, T = tokens.shape
    x = w["wte.weight"][tokens] + w["wpe.weight"][:T][None]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        p = f"h.{l}."
        if record is not None:
            record.setdefault("resid_pre", []).append(x)
        g1, b1 = w[p + "ln_1.weight"], w[p + "ln_1.bias"]
        Wa, ba = w[p + "attn.c_attn.weight"], w[p + "attn.c_attn.bias"]
        h_qk = norm(x, sites.get(f"LN_qk.{l}", {}), g1, b1, eps, l + 1, tokens, eot)
        h_v = norm(x, sites.get(f"LN_v.{l}", {}), g1, b1, eps, l + 1, tokens, eot)
        q = h_qk @ Wa[:, :D] + ba[:D]
        k = h_qk @ Wa[:, D:2 * D] + ba[D:2 * D]
        v = h_v @ Wa[:, 2 * D:] + ba[2 * D:]
        split = lambda t: t.view(B, T, H, D // H).permute(0, 2, 1, 3)
        att = split(q) @ split(k).transpose(-1, -2) / math.sqrt(D // H)
        att = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        z = (att @ split(v)).permute(0, 2, 1, 3).reshape(B, T, D)
        if record is not None:
            wo = w[p + "attn.c_proj.weight"].view(H, D // H, D)
            record.setdefault("heads", []).append(
                torch.einsum("bthd,hde->bthe", z.view(B, T, H, D // H), wo))
        x = x + z @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h2 = norm(x, sites.get(f"LN_mlp.{l}", {}), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps, l + 1, tokens, eot)
        a = h2 @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
        a = 0.5 * a * (1 + torch.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))
        x = x + a @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    if record is not None:
        record["final_residual"] = x
    x = norm(x, sites.get("LN_f", {}), w["ln_f.weight"], w["ln_f.bias"], eps, 1, tokens, eot)
    unembed = w["wte.weight"] if cfg.get("tie_word_embeddings", True) else w["lm_head.weight"]
    return x @ unembed.T


def main():
    folder, tokens_arg, out = sys.argv[1:4]
    tokens = torch.tensor([[int(t) for t in seq.split(",")] for seq in tokens_arg.split(";")])
    cfg, w = load(folder)
    family_forward = forward
    if cfg.get("model_type") == "gpt_neox":
        from gpt_neox_reference import forward as family_forward
    elif cfg.get("model_type") in ("llama", "qwen2"):
        from llama_reference import forward as family_forward
    with torch.no_grad():
        logits = family_forward(cfg, w, tokens)  # float64 throughout: the reference error is negligible
    logits.float().numpy().astype("<f4").tofile(out)


if __name__ == "__main__":
    main()

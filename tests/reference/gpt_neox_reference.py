"""Independent GPT-NeoX (Pythia) reference, written from GPTNeoXForCausalLM's config semantics: fused
query_key_value whose output holds per head [q | k | v], rotary embeddings on int(head_dim · rotary_pct)
dimensions with base rotary_emb_base, exact GELU, use_parallel_residual (x + attn(ln1(x)) + mlp(ln2(x))
instead of two residual steps), untied embed_out unless tie_word_embeddings. Norm sites as in
gpt2_reference.py (LN_qk / LN_v split input_layernorm). Float64."""
import math

import torch

from gpt2_reference import norm
from rotary_reference import causal_attention, rotate


def forward(cfg, w, tokens):
    L, H, D = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"]
    dh = D // H
    eps = cfg.get("layer_norm_eps", 1e-5)
    eot = cfg.get("eos_token_id", cfg["vocab_size"] - 1)
    dims = int(dh * cfg.get("rotary_pct", 0.25))
    base = cfg.get("rotary_emb_base", 10000)
    sites = cfg.get("normfree", {}).get("sites", {})
    B, T = tokens.shape
    x = w["gpt_neox.embed_in.weight"][tokens]
    for l in range(L):
        p = f"gpt_neox.layers.{l}."
        g1, b1 = w[p + "input_layernorm.weight"], w[p + "input_layernorm.bias"]
        W, b = w[p + "attention.query_key_value.weight"], w.get(p + "attention.query_key_value.bias", 0)
        per_head = lambda h: (h @ W.T + b).view(B, T, H, 3, dh).permute(0, 2, 1, 3, 4)  # [B, H, T, 3, dh]
        qk_part = per_head(norm(x, sites.get(f"LN_qk.{l}", {}), g1, b1, eps, l + 1, tokens, eot))
        v_part = per_head(norm(x, sites.get(f"LN_v.{l}", {}), g1, b1, eps, l + 1, tokens, eot))
        q, k, v = rotate(qk_part[..., 0, :], dims, base), rotate(qk_part[..., 1, :], dims, base), v_part[..., 2, :]
        attn = causal_attention(q, k, v) @ w[p + "attention.dense.weight"].T + w.get(p + "attention.dense.bias", 0)

        def mlp(inp):
            h = norm(inp, sites.get(f"LN_mlp.{l}", {}), w[p + "post_attention_layernorm.weight"],
                     w[p + "post_attention_layernorm.bias"], eps, l + 1, tokens, eot)
            a = h @ w[p + "mlp.dense_h_to_4h.weight"].T + w[p + "mlp.dense_h_to_4h.bias"]
            a = 0.5 * a * (1 + torch.erf(a / math.sqrt(2)))
            return a @ w[p + "mlp.dense_4h_to_h.weight"].T + w[p + "mlp.dense_4h_to_h.bias"]

        if cfg.get("use_parallel_residual", True):
            x = x + attn + mlp(x)
        else:
            x = x + attn
            x = x + mlp(x)
    x = norm(x, sites.get("LN_f", {}), w["gpt_neox.final_layer_norm.weight"], w["gpt_neox.final_layer_norm.bias"],
             eps, 1, tokens, eot)
    unembed = w["gpt_neox.embed_in.weight"] if cfg.get("tie_word_embeddings", False) else w["embed_out.weight"]
    return x @ unembed.T

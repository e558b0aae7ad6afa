"""Independent LLaMA-family reference (LlamaForCausalLM, Qwen2ForCausalLM), written from their config
semantics: RMSNorm weight-only norms (rms_norm_eps), rotary embeddings on every head dimension with base
rope_theta, grouped-query attention (query head h reads key/value head h // (heads / num_key_value_heads)),
SwiGLU MLP down(silu(gate(x)) · up(x)), biases on q/k/v (and o) when attention_bias (LLaMA) or on q/k/v
always (Qwen2), lm_head tied to embed_tokens when tie_word_embeddings. Norm sites as in gpt2_reference.py
(LN_qk / LN_v split input_layernorm). Float64."""
import torch

from gpt2_reference import norm
from rotary_reference import causal_attention, rotate


def forward(cfg, w, tokens, record=None):
    """Logits; when `record` is a dict it receives each block's input ("resid_pre") and the input of the
    final norm ("final_residual")."""
    L, H, D = cfg["num_hidden_layers"], cfg["num_attention_heads"], cfg["hidden_size"]
    kv_heads = cfg.get("num_key_value_heads", H)
    dh = D // H
    eps = cfg.get("rms_norm_eps", 1e-6)
    eot = cfg.get("eos_token_id", cfg["vocab_size"] - 1)
    base = cfg.get("rope_theta", 10000)
    qwen2 = cfg["model_type"] == "qwen2"
    qkv_bias = qwen2 or cfg.get("attention_bias", False)
    o_bias = not qwen2 and cfg.get("attention_bias", False)
    mlp_bias = not qwen2 and cfg.get("mlp_bias", False)
    sites = cfg.get("normfree", {}).get("sites", {})
    B, T = tokens.shape

    def linear(h, name, bias):
        return h @ w[name + ".weight"].T + (w[name + ".bias"] if bias else 0)

    def site_norm(h, site, weight, depth):
        return norm(h, sites.get(site, {}), weight, None, eps, depth, tokens, eot, default="rmsnorm")

    x = w["model.embed_tokens.weight"][tokens]
    for l in range(L):
        p = f"model.layers.{l}."
        if record is not None:
            record.setdefault("resid_pre", []).append(x)
        g1 = w[p + "input_layernorm.weight"]
        h_qk = site_norm(x, f"LN_qk.{l}", g1, l + 1)
        h_v = site_norm(x, f"LN_v.{l}", g1, l + 1)
        heads = lambda t, n: t.view(B, T, n, dh).permute(0, 2, 1, 3)
        q = rotate(heads(linear(h_qk, p + "self_attn.q_proj", qkv_bias), H), dh, base)
        k = rotate(heads(linear(h_qk, p + "self_attn.k_proj", qkv_bias), kv_heads), dh, base)
        v = heads(linear(h_v, p + "self_attn.v_proj", qkv_bias), kv_heads)
        group = [h // (H // kv_heads) for h in range(H)]
        x = x + linear(causal_attention(q, k[:, group], v[:, group]), p + "self_attn.o_proj", o_bias)
        h2 = site_norm(x, f"LN_mlp.{l}", w[p + "post_attention_layernorm.weight"], l + 1)
        gate = linear(h2, p + "mlp.gate_proj", mlp_bias)
        x = x + linear(gate * torch.sigmoid(gate) * linear(h2, p + "mlp.up_proj", mlp_bias), p + "mlp.down_proj",
                       mlp_bias)
    if record is not None:
        record["final_residual"] = x
    x = site_norm(x, "LN_f", w["model.norm.weight"], 1)
    unembed = w["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings", False) else w["lm_head.weight"]
    return x @ unembed.T

"""Rotary position embeddings as Hugging Face's GPT-NeoX and LLaMA apply them (rotate-half convention),
written from their definition: the pair (x_i, x_{i+d/2}) of a head's first d rotated dimensions turns by
the angle position / base^(2i/d)."""
import torch


def rotate(x, dims, base):
    """x: [B, H, T, head_dim]; rotates the first `dims` dimensions of each head, passes the rest."""
    if dims == 0:
        return x
    T, half = x.shape[2], dims // 2
    i = torch.arange(half, dtype=torch.float64)
    angle = torch.arange(T, dtype=torch.float64)[:, None] / base ** (2 * i / dims)[None, :]  # [T, half]
    cos, sin = torch.cos(angle), torch.sin(angle)
    first, second = x[..., :half], x[..., half:dims]
    turned = torch.cat([first * cos - second * sin, second * cos + first * sin], dim=-1)
    return torch.cat([turned, x[..., dims:]], dim=-1)


def causal_attention(q, k, v):
    """softmax(q·kᵀ/√d + causal mask)·v for q, k, v [B, H, T, d]; returns [B, T, H·d]."""
    B, H, T, d = q.shape
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    att = torch.softmax((q @ k.transpose(-1, -2) / d ** 0.5).masked_fill(~mask, float("-inf")), dim=-1)
    return (att @ v).permute(0, 2, 1, 3).reshape(B, T, H * d)

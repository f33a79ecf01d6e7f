# Mistake: builds nn.RMSNorm(d_model) without eps=: the norms use the dtype's machine epsilon.
# Expect: machine epsilon

import torch
import torch.nn.functional as F
from torch import nn


class DecoderBlock(nn.Module):
    def __init__(self, d_model, n_heads, d_hidden, eps=1e-6):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("the head sizes do not divide")
        self.n_heads, self.n_kv_heads = n_heads, n_heads
        self.head_dim = d_model // n_heads
        # eps= is passed on: nn.RMSNorm's default is the dtype's machine epsilon, not the block's eps.
        self.attn_norm = nn.RMSNorm(d_model)
        self.q_proj = nn.Linear(d_model, n_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, self.n_kv_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, self.n_kv_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(n_heads * self.head_dim, d_model, bias=False)
        self.ffn_norm = nn.RMSNorm(d_model)
        self.gate_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.up_proj = nn.Linear(d_model, d_hidden, bias=False)
        self.down_proj = nn.Linear(d_hidden, d_model, bias=False)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.head_dim).transpose(1, 2)  # [B, H, T, D]
        k = self.k_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_kv_heads, self.head_dim).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # scaled by 1/sqrt(head_dim)
        return self.o_proj(out.transpose(1, 2).reshape(b, t, self.n_heads * self.head_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Pre-norm: each sub-layer reads a normed copy; its output is added to the stream x itself.
        h = x + self.attention(self.attn_norm(x))
        n = self.ffn_norm(h)
        # SwiGLU: the SiLU goes on the gate only.
        return h + self.down_proj(F.silu(self.gate_proj(n)) * self.up_proj(n))

"""Building blocks of the VTT models: T5-style relative position bias, a pre-norm self-attention
stack (bidirectional for the context encoder, causal for the text decoder), and the projection of
image features to the model width.

The paper's transformers (x-transformers, appendix E.1) use "simplified relative positional
encoding" (T5's bucketed, learned bias per head, shared by the layers of a stack); these are
written here from that description.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class RelativePositionBias(nn.Module):
    """T5's relative position bias: a learned scalar per head for each bucket of the distance
    key - query (exact for small distances, logarithmic up to `max_distance`)."""

    def __init__(self, heads: int, causal: bool, num_buckets: int = 32, max_distance: int = 128):
        super().__init__()
        self.causal = causal
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.bias = nn.Embedding(num_buckets, heads)

    def bucket(self, relative: torch.Tensor) -> torch.Tensor:
        """Bucket index of each relative distance (key position - query position)."""
        n = -relative
        buckets = self.num_buckets
        out = torch.zeros_like(n)
        if self.causal:
            n = n.clamp(min=0)
        else:
            buckets //= 2
            out = out + (n < 0).long() * buckets
            n = n.abs()
        exact = buckets // 2
        is_small = n < exact
        large = (
            exact
            + (
                torch.log(n.float().clamp(min=1) / exact)
                / math.log(self.max_distance / exact)
                * (buckets - exact)
            ).long()
        )
        large = large.clamp(max=buckets - 1)
        return out + torch.where(is_small, n, large)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        """(L,) integer positions -> (heads, L, L) additive attention bias."""
        relative = positions[None, :] - positions[:, None]
        return self.bias(self.bucket(relative)).permute(2, 0, 1)


class SelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} is not a multiple of heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.dropout = dropout

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        b, length, dim = x.shape
        q, k, v = self.qkv(x).view(b, length, 3, self.heads, dim // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, attn_mask=bias, dropout_p=self.dropout if self.training else 0.0
        )
        return self.out(y.transpose(1, 2).reshape(b, length, dim))


class Layer(nn.Module):
    """Pre-norm transformer layer: x + attn(norm x), then x + ff(norm x)."""

    def __init__(self, dim: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads, dropout)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(), nn.Dropout(dropout), nn.Linear(4 * dim, dim)
        )
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.norm1(x), bias))
        return x + self.drop(self.ff(self.norm2(x)))


class TransformerStack(nn.Module):
    """`depth` self-attention layers sharing one relative position bias, then a LayerNorm.

    forward(x (B, L, d), positions (L,), key_mask (B, L) bool or None) -> (B, L, d). Causal
    stacks let position t see positions <= t only.
    """

    def __init__(self, dim: int, depth: int, heads: int, dropout: float, causal: bool) -> None:
        super().__init__()
        self.causal = causal
        self.rel_pos = RelativePositionBias(heads, causal)
        self.layers = nn.ModuleList(Layer(dim, heads, dropout) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def forward(
        self, x: torch.Tensor, positions: torch.Tensor, key_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        length = x.shape[1]
        bias = self.rel_pos(positions).to(x.dtype)[None]  # (1, H, L, L)
        blocked = torch.zeros(1, 1, length, length, dtype=torch.bool, device=x.device)
        if self.causal:
            blocked = blocked | torch.ones(length, length, dtype=torch.bool,
                                           device=x.device).triu(1)[None, None]  # fmt: skip
        if key_mask is not None:
            blocked = blocked | ~key_mask[:, None, None, :]
        bias = bias.masked_fill(blocked, float("-inf"))
        for layer in self.layers:
            x = layer(x, bias)
        return self.norm(x)


class StateProjection(nn.Module):
    """Image features -> model width: Linear, then BatchNorm1d (momentum 0.01) over the real
    states only, plus the input itself when the widths agree (as the released TTNet's encoder)."""

    def __init__(self, in_dim: int, dim: int) -> None:
        super().__init__()
        self.linear = nn.Linear(in_dim, dim)
        self.norm = nn.BatchNorm1d(dim, momentum=0.01)
        self.skip = in_dim == dim

    def forward(self, features: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, S, in_dim) features, (B, S) mask of real states -> (B, S, dim), 0 at padding."""
        real = features[mask]
        projected = self.norm(self.linear(real))
        if self.skip:
            projected = projected + real
        out = features.new_zeros(*mask.shape, projected.shape[-1])
        out[mask] = projected
        return out

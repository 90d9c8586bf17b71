"""Pre-norm causal self-attention blocks with a T5 relative position bias (the original -T form).

The pieces of the public release's one-layer Transformer decoder, written from its shapes:
- `relative_position_bucket`: T5's causal bucketing of the distance from a query back to a key,
  exact below num_buckets // 2, logarithmic up to max_distance, the last bucket beyond;
- `RelativePositionBias`: one learned scalar per bucket and head, made once per decoder and
  shared by all its layers, scaled by sqrt(head_dim) (the scores are already divided by it);
- `CausalSelfAttention`: heads x head_dim queries, keys and values without biases, an output
  projection without bias, the causal mask, softmax in float32;
- `FeedForward`: Linear (with bias), GELU, Linear (with bias), width `mult` x the model width;
- `DecoderBlock`: x + attention(LayerNorm(x)), then x + feed_forward(LayerNorm(x)).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def relative_position_bucket(
    distance: torch.Tensor, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    """T5's causal buckets of `distance` = query position - key position (keys ahead: 0)."""
    n = distance.clamp(min=0)
    exact = num_buckets // 2
    # log-spaced buckets from `exact` to max_distance; clamp(min=1) only keeps log() finite
    # where n < exact, whose result the torch.where below discards
    scaled = torch.log(n.clamp(min=1).float() / exact) / math.log(max_distance / exact)
    large = (exact + (scaled * (num_buckets - exact)).long()).clamp(max=num_buckets - 1)
    return torch.where(n < exact, n, large)


class RelativePositionBias(nn.Module):
    """A learned (heads, L, L) score bias indexed by T5 bucket of the query-key distance."""

    def __init__(
        self, heads: int, scale: float, num_buckets: int = 32, max_distance: int = 128
    ) -> None:
        super().__init__()
        if num_buckets > max_distance:
            raise ValueError("num_buckets must not exceed max_distance")
        self.scale = scale
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        self.embedding = nn.Embedding(num_buckets, heads)

    def forward(self, length: int) -> torch.Tensor:
        pos = torch.arange(length, device=self.embedding.weight.device)
        buckets = relative_position_bucket(
            pos[:, None] - pos[None, :], self.num_buckets, self.max_distance
        )
        return self.embedding(buckets).permute(2, 0, 1) * self.scale  # (heads, L, L)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention, no biases in the projections, plus an additive bias."""

    def __init__(self, dim: int, heads: int = 8, head_dim: int = 64) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = head_dim
        inner = heads * head_dim
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(dim, inner, bias=False)
        self.to_v = nn.Linear(dim, inner, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """x (B, L, dim) and a score bias (heads, L, L) -> (B, L, dim)."""
        b, length, _ = x.shape

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(b, length, self.heads, self.head_dim).transpose(1, 2)

        q, k, v = split(self.to_q(x)), split(self.to_k(x)), split(self.to_v(x))
        scores = (q @ k.transpose(-1, -2)) * self.head_dim**-0.5 + bias.to(q.dtype)
        ahead = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(ahead, float("-inf"))
        attn = F.softmax(scores, dim=-1, dtype=torch.float32).to(v.dtype)
        out = (attn @ v).transpose(1, 2).reshape(b, length, self.heads * self.head_dim)
        return self.to_out(out)


class FeedForward(nn.Module):
    """Linear -> GELU -> Linear, the hidden width `mult` times the model width."""

    def __init__(self, dim: int, mult: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, dim * mult), nn.GELU(), nn.Linear(dim * mult, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class DecoderBlock(nn.Module):
    """One pre-norm layer: causal self-attention then the feed-forward, each with a residual."""

    def __init__(self, dim: int, heads: int = 8, head_dim: int = 64, ff_mult: int = 4) -> None:
        super().__init__()
        self.attn_norm = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, head_dim)
        self.ff_norm = nn.LayerNorm(dim)
        self.ff = FeedForward(dim, ff_mult)

    def forward(self, x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), bias)
        return x + self.ff(self.ff_norm(x))

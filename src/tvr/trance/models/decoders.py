"""Sequence decoders of TranceNet: a GRU and a one-layer causal Transformer, hidden size 128.

Both map the image feature h (B, H) and the step inputs (B, L, D) (the start token, then the
previous steps) to one state per position (B, L, H); position i sees inputs 0..i only.

- GRU: h is the initial hidden state, g_i = GRU(g_{i-1}, t_{i-1}) (Eq. 6 of the paper).
- Transformer: each input is projected to H, h and a learned position embedding are added, and
  one pre-norm self-attention layer with a causal mask runs over the sequence.
"""

from __future__ import annotations

import torch
from torch import nn

DECODERS = ("g", "t")


class GRUDecoder(nn.Module):
    def __init__(self, input_dim: int, hidden: int = 128) -> None:
        super().__init__()
        self.gru = nn.GRU(input_dim, hidden, batch_first=True)

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(inputs, h.unsqueeze(0).contiguous())
        return out


class TransformerDecoder(nn.Module):
    def __init__(
        self,
        input_dim: int,
        hidden: int = 128,
        heads: int = 8,
        feedforward: int = 2048,
        max_len: int = 16,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        self.proj = nn.Linear(input_dim, hidden)
        self.pos = nn.Parameter(torch.zeros(max_len, hidden))
        nn.init.normal_(self.pos, std=0.02)
        self.layer = nn.TransformerEncoderLayer(
            hidden, heads, feedforward, dropout=dropout, batch_first=True, norm_first=True
        )
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        length = inputs.shape[1]
        x = self.proj(inputs) + h.unsqueeze(1) + self.pos[:length]
        mask = nn.Transformer.generate_square_subsequent_mask(
            length, device=x.device, dtype=x.dtype
        )
        return self.norm(self.layer(x, src_mask=mask, is_causal=True))


def build_decoder(kind: str, input_dim: int, hidden: int = 128) -> nn.Module:
    """A decoder by kind: "g" (GRU) or "t" (one-layer causal Transformer)."""
    if kind == "g":
        return GRUDecoder(input_dim, hidden)
    if kind == "t":
        return TransformerDecoder(input_dim, hidden)
    raise ValueError(f"unknown decoder {kind!r}: expected one of {DECODERS}")

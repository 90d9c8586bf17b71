"""Sequence decoders of TranceNet: a GRU and a one-layer causal Transformer, hidden size 128.

All map the image feature h (B, H) and the step inputs (B, L, D) (the start token, then the
previous steps) to one state per position (B, L, H); position i sees inputs 0..i only.

- GRU: h is the initial hidden state, g_i = GRU(g_{i-1}, t_{i-1}) (Eq. 6 of the paper).
- Transformer, form "original" (the public release's, the paper's model): each input is
  projected to H and h is added; one pre-norm layer (`tvr.trance.models.attention`: 8 heads of
  64, no biases in Q/K/V/out, feed-forward 512 with GELU, T5 relative position bias, causal)
  runs over the sequence, with no final LayerNorm. 398,208 parameters at H = 128.
- Transformer, form "tvr" (tvr's first one, kept so that its runs reload): each input is
  projected to H, h and a learned position embedding are added, and one pre-norm
  `nn.TransformerEncoderLayer` (8 heads, feed-forward 2048, ReLU) with a causal mask and a final
  LayerNorm runs over the sequence. 598,912 parameters at H = 128.
"""

from __future__ import annotations

import torch
from torch import nn

from tvr.trance.models.attention import DecoderBlock, RelativePositionBias

DECODERS = ("g", "t")
#: forms of the Transformer decoder; the first is the default of new models
DECODER_FORMS = ("original", "tvr")


class GRUDecoder(nn.Module):
    def __init__(self, input_dim: int, hidden: int = 128) -> None:
        super().__init__()
        self.gru = nn.GRU(input_dim, hidden, batch_first=True)

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        out, _ = self.gru(inputs, h.unsqueeze(0).contiguous())
        return out


class RelPosTransformerDecoder(nn.Module):
    """The original -T decoder: input projection plus h, pre-norm layers sharing one T5 bias."""

    def __init__(
        self,
        input_dim: int,
        hidden: int = 128,
        depth: int = 1,
        heads: int = 8,
        head_dim: int = 64,
        ff_mult: int = 4,
        num_buckets: int = 32,
        max_distance: int = 128,
    ) -> None:
        super().__init__()
        self.proj = nn.Linear(input_dim, hidden)
        self.rel_pos = RelativePositionBias(heads, head_dim**0.5, num_buckets, max_distance)
        self.layers = nn.ModuleList(
            DecoderBlock(hidden, heads, head_dim, ff_mult) for _ in range(depth)
        )

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        x = self.proj(inputs) + h.unsqueeze(1)
        bias = self.rel_pos(inputs.shape[1])
        for layer in self.layers:
            x = layer(x, bias)
        return x


class TransformerDecoder(nn.Module):
    """tvr's first -T decoder: projection, h and a learned position embedding, PyTorch's layer."""

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


def build_decoder(
    kind: str, input_dim: int, hidden: int = 128, form: str = DECODER_FORMS[0]
) -> nn.Module:
    """A decoder by kind: "g" (GRU) or "t" (Transformer, of `form`; the GRU has one form)."""
    if form not in DECODER_FORMS:
        raise ValueError(f"unknown decoder form {form!r}: expected one of {DECODER_FORMS}")
    if kind == "g":
        return GRUDecoder(input_dim, hidden)
    if kind == "t":
        if form == "original":
            return RelPosTransformerDecoder(input_dim, hidden)
        return TransformerDecoder(input_dim, hidden)
    raise ValueError(f"unknown decoder {kind!r}: expected one of {DECODERS}")

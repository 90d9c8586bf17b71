"""TTNet and TTNet_Base (VTT paper, appendix D): CLIP state features -> context transformer ->
a shared transformer text decoder, with Diff, MTM and the Aux heads as switches.

- State features v_0..v_N: the frozen CLIP features projected to `dim` (layers.StateProjection).
- Diff: difference tokens d_i = v_i - v_(i-1), with d_0 = v_0 - v_N (the paper's v_0 = v_(N+1)
  in its 1-based indices), fed beside the state tokens; a learned segment embedding tells the
  two kinds apart and a difference token has the position of its state.
- MTM (training only): in a sample chosen with probability mtm_prob, each state and difference
  token is replaced by zeros with probability mtm_ratio, before the context encoder.
- Context encoder: `context_layers` bidirectional transformer layers with relative position
  bias. Transformation j's context is the output at state token j + 1; the Aux heads (topic,
  category) read the output at state token 0, the global vector.
- Text decoder: `decoder_layers` causal transformer layers over CLIP BPE ids; each word embedding
  has the transformation's context added to it (the paper's choice over a prefix token); one
  decoder for all transformations.
"""

from __future__ import annotations

import torch
from torch import nn

from tvr.vtt.models.common import Batch, Encoded, VttModel
from tvr.vtt.models.layers import TransformerStack
from tvr.vtt.models.tokenizer import VOCAB_SIZE


class TransformerTextDecoder(nn.Module):
    """Causal transformer over word embeddings plus a per-description context vector."""

    def __init__(
        self, dim: int, depth: int, heads: int, dropout: float, vocab_size: int = VOCAB_SIZE
    ) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.stack = TransformerStack(dim, depth, heads, dropout, causal=True)
        self.to_logits = nn.Linear(dim, vocab_size)

    def forward(self, tokens: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        """tokens (M, L), context (M, d) -> hidden states (M, L, d); `to_logits` maps them to
        next-token logits (only where needed: the vocabulary is 49,408 wide)."""
        x = self.embed(tokens) + context[:, None, :]
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        return self.stack(x, positions)


class TransformerStepper:
    """Decoding rows of a TransformerTextDecoder: the whole prefix is run at every step."""

    def __init__(self, decoder: TransformerTextDecoder, contexts: torch.Tensor) -> None:
        self.decoder = decoder
        self.contexts = contexts

    def logits(self, prefix: torch.Tensor) -> torch.Tensor:
        return self.decoder.to_logits(self.decoder(prefix, self.contexts)[:, -1])

    def reindex(self, index: torch.Tensor) -> None:
        self.contexts = self.contexts[index]


class TTNet(VttModel):
    """TTNet; with diff, mtm and aux off, TTNet_Base."""

    def make_layers(self) -> None:
        config, dim = self.config, self.config.dim
        self.segment = nn.Embedding(2, dim) if config.diff else None
        self.context = TransformerStack(dim, config.context_layers, config.heads, config.dropout,
                                        causal=False)  # fmt: skip
        self.decoder = TransformerTextDecoder(dim, config.decoder_layers, config.heads,
                                              config.dropout, self.vocab_size)  # fmt: skip
        self.topic_head = nn.Linear(dim, self.n_topics) if config.aux else None
        self.category_head = nn.Linear(dim, self.n_categories) if config.aux else None

    def encode(self, batch: Batch) -> Encoded:
        mask = batch["state_mask"]
        states = self.state_features(batch)
        s = states.shape[1]
        positions = torch.arange(s, device=states.device)
        tokens, key_mask = [states], [mask]
        if self.segment is not None:
            tokens.append(differences(states, mask))
            key_mask.append(mask)
        if self.training and self.config.mtm:
            tokens = [
                mtm_mask(t, mask, self.config.mtm_ratio, self.config.mtm_prob) for t in tokens
            ]
        if self.segment is not None:
            tokens = [t + self.segment.weight[kind] for kind, t in enumerate(tokens)]
            positions = torch.cat([positions, positions])
        out = self.context(torch.cat(tokens, 1), positions, torch.cat(key_mask, 1))
        contexts = out[:, 1:s]
        return Encoded(contexts, out[:, 0] if self.config.aux else None, mask[:, 1:])

    def text_hidden(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        mask = encoded.trans_mask
        return self.decoder(self.model_ids(batch["tokens"][mask]), encoded.contexts[mask])

    def aux_logits(self, encoded: Encoded) -> dict[str, torch.Tensor]:
        if self.topic_head is None or self.category_head is None or encoded.global_vector is None:
            return {}
        g = encoded.global_vector
        return {"topic": self.topic_head(g), "category": self.category_head(g)}

    def stepper(self, contexts: torch.Tensor) -> TransformerStepper:
        return TransformerStepper(self.decoder, contexts)


def differences(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """d_i = v_i - v_(i-1) for i >= 1 and d_0 = v_0 - v_N (N: each sample's last real state);
    0 at padding."""
    previous = torch.roll(states, 1, dims=1)
    last = mask.sum(1) - 1
    previous[:, 0] = states[torch.arange(states.shape[0], device=states.device), last]
    return (states - previous) * mask[..., None]


def mtm_mask(tokens: torch.Tensor, mask: torch.Tensor, ratio: float, prob: float) -> torch.Tensor:
    """Zero each real token with probability `ratio`, in samples chosen with probability `prob`."""
    b, s, _ = tokens.shape
    chosen = torch.rand(b, 1, device=tokens.device) < prob
    hit = (torch.rand(b, s, device=tokens.device) < ratio) & chosen & mask
    return tokens.masked_fill(hit[..., None], 0.0)

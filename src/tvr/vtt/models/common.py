"""What the VTT models share: the batch they read, their encoded form, and the base class that
turns images or cached features into state features and decodes descriptions.

A batch (a dict, made by tvr.vtt.train.data):
- `inputs`: (B, S, D) cached image features of the S = max N + 1 states, or (B, S, 3, H, W)
  images when the encoder is trained;
- `state_mask`: (B, S) bool, the real states; `trans_mask`: (B, S - 1) bool, the real
  transformations (state_mask[:, 1:]);
- `tokens`: (B, S - 1, L) CLIP ids `[SOT] ... [EOT]`, 0 after; `token_mask` (B, S - 1, L) bool;
- `topic`, `category`: (B,) class indices (-100 where unknown to the model).
Transformation j is described from the context of state j + 1 (the paper's T = {f_text(c_i+1)}).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from tvr.vtt.models.config import ModelConfig
from tvr.vtt.models.decoding import DecodeOptions, Stepper, decode
from tvr.vtt.models.encoder import ClipImageEncoder
from tvr.vtt.models.layers import StateProjection
from tvr.vtt.models.tokenizer import EOT, SOT, VOCAB_SIZE

IGNORE = -100
Batch = dict[str, Any]


@dataclass
class Encoded:
    """A batch encoded: the context of each transformation (B, S - 1, d), the global vector
    (B, d) the Aux heads read (None without Aux), and the transformation mask (B, S - 1)."""

    contexts: torch.Tensor
    global_vector: torch.Tensor | None
    trans_mask: torch.Tensor


class VttModel(nn.Module):
    """Base of TTNet and GLACNet: state features from images or cached features, projected to
    the model's width; the model's vocabulary; decoding. A subclass makes its own layers in
    `make_layers`.

    With `config.vocab == "clip"` the decoder reads and predicts all of CLIP's ids. With "train"
    it knows only `vocab_ids` (the ids of the training descriptions, with SOT and EOT) plus one
    "unknown" id that it reads for any other id and never predicts: its embedding and output
    layers shrink from 49,408 rows to a few hundred. Batches and decoded ids are CLIP ids
    either way.
    """

    def __init__(
        self,
        config: ModelConfig,
        encoder_dim: int,
        n_topics: int,
        n_categories: int,
        vocab_ids: Sequence[int] | None = None,
    ) -> None:
        super().__init__()
        self.config = config
        self.encoder_dim = encoder_dim
        self.n_topics = n_topics
        self.n_categories = n_categories
        self.vocab_size = VOCAB_SIZE
        self.unknown_id: int | None = None
        self.lookup: torch.Tensor | None
        self.clip_ids: torch.Tensor | None
        self.register_buffer("lookup", None)
        self.register_buffer("clip_ids", None)
        if config.vocab == "train":
            if vocab_ids is None:
                raise ValueError('vocab "train" needs the ids of the training descriptions')
            ids = sorted({*map(int, vocab_ids), SOT, EOT})
            self.unknown_id = len(ids)
            self.vocab_size = len(ids) + 1
            lookup = torch.full((VOCAB_SIZE,), self.unknown_id, dtype=torch.long)
            lookup[torch.tensor(ids)] = torch.arange(len(ids))
            self.register_buffer("clip_ids", torch.tensor(ids))
            self.register_buffer("lookup", lookup)
        # the image encoder is part of the model only when it is trained (else: cached features)
        self.image_encoder = None if config.freeze_encoder else ClipImageEncoder(
            config.encoder_spec())  # fmt: skip
        self.project = StateProjection(encoder_dim, config.dim)
        self.make_layers()

    def make_layers(self) -> None:
        """Make the model's own layers (after the shared ones, in this order: their seeded
        initial weights depend on it)."""
        raise NotImplementedError

    def image_features(self, inputs: torch.Tensor, state_mask: torch.Tensor) -> torch.Tensor:
        """(B, S, D) encoder features: the cached ones as given, or the images encoded."""
        if self.image_encoder is None:
            if inputs.dim() != 3:
                raise ValueError("a frozen-encoder model reads cached features (B, S, D)")
            return inputs
        feats = inputs.new_zeros(*state_mask.shape, self.image_encoder.output_dim)
        feats[state_mask] = self.image_encoder(inputs[state_mask]).to(feats.dtype)
        return feats

    def state_features(self, batch: Batch) -> torch.Tensor:
        """(B, S, dim) features of the states of a batch (`project`ed), 0 at padding."""
        mask = batch["state_mask"]
        return self.project(self.image_features(batch["inputs"], mask), mask)

    def model_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """CLIP ids -> the decoder's ids (the same with the full CLIP vocabulary)."""
        return ids if self.lookup is None else self.lookup[ids]

    def clip_stepper(self, stepper: Stepper) -> Stepper:
        """`stepper` (over the decoder's ids) as a stepper over CLIP ids."""
        return stepper if self.lookup is None else _ClipIdStepper(stepper, self)

    def encode(self, batch: Batch) -> Encoded:
        raise NotImplementedError

    def text_hidden(self, encoded: Encoded, batch: Batch) -> torch.Tensor:
        """(M, L, d) decoder states of the M real transformations (row-major over B, S - 1),
        teacher-forced on batch["tokens"]; `to_logits` of the state at p predicts id p + 1."""
        raise NotImplementedError

    def to_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """Decoder states (..., d) -> next-token logits over the decoder's ids (..., V)."""
        return self.decoder.to_logits(hidden)

    def aux_logits(self, encoded: Encoded) -> dict[str, torch.Tensor]:
        """{"topic": (B, n_topics), "category": (B, n_categories)}; empty without Aux."""
        return {}

    def stepper(self, contexts: torch.Tensor) -> Stepper:
        """A decoding stepper over rows of contexts (M, d), each description independent, on the
        decoder's ids (`clip_stepper` makes it one on CLIP ids)."""
        raise NotImplementedError

    def generate(self, batch: Batch, options: DecodeOptions) -> list[list[list[int]]]:
        """Per sample, the ids of each of its N descriptions."""
        encoded = self.encode(batch)
        mask = encoded.trans_mask
        rows = encoded.contexts[mask]
        ids = decode(self.clip_stepper(self.stepper(rows)), rows.shape[0], self.config.max_tokens - 1, options,
                     rows.device)  # fmt: skip
        return split_rows(ids, mask)


def split_rows(ids: list[list[int]], mask: torch.Tensor) -> list[list[list[int]]]:
    """Rows in row-major order of `mask` (B, T) -> per sample, its rows in order."""
    out: list[list[list[int]]] = []
    it = iter(ids)
    for count in mask.sum(1).tolist():
        out.append([next(it) for _ in range(int(count))])
    return out


class _ClipIdStepper:
    """A stepper of a model with the training vocabulary, seen in CLIP ids: prefixes are mapped
    to the model's ids, and logits spread over CLIP's ids (-inf where the model has none)."""

    def __init__(self, inner: Stepper, model: VttModel) -> None:
        self.inner = inner
        self.model = model

    def logits(self, prefix: torch.Tensor) -> torch.Tensor:
        small = self.inner.logits(self.model.model_ids(prefix))
        full = small.new_full((small.shape[0], VOCAB_SIZE), float("-inf"))
        full[:, self.model.clip_ids] = small[:, : self.model.unknown_id]
        return full

    def reindex(self, index: torch.Tensor) -> None:
        self.inner.reindex(index)

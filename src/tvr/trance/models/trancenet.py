"""TranceNet: encoder -> 128-d feature -> decoder -> predictor, for sequences and for Basic.

`TranceNet` predicts up to MAX_STEPS steps and an end token (Event, View). Under teacher forcing
(`forward`) position i is fed the reference step i-1 (position 0 a learned start token); `decode`
runs the model on its own choices, greedily or by sampling (REINFORCE). Index conventions:
objects 0-9 and OBJ_END = 10; values 0-32 and VALUE_END = 33; targets after the end are IGNORE.

`BasicNet` is the single-step model of Basic: the same encoder and predictor heads, no decoder,
no end token.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from tvr.trance.models.features import OBJECT_VECTOR_DIM
from tvr.trance.models.heads import StepPredictor, gather_vectors
from tvr.trance.world.vocab import MAX_STEPS, NUM_OBJECTS, NUM_VALUES

OBJ_END = NUM_OBJECTS  # 10
VALUE_END = NUM_VALUES  # 33
IGNORE = -100
VALUE_EMBED_DIM = 8


@dataclass
class Decoded:
    """Decoded steps: objs, values (B, L) with OBJ_END / VALUE_END from the end token on;
    `log_prob` (B,) of the whole choice sequence (up to and including the end token);
    `active` (B, L) positions that were chosen (up to and including the end token)."""

    objs: torch.Tensor
    values: torch.Tensor
    log_prob: torch.Tensor
    active: torch.Tensor

    def steps(self) -> list[list[tuple[int, int]]]:
        """The predicted steps of each sample as (object, value) pairs, the end token dropped."""
        out = []
        for objs, values in zip(self.objs.tolist(), self.values.tolist(), strict=True):
            seq = []
            for o, v in zip(objs, values, strict=True):
                if o >= OBJ_END or v >= VALUE_END:
                    break
                seq.append((o, v))
            out.append(seq)
        return out


class TranceNet(nn.Module):
    """Encoder, projection to `hidden`, decoder (GRU or Transformer), predictor with end token."""

    single_step = False

    def __init__(
        self, encoder: nn.Module, decoder_factory, hidden: int = 128, max_steps: int = MAX_STEPS
    ) -> None:
        super().__init__()
        self.max_steps = max_steps
        self.encoder = encoder
        self.project = nn.Linear(encoder.out_features, hidden)
        self.value_embed = nn.Embedding(NUM_VALUES + 1, VALUE_EMBED_DIM)
        self.start = nn.Parameter(torch.randn(OBJECT_VECTOR_DIM + VALUE_EMBED_DIM) * 0.5)
        self.decoder = decoder_factory(OBJECT_VECTOR_DIM + VALUE_EMBED_DIM, hidden)
        self.predictor = StepPredictor(hidden, with_end=True)

    @property
    def length(self) -> int:
        """Number of decoded positions: the steps and the end token."""
        return self.max_steps + 1

    def encode(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        return self.project(self.encoder(init, final))

    def _step_inputs(
        self, candidates: torch.Tensor, objs: torch.Tensor, values: torch.Tensor
    ) -> torch.Tensor:
        """Inputs (B, 1 + K, D): the start token, then the K given steps."""
        b = candidates.shape[0]
        start = self.start.to(candidates.dtype).expand(b, 1, -1)
        if objs.shape[1] == 0:
            return start
        steps = torch.cat(
            [gather_vectors(candidates, objs), self.value_embed(values).to(candidates.dtype)],
            dim=-1,
        )
        return torch.cat([start, steps], dim=1)

    def forward(
        self,
        init: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        obj_target: torch.Tensor,
        value_target: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced scores: object (B, L, 11) and value (B, L, 34), L = max_steps + 1."""
        h = self.encode(init, final)
        cands = self.predictor.candidates(objects)
        length = self.length
        objs = torch.where(obj_target[:, :length] < 0, OBJ_END, obj_target[:, :length])
        values = torch.where(value_target[:, :length] < 0, VALUE_END, value_target[:, :length])
        inputs = self._step_inputs(cands, objs[:, :-1], values[:, :-1])
        g = self.decoder(h, inputs)
        obj_logits = self.predictor.object_logits(g, cands)
        value_logits = self.predictor.value_logits(g, gather_vectors(cands, objs))
        return obj_logits, value_logits

    def decode(
        self,
        init: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        sample: bool = False,
        generator: torch.Generator | None = None,
        repeats: int = 1,
    ) -> Decoded:
        """Run on the model's own choices: greedy (argmax) or sampled; at most max_steps steps.

        With `repeats` > 1 the images are encoded once and each sample is decoded `repeats`
        times in a row (rows b * repeats ... b * repeats + repeats - 1 belong to sample b)."""
        h = self.encode(init, final)
        cands = self.predictor.candidates(objects)
        if repeats > 1:
            h = h.repeat_interleave(repeats, dim=0)
            cands = cands.repeat_interleave(repeats, dim=0)
        b = h.shape[0]
        dev = h.device
        objs = torch.empty(b, 0, dtype=torch.long, device=dev)
        values = torch.empty(b, 0, dtype=torch.long, device=dev)
        log_prob = torch.zeros(b, device=dev)
        done = torch.zeros(b, dtype=torch.bool, device=dev)
        active = []
        for i in range(self.length):
            g = self.decoder(h, self._step_inputs(cands, objs, values))[:, -1:]  # (B, 1, H)
            ol = self.predictor.object_logits(g, cands)[:, 0].float()
            if i == self.max_steps:  # the last position can only end the sequence
                ol = torch.full_like(ol, float("-inf")).index_fill(
                    1, torch.tensor([OBJ_END], device=dev), 0.0
                )
            o_lp = torch.log_softmax(ol, dim=-1)
            o = _choose(o_lp, sample, generator)
            o = torch.where(done, OBJ_END, o)
            ending = o == OBJ_END
            vl = self.predictor.value_logits(g, gather_vectors(cands, o[:, None]))[:, 0].float()
            vl[:, VALUE_END] = float("-inf")  # a real object takes a real value
            v_lp = torch.log_softmax(vl, dim=-1)
            v = _choose(v_lp, sample, generator)
            v = torch.where(ending, VALUE_END, v)
            step_lp = o_lp.gather(1, o[:, None])[:, 0] + torch.where(
                ending, 0.0, v_lp.gather(1, v.clamp(max=VALUE_END - 1)[:, None])[:, 0]
            )
            log_prob = log_prob + torch.where(done, 0.0, step_lp)
            active.append(~done)
            done = done | ending
            objs = torch.cat([objs, o[:, None]], dim=1)
            values = torch.cat([values, v[:, None]], dim=1)
        return Decoded(objs, values, log_prob, torch.stack(active, dim=1))


def _choose(
    log_probs: torch.Tensor, sample: bool, generator: torch.Generator | None
) -> torch.Tensor:
    if not sample:
        return log_probs.argmax(dim=-1)
    return torch.multinomial(log_probs.exp(), 1, generator=generator)[:, 0]


class BasicNet(nn.Module):
    """Single-step model of Basic: encoder, projection, object and value heads (no end token)."""

    single_step = True
    length = 1

    def __init__(self, encoder: nn.Module, hidden: int = 128) -> None:
        super().__init__()
        self.encoder = encoder
        self.project = nn.Linear(encoder.out_features, hidden)
        self.predictor = StepPredictor(hidden, with_end=False)

    def encode(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        return self.project(self.encoder(init, final))

    def forward(
        self,
        init: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        obj_target: torch.Tensor,
        value_target: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Scores with the reference object fed to the value head: (B, 1, 10) and (B, 1, 33)."""
        g = self.encode(init, final).unsqueeze(1)
        obj_logits = self.predictor.object_logits(g, objects)
        chosen = gather_vectors(objects, obj_target[:, :1].clamp(0, NUM_OBJECTS - 1))
        return obj_logits, self.predictor.value_logits(g, chosen)

    def decode(
        self,
        init: torch.Tensor,
        final: torch.Tensor,
        objects: torch.Tensor,
        sample: bool = False,
        generator: torch.Generator | None = None,
        repeats: int = 1,
    ) -> Decoded:
        g = self.encode(init, final).unsqueeze(1)
        if repeats > 1:
            g = g.repeat_interleave(repeats, dim=0)
            objects = objects.repeat_interleave(repeats, dim=0)
        o_lp = torch.log_softmax(self.predictor.object_logits(g, objects)[:, 0].float(), dim=-1)
        o = _choose(o_lp, sample, generator)
        v_lp = torch.log_softmax(
            self.predictor.value_logits(g, gather_vectors(objects, o[:, None]))[:, 0].float(),
            dim=-1,
        )
        v = _choose(v_lp, sample, generator)
        lp = o_lp.gather(1, o[:, None])[:, 0] + v_lp.gather(1, v[:, None])[:, 0]
        active = torch.ones(o.shape[0], 1, dtype=torch.bool, device=o.device)
        return Decoded(o[:, None], v[:, None], lp, active)

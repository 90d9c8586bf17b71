"""TrancoNet (section 6.3, appendix B.2): two states -> h, then step vectors scored against clips.

Every image (a state, a clip frame) is a CLIP embedding made unit length. A clip is the mean of
its frames' unit embeddings, made unit length again. The head works on these vectors only, so it
runs the same on features of a frozen encoder's cache and on an encoder trained in the loop.

- State encoder: the initial and final vectors, each with a learned type embedding, through a
  1-layer transformer encoder: h, two tokens.
- Decoder "t": a 1-layer transformer decoder over the previous steps c_0..c_{i-1} (c_0 the initial
  state, c_j the j-th clip; a learned step embedding each, causal self-attention) that
  cross-attends to h; its output at step i is g_i.
- Decoder "g": a GRU cell whose state starts at the mean of h and which reads, at step i, only the
  last step c_{i-1} beside the two tokens of h (input 3 x dim).
- Scores: the candidates of a step are the stop candidate (index 0: the final-state image) and
  the sample's clips (1..K). Training logits are g_i . c / tau (Eq. 8, InfoNCE, tau = 1 in the
  paper); prediction scores are cosines (Eq. 9). With unit-length candidates both rank the
  candidates alike. A clip already chosen, a padded candidate and the stop candidate before
  `min_steps` clips are masked out, in training as in prediction.

With dim 512, 8 heads and a feed-forward width of 2048, the trainable parameters are 7.37M for
"t" and 6.30M for "g": Table 10's 7.4M and 6.3M. Inputs are unit vectors scaled by sqrt(dim).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from tvr.tranco.models.encoders import ImageEncoder

#: the decoders: T (transformer) and G (GRU), as the paper's model names end
DECODERS = ("t", "g")
#: the largest number of steps a TRANCO sample has (section 5.1), the default prediction limit
MAX_STEPS = 7
#: the stop candidate's index among a step's candidates
STOP = 0
#: a target that is no step (padding), ignored by the loss
IGNORE = -100


@dataclass(frozen=True)
class HeadConfig:
    """The head's shape. `dim` is the encoder's embedding width (512 for CLIP's)."""

    dim: int
    decoder: str = "t"
    heads: int = 8
    feedforward: int = 2048
    dropout: float = 0.1
    max_steps: int = MAX_STEPS
    tau: float = 1.0

    def __post_init__(self) -> None:
        if self.decoder not in DECODERS:
            raise ValueError(f"unknown decoder {self.decoder!r}: one of {DECODERS}")
        if self.dim % self.heads:
            raise ValueError(f"dim {self.dim} is not a multiple of heads {self.heads}")
        if self.tau <= 0:
            raise ValueError(f"tau must be positive, not {self.tau}")


class StateEncoder(nn.Module):
    """[initial, final] unit vectors -> h (B, 2, dim) through a 1-layer transformer encoder."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        self.scale = math.sqrt(cfg.dim)
        self.kind = nn.Parameter(torch.randn(2, cfg.dim) * 0.02)
        self.layer = nn.TransformerEncoderLayer(
            cfg.dim, cfg.heads, cfg.feedforward, cfg.dropout, batch_first=True
        )

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        return self.layer(states * self.scale + self.kind)


class TransformerSteps(nn.Module):
    """Step vectors g_1..g_L from inputs c_0..c_{L-1} (B, L, dim) and h, causally."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        self.scale = math.sqrt(cfg.dim)
        self.position = nn.Parameter(torch.randn(cfg.max_steps + 1, cfg.dim) * 0.02)
        self.layer = nn.TransformerDecoderLayer(
            cfg.dim, cfg.heads, cfg.feedforward, cfg.dropout, batch_first=True
        )

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        length = inputs.shape[1]
        x = inputs * self.scale + self.position[:length]
        causal = nn.Transformer.generate_square_subsequent_mask(length, device=x.device)
        return self.layer(x, h, tgt_mask=causal.to(x.dtype), tgt_is_causal=True)


class GRUSteps(nn.Module):
    """Step vectors g_1..g_L: a GRU cell from g_0 = mean(h), reading [c_{i-1}, h_1, h_2]."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        self.scale = math.sqrt(cfg.dim)
        self.cell = nn.GRUCell(3 * cfg.dim, cfg.dim)

    def forward(self, h: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        state = h.mean(dim=1)
        context = h.flatten(1)
        out = []
        for i in range(inputs.shape[1]):
            state = self.cell(torch.cat([inputs[:, i] * self.scale, context], dim=-1), state)
            out.append(state)
        return torch.stack(out, dim=1)


STEP_DECODERS: dict[str, type[nn.Module]] = {"t": TransformerSteps, "g": GRUSteps}


class TrancoHead(nn.Module):
    """What TrancoNet trains above the image encoder: the state encoder and the step decoder."""

    def __init__(self, cfg: HeadConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.states = StateEncoder(cfg)
        self.steps = STEP_DECODERS[cfg.decoder](cfg)

    def step_vectors(self, states: torch.Tensor, previous: torch.Tensor) -> torch.Tensor:
        """g_1..g_{L+1} (B, L+1, dim) for states (B, 2, dim) and the L previous clips (B, L, dim),
        all unit vectors; step 1 reads the initial state."""
        h = self.states(states)
        return self.steps(h, torch.cat([states[:, :1], previous], dim=1))

    def logits(self, g: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
        """Eq. 8's g . c / tau: (B, S, dim) x (B, K+1, dim) -> (B, S, K+1)."""
        return torch.einsum("bsd,bkd->bsk", g, candidates) / self.cfg.tau


class TrancoNet(nn.Module):
    """TrancoNet: an optional CLIP image encoder (None when features come from a frozen cache)
    and the head."""

    def __init__(self, head: TrancoHead, encoder: ImageEncoder | None = None) -> None:
        super().__init__()
        self.encoder = encoder
        self.head = head

    def embed(self, images: torch.Tensor) -> torch.Tensor:
        """Unit-length embeddings of normalised images (N, 3, S, S)."""
        if self.encoder is None:
            raise RuntimeError("this TrancoNet has no image encoder: it reads cached features")
        return F.normalize(self.encoder(images).float(), dim=-1)


# --- what a step may pick, the loss, and greedy prediction ------------------------------------


def clip_vectors(frames: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Unit clip vectors (..., dim): the mean of the unit frame vectors (..., F, dim) where
    `mask` (..., F) is set."""
    weights = mask.to(frames.dtype).unsqueeze(-1)
    mean = (frames * weights).sum(-2) / weights.sum(-2).clamp(min=1)
    return F.normalize(mean, dim=-1)


def scored_candidates(final: torch.Tensor, clips: torch.Tensor) -> torch.Tensor:
    """A step's candidates (B, K+1, dim): the stop candidate (the final state) first, then the
    clips."""
    return torch.cat([final.unsqueeze(1), clips], dim=1)


def step_masks(available: torch.Tensor, targets: torch.Tensor, min_steps: int = 1) -> torch.Tensor:
    """(B, S, K+1) bool: what step s of teacher forcing may pick. `available` (B, K+1) marks real
    candidates (index 0, stop, always); `targets` (B, S) are the steps' candidate indices (IGNORE
    past the end). A clip targeted at an earlier step is masked, and stop before `min_steps`."""
    batch, steps = targets.shape
    allowed = available.unsqueeze(1).expand(batch, steps, -1).clone()
    chosen = torch.zeros_like(available)
    for s in range(steps):
        allowed[:, s] &= ~chosen
        if s < min_steps:
            allowed[:, s, STOP] = False
        picked = targets[:, s].clamp(min=0)
        hit = targets[:, s] > STOP
        chosen = chosen.clone()
        chosen[hit, picked[hit]] = True
    return allowed


def contrastive_loss(
    logits: torch.Tensor, targets: torch.Tensor, allowed: torch.Tensor
) -> torch.Tensor:
    """InfoNCE (Eq. 8) averaged over the real steps: cross-entropy of each step's target among
    the candidates it may pick."""
    masked = logits.masked_fill(~allowed, torch.finfo(logits.dtype).min)
    return F.cross_entropy(masked.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def greedy_decode(
    head: TrancoHead,
    states: torch.Tensor,
    candidates: torch.Tensor,
    available: torch.Tensor,
    max_steps: int = MAX_STEPS,
    min_steps: int = 1,
) -> list[list[int]]:
    """Greedy prediction, step by step: each step picks the candidate of highest cosine (Eq. 9)
    among those not yet picked; the stop candidate (the final state) ends the sequence, and so
    does reaching `max_steps` clips. Returns each sample's clip indices (1..K) in order.

    `states` (B, 2, dim), `candidates` (B, K+1, dim) with the stop candidate first, `available`
    (B, K+1) marks real candidates."""
    batch = states.shape[0]
    h = head.states(states)
    unit = F.normalize(candidates, dim=-1)
    allowed = available.clone()
    done = torch.zeros(batch, dtype=torch.bool, device=states.device)
    inputs = states[:, :1]
    picks: list[list[int]] = [[] for _ in range(batch)]
    for step in range(max_steps):
        g = head.steps(h, inputs)[:, -1]
        scores = F.normalize(g, dim=-1).unsqueeze(1) @ unit.transpose(1, 2)
        scores = scores.squeeze(1).masked_fill(~allowed, float("-inf"))
        if step < min_steps:
            scores[:, STOP] = float("-inf")
        best = scores.argmax(dim=-1)
        # a sample with nothing left to pick (fewer candidates than steps) stops
        best = torch.where(torch.isinf(scores.max(dim=-1).values), STOP, best)
        for b in range(batch):
            if not done[b] and best[b] != STOP:
                picks[b].append(int(best[b]))
        done |= best == STOP
        if bool(done.all()):
            break
        allowed[torch.arange(batch), best] = False
        allowed[:, STOP] = True
        inputs = torch.cat([inputs, candidates[torch.arange(batch), best].unsqueeze(1)], dim=1)
    return picks

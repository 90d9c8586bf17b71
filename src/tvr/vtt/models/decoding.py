"""Decoding descriptions from a model's next-token logits: greedy, beam search, and the paper's
top-k / top-p sampling (seeded).

A `Stepper` holds one row per description being decoded: `logits(prefix)` gives the next-token
logits of every row from its ids so far (`[SOT, ...]`), and `reindex(index)` keeps, repeats or
reorders rows (beams, finished rows dropped). Every strategy returns, per row, the generated ids
without SOT and up to (not including) EOT; the first token is never EOT (no empty description),
and at most `max_new` tokens are made (EOT included). Greedy and beam search are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from tvr.vtt.models.tokenizer import EOT, SOT

STRATEGIES = ("greedy", "beam", "sample")


class Stepper(Protocol):
    def logits(self, prefix: torch.Tensor) -> torch.Tensor: ...

    def reindex(self, index: torch.Tensor) -> None: ...


@dataclass(frozen=True)
class DecodeOptions:
    """How to decode.

    Args:
        strategy: "greedy" (default), "beam" or "sample".
        beam_size: beams of beam search.
        length_penalty: beam search ranks finished beams by sum log p / length ** this.
        top_k, top_p, temperature: the paper's sampling (k 100, p 0.9, temperature 1).
        repetition_penalty: CTRL's penalty on ids already in the prefix while sampling (1: none;
            the released configuration used 1.2).
        seed: the sampling generator's seed.
    """

    strategy: str = "greedy"
    beam_size: int = 3
    length_penalty: float = 1.0
    top_k: int = 100
    top_p: float = 0.9
    temperature: float = 1.0
    repetition_penalty: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown decoding {self.strategy!r}: one of {', '.join(STRATEGIES)}")
        if self.beam_size < 1 or self.top_k < 0 or not 0 <= self.top_p <= 1:
            raise ValueError("beam_size >= 1, top_k >= 0 and 0 <= top_p <= 1")
        if self.temperature <= 0 or self.repetition_penalty <= 0:
            raise ValueError("temperature and repetition_penalty must be positive")


def decode(
    stepper: Stepper, rows: int, max_new: int, options: DecodeOptions, device: torch.device
) -> list[list[int]]:
    """The ids of each of `rows` descriptions by `options.strategy`."""
    if rows == 0:
        return []
    if options.strategy == "beam":
        return beam_search(stepper, rows, max_new, options, device)
    generator = None
    if options.strategy == "sample":
        generator = torch.Generator(device=device)
        generator.manual_seed(options.seed)
    return _token_by_token(stepper, rows, max_new, options, device, generator)


def _no_empty(logits: torch.Tensor, step: int) -> torch.Tensor:
    if step == 0:
        logits = logits.clone()
        logits[:, EOT] = float("-inf")
    return logits


def _token_by_token(
    stepper: Stepper,
    rows: int,
    max_new: int,
    options: DecodeOptions,
    device: torch.device,
    generator: torch.Generator | None,
) -> list[list[int]]:
    """Greedy (generator None) or sampled decoding; finished rows leave the stepper."""
    out: list[list[int]] = [[] for _ in range(rows)]
    active = torch.arange(rows, device=device)
    prefix = torch.full((rows, 1), SOT, dtype=torch.long, device=device)
    for step in range(max_new):
        logits = _no_empty(stepper.logits(prefix).float(), step)
        if generator is None:
            chosen = logits.argmax(-1)
        else:
            chosen = _sample(logits, prefix, options, generator)
        for row, token in zip(active.tolist(), chosen.tolist(), strict=True):
            if token != EOT:
                out[row].append(token)
        going = chosen != EOT
        if not bool(going.any()):
            break
        prefix = torch.cat([prefix, chosen[:, None]], dim=1)
        if not bool(going.all()):
            keep = going.nonzero().squeeze(1)
            active, prefix = active[keep], prefix[keep]
            stepper.reindex(keep)
    return out


def _sample(
    logits: torch.Tensor, prefix: torch.Tensor, options: DecodeOptions, generator: torch.Generator
) -> torch.Tensor:
    """One id per row by top-k / top-p sampling at the temperature, after the repetition
    penalty."""
    if options.repetition_penalty != 1.0:
        seen = torch.zeros_like(logits, dtype=torch.bool).scatter_(1, prefix, True)
        seen[:, SOT] = False
        penalised = torch.where(logits > 0, logits / options.repetition_penalty,
                                logits * options.repetition_penalty)  # fmt: skip
        logits = torch.where(seen, penalised, logits)
    logits = logits / options.temperature
    if options.top_k > 0:
        k = min(options.top_k, logits.shape[-1])
        kth = logits.topk(k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if 0 < options.top_p < 1:
        ordered, order = logits.sort(dim=-1, descending=True)
        cumulative = ordered.softmax(-1).cumsum(-1)
        drop = cumulative > options.top_p
        drop[:, 1:] = drop[:, :-1].clone()  # keep the id that crosses p
        drop[:, 0] = False
        logits = logits.masked_fill(drop.scatter(1, order, drop), float("-inf"))
    probs = logits.softmax(-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)


def beam_search(
    stepper: Stepper, rows: int, max_new: int, options: DecodeOptions, device: torch.device
) -> list[list[int]]:
    """Beam search with `options.beam_size` beams per row; the best finished beam by
    sum log p / length ** length_penalty (length counts EOT)."""
    k = options.beam_size
    prefix = torch.full((rows, 1), SOT, dtype=torch.long, device=device)
    logp = _no_empty(stepper.logits(prefix).float(), 0).log_softmax(-1)
    k0 = min(k, logp.shape[-1])
    scores, tokens = logp.topk(k0, dim=-1)  # (rows, k)
    stepper.reindex(torch.arange(rows, device=device).repeat_interleave(k0))
    seqs = torch.cat([prefix.repeat_interleave(k0, 0), tokens.reshape(-1, 1)], dim=1)
    finished = tokens.reshape(-1) == EOT
    lengths = torch.ones(rows * k0, device=device)
    scores = scores.reshape(-1)
    for _ in range(max_new - 1):
        if bool(finished.all()):
            break
        logp = stepper.logits(seqs).float().log_softmax(-1)
        vocab = logp.shape[-1]
        # a finished beam continues only with EOT, at no cost and without growing
        logp = torch.where(finished[:, None], torch.full_like(logp, float("-inf")), logp)
        logp[:, EOT] = torch.where(finished, torch.zeros_like(scores), logp[:, EOT])
        total = (scores[:, None] + logp).view(rows, k0 * vocab)
        best, flat = total.topk(k0, dim=-1)
        origin = (flat // vocab) + torch.arange(rows, device=device)[:, None] * k0
        origin, token = origin.reshape(-1), (flat % vocab).reshape(-1)
        was_finished = finished[origin]
        stepper.reindex(origin)
        seqs = torch.cat([seqs[origin], token[:, None]], dim=1)
        lengths = lengths[origin] + (~was_finished).float()
        finished = was_finished | (token == EOT)
        scores = best.reshape(-1)
    ranked = (scores / lengths.pow(options.length_penalty)).view(rows, k0)
    pick = ranked.argmax(-1) + torch.arange(rows, device=device) * k0
    out = []
    for seq in seqs[pick].tolist():
        ids = []
        for token in seq[1:]:
            if token == EOT:
                break
            ids.append(token)
        out.append(ids)
    return out

"""Losses: the supervised loss of Eq. 7 and the two REINFORCE fine-tuning losses (Table 4).

- `supervised_loss`: cross-entropy of the object choice plus cross-entropy of the value choice,
  over every step and the end token (teacher forcing), IGNORE positions left out.
- `policy_gradient_loss`: real REINFORCE. Sequences are sampled from the model, run through the
  simulator, rewarded (correctness, minus the normalized distance, or both) and the loss is
  -(reward - baseline) * log p(sequence). Baselines: the mean reward of the other sequences
  sampled for the same sample ("mean"), the reward of the greedy sequence ("greedy",
  self-critical), or none.
- `paper_loss`: the variant of the papers' public code: the reference sequence's teacher-forced
  cross-entropy, weighted per sample by the (positive, shifted) reward of the model's own
  teacher-forced argmax prediction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tvr.trance.data.batch import IGNORE, Batch
from tvr.trance.train.scoring import event_scores, reward


def _ce(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-position cross-entropy (B, L), 0 at IGNORE positions."""
    b, length, n = logits.shape
    return F.cross_entropy(
        logits.float().reshape(b * length, n),
        target[:, :length].reshape(-1),
        ignore_index=IGNORE,
        reduction="none",
    ).reshape(b, length)


def supervised_loss(
    model: nn.Module, batch: Batch, init: torch.Tensor, final: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Eq. 7 on (possibly augmented) images: {"loss", "obj_loss", "value_loss"}."""
    obj_logits, value_logits = model(
        init, final, batch["objects"], batch["obj_target"], batch["value_target"]
    )
    length = obj_logits.shape[1]
    mask = (batch["obj_target"][:, :length] != IGNORE).float()
    n = mask.sum().clamp(min=1.0)
    obj_loss = _ce(obj_logits, batch["obj_target"]).sum() / n
    value_loss = _ce(value_logits, batch["value_target"]).sum() / n
    return {"loss": obj_loss + value_loss, "obj_loss": obj_loss, "value_loss": value_loss}


@dataclass
class RLOutput:
    loss: torch.Tensor
    reward: float  # mean reward of the sequences the loss was computed on
    acc: float  # share of them that are correct


def _rewards(
    batch: Batch,
    objs: torch.Tensor,
    values: torch.Tensor,
    kind: str,
    repeats: int = 1,
    offset: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    def rep(x: torch.Tensor) -> np.ndarray:
        a = x.detach().cpu().numpy()
        return np.repeat(a, repeats, axis=0) if repeats > 1 else a

    scores = event_scores(
        rep(batch["init_state"]),
        rep(batch["final_state"]),
        objs.detach().cpu().numpy(),
        values.detach().cpu().numpy(),
        rep(batch["num_steps"]),
    )
    return reward(kind, scores, offset=offset), scores.correct


def policy_gradient_loss(
    model: nn.Module,
    batch: Batch,
    init: torch.Tensor,
    final: torch.Tensor,
    reward_kind: str = "both",
    samples: int = 4,
    baseline: str = "mean",
) -> RLOutput:
    """REINFORCE with `samples` sampled sequences per sample and the given baseline."""
    decoded = model.decode(init, final, batch["objects"], sample=True, repeats=samples)
    r, correct = _rewards(batch, decoded.objs, decoded.values, reward_kind, repeats=samples)
    rt = torch.as_tensor(r, dtype=torch.float32, device=decoded.log_prob.device)
    if baseline == "mean":
        if samples > 1:
            grouped = rt.view(-1, samples)
            b = (grouped.sum(dim=1, keepdim=True) - grouped) / (samples - 1)  # leave-one-out
            b = b.reshape(-1)
        else:
            b = rt.mean().expand_as(rt)
    elif baseline == "greedy":
        with torch.no_grad():
            greedy = model.decode(init, final, batch["objects"], sample=False)
        rg, _ = _rewards(batch, greedy.objs, greedy.values, reward_kind)
        b = torch.as_tensor(np.repeat(rg, samples), dtype=torch.float32, device=rt.device)
    elif baseline == "none":
        b = torch.zeros_like(rt)
    else:
        raise ValueError(f"unknown baseline {baseline!r}")
    loss = -((rt - b) * decoded.log_prob).mean()
    return RLOutput(loss, float(r.mean()), float(correct.mean()))


def paper_loss(
    model: nn.Module,
    batch: Batch,
    init: torch.Tensor,
    final: torch.Tensor,
    reward_kind: str = "both",
) -> RLOutput:
    """The papers' variant: reward of the teacher-forced argmax times the reference's CE."""
    obj_logits, value_logits = model(
        init, final, batch["objects"], batch["obj_target"], batch["value_target"]
    )
    r, correct = _rewards(
        batch, obj_logits.argmax(-1), value_logits.argmax(-1), reward_kind, offset=True
    )
    length = obj_logits.shape[1]
    mask = (batch["obj_target"][:, :length] != IGNORE).float()
    per_sample = (
        _ce(obj_logits, batch["obj_target"]) + _ce(value_logits, batch["value_target"])
    ).sum(1)
    per_sample = per_sample / mask.sum(1).clamp(min=1.0)
    rt = torch.as_tensor(r, dtype=torch.float32, device=per_sample.device)
    return RLOutput((rt * per_sample).mean(), float(r.mean()), float(correct.mean()))

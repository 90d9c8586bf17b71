"""The dynamics predictor's Lightning module (rollout loss over a window) and its data module.

The loss of a window: the model starts from the true history and rolls `rollout` steps on its
own positions (gradients flow through them); at each step the mean squared error of the scaled
displacement over the objects in the graph that are in view, plus `collision_weight` times the
binary cross-entropy of each pair's collision (collisions weighted `collision_pos_weight`). The
"colliding over the last step" input is the truth for the first step, then the model's own
previous probability. Validation adds the position error in pixels per step and the collision
precision and recall (probability >= 0.5) of the one-step-at-a-time windows.
"""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader

from tvr.clevrer.models.dynamics.config import DynamicsConfig
from tvr.clevrer.models.dynamics.observation import HALF_SIZE
from tvr.clevrer.models.dynamics.propnet import VELOCITY_SCALE, PropNet
from tvr.clevrer.models.dynamics.windows import WindowDataset, collate_windows, video_runs
from tvr.clevrer.models.sets import split_files, take
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.core.errors import UserError


def build_propnet(config: DynamicsConfig) -> PropNet:
    return PropNet(history=config.history, hidden=config.hidden, steps=config.steps)


def rollout_losses(
    model: PropNet,
    batch: dict[str, torch.Tensor],
    history: int,
    pos_weight: float,
) -> dict[str, torch.Tensor]:
    """Position and collision losses of a batch of windows, and the per-step sums behind the
    validation scores (squared/absolute pixel errors, counts, collision hits)."""
    pos = batch["positions"]  # (B, H+K, N, 2)
    vis = batch["visible"]
    hits = batch["collisions"].float()  # (B, H+K, N, N)
    active = batch["active"]
    attrs = batch["attributes"]
    _, total, n, _ = pos.shape
    eye = torch.eye(n, dtype=torch.bool, device=pos.device)
    pairs = (active[:, :, None] & active[:, None, :] & ~eye).float()
    window = pos[:, :history]
    colliding = hits[:, history - 1]
    scale = torch.as_tensor(HALF_SIZE, dtype=pos.dtype, device=pos.device)
    pos_loss = pos.new_zeros(())
    col_loss = pos.new_zeros(())
    err_px = []
    counts = []
    tp = fp = fn = pos.new_zeros(())
    for k in range(history, total):
        delta, logits = model(window, attrs, active, colliding)
        target = (pos[:, k] - window[:, -1]) * VELOCITY_SCALE
        seen = (vis[:, k] & active).float()
        se = ((delta - target) ** 2).sum(-1)
        pos_loss = pos_loss + (se * seen).sum() / seen.sum().clamp(min=1)
        weight = pairs * torch.where(hits[:, k] > 0, pos_weight, 1.0)
        bce = F.binary_cross_entropy_with_logits(logits, hits[:, k], weight=weight, reduction="sum")
        col_loss = col_loss + bce / pairs.sum().clamp(min=1)
        nxt = window[:, -1] + delta / VELOCITY_SCALE
        with torch.no_grad():
            px = ((nxt - pos[:, k]) * scale).norm(dim=-1)
            err_px.append((px * seen).sum())
            counts.append(seen.sum())
            pred = (logits > 0).float() * pairs
            upper = torch.triu(torch.ones(n, n, device=pos.device), diagonal=1)
            tp = tp + (pred * hits[:, k] * upper).sum()
            fp = fp + (pred * (1 - hits[:, k]) * upper).sum()
            fn = fn + ((1 - pred) * hits[:, k] * pairs * upper).sum()
        window = torch.cat([window[:, 1:], nxt[:, None]], dim=1)
        colliding = torch.sigmoid(logits).detach() * pairs
    steps = total - history
    return {
        "position": pos_loss / steps,
        "collision": col_loss / steps,
        "err_px": torch.stack(err_px),
        "count": torch.stack(counts),
        "tp": tp, "fp": fp, "fn": fn,
    }  # fmt: skip


class DynamicsModule(L.LightningModule):
    """Trains a `PropNet` on windows of runs."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config})
        self.config = DynamicsConfig.from_dict(config)
        self.model = build_propnet(self.config)
        self._val: list[dict[str, torch.Tensor]] = []

    def _step(self, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        c = self.config
        out = rollout_losses(self.model, batch, c.history, c.collision_pos_weight)
        return out["position"] + c.collision_weight * out["collision"], out

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss, out = self._step(batch)
        n = int(batch["active"].shape[0])
        self.log("train/loss", loss, on_step=False, on_epoch=True, batch_size=n)
        self.log("train/position", out["position"], on_step=False, on_epoch=True, batch_size=n)
        self.log("train/collision", out["collision"], on_step=False, on_epoch=True, batch_size=n)
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        loss, out = self._step(batch)
        n = int(batch["active"].shape[0])
        self.log("val/loss", loss, on_step=False, on_epoch=True, batch_size=n)
        self._val.append(
            {k: v.detach() for k, v in out.items() if k not in ("position", "collision")}
        )

    def on_validation_epoch_end(self) -> None:
        if not self._val:
            return
        err = torch.stack([v["err_px"] for v in self._val]).sum(0)
        cnt = torch.stack([v["count"] for v in self._val]).sum(0).clamp(min=1)
        per_step = err / cnt
        for k, e in enumerate(per_step.tolist()):
            self.log(f"val/err_px_step{k + 1}", e)
        self.log("val/err_px", float(per_step.mean()))
        tp = sum(float(v["tp"]) for v in self._val)
        fp = sum(float(v["fp"]) for v in self._val)
        fn = sum(float(v["fn"]) for v in self._val)
        self.log("val/collision_precision", tp / (tp + fp) if tp + fp else 0.0)
        self.log("val/collision_recall", tp / (tp + fn) if tp + fn else 0.0)
        self._val = []

    def configure_optimizers(self) -> Any:
        c = self.config
        opt = torch.optim.Adam(self.parameters(), lr=c.lr)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=c.lr_decay_epochs, gamma=c.lr_decay)
        return {"optimizer": opt, "lr_scheduler": sched}


def load_runs(
    root: str, split: str, videos: int | None, counterfactual: bool
) -> tuple[list, dict[int, Any]]:
    """The runs of a split's videos (ground truth under dynamics/), and each video's facts."""
    files = take(split_files(root, split, "dynamics"), videos)
    if not files:
        raise UserError(f"{root}: no dynamics files of the {split} split under dynamics/")
    facts = {i: read_dynamics(p) for i, p in files.items()}
    runs = [r for f in facts.values() for r in video_runs(f, counterfactual)]
    return runs, facts


class WindowData(L.LightningDataModule):
    """Training windows of the train split's runs, validation windows of the validation split's."""

    def __init__(self, config: DynamicsConfig) -> None:
        super().__init__()
        self.config = config
        self.train_set: WindowDataset | None = None
        self.val_set: WindowDataset | None = None
        self.val_facts: dict[int, Any] = {}

    def setup(self, stage: str | None = None) -> None:
        c = self.config
        if self.train_set is None:
            train_runs, _ = load_runs(c.data_root, "train", c.train_videos, c.counterfactual)
            val_runs, self.val_facts = load_runs(
                c.data_root, "validation", c.val_videos, c.counterfactual
            )
            self.train_set = WindowDataset(
                train_runs, c.stride, c.history, c.rollout, c.window_step
            )
            self.val_set = WindowDataset(val_runs, c.stride, c.history, c.rollout, c.window_step)

    def train_dataloader(self) -> DataLoader:
        assert self.train_set is not None
        return DataLoader(self.train_set, batch_size=self.config.batch_size, shuffle=True,
                          collate_fn=collate_windows, num_workers=self.config.num_workers)  # fmt: skip

    def val_dataloader(self) -> DataLoader:
        assert self.val_set is not None
        return DataLoader(self.val_set, batch_size=self.config.batch_size, shuffle=False,
                          collate_fn=collate_windows, num_workers=self.config.num_workers)  # fmt: skip

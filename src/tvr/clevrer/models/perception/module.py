"""The frame parser's Lightning module (detector + attribute losses; mAP each validation) and data."""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader

from tvr.clevrer.models.perception.attributes import attribute_loss
from tvr.clevrer.models.perception.config import DetectorConfig
from tvr.clevrer.models.perception.evaluate import (
    crop_predictions,
    frame_truth,
    parse_samples,
    score_frames,
)
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.frames import (
    FrameBatch,
    FrameDataset,
    FrameSample,
    collate,
    load_frames,
)
from tvr.clevrer.models.perception.metrics import FrameFound


def build_parser(config: DetectorConfig) -> FrameParser:
    return FrameParser(
        config.detector, config.input_size, config.width, config.crop_size, config.threshold
    )


def detector_losses_eval(
    detector: nn.Module, images: torch.Tensor, ids: torch.Tensor
) -> dict[str, torch.Tensor]:
    """The detector's training losses without changing it: train mode (Mask R-CNN only gives
    losses so) with BatchNorm on its running statistics, no gradients."""
    modes = {m: m.training for m in detector.modules()}
    detector.train()
    for m in detector.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()
    try:
        with torch.no_grad():
            return detector.losses(images, ids)
    finally:
        for m, mode in modes.items():
            m.training = mode


class FrameParserModule(L.LightningModule):
    """Trains a `FrameParser`: the sum of the detector's losses and `attribute_weight` times the
    attribute loss on ground-truth crops; validation scores mAP and attributes on full frames."""

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config})
        self.config = DetectorConfig.from_dict(config)
        self.model = build_parser(self.config)
        self._found: list[FrameFound] = []
        self._samples: list[FrameSample] = []

    def transfer_batch_to_device(
        self, batch: FrameBatch, device: torch.device, dataloader_idx: int
    ) -> FrameBatch:
        return FrameBatch(
            batch.images.to(device), batch.ids.to(device), batch.crops.to(device),
            batch.labels.to(device), batch.samples,
        )  # fmt: skip

    def _losses(self, batch: FrameBatch, train: bool) -> dict[str, torch.Tensor]:
        detector = self.model.detector
        if train:
            losses = detector.losses(batch.images, batch.ids)
        else:
            losses = detector_losses_eval(detector, batch.images, batch.ids)
        losses = {k: v for k, v in losses.items()}
        losses["attributes"] = attribute_loss(self.model.attributes(batch.crops), batch.labels)
        return losses

    def _total(self, losses: dict[str, torch.Tensor]) -> torch.Tensor:
        w = self.config.attribute_weight
        return sum(v * (w if k == "attributes" else 1.0) for k, v in losses.items())  # type: ignore[return-value]

    def training_step(self, batch: FrameBatch, batch_idx: int) -> torch.Tensor:
        losses = self._losses(batch, train=True)
        loss = self._total(losses)
        n = len(batch.samples)
        self.log("train/loss", loss, on_step=False, on_epoch=True, batch_size=n)
        for k, v in losses.items():
            self.log(f"train/{k}", v, on_step=False, on_epoch=True, batch_size=n)
        return loss

    def validation_step(self, batch: FrameBatch, batch_idx: int) -> None:
        n = len(batch.samples)
        losses = self._losses(batch, train=False)
        self.log("val/loss", self._total(losses), on_step=False, on_epoch=True, batch_size=n)
        self._found += parse_samples(self.model, batch.samples)
        self._samples += batch.samples

    def on_validation_epoch_end(self) -> None:
        if not self._samples:
            return
        truth = [frame_truth(s) for s in self._samples]
        scores = score_frames(truth, self._found, crop_predictions(self.model, self._samples))
        for k, v in scores.items():
            self.log(f"val/{k}", float(v))
        self._found, self._samples = [], []

    def configure_optimizers(self) -> Any:
        c = self.config
        opt = torch.optim.AdamW(self.parameters(), lr=c.lr, weight_decay=c.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(c.epochs, 1))
        return {"optimizer": opt, "lr_scheduler": sched}


class FrameData(L.LightningDataModule):
    """Training frames of the train split, validation frames (with full frames) of the validation
    split, decoded once in `setup`."""

    def __init__(self, config: DetectorConfig) -> None:
        super().__init__()
        self.config = config
        self.train_samples: list[FrameSample] | None = None
        self.val_samples: list[FrameSample] | None = None

    def setup(self, stage: str | None = None) -> None:
        c = self.config
        if self.train_samples is None:
            self.train_samples = load_frames(
                c.data_root,
                "train",
                c.train_videos,
                c.frames_per_video,
                c.input_size,
                c.crop_size,
                c.seed,
            )
            self.val_samples = load_frames(
                c.data_root, "validation", c.val_videos, c.val_frames_per_video, c.input_size,
                c.crop_size, c.seed, keep_full=True,
            )  # fmt: skip

    def train_dataloader(self) -> DataLoader:
        assert self.train_samples is not None
        return DataLoader(
            FrameDataset(self.train_samples, flip=self.config.flip), batch_size=self.config.batch_size,
            shuffle=True, collate_fn=collate, num_workers=self.config.num_workers,
        )  # fmt: skip

    def val_dataloader(self) -> DataLoader:
        assert self.val_samples is not None
        return DataLoader(
            FrameDataset(self.val_samples), batch_size=self.config.batch_size, shuffle=False,
            collate_fn=collate, num_workers=self.config.num_workers,
        )  # fmt: skip

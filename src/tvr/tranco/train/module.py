"""The Lightning side of TrancoNet's training: the LightningModule and the data module.

`TrancoModule` trains by teacher forcing on InfoNCE (Eq. 8) over each sample's K candidates and
validates by greedy prediction against the val split's stored (tiny) candidates: `val/emr`, the
exact match rate, picks the best checkpoint. A frozen encoder's features come from the feature
cache (the module then holds no encoder); an encoder trained in the loop (scratch, finetune)
encodes the batch's images in each training step, and the val images once per validation.
AdamW, its lr warmed up linearly from 0 over `warmup_steps` steps and then constant.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader
from torchmetrics import MeanMetric

from tvr.tranco.data.dataset import TrancoDataset
from tvr.tranco.models.encoders import encoder_spec
from tvr.tranco.models.registry import build_model, parse_model_name
from tvr.tranco.models.trancenet import (
    TrancoNet,
    clip_vectors,
    contrastive_loss,
    greedy_decode,
    scored_candidates,
    step_masks,
)
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.data import Collate, EpochSampler, EvaluationItems, TrainingItems
from tvr.tranco.train.features import FeatureTable, encode_paths
from tvr.tranco.train.images import image_transform


def build_config_model(config: TrancoTrainConfig, with_weights: bool = True) -> TrancoNet:
    """The TrancoNet a config trains: no encoder when frozen (features come from the cache);
    the finetune strategy's encoder starts from the CLIP weights (when `with_weights`)."""
    weights = config.clip_weights if config.strategy == "finetune" and with_weights else None
    return build_model(
        config.model,
        with_encoder=not config.frozen,
        clip_weights=weights,
        quick_gelu=config.quick_gelu,
        dropout=config.dropout,
        tau=config.tau,
        max_steps=config.max_steps,
    )


def batch_features(
    model: TrancoNet, batch: dict[str, Any], table: torch.Tensor | None
) -> torch.Tensor:
    """(U, dim) unit features of the batch's images: rows of `table`, or encoded now."""
    if "rows" in batch:
        if table is None:
            raise RuntimeError("a batch of feature rows needs a feature table")
        return table[batch["rows"]]
    return model.embed(batch["images"])


def sample_vectors(
    features: torch.Tensor, batch: dict[str, Any]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The states (B, 2, dim) and the scored candidates (B, K+1, dim; stop first) of a batch."""
    states = features[batch["states"]]
    frames = batch["frames"]
    clips = clip_vectors(features[frames.clamp(min=0)], frames >= 0)
    return states, scored_candidates(states[:, 1], clips)


def teacher_forced_loss(
    model: TrancoNet, states: torch.Tensor, candidates: torch.Tensor, batch: dict[str, Any],
    min_steps: int,
) -> torch.Tensor:  # fmt: skip
    """InfoNCE of every reference step, the previous reference clips given."""
    targets = batch["targets"]
    rows = torch.arange(targets.shape[0], device=targets.device).unsqueeze(1)
    previous = candidates[rows, targets[:, :-1].clamp(min=0)]
    g = model.head.step_vectors(states, previous)
    logits = model.head.logits(g, candidates)
    allowed = step_masks(batch["available"], targets, min_steps)
    return contrastive_loss(logits.float(), targets, allowed)


def decoded_ids(picks: Sequence[Sequence[int]], batch: dict[str, Any]) -> list[list[str]]:
    """Clip ids of greedy picks (candidate indices 1..K)."""
    return [[batch["candidates"][b][i - 1] for i in seq] for b, seq in enumerate(picks)]


class TrancoModule(L.LightningModule):
    """TrancoNet trained on InfoNCE; `val/emr` is the exact match rate on the val split."""

    def __init__(self, config: dict[str, Any], encoder_sha256: str | None = None) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config, "encoder_sha256": encoder_sha256})
        self.config = TrancoTrainConfig.from_dict(config)
        self.model = build_config_model(self.config)
        self.train_table: torch.Tensor | None = None  # a frozen encoder's features
        self.val_table: torch.Tensor | None = None
        self.val_paths: list[str] = []
        self.val_root: Path | None = None
        self.val_emr = MeanMetric()

    def attach(
        self, train_table: torch.Tensor | None, val_paths: list[str], val_root: Path,
        val_table: torch.Tensor | None,
    ) -> None:  # fmt: skip
        """The features a frozen run reads (train rows and val rows), or the val images an
        encoder in the loop encodes at each validation."""
        self.train_table = train_table
        self.val_paths = val_paths
        self.val_root = val_root
        self.val_table = val_table

    def on_fit_start(self) -> None:
        for name in ("train_table", "val_table"):
            table = getattr(self, name)
            if table is not None:
                setattr(self, name, table.to(self.device))

    def training_step(self, batch: dict[str, Any], batch_idx: int) -> torch.Tensor:
        features = batch_features(self.model, batch, self.train_table)
        states, candidates = sample_vectors(features, batch)
        loss = teacher_forced_loss(self.model, states, candidates, batch, self.config.min_steps)
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True,
                 batch_size=len(batch["id"]))  # fmt: skip
        return loss

    def on_validation_epoch_start(self) -> None:
        """An encoder in the loop encodes the val images once, with the weights of now."""
        if self.model.encoder is None:
            return
        assert self.val_root is not None
        with self.trainer.precision_plugin.forward_context():
            self.val_table = encode_paths(
                self.model.encoder,
                [self.val_root / p for p in self.val_paths],
                self.config.resize,
                self.config.feature_batch_size,
                str(self.device),
            ).to(self.device)

    def validation_step(self, batch: dict[str, Any], batch_idx: int) -> None:
        features = batch_features(self.model, batch, self.val_table)
        states, candidates = sample_vectors(features, batch)
        size = len(batch["id"])
        loss = teacher_forced_loss(self.model, states, candidates, batch, self.config.min_steps)
        self.log("val/loss", loss, on_epoch=True, batch_size=size, sync_dist=True)
        picks = greedy_decode(
            self.model.head, states, candidates, batch["available"],
            self.config.max_steps, self.config.min_steps,
        )  # fmt: skip
        hits = [
            float(p == c) for p, c in zip(decoded_ids(picks, batch), batch["clips"], strict=True)
        ]
        self.val_emr.update(torch.tensor(hits, device=self.device))
        self.log("val/emr", self.val_emr, on_step=False, on_epoch=True, prog_bar=True)

    def configure_optimizers(self) -> dict[str, Any]:
        cfg = self.config
        groups = [{"params": list(self.model.head.parameters()), "lr": cfg.lr}]
        if self.model.encoder is not None:
            groups.append({"params": list(self.model.encoder.parameters()),
                           "lr": cfg.encoder_lr or cfg.lr})  # fmt: skip
        opt = torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=cfg.weight_decay)
        warmup = max(cfg.warmup_steps, 0)

        def factor(step: int) -> float:
            return 1.0 if warmup == 0 else min(1.0, (step + 1) / warmup)

        sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


class TrancoData(L.LightningDataModule):
    """The train loader (K candidates per sample and epoch: rows of `train_index`, a frozen
    encoder's cache, or images) and the val loader (tiny sets: rows of `val_paths`)."""

    def __init__(
        self,
        config: TrancoTrainConfig,
        dataset: TrancoDataset,
        train_index: dict[str, int] | None,
        val_items: EvaluationItems,
        val_paths: list[str],
    ) -> None:
        super().__init__()
        self.config = config
        self.dataset = dataset
        self.train_items = TrainingItems(
            dataset, config.train_candidates, config.clip_frames, config.seed
        )
        self.val_items = val_items
        if train_index is not None:
            self.train_collate = Collate(train_index)
        else:
            size = encoder_spec(parse_model_name(config.model).encoder).image_size
            transform = image_transform(size, config.resize)
            self.train_collate = Collate(None, dataset.root, transform)
        self.val_collate = Collate({p: i for i, p in enumerate(val_paths)})

    def _loader(self, items: Any, collate: Collate, shuffle: bool) -> DataLoader:
        return DataLoader(
            items,
            batch_size=self.config.batch_size,
            sampler=EpochSampler(len(items), shuffle, self.config.seed),
            num_workers=self.config.num_workers,
            collate_fn=collate,
            pin_memory=torch.cuda.is_available(),
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_items, self.train_collate, True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_items, self.val_collate, False)


def table_rows(table: FeatureTable, paths: Sequence[str]) -> torch.Tensor:
    """The rows of `paths` in a feature table, as a (len(paths), dim) tensor."""
    index = table.index
    return table.features[torch.tensor([index[p] for p in paths], dtype=torch.long)]

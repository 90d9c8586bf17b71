"""The Lightning side of training: the LightningModule (supervised or REINFORCE) and the data.

`TranceModule` makes the batch's uint8 images float on the device first in each step
(`images_to_float`: (B, 3, H, W) float32 in [0, 1], x / 255), trains a TranceNet model by
teacher forcing on Eq. 7 or fine-tunes it with REINFORCE, augments the image pairs with one
shared random translation, and validates by greedy decoding scored through the simulator
(`val/acc` is the metric the best checkpoint is chosen by). Adam at the configured lr, divided
by 10 at `drop_epoch`.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader
from torchmetrics import MeanMetric

from tvr.training.augment import random_translate
from tvr.training.precise_bn import recalibrate_batchnorm
from tvr.trance.data.batch import Batch, collate, images_to_float, to_device
from tvr.trance.models import build_model
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.data import make_dataset
from tvr.trance.train.losses import paper_loss, policy_gradient_loss, supervised_loss
from tvr.trance.train.scoring import basic_scores, event_scores

log = logging.getLogger(__name__)

EVENT_METRICS = ("acc", "lacc", "ad", "and")
BASIC_METRICS = ("acc", "obj_acc", "attr_acc", "val_acc")


def score_decoded(
    config: TrainConfig, batch: Batch, objs: torch.Tensor, values: torch.Tensor
) -> dict[str, Any]:
    """Per-sample validation metrics (numpy arrays) of decoded steps."""
    if config.setting == "basic":
        s = basic_scores(
            objs[:, 0].cpu().numpy(),
            values[:, 0].cpu().numpy(),
            batch["obj_target"][:, 0].cpu().numpy(),
            batch["options"].cpu().numpy(),
        )
        return {"acc": s.correct, "obj_acc": s.obj, "attr_acc": s.attr, "val_acc": s.value}
    s = event_scores(
        batch["init_state"].cpu().numpy(),
        batch["final_state"].cpu().numpy(),
        objs.cpu().numpy(),
        values.cpu().numpy(),
        batch["num_steps"].cpu().numpy(),
    )
    return {"acc": s.correct, "lacc": s.loose, "ad": s.distance, "and": s.norm_distance}


def image_layout(config: TrainConfig, *images: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The float image batches in the memory layout the model's convolutions were put in:
    NHWC (`channels_last`) when the config asks for it, else as they are."""
    if not config.channels_last:
        return images
    return tuple(x.contiguous(memory_format=torch.channels_last) for x in images)


def model_layout(config: TrainConfig, model: torch.nn.Module) -> torch.nn.Module:
    """The model with its convolution weights in NHWC when the config asks for it."""
    return model.to(memory_format=torch.channels_last) if config.channels_last else model


def training_images(config: TrainConfig, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
    """The image pair a training step feeds the model, from a batch made float: one shared
    random translation, then the config's layout."""
    init, final = random_translate(batch["init_image"], batch["final_image"], config.translate)
    return image_layout(config, init, final)


def recalibrate_model_batchnorm(
    config: TrainConfig,
    model: torch.nn.Module,
    loader: Any,
    batches: int,
    autocast: Callable[[], Any],
    device: torch.device | str = "cpu",
) -> int:
    """Precise BN for a TranceNet model: its BatchNorm statistics recomputed over the first
    `batches` batches of `loader`, each translated and laid out as in a training step and run
    through the encoder under `autocast()` (the training precision)."""

    def forward(batch: Batch) -> None:
        init, final = training_images(config, images_to_float(to_device(batch, device)))
        with autocast():
            model.encoder(init, final)

    return recalibrate_batchnorm(model, itertools.islice(iter(loader), batches), forward)


class TranceModule(L.LightningModule):
    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config})
        self.config = TrainConfig.from_dict(config)
        self.model = model_layout(
            self.config,
            build_model(
                self.config.model,
                self.config.setting,
                self.config.image_size,
                decoder_form=self.config.decoder_form,
                duda_form=self.config.duda_form,
            ),
        )
        names = BASIC_METRICS if self.config.setting == "basic" else EVENT_METRICS
        self.val_metrics = torch.nn.ModuleDict({n: MeanMetric() for n in names})

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        cfg = self.config
        batch = images_to_float(batch)
        bsz = batch["objects"].shape[0]
        init, final = training_images(cfg, batch)
        if cfg.reinforce:
            if cfg.rl_variant == "paper":
                out = paper_loss(self.model, batch, init, final, cfg.reward)
            else:
                out = policy_gradient_loss(
                    self.model, batch, init, final, cfg.reward, cfg.rl_samples, cfg.rl_baseline
                )
            self.log("train/reward", out.reward, on_step=True, on_epoch=True, batch_size=bsz)
            self.log("train/sample_acc", out.acc, on_step=False, on_epoch=True, batch_size=bsz)
            loss = out.loss
        else:
            d = supervised_loss(self.model, batch, init, final)
            self.log("train/obj_loss", d["obj_loss"], on_step=False, on_epoch=True, batch_size=bsz)
            self.log(
                "train/value_loss", d["value_loss"], on_step=False, on_epoch=True, batch_size=bsz
            )
            loss = d["loss"]
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=bsz)
        return loss

    def on_validation_epoch_start(self) -> None:
        """With `precise_bn_batches`, the BatchNorm statistics of the weights about to be
        validated (and checkpointed) are recomputed over that many training batches, translated
        and cast as in training."""
        n = self.config.precise_bn_batches
        if n <= 0 or self.trainer.sanity_checking:
            return
        loader = self.trainer.train_dataloader
        if loader is None:
            return
        recalibrate_model_batchnorm(
            self.config,
            self.model,
            loader,
            n,
            self.trainer.precision_plugin.forward_context,
            self.device,
        )

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        batch = images_to_float(batch)
        bsz = batch["objects"].shape[0]
        init, final = image_layout(self.config, batch["init_image"], batch["final_image"])
        d = supervised_loss(self.model, batch, init, final)
        self.log("val/loss", d["loss"], on_epoch=True, sync_dist=True, batch_size=bsz)
        decoded = self.model.decode(init, final, batch["objects"])
        for name, values in score_decoded(self.config, batch, decoded.objs, decoded.values).items():
            metric = self.val_metrics[name]
            metric.update(torch.as_tensor(values, dtype=torch.float32, device=self.device))
            self.log(f"val/{name}", metric, on_step=False, on_epoch=True, prog_bar=name == "acc")

    def configure_optimizers(self) -> dict[str, Any]:
        opt = torch.optim.Adam(self.model.parameters(), lr=self.config.lr)
        sched = torch.optim.lr_scheduler.MultiStepLR(
            opt, milestones=[self.config.drop_epoch], gamma=self.config.lr_drop_factor
        )
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "epoch"}}

    def on_train_start(self) -> None:
        """Make a resumed run follow its own config's schedule. Lightning restores the scheduler
        of the checkpoint, whose lr drop is the one of the config the run was started with; a run
        resumed with other `epochs`, `lr`, `lr_drop_epoch` or `lr_drop_factor` gets this config's
        schedule from the current epoch on (and a warning)."""
        cfg = self.config
        lr_now = cfg.lr * (cfg.lr_drop_factor if self.current_epoch >= cfg.drop_epoch else 1.0)
        for sched_config in self.trainer.lr_scheduler_configs:
            sched = sched_config.scheduler
            groups = sched.optimizer.param_groups
            if (
                sched.milestones == Counter([cfg.drop_epoch])
                and sched.gamma == cfg.lr_drop_factor
                and all(g["lr"] == lr_now for g in groups)
            ):
                continue
            log.warning(
                "resumed at epoch %d with a schedule other than the checkpoint's: lr %g from now "
                "on, divided by %g at epoch %d (was: lr %g, drop at %s)",
                self.current_epoch,
                lr_now,
                1 / cfg.lr_drop_factor,
                cfg.drop_epoch,
                groups[0]["lr"],
                sorted(sched.milestones),
            )
            sched.milestones = Counter([cfg.drop_epoch])
            sched.gamma = cfg.lr_drop_factor
            sched.base_lrs = [cfg.lr for _ in groups]
            for g in groups:
                g["lr"] = lr_now
                g["initial_lr"] = cfg.lr
            sched._last_lr = [lr_now for _ in groups]


class TranceData(L.LightningDataModule):
    """Train and validation loaders of the configured source; `batch_size` is split over devices."""

    def __init__(self, config: TrainConfig) -> None:
        super().__init__()
        self.config = config
        self.train_set = self.val_set = None

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is None:
            self.train_set = make_dataset(self.config, "train")
            self.val_set = make_dataset(self.config, "val")
            if self.train_set is None or self.val_set is None:
                raise ValueError(f"dataset source {self.config.data!r} lacks a train or val split")

    def _loader(self, dataset, shuffle: bool) -> DataLoader:
        world = self.trainer.world_size if self.trainer is not None else 1
        return make_loader(
            dataset, self.config, max(1, self.config.batch_size // max(world, 1)), shuffle
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, False)


def make_loader(dataset, config: TrainConfig, batch_size: int, shuffle: bool) -> DataLoader:
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle,
        num_workers=config.num_workers,
        collate_fn=collate,
        pin_memory=torch.cuda.is_available(),
        persistent_workers=config.num_workers > 0,
    )

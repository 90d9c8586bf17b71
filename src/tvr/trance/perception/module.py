"""The scene parser's Lightning module: heatmap, offset and attribute losses; val object accuracy."""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torch.nn import functional as F

from tvr.training.keypoints import centre_focal_loss
from tvr.trance.perception.data import targets
from tvr.trance.perception.metrics import ImageParse, Tally, score_image
from tvr.trance.perception.model import HEADS, SceneParserNet


class SceneParserModule(L.LightningModule):
    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config})
        self.config = config
        self.net = SceneParserNet(width=config["width"])
        self._val = Tally()

    def _losses(
        self, batch: dict[str, torch.Tensor]
    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        images = batch["images"]
        out = self.net(images)
        t = targets(batch["labels"].cpu(), tuple(out.shape[-2:]), images.shape[-1],
                    self.config["sigma"], self.config["min_pixels"])  # fmt: skip
        t = {k: v.to(out.device) for k, v in t.items()}
        heat = centre_focal_loss(out[:, 0], t["heat"], weight=t["weight"])
        c = t["centre"]
        n = c.sum().clamp(min=1)
        offset = (F.l1_loss(out[:, 1:3], t["offset"], reduction="none").sum(1) * c).sum() / n
        losses = {"heat": heat, "offset": offset}
        k = 3
        for j, (name, values) in enumerate(HEADS):
            logits = out[:, k : k + len(values)]
            losses[name] = F.cross_entropy(logits, t["classes"][:, j], ignore_index=-1)
            k += len(values)
        return losses, out

    def training_step(self, batch: dict[str, torch.Tensor], _: int) -> torch.Tensor:
        losses, _ = self._losses(batch)
        loss = sum(losses.values())
        bs = batch["images"].shape[0]
        self.log("train/loss", loss, on_step=False, on_epoch=True, batch_size=bs)
        return loss  # type: ignore[return-value]

    def on_validation_epoch_start(self) -> None:
        self._val = Tally()

    def validation_step(self, batch: dict[str, torch.Tensor], _: int) -> None:
        losses, out = self._losses(batch)
        bs = batch["images"].shape[0]
        self.log("val/loss", sum(losses.values()), on_epoch=True, batch_size=bs)  # type: ignore[arg-type]
        scale = 320 / batch["images"].shape[-1]
        for maps, labels in zip(out, batch["labels"].cpu().numpy(), strict=True):
            dets = self.net.decode(maps)
            centres = torch.tensor([[d.u * scale, d.v * scale] for d in dets]).reshape(-1, 2)
            classes = torch.tensor(
                [[values.index(d.attributes[name]) for name, values in HEADS] for d in dets]
            ).reshape(-1, len(HEADS))
            self._val.add(score_image(ImageParse("", centres.numpy(), classes.numpy(), labels)))

    def on_validation_epoch_end(self) -> None:
        s = self._val.summary()
        self.log("val/acc", float(s["object_acc"] or 0.0))
        self.log("val/recall", float(s["recall"] or 0.0))

    def configure_optimizers(self) -> Any:
        opt = torch.optim.AdamW(
            self.parameters(), lr=self.config["lr"], weight_decay=self.config["weight_decay"]
        )
        steps = self.trainer.estimated_stepping_batches
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=self.config["lr"], total_steps=max(int(steps), 1), pct_start=0.1
        )
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

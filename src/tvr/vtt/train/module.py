"""The Lightning side of VTT training: the module (loss, greedy validation decodes scored by
CIDEr-D, AdamW with linear warm-up and decay) over a `tvr.vtt.models` model.

`val/cider` is the metric the best checkpoint is chosen by, as the paper's: coco-caption CIDEr-D
(x100) of the greedy decodes of the whole validation split, through the path `tvr vtt evaluate`
takes (PTB tokens, then CLIP's word split; document frequencies from the validation references).
"""

from __future__ import annotations

from typing import Any

import lightning as L
import torch

from tvr.vtt.models import build_model, tokenizer
from tvr.vtt.models.common import Batch
from tvr.vtt.models.decoding import DecodeOptions
from tvr.vtt.train.config import VttTrainConfig
from tvr.vtt.train.data import LabelSpace
from tvr.vtt.train.losses import model_loss


def val_cider(hypotheses: list[str], references: list[str]) -> float:
    """CIDEr-D x100 of each hypothesis against its reference, averaged (as evaluate does)."""
    from tvr.vtt.eval.metrics.coco import cider_d
    from tvr.vtt.eval.metrics.text import clip_words, ptb_tokenize

    if not references:
        return 0.0
    tokens = ptb_tokenize([*references, *hypotheses])
    n = len(references)
    refs = [clip_words(t) for t in tokens[:n]]
    hyps = [clip_words(t) for t in tokens[n:]]
    scores = cider_d(hyps, refs)
    return 100.0 * sum(scores) / len(scores)


def linear_warmup_decay(warmup: int, total: int):  # type: ignore[no-untyped-def]
    """lr factor of step s: s / warmup while warming up, then down linearly to 0 at `total`."""

    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


class VttModule(L.LightningModule):
    def __init__(self, config: dict[str, Any], labels: dict[str, Any], encoder_dim: int) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config, "labels": labels,
                                   "encoder_dim": encoder_dim})  # fmt: skip
        self.config = VttTrainConfig.from_dict(config)
        self.labels = LabelSpace.from_dict(labels)
        self.model = build_model(self.config.model, encoder_dim,
                                 len(self.labels.topics), len(self.labels.categories),
                                 self.labels.token_ids)  # fmt: skip
        self._pairs: list[tuple[str, str]] = []

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        out = model_loss(self.model, batch)
        size = len(batch["id"])
        self.log("train/loss", out["loss"], on_step=True, on_epoch=True, prog_bar=True,
                 batch_size=size)  # fmt: skip
        for name in ("text_loss", "topic_loss", "category_loss"):
            if name in out:
                self.log(f"train/{name}", out[name], on_step=False, on_epoch=True,
                         batch_size=size)  # fmt: skip
        return out["loss"]

    def on_validation_epoch_start(self) -> None:
        self._pairs = []

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        out = model_loss(self.model, batch)
        self.log("val/loss", out["loss"], on_epoch=True, sync_dist=True,
                 batch_size=len(batch["id"]))  # fmt: skip
        decoded = self.model.generate(batch, DecodeOptions("greedy"))
        for ids, refs in zip(decoded, batch["references"], strict=True):
            self._pairs += [(tokenizer.decode(x), ref) for x, ref in zip(ids, refs, strict=True)]

    def on_validation_epoch_end(self) -> None:
        pairs = self._pairs
        if self.trainer.world_size > 1:
            gathered: list[Any] = [None] * self.trainer.world_size
            torch.distributed.all_gather_object(gathered, pairs)
            pairs = [p for part in gathered for p in part]
        score = val_cider([h for h, _ in pairs], [r for _, r in pairs])
        self.log("val/cider", score, prog_bar=True)

    def configure_optimizers(self) -> dict[str, Any]:
        cfg = self.config
        params = [p for p in self.model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
        total = int(self.trainer.estimated_stepping_batches)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, linear_warmup_decay(cfg.warmup_steps, total))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}

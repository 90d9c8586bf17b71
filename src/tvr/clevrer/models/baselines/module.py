"""The baselines' Lightning parts: the data of a config, the loss, validation accuracies.

The loss is the cross-entropy of the descriptive items plus the binary cross-entropy of the
options (each a mean over its items in the batch). Validation logs `val/desc_acc` (descriptive
answers right), `val/option_acc` (options right) and `val/acc`, their mean, which picks the best
checkpoint. The checkpoint holds the config and the word vocabulary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader

from tvr.clevrer.data.layout import find_questions
from tvr.clevrer.data.questions import VideoQuestions, read_questions
from tvr.clevrer.models.baselines.config import BaselineConfig
from tvr.clevrer.models.baselines.data import NO_TARGET, VideoQA, build_words, collate
from tvr.clevrer.models.baselines.frames import FrameSpec, build_frame_cache
from tvr.clevrer.models.baselines.model import QAModel
from tvr.clevrer.models.parser.tokens import Vocab

Batch = dict[str, Any]


def frame_spec(config: BaselineConfig) -> FrameSpec:
    return FrameSpec(config.frames, config.frame_width, config.frame_height)


def frame_cache_root(config: BaselineConfig) -> Path:
    return Path(config.frame_cache or Path(config.output_dir) / "frame-cache")


def frames_for(
    config: BaselineConfig, videos: list[VideoQuestions], data: str, progress: bool = True
) -> Path | None:
    """The cached frames of `videos` (decoded now where missing); None for the LSTM."""
    if not config.uses_video:
        return None
    scenes = [v.scene_index for v in videos]
    return build_frame_cache(
        data,
        frame_cache_root(config),
        frame_spec(config),
        scenes,
        workers=config.cache_workers,
        progress=progress,
    )


class BaselineData(L.LightningDataModule):
    """The training and validation videos of a config (and their frames for CNN+LSTM)."""

    def __init__(self, config: BaselineConfig) -> None:
        super().__init__()
        self.config = config
        self.words: Vocab | None = None
        self.train_set: VideoQA | None = None
        self.val_set: VideoQA | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.words is not None:
            return
        cfg = self.config
        train = read_questions(find_questions(cfg.data, cfg.train_split))
        val = read_questions(find_questions(cfg.data, cfg.val_split))
        self.words = build_words(train)
        self.train_set = VideoQA(train, self.words, frames_for(cfg, train, cfg.data))
        self.val_set = VideoQA(val, self.words, frames_for(cfg, val, cfg.data))

    def _loader(self, dataset: VideoQA | None, shuffle: bool) -> DataLoader:
        assert dataset is not None
        return DataLoader(
            dataset,
            batch_size=self.config.batch_videos,
            shuffle=shuffle,
            collate_fn=collate,
            num_workers=self.config.num_workers,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_set, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_set, shuffle=False)


def qa_loss(answer: torch.Tensor, option: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the descriptive items + binary cross-entropy of the options."""
    target, is_option = batch["target"], batch["is_option"]
    known = target != NO_TARGET
    loss = answer.new_zeros(())
    open_items = known & ~is_option
    if bool(open_items.any()):
        loss = loss + F.cross_entropy(answer[open_items], target[open_items])
    options = known & is_option
    if bool(options.any()):
        loss = loss + F.binary_cross_entropy_with_logits(option[options], target[options].float())
    return loss


class BaselineModule(L.LightningModule):
    def __init__(self, config: dict[str, Any], words: list[str]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config, "words": words})
        self.config = BaselineConfig.from_dict(config)
        self.word_vocab = Vocab.from_json(words)
        self.model = QAModel(self.config, len(words))
        self._counts = [0, 0, 0, 0]  # descriptive right, total; options right, total

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.model(
            batch["words"], batch["lengths"], batch["item_video"], batch.get("frames")
        )

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        loss = qa_loss(*self(batch), batch)
        n = int(batch["video"].shape[0])
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=n)
        return loss

    def on_validation_epoch_start(self) -> None:
        self._counts = [0, 0, 0, 0]

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        answer, option = self(batch)
        n = int(batch["video"].shape[0])
        self.log("val/loss", qa_loss(answer, option, batch), on_epoch=True, batch_size=n)
        target, is_option = batch["target"], batch["is_option"]
        known = target != NO_TARGET
        open_items = known & ~is_option
        options = known & is_option
        self._counts[0] += int((answer.argmax(-1) == target)[open_items].sum())
        self._counts[1] += int(open_items.sum())
        self._counts[2] += int(((option > 0).long() == target)[options].sum())
        self._counts[3] += int(options.sum())

    def on_validation_epoch_end(self) -> None:
        d_right, d_total, o_right, o_total = self._counts
        accs = []
        if d_total:
            accs.append(d_right / d_total)
            self.log("val/desc_acc", accs[-1])
        if o_total:
            accs.append(o_right / o_total)
            self.log("val/option_acc", accs[-1])
        self.log("val/acc", sum(accs) / len(accs) if accs else 0.0)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(
            self.parameters(), lr=self.config.lr, weight_decay=self.config.weight_decay
        )

"""The Table 2 baselines' run config (`tvr clevrer train lstm|cnn-lstm`), saved as config.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvr.core.errors import UserError
from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig

MODELS: tuple[str, ...] = ("lstm", "cnn-lstm")
CNNS: tuple[str, ...] = ("resnet18", "resnet50", "small")
#: the CNNs that take torchvision ImageNet weights from a local file (--cnn-weights)
RESNETS: tuple[str, ...] = ("resnet18", "resnet50")


@dataclass
class BaselineConfig(RunConfig):
    """Everything a baseline run depends on.

    Args:
        model: "lstm" (the question alone) or "cnn-lstm" (video frames and the question).
        data: a CLEVRER set (generated, or the release) with question files and videos.
        train_split, val_split: the question files trained on and scored each epoch.
        frames: frames per video, the middle frames of equal segments of the 128 (the paper
            samples 25 uniformly).
        frame_width, frame_height: the size the frames are scaled to (480x320 in the files).
        cnn: the frame network: torchvision's "resnet18" or "resnet50" (the paper's ResNet-50),
            or "small" (four stride-2 convolutions; the CPU's choice).
        cnn_weights: a local file of torchvision ImageNet weights for the ResNet (its state
            dict, e.g. torchvision's resnet50-0676ba61.pth; the classifier is dropped). Read
            once when training starts, never downloaded; without it the CNN starts from random
            weights.
        freeze_cnn: keep the loaded ResNet fixed (no gradients, BatchNorm in eval mode), as the
            paper's CNN+LSTM reads fixed ImageNet pool5 features.
        frame_features: each frame's feature is reduced to this width before the frames are
            concatenated in time order (the video feature keeps the order of events).
        embed_dim, hidden: word embeddings and the question LSTM (the paper: 300-d word2vec,
            which tvr cannot download: random, learned).
        frame_cache: where the sampled frames are cached (default: OUTPUT_DIR/frame-cache).
        batch_videos: videos per batch (each with all its questions and options).
        epochs, lr, weight_decay: Adam.
        The run options (epochs, devices, output_dir, ...) are `RunConfig`'s.
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {
        "frame_cache",
        "cache_workers",
    }
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data", "frame_cache", "cnn_weights")

    model: str = "lstm"
    data: str = ""
    train_split: str = "train"
    val_split: str = "validation"
    frames: int = 8
    frame_width: int = 96
    frame_height: int = 64
    cnn: str = "small"
    cnn_weights: str | None = None
    freeze_cnn: bool = False
    frame_features: int = 64
    embed_dim: int = 300
    hidden: int = 256
    dropout: float = 0.1
    batch_videos: int = 8
    lr: float = 1e-3
    weight_decay: float = 0.0
    frame_cache: str | None = None
    cache_workers: int = 1
    # run options with this model's defaults
    epochs: int = 30
    devices: int | str = 1
    output_dir: str = "runs/clevrer"

    @property
    def uses_video(self) -> bool:
        return self.model == "cnn-lstm"

    def default_run_name(self) -> str:
        return self.model if self.model == "lstm" else f"{self.model}-{self.cnn}"

    def validate(self) -> BaselineConfig:
        """UserError naming the first bad value."""
        if self.model not in MODELS:
            raise UserError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if self.cnn not in CNNS:
            raise UserError(f"cnn must be one of {', '.join(CNNS)}, got {self.cnn!r}")
        if self.cnn_weights and self.cnn not in RESNETS:
            raise UserError(f"cnn_weights needs cnn {' or '.join(RESNETS)}, got {self.cnn!r}")
        if self.freeze_cnn and not self.cnn_weights:
            raise UserError("freeze_cnn needs cnn_weights (freezing random weights learns nothing)")
        if not self.data:
            raise UserError("--data is required (a CLEVRER set with question files and videos)")
        for name in (
            "frames",
            "frame_width",
            "frame_height",
            "frame_features",
            "embed_dim",
            "hidden",
            "epochs",
            "batch_videos",
            "cache_workers",
        ):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise UserError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.lr <= 0:
            raise UserError(f"lr must be positive, got {self.lr}")
        return self

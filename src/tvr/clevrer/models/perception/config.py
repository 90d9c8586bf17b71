"""The frame parser's training config: detector, frames, sizes, schedule; saved as config.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from tvr.core.errors import UserError
from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig

#: the detectors `--detector` selects (`detectors.DETECTORS` builds them)
DETECTOR_NAMES: tuple[str, ...] = ("unet", "maskrcnn-r18", "maskrcnn-r50")
#: (height, width) fed to each detector when `image_size` is not given: the light ones at half
#: the frame's size, the paper's Mask R-CNN at the full 320x480
DEFAULT_IMAGE_SIZE: dict[str, tuple[int, int]] = {
    "unet": (160, 240),
    "maskrcnn-r18": (160, 240),
    "maskrcnn-r50": (320, 480),
}
#: the score a detection needs to be kept at inference when `score_threshold` is not given: the
#: paper keeps Mask R-CNN proposals above 0.9; the U-Net's score is its centre heatmap's peak
DEFAULT_SCORE_THRESHOLD: dict[str, float] = {"unet": 0.3, "maskrcnn-r18": 0.9, "maskrcnn-r50": 0.9}


@dataclass
class DetectorConfig(RunConfig):
    """One training run of the video frame parser (detector + attribute classifier).

    Args:
        data_root: a set with videos/ and masks/ (`tvr clevrer generate`, or the release with
            mask files); training frames come from its train split, validation frames from its
            validation split.
        detector: one of DETECTOR_NAMES.
        image_size: (height, width) the detector sees (None: DEFAULT_IMAGE_SIZE).
        train_videos, val_videos: how many videos of each split to take frames from (None: all).
        frames_per_video, val_frames_per_video: frames drawn (seeded) from each video's 128.
        crop_size: side of the attribute classifier's crop, taken from the 480x320 frame.
        width: the U-Net's first-level channels.
        score_threshold: a detection's score needed at inference (None: the detector's default).
        epochs, max_minutes, batch_size, lr, weight_decay: the schedule (AdamW; cosine decay).
        attribute_weight: weight of the attribute loss beside the detector's losses.
        flip: flip training frames left-right at random.
        threads: torch CPU threads (None: torch's default).
        The other run options (seed, devices, output_dir, ...) are `RunConfig`'s.
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {
        "threads",
        "score_threshold",
    }
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data_root",)

    data_root: str = ""
    detector: str = "unet"
    image_size: tuple[int, int] | None = None
    train_videos: int | None = None
    frames_per_video: int = 8
    val_videos: int | None = 25
    val_frames_per_video: int = 4
    crop_size: int = 32
    width: int = 16
    score_threshold: float | None = None
    batch_size: int = 8
    lr: float = 1e-3
    weight_decay: float = 1e-4
    attribute_weight: float = 1.0
    flip: bool = True
    threads: int | None = None
    # run options with this model's defaults
    epochs: int = 20
    output_dir: str = "runs/clevrer"

    def __post_init__(self) -> None:
        if self.image_size is not None:
            self.image_size = (int(self.image_size[0]), int(self.image_size[1]))

    def validate(self) -> DetectorConfig:
        """UserError naming the first bad value."""
        if not self.data_root:
            raise UserError("data_root is required (a CLEVRER set with videos/ and masks/)")
        if self.detector not in DETECTOR_NAMES:
            raise UserError(
                f"unknown detector {self.detector!r}: one of {', '.join(DETECTOR_NAMES)}"
            )
        if self.image_size is not None:
            h, w = self.image_size
            if h < 32 or w < 32 or h % 16 or w % 16:
                raise UserError(f"image_size must be multiples of 16, at least 32: got {h}x{w}")
        for name in (
            "frames_per_video",
            "val_frames_per_video",
            "crop_size",
            "width",
            "batch_size",
            "epochs",
        ):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("train_videos", "val_videos"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UserError(f"{name} must be at least 1 (or None for all), got {value}")
        if self.lr <= 0:
            raise UserError(f"lr must be positive, got {self.lr}")
        return self

    @property
    def input_size(self) -> tuple[int, int]:
        """(height, width) the detector sees."""
        return self.image_size or DEFAULT_IMAGE_SIZE[self.detector]

    @property
    def threshold(self) -> float:
        """The inference score threshold."""
        if self.score_threshold is not None:
            return self.score_threshold
        return DEFAULT_SCORE_THRESHOLD[self.detector]

    def default_run_name(self) -> str:
        return f"detector-{self.detector}"

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        if self.image_size is not None:
            d["image_size"] = list(self.image_size)
        return d

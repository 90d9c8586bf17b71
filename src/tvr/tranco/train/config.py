"""The configuration of a TrancoNet training run: one typed dataclass, saved as config.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig
from tvr.tranco.models.registry import parse_model_name
from tvr.tranco.models.trancenet import MAX_STEPS
from tvr.tranco.train.images import RESIZE_MODES

#: Table 7's pre-training strategies: the encoder fixed (its features cached once), trained from
#: random weights, or trained from the given CLIP weights
STRATEGIES = ("frozen", "scratch", "finetune")


@dataclass
class TrancoTrainConfig(RunConfig):
    """Everything a TrancoNet run depends on. Defaults are the paper's (section 8, appendix B.2)
    where it gives them: AdamW warmed up to 2e-4 over 2,000 steps, tau 1, K = 20 training
    candidates, 3 frames per clip, at most 7 steps; the CLIP weights fixed ("frozen"). The other
    run options (seed, devices, output_dir, ...) and their defaults are `RunConfig`'s."""

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {
        "feature_cache",
        "feature_batch_size",
    }
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data", "clip_weights", "feature_cache")

    data: str = ""  # the dataset folder (tvr's TRANCO layout)
    model: str = "small-t"  # a name of tvr.tranco.models.registry
    strategy: str = "frozen"  # frozen, scratch or finetune
    # a local CLIP checkpoint (open_clip or OpenAI); None: the encoder's random initialisation
    # from `encoder_seed` (frozen: a fixed random encoder; scratch never takes weights)
    clip_weights: str | None = None
    quick_gelu: bool = True  # OpenAI CLIP's activation (False for LAION-trained open_clip weights)
    encoder_seed: int = 0  # the random initialisation of an encoder without weights
    resize: str = "crop"  # how images reach the square input: crop (CLIP's) or squash
    epochs: int = 50
    batch_size: int = 32
    lr: float = 2e-4
    warmup_steps: int = 2000  # linear warm-up from 0 to lr over this many steps, then constant
    weight_decay: float = 0.01  # AdamW's default
    encoder_lr: float | None = None  # the encoder's lr when trained (None: lr)
    train_candidates: int = 20  # K: the sample's clips and random clips of other samples
    clip_frames: int = 3  # frames averaged into a clip vector (drawn at random in training)
    tau: float = 1.0
    dropout: float = 0.1
    max_steps: int = MAX_STEPS
    min_steps: int = 1  # the stop candidate may not be picked before this many clips
    # where a frozen encoder's features are cached (None: DATASET/features)
    feature_cache: str | None = None
    feature_batch_size: int = 64

    def __post_init__(self) -> None:
        if not self.data:
            raise ValueError("data: the dataset folder is required")
        self.model = parse_model_name(self.model).name  # ValueError listing the known names
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}: one of {', '.join(STRATEGIES)}")
        if self.strategy == "finetune" and not self.clip_weights:
            raise ValueError("the finetune strategy trains given CLIP weights: give clip_weights")
        if self.strategy == "scratch" and self.clip_weights:
            raise ValueError("the scratch strategy starts from random weights: no clip_weights")
        if self.resize not in RESIZE_MODES:
            raise ValueError(f"unknown resize {self.resize!r}: one of {', '.join(RESIZE_MODES)}")
        for name in ("epochs", "batch_size", "train_candidates", "clip_frames", "max_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be 1 or more, not {getattr(self, name)}")
        if self.warmup_steps < 0 or not 0 <= self.min_steps <= self.max_steps:
            raise ValueError("warmup_steps must be 0 or more and min_steps within 0..max_steps")
        if self.lr <= 0 or self.tau <= 0:
            raise ValueError("lr and tau must be positive")

    @property
    def frozen(self) -> bool:
        return self.strategy == "frozen"

    def default_run_name(self) -> str:
        return f"{self.model}-{self.strategy}"

"""The configuration of a training run: one typed dataclass, saved as config.json in the run."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.trance.models.registry import parse_model_name
from tvr.trance.world.vocab import SETTINGS

RL_VARIANTS = ("reinforce", "paper")
RL_BASELINES = ("mean", "greedy", "none")


@dataclass
class TrainConfig:
    """Everything a run depends on. Defaults are the papers' (appendix B.1)."""

    model: str = "resnet--g"  # a name of tvr.trance.models.registry
    setting: str = "event"  # basic, event or view
    data: str = "synthetic"  # a dataset source of tvr.trance.train.data
    data_root: str | None = None  # where the source reads from (unused by "synthetic")
    image_size: tuple[int, int] = (120, 160)  # height, width fed to the model
    synthetic_sizes: dict[str, int] = field(
        default_factory=lambda: {"train": 256, "val": 64, "test": 64}
    )
    # train on a seeded random subset of this many training samples (None: the whole split), for
    # the training-size curves of the journal (Fig. 12) without making a data set per size
    train_size: int | None = None
    epochs: int = 50
    max_minutes: float | None = None  # stop fitting after this much wall time (resumes included)
    batch_size: int = 128  # in all, split over the devices
    lr: float = 1e-3
    lr_drop_epoch: int | None = None  # epoch at which lr is divided by 10; None: epochs // 2
    lr_drop_factor: float = 0.1
    translate: float = 0.05  # random translation of both images, fraction of the size
    seed: int = 2021
    num_workers: int = 0
    accelerator: str = "auto"  # auto, cpu, gpu
    devices: int | str = "auto"
    precision: str = "auto"  # auto: bf16/16 mixed on GPUs, 32 on CPU; or a Lightning value
    channels_last: bool = False  # NHWC convolutions (with bf16-mixed: 1.8-2.5x faster on Zen 4)
    # before each validation, recompute BatchNorm statistics over this many training batches with
    # the current weights (0: off, the papers' recipe; tvr.training.precise_bn says why)
    precise_bn_batches: int = 0
    output_dir: str = "runs"
    run_name: str | None = None  # default: {setting}-{model}
    resume: bool = True  # resume from checkpoints/last.ckpt when the run dir has one
    predict_split: str = "test"  # split written to predictions.jsonl (val if it is missing)
    log_every_n_steps: int = 50
    # REINFORCE fine-tuning (Table 4): start from init_checkpoint, train on simulator rewards
    reinforce: bool = False
    reward: str = "both"  # corr, dist or both
    rl_variant: str = "reinforce"  # reinforce (policy gradient) or paper (reward-weighted CE)
    rl_samples: int = 4  # sequences sampled per sample
    rl_baseline: str = "mean"  # mean (of the other samples), greedy (self-critical) or none
    init_checkpoint: str | None = None

    def __post_init__(self) -> None:
        self.image_size = (int(self.image_size[0]), int(self.image_size[1]))
        parse_model_name(self.model)  # ValueError listing the known names
        if self.setting not in SETTINGS:
            raise ValueError(f"unknown setting {self.setting!r}")
        if self.rl_variant not in RL_VARIANTS:
            raise ValueError(f"unknown rl_variant {self.rl_variant!r}: one of {RL_VARIANTS}")
        if self.rl_baseline not in RL_BASELINES:
            raise ValueError(f"unknown rl_baseline {self.rl_baseline!r}: one of {RL_BASELINES}")
        if self.train_size is not None and int(self.train_size) < 1:
            raise ValueError(
                f"train_size must be a positive number of samples, not {self.train_size}"
            )
        if self.reinforce and self.setting == "basic":
            raise ValueError("REINFORCE fine-tuning is for sequences (event, view)")

    @property
    def drop_epoch(self) -> int:
        return self.lr_drop_epoch if self.lr_drop_epoch is not None else max(self.epochs // 2, 1)

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / (self.run_name or f"{self.setting}-{self.model}")

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["image_size"] = list(self.image_size)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrainConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return cls(**d)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))

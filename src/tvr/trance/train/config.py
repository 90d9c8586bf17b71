"""The configuration of a training run: one typed dataclass, saved as config.json in the run."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import write_json
from tvr.core.typed_config import bounded, typed_values
from tvr.trance.models.registry import (
    DECODER_FORMS,
    DUDA_FORMS,
    LEGACY_FORMS,
    parse_model_name,
)
from tvr.trance.world.vocab import SETTINGS

RL_VARIANTS = ("reinforce", "paper")
RL_BASELINES = ("mean", "greedy", "none")
#: fields a run may change when it resumes: how long and at which lr it trains, on what hardware,
#: how it logs and where it is named from. Any other difference makes it another run.
RESUMABLE_FIELDS = frozenset(
    {
        "epochs",
        "max_minutes",
        "lr",
        "lr_drop_epoch",
        "lr_drop_factor",
        "num_workers",
        "accelerator",
        "devices",
        "precision",
        "channels_last",
        "output_dir",
        "run_name",
        "resume",
        "predict_split",
        "log_every_n_steps",
    }
)
_PATH_FIELDS = ("data_root", "init_checkpoint")


@dataclass
class TrainConfig:
    """Everything a run depends on. Defaults are the papers' (appendix B.1)."""

    model: str = "resnet--g"  # a name of tvr.trance.models.registry
    # the forms of the -T decoder and of DUDA (docs/models.md): "original" is the paper's model;
    # "tvr" is tvr's first one, which a saved config without these fields gets (from_saved)
    decoder_form: str = "original"
    duda_form: str = "original"
    setting: str = "event"  # basic, event or view
    # a dataset source of tvr.trance.train.data; None: "trance" when data_root is given, else
    # "synthetic" (the small drawn set of the tests; `tvr train` asks for it by name)
    data: str | None = None
    data_root: str | None = None  # where the source reads from (none for "synthetic")
    image_size: tuple[int, int] = (120, 160)  # height, width fed to the model
    synthetic_sizes: dict[str, int] = field(
        default_factory=lambda: {"train": 256, "val": 64, "test": 64}
    )
    # train on a seeded random subset of this many training samples (None: the whole split), for
    # the training-size curves of the journal (Fig. 12) without making a data set per size
    train_size: int | None = None
    epochs: int = bounded(50, 0)
    max_minutes: float | None = None  # stop fitting after this much wall time (resumes included)
    batch_size: int = bounded(128, 1)  # in all, split over the devices
    lr: float = 1e-3
    lr_drop_epoch: int | None = None  # epoch at which lr is divided by 10; None: epochs // 2
    lr_drop_factor: float = 0.1
    translate: float = 0.05  # random translation of both images, fraction of the size
    seed: int = 2021
    num_workers: int = bounded(0, 0)
    accelerator: str = "auto"  # auto, cpu, gpu
    devices: int | str = "auto"
    precision: str = "auto"  # auto: bf16/16 mixed on GPUs, 32 on CPU; or a Lightning value
    channels_last: bool = False  # NHWC convolutions (with bf16-mixed: 1.8-2.5x faster on Zen 4)
    # before each validation, recompute BatchNorm statistics over this many training batches with
    # the current weights (0: off, the papers' recipe; tvr.training.precise_bn says why)
    precise_bn_batches: int = bounded(0, 0)
    output_dir: str = "runs"
    run_name: str | None = None  # default: {setting}-{model}; REINFORCE: see default_run_name
    resume: bool = True  # resume from checkpoints/last.ckpt when the run dir has one
    predict_split: str = "test"  # split written to predictions.jsonl (val if it is missing)
    log_every_n_steps: int = 50  # Lightning's logging interval, in training steps
    # REINFORCE fine-tuning (Table 4): start from init_checkpoint, train on simulator rewards
    reinforce: bool = False
    reward: str = "both"  # corr, dist or both
    rl_variant: str = "reinforce"  # reinforce (policy gradient) or paper (reward-weighted CE)
    rl_samples: int = bounded(4, 1)  # sequences sampled per sample
    rl_baseline: str = "mean"  # mean (of the other samples), greedy (self-critical) or none
    init_checkpoint: str | None = None

    def __post_init__(self) -> None:
        self.image_size = (int(self.image_size[0]), int(self.image_size[1]))
        if self.data is None:
            self.data = "trance" if self.data_root else "synthetic"
        if self.data == "synthetic" and self.data_root:
            raise ValueError(
                f"the synthetic source is drawn in memory and reads no --data-root "
                f"({self.data_root}): leave out --data synthetic to train on the dataset there"
            )
        if int(self.log_every_n_steps) < 1:
            raise ValueError(f"log_every_n_steps must be 1 or more, not {self.log_every_n_steps}")
        parse_model_name(self.model)  # ValueError listing the known names
        if self.decoder_form not in DECODER_FORMS:
            raise ValueError(f"unknown decoder_form {self.decoder_form!r}: one of {DECODER_FORMS}")
        if self.duda_form not in DUDA_FORMS:
            raise ValueError(f"unknown duda_form {self.duda_form!r}: one of {DUDA_FORMS}")
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
        return Path(self.output_dir) / (self.run_name or self.default_run_name())

    def default_run_name(self) -> str:
        """`{setting}-{model}`; a REINFORCE fine-tune gets `{base}-reinforce-{reward}` (with
        `-paper` before the reward for that variant), where `base` is the name of the run whose
        checkpoint it starts from (`.../<base>/checkpoints/x.ckpt`), else `{setting}-{model}`: a
        fine-tune never takes the folder of the run it starts from."""
        name = f"{self.setting}-{self.model}"
        if not self.reinforce:
            return name
        ckpt = Path(self.init_checkpoint) if self.init_checkpoint else None
        if ckpt is not None and ckpt.parent.name == "checkpoints" and ckpt.parent.parent.name:
            name = ckpt.parent.parent.name
        variant = "reinforce" if self.rl_variant == "reinforce" else f"reinforce-{self.rl_variant}"
        return f"{name}-{variant}-{self.reward}"

    def differences(self, other: TrainConfig) -> list[str]:
        """`field (here X, there Y)` for each field outside RESUMABLE_FIELDS in which `other`
        differs: empty when `other` is the same run (and may resume it)."""
        mine, theirs = self.to_dict(), other.to_dict()
        out = []
        for name in mine:
            if name in RESUMABLE_FIELDS:
                continue
            a, b = mine[name], theirs[name]
            if name in _PATH_FIELDS and a is not None and b is not None:
                a, b = os.path.normpath(a), os.path.normpath(b)
            if a != b:
                out.append(f"{name} ({mine[name]!r} there, {theirs[name]!r} here)")
        return out

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["image_size"] = list(self.image_size)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "config") -> TrainConfig:
        """The config of `d`; ValueError naming unknown keys, UserError naming `where`, the key
        and the expected type (`tvr.core.typed_config`)."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected an object of training options")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return cls(**typed_values(cls, d, where))

    @classmethod
    def from_saved(cls, d: dict[str, Any], where: str = "config") -> TrainConfig:
        """A config as a run saved it (config.json, a checkpoint): the model forms it lacks are
        the ones it was trained with, those of before the forms existed."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected an object of training options")
        return cls.from_dict({**LEGACY_FORMS, **d}, where)

    def save(self, path: str | Path) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> TrainConfig:
        return cls.from_saved(json.loads(Path(path).read_text()), str(path))

"""The typed config of `tvr clevrer generate`, saved as config.json beside the set."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from tvr.clevrer.questions.generate import QuestionConfig
from tvr.clevrer.world.config import WorldConfig
from tvr.core.errors import UserError
from tvr.core.typed_config import build_config

BACKENDS = ("raster", "cycles", "none")
SPLIT_NAMES = ("train", "validation", "test")


@dataclass(frozen=True)
class GenerateConfig:
    """A CLEVRER set: `num` videos from `seed`, simulated, asked about and (maybe) rendered.

    Args:
        num: videos, numbered 0..num-1.
        seed: every video is drawn from (seed, index) alone.
        shard_size: videos per symbolic shard (its question balance is the shard's own: 100
            videos balance each template family over some 10 questions).
        splits: shares of train / validation / test, in index order (the release: 0.5 / 0.25 /
            0.25 of its 20,000 videos).
        backend: "raster" (default), "cycles" or "none" (symbolic only).
        preset: the renderer's quality preset.
        dynamics: write ground-truth dynamics (every frame, every counterfactual run) per video
            in the official predicted-dynamics layout (what the oracle executor reads).
        masks: write per-frame object masks (COCO RLE) in the official mask-proposals layout.
        world, questions: the world's and the question generator's settings.
    """

    num: int = 200
    seed: int = 0
    shard_size: int = 100
    splits: tuple[float, float, float] = (0.5, 0.25, 0.25)
    backend: str = "raster"
    preset: str = "default"
    dynamics: bool = True
    masks: bool = True
    world: WorldConfig = field(default_factory=WorldConfig)
    questions: QuestionConfig = field(default_factory=QuestionConfig)

    def validate(self) -> GenerateConfig:
        if self.num < 1:
            raise UserError(f"--num must be at least 1, got {self.num}")
        if self.shard_size < 1:
            raise UserError(f"--shard-size must be at least 1, got {self.shard_size}")
        if self.backend not in BACKENDS:
            raise UserError(f"--backend must be one of {', '.join(BACKENDS)}, got {self.backend!r}")
        from tvr.clevrer.render.presets import PRESETS

        if self.preset not in PRESETS:
            raise UserError(f"--preset must be one of {', '.join(PRESETS)}, got {self.preset!r}")
        if len(self.splits) != 3 or any(s < 0 for s in self.splits) or sum(self.splits) <= 0:
            raise UserError(f"--splits must be three shares >= 0 (train validation test), got {self.splits}")
        return self

    @property
    def num_shards(self) -> int:
        return -(-self.num // self.shard_size)

    def shard_range(self, shard: int) -> range:
        start = shard * self.shard_size
        return range(start, min(self.num, start + self.shard_size))

    def split_ranges(self) -> dict[str, range]:
        """Consecutive index ranges of the splits (empty splits left out)."""
        total = sum(self.splits)
        bounds = [0]
        for share in self.splits[:-1]:
            bounds.append(bounds[-1] + round(self.num * share / total))
        bounds.append(self.num)
        return {
            name: range(bounds[k], bounds[k + 1])
            for k, name in enumerate(SPLIT_NAMES)
            if bounds[k + 1] > bounds[k]
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples as lists), as config.json holds them."""
        return json.loads(json.dumps(asdict(self)))

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "config") -> GenerateConfig:
        """The config of `d` (a config.json): keys and types checked, the world's and the
        questions' tables too (`tvr.core.typed_config`, UserError naming `where` and the key),
        then validated."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected an object of options")
        d = dict(d)
        world = build_config(WorldConfig, d.pop("world", {}), where, "world", "world.")
        questions = build_config(QuestionConfig, d.pop("questions", {}), where, "question",
                                 "questions.")  # fmt: skip
        return build_config(cls, d, where, world=world, questions=questions)

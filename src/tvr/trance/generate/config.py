"""The typed configuration of `tvr generate` (an image dataset), its file form and its checks.

Everything that shapes the data lives in `DatasetConfig` and is saved as DIR/config.json; how the
job runs (workers, Ray) does not change the data and is not part of it. A config file (JSON or
TOML) holds any of the fields below, with the sampler's options in a `sampler` table; unknown
keys, bad values and unknown names fail before any work with a message naming the option.

Splits: `split_sizes` gives the size of each split (train, val, test) explicitly; otherwise `num`
samples are divided in the public release's proportions (500,000 / 10,000 / 20,000, i.e.
`split_ratio` 50:1:2), each non-empty ratio getting at least one sample. Split `k` of
(train, val, test) is sampled with seed `3 * seed + k`, so splits never share a random stream,
and neither do the splits of datasets of different seeds.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.typed_config import build_config
from tvr.trance.data.store import STORE_FORMAT
from tvr.trance.render.images import BACKENDS
from tvr.trance.render.presets import PRESETS
from tvr.trance.sampling.sampler import LEGACY_BALANCE_SCOPE, SamplerConfig, check_balance_scope
from tvr.trance.world.vocab import SETTINGS

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: tomli, the same parser (a dependency there)
    import tomli as tomllib

SPLITS = ("train", "val", "test")
RESIZE_FILTERS = ("box", "lanczos", "bilinear", "bicubic")
MIN_IMAGE_SIDE = 32


def split_seed(seed: int, split: str) -> int:
    """The sampler seed of one split of a dataset made with `seed`."""
    return 3 * seed + SPLITS.index(split)


#: config fields set by a command-line flag of another name
_FLAGS = {
    "image_width": "--image-size",
    "image_height": "--image-size",
    "small_width": "--small-size",
    "small_height": "--small-size",
}


def _option(name: str) -> str:
    """How an error names a field: the config key and the `tvr generate` flag that sets it."""
    flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
    return f"option '{name}' ({flag})"


@dataclass(frozen=True)
class DatasetConfig:
    """Everything that fixes the data of a generated dataset (saved as DIR/config.json)."""

    setting: str = "event"
    num: int | None = None  # total samples, divided by split_ratio (when split_sizes is None)
    split_sizes: dict[str, int] | None = None  # explicit sizes; resolved ones are saved
    split_ratio: dict[str, float] = field(
        default_factory=lambda: {"train": 50.0, "val": 1.0, "test": 2.0}
    )
    seed: int = 0
    shard_size: int = 100  # samples per shard: the unit of work, resume and integrity checks
    backend: str = "raster"  # raster (moderngl/EGL) or cycles (bpy)
    preset: str = "default"  # preview, default or paper
    image_width: int = 320  # the full-size PNGs
    image_height: int = 240
    small_width: int = 160  # the training copy kept as a raw uint8 array (the papers' size)
    small_height: int = 120
    resize_filter: str = "box"  # PIL filter making the small copy (box = area average)
    png_compress_level: int = 3  # zlib level of the PNGs (0..9; tvr.core.png)
    source: str = "generated"  # "generated", or "release" for a store imported from the release
    sampler: SamplerConfig = field(default_factory=SamplerConfig)
    # "global": shard s of a split starts from the balance counts of shards 0..s-1 (the paper's
    # balance over the whole split); "shard": every shard is balanced on its own (older datasets,
    # whose config.json has no such field)
    balance_scope: str = "global"

    def __post_init__(self) -> None:
        # Basic is one step per sample: the sampler's default 1..4 steps become 1..1
        if self.setting == "basic" and (self.sampler.min_steps, self.sampler.max_steps) == (1, 4):
            object.__setattr__(
                self, "sampler", dataclasses.replace(self.sampler, min_steps=1, max_steps=1)
            )

    # --- checks ----------------------------------------------------------------------------------
    def validate(self) -> DatasetConfig:
        """Raise UserError naming the first bad option; returns self."""
        if self.setting not in SETTINGS:
            raise UserError(
                f"{_option('setting')}: unknown setting {self.setting!r}; "
                f"expected one of {', '.join(SETTINGS)}"
            )
        if self.num is not None and (not isinstance(self.num, int) or self.num < 1):
            raise UserError(f"{_option('num')}: must be a positive integer, got {self.num!r}")
        if self.split_sizes is not None:
            if not isinstance(self.split_sizes, dict) or not self.split_sizes:
                raise UserError(f"{_option('split_sizes')}: expected e.g. train=100,val=10,test=20")
            for name, n in self.split_sizes.items():
                if name not in SPLITS:
                    raise UserError(
                        f"{_option('split_sizes')}: unknown split {name!r}; splits are "
                        f"{', '.join(SPLITS)}"
                    )
                if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                    raise UserError(
                        f"{_option('split_sizes')}: size of {name!r} must be 0 or more, got {n!r}"
                    )
            if sum(self.split_sizes.values()) < 1:
                raise UserError(f"{_option('split_sizes')}: the splits hold no sample")
            if self.num is not None and self.num != sum(self.split_sizes.values()):
                raise UserError(
                    f"{_option('num')} ({self.num}) differs from the sum of "
                    f"{_option('split_sizes')} ({sum(self.split_sizes.values())})"
                )
        elif self.num is None:
            raise UserError(f"{_option('num')}: give the number of samples (or split_sizes)")
        for name, r in self.split_ratio.items():
            if name not in SPLITS or not isinstance(r, int | float) or r < 0:
                raise UserError(
                    f"{_option('split_ratio')}: expected non-negative numbers for "
                    f"{', '.join(SPLITS)}, got {name!r}: {r!r}"
                )
        if not self.split_ratio.get("train"):
            raise UserError(f"{_option('split_ratio')}: train needs a positive share")
        if not isinstance(self.shard_size, int) or self.shard_size < 1:
            raise UserError(f"{_option('shard_size')}: must be at least 1, got {self.shard_size!r}")
        if self.backend not in BACKENDS:
            raise UserError(
                f"{_option('backend')}: unknown backend {self.backend!r}; "
                f"expected one of {', '.join(BACKENDS)}"
            )
        if self.preset not in PRESETS:
            raise UserError(
                f"{_option('preset')}: unknown preset {self.preset!r}; "
                f"expected one of {', '.join(PRESETS)}"
            )
        for name in ("image_width", "image_height", "small_width", "small_height"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < MIN_IMAGE_SIDE:
                raise UserError(
                    f"{_option(name)}: image sides must be at least {MIN_IMAGE_SIDE} px, got {v!r}"
                )
        if self.small_width > self.image_width or self.small_height > self.image_height:
            raise UserError(
                f"{_option('small_width')}/{_option('small_height')}: the small copy "
                f"({self.small_width}x{self.small_height}) is larger than the full images "
                f"({self.image_width}x{self.image_height})"
            )
        if self.resize_filter not in RESIZE_FILTERS:
            raise UserError(
                f"{_option('resize_filter')}: unknown filter {self.resize_filter!r}; "
                f"expected one of {', '.join(RESIZE_FILTERS)}"
            )
        if not isinstance(self.png_compress_level, int) or not 0 <= self.png_compress_level <= 9:
            raise UserError(
                f"{_option('png_compress_level')}: must be 0..9, got {self.png_compress_level!r}"
            )
        if self.source not in ("generated", "release"):
            raise UserError(f"{_option('source')}: 'generated' or 'release', got {self.source!r}")
        self.sampler.validate()
        check_balance_scope(self.balance_scope)
        if self.setting == "basic" and (self.sampler.min_steps, self.sampler.max_steps) != (1, 1):
            raise UserError(
                "the basic setting has exactly one step per sample: sampler min_steps and "
                "max_steps must be 1"
            )
        return self

    # --- derived ---------------------------------------------------------------------------------
    def resolved_sizes(self) -> dict[str, int]:
        """The size of every split (train, val, test), from split_sizes or num and split_ratio."""
        if self.split_sizes is not None:
            return {s: int(self.split_sizes.get(s, 0)) for s in SPLITS}
        n = int(self.num or 0)
        total = sum(float(self.split_ratio.get(s, 0.0)) for s in SPLITS)
        sizes = {}
        for s in SPLITS[1:]:
            r = float(self.split_ratio.get(s, 0.0))
            sizes[s] = max(1, round(n * r / total)) if r > 0 and n >= len(SPLITS) else 0
        sizes["train"] = n - sum(sizes.values())
        if sizes["train"] < 1:
            raise UserError(f"{_option('num')}: {n} samples leave none for the train split")
        return {s: sizes[s] for s in SPLITS}

    def resolved(self) -> DatasetConfig:
        """This config with the split sizes written out (the form saved in config.json)."""
        sizes = self.resolved_sizes()
        return dataclasses.replace(self, split_sizes=sizes, num=sum(sizes.values())).validate()

    def num_shards(self, split: str) -> int:
        return -(-self.resolved_sizes()[split] // self.shard_size)

    def shard_count(self, split: str, shard: int) -> int:
        n = self.resolved_sizes()[split]
        return max(0, min(self.shard_size, n - shard * self.shard_size))

    def shards(self) -> list[tuple[str, int, int]]:
        """(split, shard, number of samples) of every shard, train first."""
        return [
            (split, k, self.shard_count(split, k))
            for split in SPLITS
            for k in range(self.num_shards(split))
        ]

    # --- dict and file forms ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["sampler"] = self.sampler.to_dict()
        d["format"] = STORE_FORMAT
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "config") -> DatasetConfig:
        """A config from a dict (a config file, or a saved config.json); UserError naming `where`
        and the key for anything unknown or badly typed."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected a table/object of options")
        d = dict(d)
        d.pop("format", None)
        sampler = d.pop("sampler", {})
        known = {f.name for f in dataclasses.fields(cls)} - {"sampler"}
        unknown = sorted(set(d) - known)
        if unknown:
            raise UserError(
                f"{where}: unknown option(s) {unknown}; known: {sorted(known | {'sampler'})}"
            )
        if not isinstance(sampler, dict):
            raise UserError(f"{where}: 'sampler' must be a table of sampler options")
        bad_sampler = sorted(set(sampler) - set(SamplerConfig.__dataclass_fields__))
        if bad_sampler:
            raise UserError(
                f"{where}: unknown sampler option(s) {bad_sampler}; known: "
                f"{sorted(SamplerConfig.__dataclass_fields__)}"
            )
        for key in ("split_sizes", "split_ratio"):
            if key in d and d[key] is not None and not isinstance(d[key], dict):
                raise UserError(f"{where}: {_option(key)} must be a table such as train=100")
        sampler_config = SamplerConfig.from_dict(sampler, where, prefix="sampler.")
        return build_config(cls, d, where, sampler=sampler_config)


def saved_balance_scope(saved: dict[str, Any]) -> str:
    """The balance scope of a saved config.json ("shard" for data made before the option)."""
    return str(saved.get("balance_scope", LEGACY_BALANCE_SCOPE))


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The options of a JSON or TOML config file (a dict), UserError naming the file if unreadable."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"--config {path}: no such file")
    try:
        if path.suffix.lower() == ".toml":
            with path.open("rb") as f:
                data = tomllib.load(f)
        else:
            data = json.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise UserError(f"--config {path}: cannot read it: {err}") from None
    if not isinstance(data, dict):
        raise UserError(f"--config {path}: expected a table/object of options")
    return data

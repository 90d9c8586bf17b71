"""Making a symbolic sample set in shards: parallel processes, atomic shard files, resume.

Layout of an output folder:
    config.json          the job's config (sampler options, seed, sizes): enough to remake it
    shards/shard-00003.jsonl   one file per shard, written atomically when the shard is done
    samples.jsonl        all samples in shard order (written last)
    balance.json         the balance statistics of all samples

A rerun with the same config skips the shards already on disk, so a killed job loses at most the
shards in progress and ends with the same data as an uninterrupted run.

Balance scope: "global" (default, the paper's) samples the shards one after another, each from
the balance counts of all earlier shards (`tvr.trance.sampling.sampler.ShardChain`); a rerun rebuilds the
counts from the finished shard files. It runs in one process, whatever `workers` says. "shard"
balances every shard on its own, so shards run in parallel (`workers`), but the shards' small
imbalances add up (docs/report.md). A config.json without the field is "shard" (older data).
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tvr.core.errors import UserError
from tvr.core.jsonl import write_json
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.data.sample import Sample
from tvr.trance.sampling.sampler import (
    LEGACY_BALANCE_SCOPE,
    SamplerConfig,
    ShardChain,
    ShardSampler,
    check_balance_scope,
)
from tvr.trance.sampling.stats import balance_stats
from tvr.trance.world.vocab import SETTINGS


@dataclass(frozen=True)
class GenerateConfig:
    """A symbolic generation job."""

    num: int = 100
    seed: int = 0
    shard_size: int = 500
    setting: str = "event"
    sampler: SamplerConfig = field(default_factory=SamplerConfig)
    balance_scope: str = "global"  # "global": shards chain their balance counts; "shard": not

    def validate(self) -> GenerateConfig:
        check_balance_scope(self.balance_scope)
        if self.num < 1:
            raise UserError(f"--num must be at least 1, got {self.num}")
        if self.shard_size < 1:
            raise UserError(f"--shard-size must be at least 1, got {self.shard_size}")
        if self.setting not in SETTINGS:
            raise UserError(f"--setting must be one of {list(SETTINGS)}, got {self.setting!r}")
        if self.setting == "basic" and (self.sampler.min_steps, self.sampler.max_steps) != (1, 1):
            raise UserError("the basic setting has exactly one step per sample")
        self.sampler.validate()
        return self

    @classmethod
    def for_setting(cls, setting: str, **kw: Any) -> GenerateConfig:
        sampler = kw.pop("sampler", SamplerConfig())
        if setting == "basic":
            sampler = SamplerConfig(
                **{
                    **sampler.to_dict(),
                    "min_steps": 1,
                    "max_steps": 1,
                    "attributes": tuple(sampler.attributes),
                }
            )
        return cls(setting=setting, sampler=sampler, **kw).validate()

    @property
    def num_shards(self) -> int:
        return -(-self.num // self.shard_size)

    def shard_range(self, shard: int) -> range:
        start = shard * self.shard_size
        return range(start, min(self.num, start + self.shard_size))

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sampler"] = self.sampler.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GenerateConfig:
        d = dict(d)
        sampler = SamplerConfig.from_dict(d.pop("sampler", {}))
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise UserError(f"unknown option(s) in config: {sorted(unknown)}")
        return cls(sampler=sampler, **d).validate()


def shard_path(out: Path, shard: int) -> Path:
    return out / "shards" / f"shard-{shard:05d}.jsonl"


def make_shard(config: GenerateConfig, shard: int) -> list[Sample]:
    """The samples of one shard; deterministic from (config, shard)."""
    sampler = ShardSampler(config.sampler, config.seed, shard)
    return [sampler.sample(i) for i in range(len(config.shard_range(shard)))]


def _shard_job(config_dict: dict[str, Any], shard: int, out: str) -> tuple[int, int]:
    config = GenerateConfig.from_dict(config_dict)
    samples = make_shard(config, shard)
    write_samples(shard_path(Path(out), shard), samples)
    return shard, len(samples)


def _complete(out: Path, config: GenerateConfig, shard: int) -> bool:
    path = shard_path(out, shard)
    if not path.is_file():
        return False
    with path.open(encoding="utf-8") as f:
        return sum(1 for line in f if line.strip()) == len(config.shard_range(shard))


def _run_chain(config: GenerateConfig, out: Path, todo: set[int], bar: tqdm) -> None:
    """Global balance: the shards in order, the missing ones sampled from the counts of all
    earlier shards, the finished ones read back and counted."""
    chain = ShardChain(config.sampler, config.seed)
    for s in range(max(todo) + 1):
        if s in todo:
            samples = chain.sample(s, len(config.shard_range(s)))
            write_samples(shard_path(out, s), samples)
            bar.update(len(samples))
        else:
            chain.record(s, read_samples(shard_path(out, s)))


def generate(
    config: GenerateConfig, out: str | Path, workers: int = 1, progress: bool = True
) -> Path:
    """Make (or finish) the sample set of `config` in folder `out`; returns samples.jsonl."""
    config.validate()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    if cfg_path.exists():
        old = json.loads(cfg_path.read_text())
        if isinstance(old, dict):
            old.setdefault("balance_scope", LEGACY_BALANCE_SCOPE)
        if old != config.to_dict():
            raise UserError(
                f"{out} already holds data made with another config ({cfg_path}); "
                "choose another --out or the same options"
            )
    else:
        write_json(cfg_path, config.to_dict())
    todo = [s for s in range(config.num_shards) if not _complete(out, config, s)]
    bar = tqdm(total=config.num, disable=not progress, unit="sample", desc="sampling")
    bar.update(config.num - sum(len(config.shard_range(s)) for s in todo))
    if config.balance_scope == "global" and todo:
        _run_chain(config, out, set(todo), bar)
    elif workers <= 1 or len(todo) <= 1:
        for s in todo:
            _, n = _shard_job(config.to_dict(), s, str(out))
            bar.update(n)
    else:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo), os.cpu_count() or 1)) as pool:
            futures = [pool.submit(_shard_job, config.to_dict(), s, str(out)) for s in todo]
            for fut in as_completed(futures):
                _, n = fut.result()
                bar.update(n)
    bar.close()
    samples: list[Sample] = []
    for s in range(config.num_shards):
        samples.extend(read_samples(shard_path(out, s)))
    final = out / "samples.jsonl"
    write_samples(final, samples)
    write_json(out / "balance.json", balance_stats(samples))
    return final

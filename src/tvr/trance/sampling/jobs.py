"""`tvr sample`: a symbolic sample set made in shards on the job engine (`tvr.core.jobs`).

Layout of an output folder:
    config.json          the job's config (sampler options, seed, sizes): enough to remake it
    shards/shard-00003.jsonl   one file per shard, written atomically when the shard is done
    samples.jsonl        all samples in shard order (written last)
    samples.ref.npz      the reference arrays `tvr evaluate` reads (tvr.trance.eval.references)
    balance.json         the balance statistics of all samples

Each shard file is written under a temporary name and renamed when complete (`tvr.core.jobs`); a
rerun with the same config skips the shards already on disk, so a killed job loses at most the
shards in progress and ends with the same data as an uninterrupted run.

Balance scope: "global" (default, the paper's) samples the shards one after another, each from
the balance counts of all earlier shards (`tvr.trance.sampling.sampler.chain_shards`); a rerun
rebuilds the counts from the finished shard files. It runs in one process, whatever `workers`
says. "shard" balances every shard on its own, so shards run in parallel (`workers`), but the
shards' small imbalances add up (docs/report.md). A config.json without the field is "shard"
(older data).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from tvr.core.errors import UserError
from tvr.core.jobs import pending, run_shards
from tvr.core.jsonl import write_json
from tvr.core.manifest import check_same_config, save_config
from tvr.core.typed_config import build_config
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.data.sample import Sample
from tvr.trance.eval.references import write_reference_cache
from tvr.trance.sampling.sampler import (
    SamplerConfig,
    ShardSampler,
    chain_shards,
    check_balance_scope,
    with_legacy_options,
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
    def from_dict(cls, d: dict[str, Any], where: str = "config") -> GenerateConfig:
        """The config of `d` (a config.json), checked by `tvr.core.typed_config` (UserError
        naming `where` and the key)."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected an object of sampling options")
        d = dict(d)
        sampler = SamplerConfig.from_dict(d.pop("sampler", {}), where, prefix="sampler.")
        return build_config(cls, d, where, sampler=sampler)


def shard_path(out: Path, shard: int) -> Path:
    return out / "shards" / f"shard-{shard:05d}.jsonl"


def make_shard(config: GenerateConfig, shard: int) -> list[Sample]:
    """The samples of one shard; deterministic from (config, shard)."""
    sampler = ShardSampler(config.sampler, config.seed, shard)
    return [sampler.sample(i) for i in range(len(config.shard_range(shard)))]


@dataclass
class SampleJob:
    """One shard to write; `samples` None: the worker samples it (balance scope "shard")."""

    key: int
    samples: list[Sample] | None = None


class SampleWorker:
    """Writes a shard's samples.jsonl file (sampling it first under balance scope "shard")."""

    def __init__(self, config: GenerateConfig) -> None:
        self.config = config

    def build(self, job: SampleJob, dest: Path, progress: Callable[[int], None]) -> None:
        samples = make_shard(self.config, job.key) if job.samples is None else job.samples
        write_samples(dest, samples)
        progress(len(samples))

    def close(self) -> None:
        pass


@dataclass
class SampleTask:
    """`tvr sample` as a `tvr.core.jobs.ShardTask`: shard k is the file shards/shard-0000k.jsonl."""

    config: GenerateConfig
    out: Path

    @property
    def name(self) -> str:
        return f"sample {self.out}"

    def plan(self) -> list[int]:
        return list(range(self.config.num_shards))

    def path(self, key: int) -> Path:
        return shard_path(self.out, key)

    def is_built(self, key: int) -> bool:
        path = self.path(key)
        if not path.is_file():
            return False
        with path.open(encoding="utf-8") as f:
            return sum(1 for line in f if line.strip()) == len(self.config.shard_range(key))

    def label(self, key: int) -> str:
        return self.path(key).stem

    def prepare(self) -> None:
        save_config(self.out, self.config.to_dict())
        # leftovers of a killed run: the shards' ones are the engine's, these the final files'
        # and older versions' shard files'
        for pattern in (".samples.jsonl.*", ".balance.json.*", "shards/.shard-*.jsonl.*"):
            for tmp in self.out.glob(pattern):
                tmp.unlink(missing_ok=True)

    def jobs(self, todo: list[int]) -> Iterator[SampleJob]:
        """Global balance: the chain samples each shard here, from the counts of the earlier
        ones (the finished ones read back); scope "shard": the workers sample."""
        if self.config.balance_scope != "global":
            yield from (SampleJob(k) for k in todo)
            return
        chain = chain_shards(
            self.config.sampler, self.config.seed, todo,
            lambda k: len(self.config.shard_range(k)),
            lambda k: read_samples(self.path(k)),
        )  # fmt: skip
        for k, samples, _ in chain:
            yield SampleJob(k, samples)

    def make_worker(self, threads: int | None) -> SampleWorker:
        return SampleWorker(self.config)


def generate(
    config: GenerateConfig, out: str | Path, workers: int = 1, progress: bool = True
) -> Path:
    """Make (or finish) the sample set of `config` in folder `out`; returns samples.jsonl."""
    config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), legacy=with_legacy_options, name_options=False)
    task = SampleTask(config, out)
    todo = pending(task)
    bar = tqdm(total=config.num, disable=not progress, unit="sample", desc="sampling")
    bar.update(config.num - sum(len(config.shard_range(s)) for s in todo))
    # global balance samples the shards one after another: the sampling is the work, so in
    # this process whatever `workers` says
    parallel = 1 if config.balance_scope == "global" else min(workers, os.cpu_count() or 1)
    try:
        run_shards(task, todo, workers=parallel, progress=bar.update)
    finally:
        bar.close()
    samples: list[Sample] = []
    for s in range(config.num_shards):
        samples.extend(read_samples(shard_path(out, s)))
    final = out / "samples.jsonl"
    write_samples(final, samples)
    write_json(out / "balance.json", balance_stats(samples))
    write_reference_cache(final)  # samples.ref.npz: what `tvr evaluate` reads (tvr.trance.eval)
    return final

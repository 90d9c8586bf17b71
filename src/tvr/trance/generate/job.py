"""`tvr generate`: sample, render and store a TRANCE image dataset, shard by shard, resumable.

A shard is deterministic from (seed, split, shard): its samples come from a `ShardSampler` with
the split's seed (`dataset_config.split_seed`), View samples draw their final view from
(split seed, shard), and rendering is deterministic per backend. So a dataset made by one process,
by K worker processes or by a Ray cluster of ten machines is the same.

Balance scope "global" (default): shard s of a split starts from the balance counts of shards
0..s-1 (`tvr.trance.sampling.sampler.chain_shards`), so the driver samples the shards one after
another, a few shards ahead of the render workers, and hands each shard's samples to a worker; a
rerun rebuilds the counts from the finished shards' samples.jsonl and samples the missing shards
again (the same samples: a shard is deterministic from its seed and its starting counts). Scope
"shard": each worker samples its shard from zero counts.

The job runs on the engine of `tvr.core.jobs` (`DatasetTask`): each shard is written into a
temporary folder (samples.jsonl, PNGs, the small uint8 array, manifest.json last) and renamed into
place when complete; a rerun with the same config skips the finished shards, so a job killed at
any moment loses only the shards in progress. Worker processes start with `spawn` (bpy and EGL do
not survive a fork) and keep one renderer each. On Ray, actors build shards in their own
temporary folders and send the files back to the driver, which writes them: the machines need no
shared file system.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core import jobs as engine
from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.jsonl import write_json
from tvr.core.manifest import check_same_config as check_saved_config
from tvr.core.manifest import save_config
from tvr.core.png import encode_png
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.data.sample import Sample
from tvr.trance.data.store import (
    IMAGES_DIR,
    MANIFEST_FILE,
    SAMPLES_FILE,
    SHARD_FORMAT,
    SMALL_FILE,
    SPLIT_FORMAT,
    TranceDataset,
    open_dataset,
    sha256_file,
    shard_name,
    shards_dir,
)
from tvr.trance.eval.references import write_reference_cache
from tvr.trance.generate.config import SPLITS, DatasetConfig, split_seed
from tvr.trance.render.scene import sample_views
from tvr.trance.sampling.sampler import (
    ShardChain,
    ShardSampler,
    chain_shards,
    with_legacy_options,
)
from tvr.trance.world.vocab import IMAGE_SLOTS, VIEWS

VIEW_STREAM = 0x7669  # extra entry of the View draw's seed, apart from the sampler's streams


# --- one shard ---------------------------------------------------------------------------------
def shard_samples(
    config: DatasetConfig, split: str, shard: int, chain: ShardChain | None = None
) -> list[Sample]:
    """The samples of one shard (View samples carry `extra["view"]`): from `chain` (global
    balance: the split's chain, at this shard) or from zero counts (balance scope "shard")."""
    count = config.shard_count(split, shard)
    if chain is not None:
        samples = chain.sample(shard, count)
    else:
        sampler = ShardSampler(config.sampler, split_seed(config.seed, split), shard)
        samples = [sampler.sample(i) for i in range(count)]
    return draw_views(config, split, shard, samples)


def draw_views(config: DatasetConfig, split: str, shard: int, samples: list[Sample]) -> list[Sample]:
    """View samples: each gets its final view (`extra["view"]`), drawn from (split seed, shard)."""
    if config.setting == "view":
        seed = split_seed(config.seed, split)
        views = np.random.default_rng([seed, shard, VIEW_STREAM]).integers(0, 3, len(samples))
        for s, v in zip(samples, views, strict=True):
            s.extra["view"] = VIEWS[int(v)]
    return samples


@dataclass
class ShardJob:
    """One shard to build; `samples` None: the worker samples it (balance scope "shard")."""

    split: str
    shard: int
    samples: list[Sample] | None = None
    sample_seconds: float = 0.0

    @property
    def key(self) -> tuple[str, int]:
        return self.split, self.shard


def shard_jobs(config: DatasetConfig, out: Path, todo: list[tuple[str, int]]) -> Iterator[ShardJob]:
    """The jobs of the shards in `todo` (in plan order), lazily. Global balance samples each
    shard here, continuing its split's chain: the finished shards before it are read back from
    their samples.jsonl and counted, the unfinished ones sampled (again, on a resume)."""
    if config.balance_scope != "global":
        yield from (ShardJob(split, shard) for split, shard in todo)
        return
    for split in SPLITS:
        chain = chain_shards(
            config.sampler, split_seed(config.seed, split), [k for s, k in todo if s == split],
            lambda k, split=split: config.shard_count(split, k),
            lambda k, split=split: read_samples(
                shards_dir(out, split) / shard_name(k) / SAMPLES_FILE
            ),
        )  # fmt: skip
        for k, samples, seconds in chain:
            t0 = time.perf_counter()
            draw_views(config, split, k, samples)
            yield ShardJob(split, k, samples, seconds + time.perf_counter() - t0)


def colour_image(renderer: Any, desc: Any) -> np.ndarray:
    """The colour image of one scene (no mask pass)."""
    if hasattr(renderer, "set_scene"):  # Cycles keeps one bpy scene
        renderer.set_scene(desc)
    return renderer.render_image(desc)


def resize_filter(name: str) -> int:
    from PIL import Image

    return {
        "box": Image.Resampling.BOX,
        "lanczos": Image.Resampling.LANCZOS,
        "bilinear": Image.Resampling.BILINEAR,
        "bicubic": Image.Resampling.BICUBIC,
    }[name]


def render_sample_images(
    config: DatasetConfig, renderer: Any, sample: Sample
) -> list[tuple[str, np.ndarray]]:
    """(file name, full-size uint8 image) of the 4 images of a sample, in IMAGE_SLOTS order."""
    out = []
    for name, desc in sample_views(sample):
        desc = dataclasses.replace(desc, width=config.image_width, height=config.image_height)
        out.append((name, colour_image(renderer, desc)))
    return out


def build_shard(
    config: DatasetConfig,
    renderer: Any,
    split: str,
    shard: int,
    dest: Path,
    progress: Callable[[int], None] | None = None,
    samples: list[Sample] | None = None,
    sample_seconds: float = 0.0,
) -> dict[str, Any]:
    """Sample (unless `samples` are given, made by `sample_seconds` of the driver), render and
    write one shard into the empty folder `dest`; returns its manifest."""
    t_sample = sample_seconds
    if samples is None:
        t0 = time.perf_counter()
        samples = shard_samples(config, split, shard)
        t_sample = time.perf_counter() - t0

    timing = {"render": 0.0, "render_cpu": 0.0}  # the render calls alone, wall and CPU

    def images_of(sample: Sample) -> list[tuple[str, np.ndarray, bytes]]:
        w, c = time.perf_counter(), time.process_time()
        rendered = render_sample_images(config, renderer, sample)
        timing["render"] += time.perf_counter() - w
        timing["render_cpu"] += time.process_time() - c
        return [(name, img, encode_png(img, config.png_compress_level)) for name, img in rendered]

    manifest = write_shard(config, split, shard, samples, images_of, dest, progress)
    manifest["seconds"]["sample"] = round(t_sample, 4)
    manifest["seconds"].update({k: round(v, 4) for k, v in timing.items()})
    manifest["render"] = {"backend": config.backend, "preset": config.preset}
    write_json(dest / MANIFEST_FILE, manifest)
    return manifest


def write_shard(
    config: DatasetConfig,
    split: str,
    shard: int,
    samples: list[Sample],
    images_of: Callable[[Sample], list[tuple[str, np.ndarray, bytes]]],
    dest: Path,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Write a shard's files into `dest`: the PNGs and the small array of the images that
    `images_of(sample)` gives ((name, full-size uint8 image, PNG bytes) in IMAGE_SLOTS order),
    samples.jsonl, then manifest.json; returns the manifest."""
    from PIL import Image

    (dest / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
    small_shape = (len(samples), 4, config.small_height, config.small_width, 3)
    small = np.lib.format.open_memmap(
        dest / SMALL_FILE, mode="w+", dtype=np.uint8, shape=small_shape
    )
    files: dict[str, dict[str, Any]] = {}
    t_images = t_write = cpu_images = 0.0
    flt = resize_filter(config.resize_filter)
    for j, sample in enumerate(samples):
        t1, c1 = time.perf_counter(), time.process_time()
        images = images_of(sample)
        t2 = time.perf_counter()
        cpu_images += time.process_time() - c1
        for k, (name, img, data) in enumerate(images):
            (dest / IMAGES_DIR / name).write_bytes(data)
            files[name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            if (config.small_width, config.small_height) == (img.shape[1], img.shape[0]):
                small[j, k] = img
            else:
                small[j, k] = np.asarray(
                    Image.fromarray(img).resize((config.small_width, config.small_height), flt)
                )
        t_write += time.perf_counter() - t2
        t_images += t2 - t1
        if progress:
            progress(1)
    t3 = time.perf_counter()
    small.flush()
    del small
    write_samples(dest / SAMPLES_FILE, samples)
    manifest = {
        "format": SHARD_FORMAT,
        "split": split,
        "shard": shard,
        "seed": split_seed(config.seed, split),
        "count": len(samples),
        "samples": {
            "file": SAMPLES_FILE,
            "count": len(samples),
            "bytes": (dest / SAMPLES_FILE).stat().st_size,
            "sha256": sha256_file(dest / SAMPLES_FILE),
        },
        "small": {
            "file": SMALL_FILE,
            "shape": list(small_shape),
            "dtype": "uint8",
            "order": [f"{s}.{v}" for s, v in IMAGE_SLOTS],
            "filter": config.resize_filter,
            "bytes": (dest / SMALL_FILE).stat().st_size,
            "sha256": sha256_file(dest / SMALL_FILE),
        },
        "images": {
            "dir": IMAGES_DIR,
            "width": config.image_width,
            "height": config.image_height,
            "files": files,
        },
        "seconds": {
            "images": round(t_images, 4),
            "write": round(t_write + time.perf_counter() - t3, 4),
            "images_cpu": round(cpu_images, 4),  # CPU of all threads of the process
        },
    }
    write_json(dest / MANIFEST_FILE, manifest)
    return manifest


def publish_shard(tmp: Path, final: Path) -> bool:
    """Rename a finished temporary shard folder into place (False if another run got there first,
    in which case the temporary folder is removed)."""
    return engine.publish(tmp, final)


def make_renderer_for(config: DatasetConfig, threads: int | None = None) -> Any:
    """The configured renderer; `threads` (for one of several workers on a machine) caps the
    threads of Cycles or of Mesa's llvmpipe (unless LP_NUM_THREADS is set already)."""
    from tvr.trance.render import make_renderer

    options: dict[str, Any] = {}
    if threads:
        if config.backend == "cycles":
            options["threads"] = threads
        else:
            os.environ.setdefault("LP_NUM_THREADS", str(threads))
    try:
        return make_renderer(config.backend, config.preset, **options)
    except ImportError as err:
        raise missing_extra(err, f"the {config.backend} renderer") from None


# --- the job on the engine ---------------------------------------------------------------------
class DatasetWorker:
    """Builds dataset shards with one renderer."""

    def __init__(self, config: DatasetConfig, threads: int | None) -> None:
        self.config = config
        self.renderer = make_renderer_for(config, threads)

    def build(self, job: ShardJob, dest: Path, progress: Callable[[int], None]) -> None:
        dest.mkdir()
        build_shard(
            self.config, self.renderer, job.split, job.shard, dest, progress, job.samples,
            job.sample_seconds,
        )  # fmt: skip

    def close(self) -> None:
        self.renderer.close()


@dataclass
class DatasetTask:
    """`tvr generate` as a `tvr.core.jobs.ShardTask`: key (split, shard) is the folder
    DIR/<split>/shards/shard-NNNNN, finished when its manifest is there; progress counts
    samples."""

    config: DatasetConfig
    out: Path

    @property
    def name(self) -> str:
        return f"generate {self.out}"

    def plan(self) -> list[tuple[str, int]]:
        return [(s, k) for s, k, _ in self.config.shards()]

    def path(self, key: tuple[str, int]) -> Path:
        return shards_dir(self.out, key[0]) / shard_name(key[1])

    def is_built(self, key: tuple[str, int]) -> bool:
        return shard_is_built(self.out, *key)

    def label(self, key: tuple[str, int]) -> str:
        return f"{key[0]}/{shard_name(key[1])}"

    def prepare(self) -> None:
        prepare_folder(self.config, self.out)

    def jobs(self, todo: list[tuple[str, int]]) -> Iterator[ShardJob]:
        return shard_jobs(self.config, self.out, todo)

    def make_worker(self, threads: int | None) -> DatasetWorker:
        return DatasetWorker(self.config, threads)


# --- the job -----------------------------------------------------------------------------------
def prepare_folder(config: DatasetConfig, out: Path) -> None:
    """Create `out` with config.json, or check that it holds data of the same config."""
    check_same_config(config, out)
    save_config(out, config.to_dict())
    for split in SPLITS:  # leftovers of a killed run: never data
        engine.remove_temporaries(shards_dir(out, split))
        for pattern in (f".{SAMPLES_FILE}.*", ".split.json.*"):
            for tmp in (out / split).glob(pattern):
                tmp.unlink(missing_ok=True)


def check_same_config(config: DatasetConfig, out: Path) -> None:
    """UserError if `out` holds a dataset of another config (naming the differing options), or
    the symbolic samples of `tvr sample` (said as such, not as 14 differing options)."""
    saved = out / "config.json"
    if saved.is_file() and (out / SAMPLES_FILE).is_file() and not (out / "train").exists():
        try:
            kind = json.loads(saved.read_text(encoding="utf-8")).get("format")
        except (OSError, ValueError, AttributeError):
            kind = None
        if kind is None:
            raise UserError(f"{out} holds the symbolic samples of `tvr sample` (no images); give "
                            "`tvr generate` another --out (it samples and renders a dataset "
                            "itself), or render these with `tvr render --data`")  # fmt: skip
    check_saved_config(
        out, config.to_dict(), what="a dataset", legacy=with_legacy_options
    )


def finish_split(out: Path, split: str, config: DatasetConfig) -> None:
    """Write DIR/<split>/samples.jsonl (all shards in order), its reference cache for `tvr
    evaluate` (samples.ref.npz) and split.json (written last)."""
    n = config.num_shards(split)
    if n == 0:
        return
    path = out / split / SAMPLES_FILE
    tmp = path.with_name(f".{SAMPLES_FILE}.{os.getpid()}")
    with open(tmp, "wb") as f:
        for k in range(n):
            with open(shards_dir(out, split) / shard_name(k) / SAMPLES_FILE, "rb") as g:
                shutil.copyfileobj(g, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    write_reference_cache(path)
    write_json(
        out / split / "split.json",
        {
            "format": SPLIT_FORMAT,
            "split": split,
            "count": config.resolved_sizes()[split],
            "shards": n,
            "bytes": path.stat().st_size,
            "sha256": sha256_file(path),
        },
    )


def shard_is_built(out: Path, split: str, shard: int) -> bool:
    """Whether the shard is published (its manifest is written last, by `publish_shard`)."""
    return (shards_dir(out, split) / shard_name(shard) / MANIFEST_FILE).is_file()


def generate_dataset(
    config: DatasetConfig,
    out: str | Path,
    workers: int = 1,
    ray: str | None = None,
    progress: bool = True,
) -> TranceDataset:
    """Make (or finish) the dataset of `config` in `out` and return it opened.

    `workers` > 1: that many spawned worker processes; `ray`: "local" (a Ray started here with
    `workers` CPUs), "auto" (a running cluster) or a cluster address."""
    from tqdm import tqdm

    config = config.resolved()
    out = Path(out)
    check_same_config(config, out)
    task = DatasetTask(config, out)
    todo = engine.pending(task)
    total_images = 4 * sum(n for _, _, n in config.shards())
    bar = tqdm(
        total=total_images,
        initial=total_images - 4 * sum(config.shard_count(s, k) for s, k in todo),
        unit="img",
        desc=f"generate {config.setting}",
        disable=not progress,
        smoothing=0.1,
    )
    try:
        engine.run_shards(
            task, todo, workers=workers, ray=ray, progress=lambda n: bar.update(4 * n)
        )
    finally:
        bar.close()
    for split in SPLITS:
        finish_split(out, split, config)
    return open_dataset(out)

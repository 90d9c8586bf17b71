"""`tvr generate`: sample, render and store a TRANCE image dataset, shard by shard, resumable.

A shard is deterministic from (seed, split, shard): its samples come from a `ShardSampler` with
the split's seed (`dataset_config.split_seed`), View samples draw their final view from
(split seed, shard), and rendering is deterministic per backend. So a dataset made by one process,
by K worker processes or by a Ray cluster of ten machines is the same.

Balance scope "global" (default): shard s of a split starts from the balance counts of shards
0..s-1 (`tvr.trance.sampling.sampler.ShardChain`), so the driver samples the shards one after another,
a few shards ahead of the render workers, and hands each shard's samples to a worker; a rerun
rebuilds the counts from the finished shards' samples.jsonl and samples the missing shards again
(the same samples: a shard is deterministic from its seed and its starting counts). Scope "shard":
each worker samples its shard from zero counts.

Each shard is written into a temporary folder (samples.jsonl, PNGs, the small uint8 array,
manifest.json last) and renamed into place when complete; a rerun with the same config skips the
finished shards, so a job killed at any moment loses only the shards in progress. Worker processes
start with `spawn` (bpy and EGL do not survive a fork) and keep one renderer each. On Ray, actors
build shards in their own temporary folders and send the files back to the driver, which writes
them: the machines need no shared file system.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import logging
import multiprocessing
import os
import queue as queue_mod
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.jsonl import write_json
from tvr.core.png import encode_png
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.data.sample import Sample
from tvr.trance.dataset.config import SPLITS, DatasetConfig, split_seed
from tvr.trance.dataset.store import (
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
    temp_prefix,
)
from tvr.trance.render.scene import sample_views
from tvr.trance.sampling.sampler import LEGACY_BALANCE_SCOPE, ShardChain, ShardSampler
from tvr.trance.world.vocab import IMAGE_SLOTS, VIEWS

log = logging.getLogger(__name__)

VIEW_STREAM = 0x7669  # extra entry of the View draw's seed, apart from the sampler's streams


# --- one shard ---------------------------------------------------------------------------------
def shard_samples(
    config: DatasetConfig, split: str, shard: int, chain: ShardChain | None = None
) -> list[Sample]:
    """The samples of one shard (View samples carry `extra["view"]`): from `chain` (global
    balance: the split's chain, at this shard) or from zero counts (balance scope "shard")."""
    seed = split_seed(config.seed, split)
    count = config.shard_count(split, shard)
    if chain is not None:
        samples = chain.sample(shard, count)
    else:
        sampler = ShardSampler(config.sampler, seed, shard)
        samples = [sampler.sample(i) for i in range(count)]
    if config.setting == "view":
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


def shard_jobs(config: DatasetConfig, out: Path, todo: list[tuple[str, int]]) -> Iterator[ShardJob]:
    """The jobs of the shards in `todo` (in plan order), lazily. Global balance samples each
    shard here, continuing its split's chain: the finished shards before it are read back from
    their samples.jsonl and counted, the unfinished ones sampled (again, on a resume)."""
    if config.balance_scope != "global":
        yield from (ShardJob(split, shard) for split, shard in todo)
        return
    for split in SPLITS:
        wanted = {k for s, k in todo if s == split}
        if not wanted:
            continue
        chain = ShardChain(config.sampler, split_seed(config.seed, split))
        for k in range(max(wanted) + 1):
            if k in wanted:
                t0 = time.perf_counter()
                samples = shard_samples(config, split, k, chain)
                yield ShardJob(split, k, samples, time.perf_counter() - t0)
            else:
                chain.record(k, read_samples(shards_dir(out, split) / shard_name(k) / SAMPLES_FILE))


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
    try:
        os.rename(tmp, final)
        return True
    except OSError:
        if (final / MANIFEST_FILE).is_file():
            shutil.rmtree(tmp, ignore_errors=True)
            return False
        raise


def make_shard(
    config: DatasetConfig,
    renderer: Any,
    out: Path,
    split: str,
    shard: int,
    progress: Callable[[int], None] | None = None,
    samples: list[Sample] | None = None,
    sample_seconds: float = 0.0,
) -> Path:
    """Build one shard of the dataset in `out` (temporary folder, then renamed)."""
    folder = shards_dir(out, split)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{temp_prefix(shard)}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        build_shard(config, renderer, split, shard, tmp, progress, samples, sample_seconds)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    final = folder / shard_name(shard)
    publish_shard(tmp, final)
    return final


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
        raise UserError(
            f"backend {config.backend!r} cannot start: {err} (pip install 'tvr[render]')"
        ) from None


# --- worker processes --------------------------------------------------------------------------
_WORKER: dict[str, Any] = {}


def _init_worker(config_dict: dict[str, Any], out: str, progress_queue: Any, threads: int) -> None:
    _WORKER["config"] = DatasetConfig.from_dict(config_dict)
    _WORKER["out"] = Path(out)
    _WORKER["queue"] = progress_queue
    _WORKER["threads"] = threads
    _WORKER["renderer"] = None


def _worker_job(job: ShardJob) -> tuple[str, int]:
    if _WORKER["renderer"] is None:  # one renderer per process, made on its first shard
        _WORKER["renderer"] = make_renderer_for(_WORKER["config"], _WORKER["threads"])
    q = _WORKER["queue"]
    make_shard(
        _WORKER["config"], _WORKER["renderer"], _WORKER["out"], job.split, job.shard,
        lambda n: q.put(n), job.samples, job.sample_seconds,
    )  # fmt: skip
    return job.split, job.shard


# --- Ray ---------------------------------------------------------------------------------------
class RayShardBuilder:
    """A Ray actor: one renderer, builds shards in a local temporary folder and returns the files
    (relative path -> bytes) so the driver can write them wherever the dataset lives."""

    def __init__(self, config_dict: dict[str, Any]) -> None:
        self.config = DatasetConfig.from_dict(config_dict)
        self.renderer = make_renderer_for(self.config, threads=1)  # the actor holds one CPU

    def build(self, job: ShardJob) -> tuple[str, int, dict[str, bytes]]:
        split, shard = job.split, job.shard
        with tempfile.TemporaryDirectory(prefix="tvr-shard-") as tmp:
            dest = Path(tmp) / "shard"
            dest.mkdir()
            build_shard(
                self.config, self.renderer, split, shard, dest, None, job.samples,
                job.sample_seconds,
            )  # fmt: skip
            files = {
                str(p.relative_to(dest)): p.read_bytes() for p in dest.rglob("*") if p.is_file()
            }
        return split, shard, files


def _write_files(out: Path, split: str, shard: int, files: dict[str, bytes]) -> None:
    folder = shards_dir(out, split)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f"{temp_prefix(shard)}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        for rel, data in sorted(files.items(), key=lambda kv: kv[0] == MANIFEST_FILE):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    publish_shard(tmp, folder / shard_name(shard))


def _ray_init(address: str, workers: int) -> tuple[Any, bool]:
    """The ray module, connected; True if this call started the connection."""
    try:
        import ray
    except ImportError as err:
        raise UserError(f"--ray needs Ray (pip install 'tvr[scale]'): {err}") from None
    if ray.is_initialized():
        return ray, False
    import tvr

    try:
        if address == "local":
            # the local workers import this very tvr (an editable or PYTHONPATH checkout too);
            # on a cluster every machine brings its own install of tvr with the render extra
            src = str(Path(tvr.__file__).resolve().parents[1])
            path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p)
            ray.init(
                num_cpus=workers,
                include_dashboard=False,
                log_to_driver=False,
                runtime_env={"env_vars": {"PYTHONPATH": path}},
            )
        else:
            ray.init(address=address, log_to_driver=False)
    except Exception as err:  # Ray raises ConnectionError, RuntimeError, ValueError, ...
        raise UserError(
            f"option 'ray' (--ray {address}): cannot start or join Ray: {err}"
        ) from None
    return ray, True


def _run_ray(
    config: DatasetConfig, out: Path, todo, connection, address: str, workers: int, bar
) -> None:
    ray, started = connection
    from ray.util import ActorPool

    try:
        if workers > 1 or address == "local":
            n_actors = workers
        else:  # one actor per CPU of the cluster
            n_actors = int(ray.cluster_resources().get("CPU", 1))
        n_actors = max(1, min(n_actors, len(todo)))
        actor_cls = ray.remote(num_cpus=1)(RayShardBuilder)
        actors = [actor_cls.remote(config.to_dict()) for _ in range(n_actors)]
        pool = ActorPool(actors)
        jobs = shard_jobs(config, out, todo)
        # a few shards ahead of the actors: global balance samples them here, in order
        for job in itertools.islice(jobs, 2 * n_actors):
            pool.submit(lambda a, j: a.build.remote(j), job)
        while pool.has_next():
            split, shard, files = pool.get_next_unordered()
            _write_files(out, split, shard, files)
            bar.update(4 * config.shard_count(split, shard))
            job = next(jobs, None)
            if job is not None:
                pool.submit(lambda a, j: a.build.remote(j), job)
        for a in actors:
            ray.kill(a)
    finally:
        if started:
            ray.shutdown()


# --- the job -----------------------------------------------------------------------------------
def prepare_folder(config: DatasetConfig, out: Path) -> None:
    """Create `out` with config.json, or check that it holds data of the same config."""
    check_same_config(config, out)
    out.mkdir(parents=True, exist_ok=True)
    cfg_path = out / "config.json"
    if not cfg_path.exists():
        write_json(cfg_path, config.to_dict())
    for split in SPLITS:  # leftovers of a killed run: never data
        folder = shards_dir(out, split)
        if folder.is_dir():
            for tmp in folder.glob(".shard-*.tmp-*"):
                shutil.rmtree(tmp, ignore_errors=True)
        for pattern in (f".{SAMPLES_FILE}.*", ".split.json.*"):
            for tmp in (out / split).glob(pattern):
                tmp.unlink(missing_ok=True)


def check_same_config(config: DatasetConfig, out: Path) -> None:
    """UserError if `out` holds a dataset of another config (naming the differing options)."""
    cfg_path = out / "config.json"
    if cfg_path.exists():
        try:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            old = None
        if isinstance(old, dict):  # written before the option: each shard balanced on its own
            old.setdefault("balance_scope", LEGACY_BALANCE_SCOPE)
        if old != config.to_dict():
            diff = (
                sorted(k for k in config.to_dict() if old.get(k) != config.to_dict()[k])
                if isinstance(old, dict)
                else ["(unreadable config.json)"]
            )
            raise UserError(
                f"{out} already holds a dataset made with another config ({cfg_path}; differs "
                f"in {', '.join(diff)}); choose another --out or the same options"
            )


def finish_split(out: Path, split: str, config: DatasetConfig) -> None:
    """Write DIR/<split>/samples.jsonl (all shards in order) and split.json (written last)."""
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
    plan = config.shards()
    todo = [(s, k) for s, k, _ in plan if not shard_is_built(out, s, k)]
    # in one process the renderer starts before anything is written: a backend that cannot
    # start (no bpy, no EGL) fails before any work
    renderer = make_renderer_for(config) if todo and not ray and workers <= 1 else None
    # likewise Ray is joined before anything is written
    connection = _ray_init(ray, workers) if todo and ray else None
    try:
        prepare_folder(config, out)
    except BaseException:
        if renderer is not None:
            renderer.close()
        if connection is not None and connection[1]:
            connection[0].shutdown()
        raise
    total_images = 4 * sum(n for _, _, n in plan)
    done_images = total_images - 4 * sum(config.shard_count(s, k) for s, k in todo)
    bar = tqdm(
        total=total_images,
        initial=done_images,
        unit="img",
        desc=f"generate {config.setting}",
        disable=not progress,
        smoothing=0.1,
    )
    try:
        if todo and ray:
            _run_ray(config, out, todo, connection, ray, workers, bar)
        elif todo and workers > 1 and len(todo) > 1:
            _run_pool(config, out, todo, workers, bar)
        elif todo:
            if renderer is None:
                renderer = make_renderer_for(config)
            for job in shard_jobs(config, out, todo):
                make_shard(
                    config, renderer, out, job.split, job.shard, lambda n: bar.update(4 * n),
                    job.samples, job.sample_seconds,
                )  # fmt: skip
    finally:
        bar.close()
        if renderer is not None:
            renderer.close()
    unbuilt = [f"{s}/{shard_name(k)}" for s, k, _ in plan if not shard_is_built(out, s, k)]
    if unbuilt:  # never expected; a clear error rather than a split with holes
        raise RuntimeError(
            f"generate {out}: shards not built: {', '.join(unbuilt)}; the finished shards are "
            "kept, rerun to build the rest"
        )
    for split in SPLITS:
        finish_split(out, split, config)
    return open_dataset(out)


#: how many times a dead worker pool (a native crash in a renderer, the OOM killer) is replaced
#: before `generate` gives up; the shards it was building are built again from the same samples
POOL_RESTARTS = 3


def _run_pool(config: DatasetConfig, out: Path, todo, workers: int, bar) -> None:
    ctx = multiprocessing.get_context("spawn")
    q = ctx.Queue()
    n = min(workers, len(todo))
    threads = max(1, (os.cpu_count() or 1) // n)  # the workers share the machine's cores
    jobs = shard_jobs(config, out, todo)
    again: list[ShardJob] = []
    for attempt in range(POOL_RESTARTS + 1):
        try:
            _pool_round(config, out, ctx, q, n, threads, jobs, again, bar)
            break
        except BrokenProcessPool as err:
            names = ", ".join(f"{j.split}/{shard_name(j.shard)}" for j in again)
            if attempt == POOL_RESTARTS:
                raise RuntimeError(
                    f"generate {out}: a worker process died {POOL_RESTARTS + 1} times (unfinished: "
                    f"{names}); the finished shards are kept, rerun to resume"
                ) from err
            for job in again:  # the dead worker's half-written folder
                for tmp in shards_dir(out, job.split).glob(f"{temp_prefix(job.shard)}*"):
                    shutil.rmtree(tmp, ignore_errors=True)
            log.warning(
                "generate %s: a worker process died; new workers build the unfinished shards "
                "again (%s; restart %d of %d)",
                out, names, attempt + 1, POOL_RESTARTS,
            )  # fmt: skip
    _drain(q, bar)


def _pool_round(config, out, ctx, q, n, threads, jobs, again: list[ShardJob], bar) -> None:
    """Run the shards of `again` and then of `jobs` on a new pool of n workers. If a worker dies,
    `again` is left holding every job taken from `jobs` (or from `again`) whose shard is not on
    disk, and BrokenProcessPool is raised.

    A dead worker breaks the whole pool: every pending future fails, and so does any later
    `submit`, also one right after another shard finished. So the jobs to redo are not "the
    failed futures" but every job taken and not yet published."""
    with ProcessPoolExecutor(
        max_workers=n,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(config.to_dict(), str(out), q, threads),
    ) as pool:
        # a few shards ahead of the workers: global balance samples them here, in order
        taken = again + list(itertools.islice(jobs, max(0, 2 * n - len(again))))
        again.clear()
        pending: dict[Any, ShardJob] = {}
        try:
            for job in taken:
                pending[pool.submit(_worker_job, job)] = job
            while pending:
                finished, _ = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                _drain(q, bar)
                for fut in finished:
                    fut.result()  # re-raise a worker's error
                    taken.remove(pending.pop(fut))
                    job = next(jobs, None)
                    if job is not None:
                        taken.append(job)
                        pending[pool.submit(_worker_job, job)] = job
        except BrokenProcessPool:
            pool.shutdown(wait=True, cancel_futures=True)
            again.extend(j for j in taken if not shard_is_built(out, j.split, j.shard))
            again.sort(key=lambda j: (SPLITS.index(j.split), j.shard))
            raise
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)  # finished shards stay on disk
            raise


def _drain(q: Any, bar: Any) -> None:
    """Move the workers' per-sample progress messages to the progress bar."""
    while True:
        try:
            bar.update(4 * q.get_nowait())
        except (queue_mod.Empty, OSError, ValueError):
            return

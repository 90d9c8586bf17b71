"""The feature cache of a frozen encoder: every state image and clip frame of a dataset encoded once.

A cache is a folder `CACHE/<encoder>-<weights digest[:16]>-<resize>/` (`-gelu` added for an
encoder with GELU in place of QuickGELU; CACHE is `DATASET/features` unless a run names another
folder):

    cache.json      {"format", "encoder", "weights_sha256", "weights", "quick_gelu",
                     "image_size", "resize", "dim", "images", "manifest_sha256", "part_size"}
    part-00000.pt   {"features": (n, dim) float32 unit vectors} of images 0..part_size-1, ...

The folder name holds the sha256 of the encoder's weights (`weights_digest`), so another encoder,
other weights, another activation or another resize never reads these features. The image list is every state image
and every clip frame of the dataset (all splits), sorted by path; `manifest_sha256` digests their
paths, sizes and modification times, so a dataset rebuilt in place makes the cache stale, and a
stale cache is removed and built again. The parts are shards of `tvr.core.jobs`: built
atomically, so a killed run keeps the finished parts and the next one builds the rest.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from tvr.core.jobs import Progress, run_shards
from tvr.core.jsonl import write_json
from tvr.training.checkpoints import load_torch
from tvr.training.clip_towers import weights_digest
from tvr.tranco.data.dataset import TrancoDataset
from tvr.tranco.models.encoders import ImageEncoder, build_image_encoder
from tvr.tranco.train.images import image_transform, load_images

log = logging.getLogger(__name__)

CACHE_FORMAT = "tvr-tranco-features/1"
CACHE_FILE = "cache.json"
#: images per part (one shard of the job)
PART_SIZE = 4096


@dataclass(frozen=True)
class EncoderRecipe:
    """How to make a frozen encoder again: its name and weights file, or its random
    initialisation from `seed` when there is no file."""

    encoder: str
    weights: str | None = None
    quick_gelu: bool = True
    seed: int = 0

    def build(self) -> ImageEncoder:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(self.seed)
            encoder = build_image_encoder(self.encoder, self.weights, self.quick_gelu)
        return encoder.eval().requires_grad_(False)


def dataset_images(dataset: TrancoDataset) -> list[str]:
    """Every state image and clip frame of the dataset (paths relative to it), sorted."""
    paths = {p for s in dataset for p in (s.initial, s.final)}
    paths.update(f for clip in dataset.clips.values() for f in clip.frames)
    return sorted(paths)


def manifest_digest(root: Path, paths: Sequence[str]) -> str:
    """sha256 of each image's path, size and modification time."""
    h = hashlib.sha256()
    for rel in paths:
        st = os.stat(root / rel)
        h.update(f"{rel}\t{st.st_size}\t{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def pick_device(device: str | None = None) -> str:
    return device or ("cuda" if torch.cuda.is_available() else "cpu")


@torch.inference_mode()
def encode_paths(
    encoder: ImageEncoder,
    paths: Sequence[Path],
    resize: str,
    batch_size: int = 64,
    device: str = "cpu",
    progress: Progress | None = None,
) -> torch.Tensor:
    """(N, dim) unit embeddings of the image files, in order, on the CPU."""
    transform = image_transform(encoder.image_size, resize)
    encoder = encoder.to(device)
    out = []
    for start in range(0, len(paths), batch_size):
        chunk = paths[start : start + batch_size]
        images = load_images(chunk, transform).to(device)
        out.append(F.normalize(encoder(images).float(), dim=-1).cpu())
        if progress is not None:
            progress(len(chunk))
    if not out:
        return torch.zeros(0, encoder.embed_dim)
    return torch.cat(out)


@dataclass(frozen=True)
class FeatureTable:
    """Features of images by path: row `index[path]` of `features` (N, dim), and the sha256 of
    the weights of the encoder that made them."""

    paths: tuple[str, ...]
    features: torch.Tensor
    weights_sha256: str = ""

    @property
    def index(self) -> dict[str, int]:
        return {p: i for i, p in enumerate(self.paths)}

    @property
    def dim(self) -> int:
        return int(self.features.shape[1])


# --- the cache as a sharded job -----------------------------------------------------------------


@dataclass(frozen=True)
class _PartJob:
    key: int
    paths: tuple[str, ...]


class _PartWorker:
    """Encodes the images of a part with the recipe's encoder (checked against the digest)."""

    def __init__(self, task: FeatureCacheTask, threads: int | None) -> None:
        if threads is not None:
            torch.set_num_threads(threads)
        self.task = task
        self.encoder = task.recipe.build()
        if weights_digest(self.encoder) != task.digest:
            raise RuntimeError(f"{task.name}: the worker's encoder has other weights")

    def build(self, job: _PartJob, dest: Path, progress: Progress) -> None:
        root = self.task.root
        features = encode_paths(
            self.encoder,
            [root / p for p in job.paths],
            self.task.resize,
            self.task.batch_size,
            self.task.device,
            progress,
        )
        torch.save({"features": features}, dest)

    def close(self) -> None:
        self.encoder = None


class FeatureCacheTask:
    """The parts of one cache folder, as a `tvr.core.jobs` ShardTask."""

    def __init__(
        self,
        root: Path,
        folder: Path,
        recipe: EncoderRecipe,
        digest: str,
        paths: Sequence[str],
        header: dict[str, Any],
        resize: str,
        batch_size: int,
        device: str,
    ) -> None:
        self.root = root
        self.folder = folder
        self.recipe = recipe
        self.digest = digest
        self.paths = tuple(paths)
        self.header = header
        self.resize = resize
        self.batch_size = batch_size
        self.device = device
        self.name = f"features {folder.name}"

    def plan(self) -> list[int]:
        return list(range((len(self.paths) + PART_SIZE - 1) // PART_SIZE))

    def path(self, key: int) -> Path:
        return self.folder / f"part-{key:05d}.pt"

    def is_built(self, key: int) -> bool:
        return self.path(key).is_file()

    def label(self, key: int) -> str:
        return f"{self.folder.name}/part-{key:05d}"

    def prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        write_json(self.folder / CACHE_FILE, self.header)

    def jobs(self, todo: list[int]) -> Iterator[_PartJob]:
        for key in todo:
            yield _PartJob(key, self.paths[key * PART_SIZE : (key + 1) * PART_SIZE])

    def make_worker(self, threads: int | None) -> _PartWorker:
        return _PartWorker(self, threads)


def cache_folder(cache_root: Path, recipe: EncoderRecipe, digest: str, resize: str) -> Path:
    """`<encoder>-<digest[:16]>-<resize>`, and `-gelu` for GELU in place of QuickGELU."""
    activation = "" if recipe.quick_gelu else "-gelu"
    return cache_root / f"{recipe.encoder}-{digest[:16]}-{resize}{activation}"


def feature_cache(
    dataset: TrancoDataset,
    recipe: EncoderRecipe,
    resize: str = "crop",
    cache_root: str | Path | None = None,
    batch_size: int = 64,
    device: str | None = None,
    workers: int = 1,
    progress: bool = False,
) -> FeatureTable:
    """The features of every image of `dataset` under the frozen encoder `recipe`: read from its
    cache folder when that is complete and current, else computed (only the missing parts)
    and then read."""
    encoder = recipe.build()
    digest = weights_digest(encoder)
    root = Path(dataset.root)
    cache_root = Path(cache_root) if cache_root is not None else root / "features"
    folder = cache_folder(cache_root, recipe, digest, resize)
    paths = dataset_images(dataset)
    header = {
        "format": CACHE_FORMAT,
        "encoder": recipe.encoder,
        "weights_sha256": digest,
        "weights": recipe.weights if recipe.weights else f"random init, seed {recipe.seed}",
        "quick_gelu": recipe.quick_gelu,
        "image_size": encoder.image_size,
        "resize": resize,
        "dim": encoder.embed_dim,
        "images": len(paths),
        "manifest_sha256": manifest_digest(root, paths),
        "part_size": PART_SIZE,
    }
    _drop_if_stale(folder, header)
    device = pick_device(device)
    task = FeatureCacheTask(root, folder, recipe, digest, paths, header, resize, batch_size, device)
    bar = _progress_bar(len(paths), task) if progress else nullcontext(None)
    with bar as pbar:
        run_shards(task, workers=workers, progress=pbar.update if pbar is not None else None)
    parts = [load_torch(task.path(k), f"a feature part (delete {folder} to encode again)")["features"]
             for k in task.plan()]  # fmt: skip
    features = torch.cat(parts) if parts else torch.zeros(0, encoder.embed_dim)
    if features.shape != (len(paths), encoder.embed_dim):
        raise RuntimeError(f"{folder}: {tuple(features.shape)} features for {len(paths)} images")
    return FeatureTable(tuple(paths), features, digest)


def _drop_if_stale(folder: Path, header: dict[str, Any]) -> None:
    """Remove a cache folder written for other images (or another format); keep a current one."""
    path = folder / CACHE_FILE
    if not folder.exists():
        return
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        saved = None
    if saved != header:
        log.warning("%s: stale feature cache (the dataset's images changed); computing it again",
                    folder)  # fmt: skip
        shutil.rmtree(folder)


def _progress_bar(total: int, task: FeatureCacheTask) -> Any:
    from tqdm import tqdm

    done = sum(len(j.paths) for j in task.jobs([k for k in task.plan() if task.is_built(k)]))
    return tqdm(total=total, initial=done, unit="img", desc=task.name)

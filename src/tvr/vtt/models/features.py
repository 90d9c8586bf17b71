"""The image-feature cache: a frozen encoder runs once over the state images, later runs read.

One file per encoder identity (architecture, weights' SHA-256 or random seed, preprocessing),
`{cache_dir}/{key}.pt`, holding the features of every image it has seen, keyed by the image's
content hash (BLAKE2b of its bytes). A read therefore never returns features of other weights or
of an image that has changed since: a changed image has another hash and is encoded again. New
images are encoded in batches and the file is rewritten atomically, once a minute while encoding
and at the end, so an interrupted command resumes where its last save left it.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from tvr.core.errors import UserError
from tvr.core.images import open_rgb
from tvr.core.jsonl import write_file_bytes
from tvr.training.checkpoints import load_torch
from tvr.vtt.models.encoder import ClipImageEncoder, EncoderSpec

log = logging.getLogger(__name__)

#: while encoding, the cache file is rewritten at most this often, so an interrupted run keeps
#: what it encoded (a rewrite of 100,000 ViT-L features, 300 MB, takes about a second)
SAVE_EVERY_S = 60.0


def cache_key(identity: dict[str, Any]) -> str:
    """The cache file's name for an encoder identity."""
    text = json.dumps(identity, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def image_hash(path: Path) -> str:
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
    except FileNotFoundError:
        raise UserError(f"{path}: no such state image") from None


def load_image(path: Path, transform: Callable[[Any], torch.Tensor]) -> torch.Tensor:
    """One state image as the encoder's input tensor; UserError naming a broken file."""
    return transform(open_rgb(path, "state image"))


class FeatureCache:
    """Features of one encoder, cached in `cache_dir` (None: kept in memory only)."""

    def __init__(self, spec: EncoderSpec, cache_dir: str | Path | None) -> None:
        self.spec = spec
        self.identity = spec.identity()
        self.path = (
            None if cache_dir is None else Path(cache_dir) / f"{cache_key(self.identity)}.pt"
        )
        self.index: dict[str, int] = {}
        self.features: torch.Tensor | None = None
        self.encoded = 0  # images this object has run the encoder on
        if self.path is not None and self.path.exists():
            self._read(self.path)

    def _read(self, path: Path) -> None:
        try:
            saved = load_torch(path, "a feature cache")
        except UserError as err:  # a damaged cache is rebuilt, never trusted
            log.warning("%s; encoding again", err)
            return
        if not isinstance(saved, dict) or saved.get("identity") != self.identity:
            log.warning("%s: another encoder's features; encoding again", path)
            return
        self.index = {h: i for i, h in enumerate(saved["hashes"])}
        self.features = saved["features"]

    def get(
        self,
        paths: Sequence[Path],
        batch_size: int = 32,
        device: str | torch.device = "cpu",
        progress: Callable[[int, int], None] | None = None,
        hashing: Callable[[int, int], None] | None = None,
    ) -> torch.Tensor:
        """(len(paths), D) features of the images, encoding the ones not cached yet;
        `progress(done, total)` follows the encoding, `hashing(done, total)` the reading of the
        images that finds which ones are cached."""
        if not paths:
            return torch.zeros(0, 0)
        hashes = []
        for i, p in enumerate(paths, 1):
            hashes.append(image_hash(Path(p)))
            if hashing is not None and (i % 256 == 0 or i == len(paths)):
                hashing(i, len(paths))
        todo: dict[str, Path] = {}
        for h, p in zip(hashes, paths, strict=True):
            if h not in self.index and h not in todo:
                todo[h] = Path(p)
        if todo:
            self._encode(todo, batch_size, device, progress)
        assert self.features is not None
        return self.features[torch.tensor([self.index[h] for h in hashes])]

    @torch.no_grad()
    def _encode(
        self,
        todo: dict[str, Path],
        batch_size: int,
        device: str | torch.device,
        progress: Callable[[int, int], None] | None,
    ) -> None:
        encoder = ClipImageEncoder(self.spec).to(device).eval()
        transform = encoder.transform()
        items = list(todo.items())
        pending: list[tuple[list[str], torch.Tensor]] = []
        saved_at = time.monotonic()
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            images = torch.stack([load_image(p, transform) for _, p in chunk]).to(device)
            pending.append(([h for h, _ in chunk], encoder(images).float().cpu()))
            self.encoded += len(chunk)
            if progress is not None:
                progress(min(start + batch_size, len(items)), len(items))
            if time.monotonic() - saved_at > SAVE_EVERY_S:  # an interrupted run keeps this
                self._add(pending)
                pending = []
                self._save()
                saved_at = time.monotonic()
        self._add(pending)
        self._save()

    def _add(self, pending: list[tuple[list[str], torch.Tensor]]) -> None:
        """Append encoded batches (hashes, features) to the cache in memory."""
        for hashes, block in pending:
            base = 0 if self.features is None else self.features.shape[0]
            self.features = block if self.features is None else torch.cat([self.features, block])
            for i, h in enumerate(hashes):
                self.index[h] = base + i

    def _save(self) -> None:
        """Rewrite the cache file atomically (nothing without a cache folder)."""
        if self.path is not None and self.features is not None:
            buffer = io.BytesIO()
            hashes = sorted(self.index, key=self.index.__getitem__)
            torch.save({"identity": self.identity, "hashes": hashes, "features": self.features},
                       buffer)  # fmt: skip
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file_bytes(self.path, buffer.getvalue())

"""The image-feature cache: a frozen encoder runs once over the state images, later runs read.

One file per encoder identity (architecture, weights' SHA-256 or random seed, preprocessing),
`{cache_dir}/{key}.pt`, holding the features of every image it has seen, keyed by the image's
content hash (BLAKE2b of its bytes). A read therefore never returns features of other weights or
of an image that has changed since: a changed image has another hash and is encoded again. New
images are encoded in batches and the file is rewritten atomically.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

from tvr.core.errors import UserError
from tvr.core.images import open_rgb
from tvr.core.jsonl import write_file_bytes
from tvr.vtt.models.encoder import ClipImageEncoder, EncoderSpec

log = logging.getLogger(__name__)


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
            saved = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # a damaged cache is rebuilt, never trusted
            log.warning("%s: unreadable feature cache (%s); encoding again", path, err)
            return
        if saved.get("identity") != self.identity:
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
    ) -> torch.Tensor:
        """(len(paths), D) features of the images, encoding the ones not cached yet."""
        if not paths:
            return torch.zeros(0, 0)
        hashes = [image_hash(Path(p)) for p in paths]
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
        new: list[torch.Tensor] = []
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            images = torch.stack([load_image(p, transform) for _, p in chunk]).to(device)
            new.append(encoder(images).float().cpu())
            if progress is not None:
                progress(min(start + batch_size, len(items)), len(items))
        self.encoded += len(items)
        block = torch.cat(new)
        base = 0 if self.features is None else self.features.shape[0]
        self.features = block if self.features is None else torch.cat([self.features, block])
        for i, (h, _) in enumerate(items):
            self.index[h] = base + i
        if self.path is not None:
            buffer = io.BytesIO()
            hashes = sorted(self.index, key=self.index.__getitem__)
            torch.save({"identity": self.identity, "hashes": hashes, "features": self.features},
                       buffer)  # fmt: skip
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file_bytes(self.path, buffer.getvalue())

"""A trained scene parser at work: images in, objects with attributes and grid positions out.

`SceneParser.load(run or checkpoint)`; `parser.parse(images)` takes uint8 images (B, H, W, 3)
at 160x120 or 320x240 (a 320x240 image is box-filtered to 160x120 first, as `tvr generate` makes
its small copies) and gives each image's `Detection`s with centres in 320x240 pixels.
`ImagePerception` is the solver's perception over a dataset's final images; `score_split`
scores the parser on a split's every image (`tvr.trance.perception.metrics`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from tvr.trance.data.sample import image_name
from tvr.trance.perception.data import SLOTS, open_split
from tvr.trance.perception.geometry import centre_height, pixel_to_grid
from tvr.trance.perception.labels import split_labels
from tvr.trance.perception.metrics import ImageParse, score_parses
from tvr.trance.perception.model import HEADS, Detection, SceneParserNet
from tvr.trance.solver.scene import ParsedObject, ParsedScene
from tvr.trance.world.camera import CAMERA_BASE, IMAGE_WIDTH
from tvr.trance.world.vocab import IMAGE_SLOTS

#: the parser's input size (width, height)
INPUT_SIZE = (160, 120)


def to_input(images: np.ndarray) -> torch.Tensor:
    """uint8 images (B, H, W, 3) at 160x120 or 320x240 -> float (B, 3, 120, 160) in [0, 1]."""
    images = np.asarray(images)
    if images.shape[1:3] == (2 * INPUT_SIZE[1], 2 * INPUT_SIZE[0]):
        # the box filter of `tvr generate`'s small copies: the mean of each 2x2 block
        images = (
            images.reshape(len(images), INPUT_SIZE[1], 2, INPUT_SIZE[0], 2, 3)
            .astype(np.float32)
            .mean(axis=(2, 4))
            .round()
        )
    elif images.shape[1:3] != (INPUT_SIZE[1], INPUT_SIZE[0]):
        raise ValueError(f"images of {images.shape[2]}x{images.shape[1]}: the parser takes "
                         "160x120 or 320x240")  # fmt: skip
    return torch.from_numpy(np.array(images, dtype=np.uint8)).permute(0, 3, 1, 2).float() / 255


class SceneParser:
    """A trained `SceneParserNet` in eval mode."""

    def __init__(self, net: SceneParserNet, checkpoint: str | None = None) -> None:
        self.net = net.eval()
        self.checkpoint = checkpoint

    @classmethod
    def load(cls, checkpoint: str | Path) -> SceneParser:
        """From a run folder (its best.ckpt) or a .ckpt file."""
        from tvr.training.runs import load_run_module, run_checkpoint
        from tvr.trance.perception.module import SceneParserModule

        module = load_run_module(SceneParserModule, checkpoint, "scene parser")
        return cls(module.net, str(run_checkpoint(checkpoint, "scene parser")))

    @torch.no_grad()
    def parse(
        self, images: np.ndarray, batch_size: int = 64, threshold: float | None = None
    ) -> list[list[Detection]]:
        """Each image's detections, centres in 320x240 pixels (`threshold`: least detector
        score, default the network's)."""
        out: list[list[Detection]] = []
        scale = IMAGE_WIDTH / INPUT_SIZE[0]
        for k in range(0, len(images), batch_size):
            for dets in self.net.detect(to_input(images[k : k + batch_size]), threshold):
                out.append([replace(d, u=d.u * scale, v=d.v * scale) for d in dets])
        return out


def parsed_scene(dets: list[Detection], view: str) -> ParsedScene:
    """The solver's view of one image's detections (pixel centres; the solver places them for
    each camera it supposes)."""
    objs = []
    for d in dets:
        a = d.attributes
        h = centre_height(a["size"], a["shape"])
        objs.append(
            ParsedObject(
                shape=a["shape"], size=a["size"], color=a["color"], material=a["material"],
                position=pixel_to_grid(d.u, d.v, h, CAMERA_BASE["C"]), confidence=d.confidence,
                pixel=(d.u, d.v), probabilities=d.distributions, score=d.score,
            )
        )  # fmt: skip
    return ParsedScene(tuple(objs), view=view)


#: the solver asks for weaker detections than the parser reports by itself: the matching weighs
#: each by its score (a weak one that fits no object costs little to call false)
SOLVER_THRESHOLD = 0.15
#: half side (pixels of 160x120) of the patch compared between the initial and the final image
PATCH = 6
#: mean absolute difference (8-bit levels) under which a patch is the same in both images
SAME_PATCH = 1.5
#: a final detection and an initial one are at the same place when this close (320x240 pixels)
SAME_PIXEL = 4.0


def unchanged_patch(initial: np.ndarray, final: np.ndarray, u: float, v: float) -> bool:
    """Whether the 160x120 images show the same pixels around (u, v) (320x240 pixels)."""
    c, r = int(u / 2), int(v / 2)
    h, w = initial.shape[:2]
    r0, r1, c0, c1 = (
        max(r - PATCH, 0),
        min(r + PATCH + 1, h),
        max(c - PATCH, 0),
        min(c + PATCH + 1, w),
    )
    a = initial[r0:r1, c0:c1].astype(np.int16)
    b = final[r0:r1, c0:c1].astype(np.int16)
    return a.size > 0 and float(np.abs(a - b).mean()) < SAME_PATCH


class ImagePerception:
    """The solver's perception from images: a parser over the images of a split of a `tvr
    generate` dataset (its small 160x120 copies), or over a folder of PNGs named as the release
    names them (`{id}-init.C.png`, `{id}-fin.L.png`, ...; 320x240 are box-filtered to 160x120). Parses are made per sample on demand and kept
    (the View setting asks for the same sample's three images).

    The centre camera takes the initial and the final centre image from the same place: where a
    final detection stands where an initial one stood and the pixels around it did not change,
    it is the same object seen the same way, and it takes the initial detection's reading (a
    parser's doubt about an unchanged object is then the same in both images)."""

    def __init__(
        self, parser: SceneParser, data: str | Path | None = None, split: str = "test",
        threshold: float = SOLVER_THRESHOLD, images: str | Path | None = None,
    ) -> None:  # fmt: skip
        self.parser = parser
        self.threshold = threshold
        self.images = Path(images) if images is not None else None
        self.store = open_split(data, split) if self.images is None and data is not None else None
        if self.store is None and self.images is None:
            raise ValueError("an image perception needs a dataset folder or an images folder")
        self._cache: dict[str, tuple[np.ndarray, list[list[Detection]]]] = {}

    def _read(self, sample_id: str) -> np.ndarray:
        """The four images (init.C, fin.L, fin.C, fin.R) of a sample at 160x120."""
        if self.store is not None:
            shard, j = self.store.locate(self.store.index_of(sample_id))
            return np.asarray(shard.small[j])
        from PIL import Image

        from tvr.core.errors import UserError

        out = []
        for stage, view in IMAGE_SLOTS:
            path = self.images / image_name(sample_id, stage, view)  # type: ignore[operator]
            if not path.is_file():
                raise UserError(f"{path}: no such image (sample {sample_id}, {stage}.{view})")
            with Image.open(path) as im:
                rgb = np.asarray(im.convert("RGB"))
            if rgb.shape[:2] not in ((240, 320), (120, 160)):
                raise UserError(f"{path}: {rgb.shape[1]}x{rgb.shape[0]}; the parser reads "
                                "320x240 or 160x120 images")  # fmt: skip
            out.append(to_input(rgb[None]).mul(255).round().byte()[0].permute(1, 2, 0).numpy())
        return np.stack(out)

    def _parses(self, sample_id: str) -> tuple[np.ndarray, list[list[Detection]]]:
        if sample_id not in self._cache:
            images = self._read(sample_id)
            self._cache.clear()
            self._cache[sample_id] = (images, self.parser.parse(images, threshold=self.threshold))
        return self._cache[sample_id]

    def parse_final(self, sample_id: str, view: str) -> ParsedScene:
        images, parses = self._parses(sample_id)
        slot = IMAGE_SLOTS.index(("fin", view))
        dets = parses[slot]
        if view == "C":
            first = IMAGE_SLOTS.index(("init", "C"))
            dets = [_same_as_before(d, parses[first], images[first], images[slot]) for d in dets]
        return parsed_scene(dets, view)

    def parse_initial(self, sample_id: str) -> ParsedScene:
        """The parse of the initial image (centre camera): the solver compares how the parser
        saw each given initial object there with what it sees in the final image."""
        _, parses = self._parses(sample_id)
        return parsed_scene(parses[IMAGE_SLOTS.index(("init", "C"))], "C")


def _same_as_before(
    d: Detection, before: list[Detection], initial: np.ndarray, final: np.ndarray
) -> Detection:
    """`d`, or the initial detection at its place when the pixels around it did not change."""
    near = [b for b in before if np.hypot(b.u - d.u, b.v - d.v) <= SAME_PIXEL]
    if not near or not unchanged_patch(initial, final, d.u, d.v):
        return d
    b = min(near, key=lambda b: np.hypot(b.u - d.u, b.v - d.v))
    return replace(d, attributes=b.attributes, probabilities=b.probabilities,
                   distributions=b.distributions)  # fmt: skip


def score_split(
    parser: SceneParser,
    data: str | Path,
    split: str,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """The parser's scores on every image of a split (`tvr.trance.perception.metrics`); grid
    positions are placed with each view's base camera (the jitter unknown, as at test time)."""
    store = open_split(data, split)
    samples = store.samples()[: limit or len(store)]
    labels = split_labels(samples)
    parses = []
    for i in range(len(samples)):
        shard, j = store.locate(i)
        for slot, dets in enumerate(parser.parse(np.asarray(shard.small[j]))):
            view = IMAGE_SLOTS[slot][1]
            centres = np.array([[d.u, d.v] for d in dets]).reshape(-1, 2)
            classes = np.array(
                [[values.index(d.attributes[n]) for n, values in HEADS] for d in dets]
            ).reshape(-1, len(HEADS))
            grid = np.array([
                pixel_to_grid(d.u, d.v, centre_height(d.attributes["size"], d.attributes["shape"]),
                              CAMERA_BASE[view])
                for d in dets
            ]).reshape(-1, 2)  # fmt: skip
            stage = IMAGE_SLOTS[slot][0]
            parses.append(ImageParse(f"{stage}.{view}", centres, classes, labels[i, slot], grid))
        if progress:
            progress(1)
    scores = score_parses(parses)
    return {"data": str(data), "split": split, "samples": len(samples),
            "images": len(samples) * SLOTS, "checkpoint": parser.checkpoint, **scores}  # fmt: skip


def parse_rows(
    parser: SceneParser,
    data: str | Path,
    split: str,
    limit: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """One JSON row per image of a split: the sample id, the image's name, and its objects
    (attributes with their probability, centre pixel in 320x240, grid position for the image's
    own base camera, detector score)."""
    store = open_split(data, split)
    n = min(len(store), limit or len(store))
    for i in range(n):
        shard, j = store.locate(i)
        sid = shard.samples[j].id
        for slot, dets in enumerate(parser.parse(np.asarray(shard.small[j]))):
            stage, view = IMAGE_SLOTS[slot]
            objects = []
            for d in dets:
                h = centre_height(d.attributes["size"], d.attributes["shape"])
                x, y = pixel_to_grid(d.u, d.v, h, CAMERA_BASE[view])
                objects.append({
                    **d.attributes, "position": [round(x), round(y)],
                    "position_float": [round(x, 3), round(y, 3)], "pixel": [round(d.u, 2), round(d.v, 2)],
                    "score": round(d.score, 4),
                    "probabilities": {k: round(v, 4) for k, v in d.probabilities.items()},
                })  # fmt: skip
            yield {"id": sid, "image": image_name(sid, stage, view), "objects": objects}
        if progress:
            progress(1)

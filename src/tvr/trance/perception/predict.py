"""A trained scene parser at work: images in, objects with attributes and grid positions out.

`SceneParser.load(run or checkpoint)`; `parser.parse(images)` takes uint8 images (B, H, W, 3)
at 160x120 or 320x240 (a 320x240 image is box-filtered to 160x120 first, as `tvr generate` makes
its small copies) and gives each image's `Detection`s with centres in 320x240 pixels.
`score_split` scores the parser on a split's every image (`tvr.trance.perception.metrics`);
`parse_rows` writes the parses. The solver's perception over images is
`tvr.trance.solver.images.ImagePerception`.
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

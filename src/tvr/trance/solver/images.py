"""The solver's perception from images: a trained scene parser (`tvr.trance.perception`) over
the initial and final images of each sample, as `ParsedScene`s (`--perception parser`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from tvr.trance.data.sample import image_name
from tvr.trance.perception.data import open_split
from tvr.trance.perception.geometry import centre_height, pixel_to_grid
from tvr.trance.perception.model import Detection
from tvr.trance.perception.predict import SceneParser, to_input
from tvr.trance.solver.scene import ParsedObject, ParsedScene
from tvr.trance.world.camera import CAMERA_BASE
from tvr.trance.world.vocab import IMAGE_SLOTS


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

    def final_image(self, sample_id: str, view: str) -> np.ndarray:
        """The final image taken by camera `view`, (120, 160, 3) uint8 as the parser reads it
        (the render check compares its candidates with it)."""
        images, _ = self._parses(sample_id)
        return images[IMAGE_SLOTS.index(("fin", view))]

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

"""Per-video mask proposals in the official layout (what the released dynamics model reads):
typed form, checked reader, writer, and COCO RLE encoding with pycocotools.

Layout (one file per video, ``sim_XXXXX.json``)::

    {video_name, frames: [{frame_filename, frame_index,
                           objects: [{color, material, shape, mask: {size: [h, w], counts}}]}],
     ground_truth: {objects: [{id, color, material, shape}],
                    collisions: [{frame, object: [a, b]}]}}

``mask`` is COCO's compressed RLE with ``counts`` as a string (pycocotools gives bytes; JSON
needs text). ``ground_truth`` is optional here: the released dynamics code reads it (object ids
and collision frames for its edge supervision), so tvr writes it when it knows them. The reader
checks that every RLE string decodes to exactly h*w pixels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pycocotools import mask as coco_mask

from tvr.clevrer.data.fields import Fields, dump_json, load_json
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES
from tvr.core.jsonl import write_text


@dataclass(frozen=True)
class MaskObject:
    """One object's mask in one frame; `mask` is {"size": [h, w], "counts": str}."""

    color: str
    material: str
    shape: str
    mask: Mapping[str, Any]


@dataclass(frozen=True)
class MaskFrame:
    """The masks of one frame."""

    frame_filename: str
    frame_index: int
    objects: tuple[MaskObject, ...]


@dataclass(frozen=True)
class GroundTruth:
    """The video's objects (id -> attributes) and collisions (frame, (a, b)) by object id."""

    objects: tuple[tuple[int, str, str, str], ...]
    collisions: tuple[tuple[int, tuple[int, int]], ...]


@dataclass(frozen=True)
class MaskProposals:
    """One video's mask file."""

    video_name: str
    frames: tuple[MaskFrame, ...]
    ground_truth: GroundTruth | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "video_name": self.video_name,
            "frames": [
                {
                    "frame_filename": fr.frame_filename,
                    "frame_index": fr.frame_index,
                    "objects": [
                        {"color": o.color, "material": o.material, "shape": o.shape,
                         "mask": {"size": list(o.mask["size"]), "counts": o.mask["counts"]}}
                        for o in fr.objects
                    ],
                }
                for fr in self.frames
            ],
        }  # fmt: skip
        if self.ground_truth is not None:
            gt = self.ground_truth
            out["ground_truth"] = {
                "objects": [
                    {"id": i, "color": c, "material": m, "shape": s} for i, c, m, s in gt.objects
                ],
                "collisions": [{"frame": t, "object": list(ab)} for t, ab in gt.collisions],
            }
        return out

    @classmethod
    def from_json(cls, data: Any, path: str | Path = "<masks>") -> MaskProposals:
        return _parse(Fields(path), data)


def encode_mask(mask: np.ndarray) -> dict[str, Any]:
    """COCO compressed RLE of a binary (H, W) mask, with `counts` as text (JSON-ready)."""
    rle = coco_mask.encode(np.asfortranarray(np.asarray(mask, dtype=np.uint8)))
    return {"size": [int(rle["size"][0]), int(rle["size"][1])], "counts": rle["counts"].decode()}


def decode_mask(rle: Mapping[str, Any]) -> np.ndarray:
    """The (H, W) uint8 mask of an RLE whose `counts` is text or bytes."""
    counts = rle["counts"]
    return coco_mask.decode({"size": list(rle["size"]), "counts": counts})


def rle_pixel_count(counts: str) -> int | None:
    """The number of pixels a COCO compressed RLE string covers (the sum of its runs), or None
    if the string is not a valid encoding (a negative run, a truncated number)."""
    runs: list[int] = []
    total = 0
    p, n = 0, len(counts)
    while p < n:
        x, k, more = 0, 0, True
        while more:
            if p >= n:
                return None
            c = ord(counts[p]) - 48
            if not 0 <= c < 64:
                return None
            x |= (c & 0x1F) << (5 * k)
            more = bool(c & 0x20)
            p += 1
            k += 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(runs) > 2:
            x += runs[-2]
        if x < 0:
            return None
        runs.append(x)
        total += x
    return total


def write_masks(path: str | Path, proposals: MaskProposals) -> None:
    """Write one video's mask file atomically (compact JSON)."""
    write_text(Path(path), dump_json(proposals.to_json()))


def read_masks(path: str | Path) -> MaskProposals:
    """Read and check one video's mask file."""
    return MaskProposals.from_json(load_json(path), path)


def _attrs(f: Fields, raw: dict[str, Any], where: str) -> tuple[str, str, str]:
    return (
        f.string(raw["color"], f"{where}.color", COLORS),
        f.string(raw["material"], f"{where}.material", MATERIALS),
        f.string(raw["shape"], f"{where}.shape", SHAPES),
    )


def _parse(f: Fields, data: Any) -> MaskProposals:
    f.mapping(data, "", ("video_name", "frames"))
    video_name = f.string(data["video_name"], "video_name")
    frames = []
    for t, raw in enumerate(f.sequence(data["frames"], "frames")):
        where = f"frames[{t}]"
        f.mapping(raw, where, ("frame_filename", "frame_index", "objects"))
        objects = []
        for k, obj in enumerate(f.sequence(raw["objects"], f"{where}.objects")):
            at = f"{where}.objects[{k}]"
            f.mapping(obj, at, ("color", "material", "shape", "mask"))
            objects.append(MaskObject(*_attrs(f, obj, at), _parse_rle(f, obj["mask"], f"{at}.mask")))
        frames.append(
            MaskFrame(
                f.string(raw["frame_filename"], f"{where}.frame_filename"),
                f.integer(raw["frame_index"], f"{where}.frame_index", minimum=0),
                tuple(objects),
            )
        )
    ground_truth = None
    if data.get("ground_truth") is not None:
        ground_truth = _parse_ground_truth(f, data["ground_truth"])
    return MaskProposals(video_name, tuple(frames), ground_truth)


def _parse_rle(f: Fields, raw: Any, where: str) -> dict[str, Any]:
    f.mapping(raw, where, ("size", "counts"))
    size = f.sequence(raw["size"], f"{where}.size")
    if len(size) != 2:
        raise f.fail(f"{where}.size", "expected [height, width]")
    h = f.integer(size[0], f"{where}.size[0]", minimum=1)
    w = f.integer(size[1], f"{where}.size[1]", minimum=1)
    counts = f.string(raw["counts"], f"{where}.counts")
    covered = rle_pixel_count(counts)
    if covered is None:
        raise f.fail(f"{where}.counts", "not a COCO compressed RLE string")
    if covered != h * w:
        raise f.fail(f"{where}.counts", f"the runs cover {covered} pixels, not {h}x{w}={h * w}")
    return {"size": [h, w], "counts": counts}


def _parse_ground_truth(f: Fields, raw: Any) -> GroundTruth:
    f.mapping(raw, "ground_truth", ("objects", "collisions"))
    objects = []
    for i, o in enumerate(f.sequence(raw["objects"], "ground_truth.objects")):
        at = f"ground_truth.objects[{i}]"
        f.mapping(o, at, ("id", "color", "material", "shape"))
        objects.append((f.integer(o["id"], f"{at}.id", minimum=0), *_attrs(f, o, at)))
    ids = {o[0] for o in objects}
    collisions = []
    for i, c in enumerate(f.sequence(raw["collisions"], "ground_truth.collisions")):
        at = f"ground_truth.collisions[{i}]"
        f.mapping(c, at, ("frame", "object"))
        pair = f.sequence(c["object"], f"{at}.object")
        if len(pair) != 2:
            raise f.fail(f"{at}.object", f"expected 2 object ids, got {len(pair)}")
        for j, oid in enumerate(pair):
            if f.integer(oid, f"{at}.object[{j}]") not in ids:
                raise f.fail(f"{at}.object[{j}]", f"no object {oid} in ground_truth.objects")
        collisions.append((f.integer(c["frame"], f"{at}.frame", minimum=0), (pair[0], pair[1])))
    return GroundTruth(tuple(objects), tuple(collisions))

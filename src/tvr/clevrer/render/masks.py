"""Per-frame object masks as COCO RLE, in the official mask-proposals layout (`data/masks.py`).

A frame's object-id mask (from either backend's index pass) becomes one `MaskFrame` listing every
object that shows at least one pixel, with its attributes and its mask as COCO compressed RLE
(pycocotools; `counts` as text).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pycocotools import mask as coco_mask

from tvr.clevrer.data.masks import GroundTruth, MaskFrame, MaskObject, MaskProposals


def frame_filename(video_name: str, frame: int) -> str:
    """Where frame `frame` of a video is (or would be) saved, relative to the dataset folder."""
    return f"{video_name}/{frame:05d}.png"


def rle_counts(ids: np.ndarray) -> dict[int, list[int]]:
    """COCO's uncompressed RLE counts (column-major runs, zeros first) of every id >= 0 in an
    (H, W) id mask, from one pass over the runs of the columns that hold any object."""
    h, w = ids.shape
    columns = np.flatnonzero((ids >= 0).any(axis=0))
    if not len(columns):
        return {}
    first, last = int(columns[0]), int(columns[-1]) + 1
    flat = ids[:, first:last].T.ravel()  # column-major order, as COCO counts
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    starts = np.concatenate([[0], change])
    ends = np.concatenate([change, [flat.size]])
    values = flat[starts]
    starts, ends = starts + first * h, ends + first * h  # positions in the whole mask
    out = {}
    for k in np.unique(values[values >= 0]):
        sel = values == k
        s, e = starts[sel], ends[sel]
        counts = np.empty(2 * len(s) + 1, dtype=np.int64)
        counts[0] = s[0]
        counts[1:-1:2] = e - s
        counts[2:-1:2] = s[1:] - e[:-1]
        counts[-1] = h * w - e[-1]
        out[int(k)] = counts[:-1].tolist() if counts[-1] == 0 else counts.tolist()
    return out


def encode_frame(
    ids: np.ndarray, props: Sequence[tuple[str, str, str]], video_name: str, frame: int
) -> MaskFrame:
    """The `MaskFrame` of one (H, W) id mask (-1 floor); `props[i]` = (color, material, shape).

    The runs come from `rle_counts`; pycocotools compresses them (the same bytes as
    `pycocotools.mask.encode` of each object's binary mask; tests check it)."""
    h, w = ids.shape
    objects = []
    for i, counts in sorted(rle_counts(ids).items()):
        rle = coco_mask.frPyObjects({"counts": counts, "size": [h, w]}, h, w)
        color, material, shape = props[i]
        mask = {"size": [h, w], "counts": rle["counts"].decode()}
        objects.append(MaskObject(color, material, shape, mask))
    return MaskFrame(frame_filename(video_name, frame), frame, tuple(objects))


def proposals(
    video_name: str,
    frames: Sequence[MaskFrame],
    props: Sequence[tuple[str, str, str]] | None = None,
    collisions: Sequence[tuple[int, tuple[int, int]]] | None = None,
) -> MaskProposals:
    """One video's mask file; with `props` and `collisions`, its `ground_truth` block too."""
    gt = None
    if props is not None and collisions is not None:
        gt = GroundTruth(
            tuple((i, c, m, s) for i, (c, m, s) in enumerate(props)),
            tuple((int(t), (int(a), int(b))) for t, (a, b) in collisions),
        )
    return MaskProposals(video_name, tuple(frames), gt)

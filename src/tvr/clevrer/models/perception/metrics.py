"""The frame parser's scores: COCO mAP of boxes and masks (pycocotools), and attribute accuracy.

mAP counts every detection the parser gives before its score threshold (COCO's way: the ranking
matters, not the cut), on the full 480x320 frames, one class ("object"). Attribute accuracy is
measured on the objects the parser finds: each ground-truth object is matched to at most one
detection above the threshold (greedy by score, mask IoU >= 0.5), and a matched object counts
for each head (colour, material, shape) and for all three together; precision and recall of
that matching are given too. `crop_accuracy` scores the classifier alone on ground-truth crops.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pycocotools import mask as coco_mask
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from tvr.clevrer.models.perception.attributes import HEADS
from tvr.clevrer.vocab import FRAME_HEIGHT, FRAME_WIDTH

MATCH_IOU = 0.5


@dataclass(frozen=True)
class FrameTruth:
    """A frame's ground truth: masks as COCO RLE and attributes (color, material, shape)."""

    rles: tuple[dict, ...]
    attributes: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class FrameFound:
    """A frame's detections: all scores (K,), masks as COCO RLE, attributes; `kept` marks those
    at or above the parser's threshold."""

    scores: np.ndarray
    rles: tuple[dict, ...]
    attributes: tuple[tuple[str, str, str], ...]
    kept: np.ndarray


def _bytes_rle(rle: dict) -> dict:
    counts = rle["counts"]
    return {
        "size": list(rle["size"]),
        "counts": counts.encode() if isinstance(counts, str) else counts,
    }


def coco_map(truth: Sequence[FrameTruth], found: Sequence[FrameFound]) -> dict[str, float]:
    """bbox and segm AP, AP50, AP75 (COCO's 101-point interpolation, IoU 0.5:0.95)."""
    images, annotations, detections = [], [], []
    for i, (t, f) in enumerate(zip(truth, found, strict=True)):
        images.append({"id": i, "height": FRAME_HEIGHT, "width": FRAME_WIDTH})
        for rle in t.rles:
            r = _bytes_rle(rle)
            annotations.append({
                "id": len(annotations) + 1, "image_id": i, "category_id": 1, "iscrowd": 0,
                "segmentation": rle, "area": float(coco_mask.area(r)),
                "bbox": coco_mask.toBbox(r).tolist(),
            })  # fmt: skip
        for score, rle in zip(f.scores.tolist(), f.rles, strict=True):
            r = _bytes_rle(rle)
            detections.append({
                "image_id": i, "category_id": 1, "score": float(score), "segmentation": rle,
                "bbox": coco_mask.toBbox(r).tolist(),
            })  # fmt: skip
    out: dict[str, float] = {}
    for kind in ("bbox", "segm"):
        if not detections or not annotations:
            out.update({f"{kind}_ap": 0.0, f"{kind}_ap50": 0.0, f"{kind}_ap75": 0.0})
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            gt = COCO()
            gt.dataset = {"images": images, "annotations": annotations,
                          "categories": [{"id": 1, "name": "object"}]}  # fmt: skip
            gt.createIndex()
            dt = gt.loadRes([dict(d) for d in detections])
            ev = COCOeval(gt, dt, kind)
            ev.params.maxDets = [1, 10, 100]
            ev.evaluate()
            ev.accumulate()
            ev.summarize()
        stats = [max(float(v), 0.0) for v in ev.stats[:3]]  # -1: no ground truth
        out.update({f"{kind}_ap": stats[0], f"{kind}_ap50": stats[1], f"{kind}_ap75": stats[2]})
    return out


def match(truth: FrameTruth, found: FrameFound, iou: float = MATCH_IOU) -> list[tuple[int, int]]:
    """(truth k, detection j) pairs: kept detections by decreasing score, each to the unmatched
    ground-truth mask it overlaps most if the IoU is at least `iou`."""
    kept = [j for j in np.argsort(-found.scores, kind="stable").tolist() if found.kept[j]]
    if not kept or not truth.rles:
        return []
    d = [_bytes_rle(found.rles[j]) for j in kept]
    g = [_bytes_rle(r) for r in truth.rles]
    ious = coco_mask.iou(d, g, [0] * len(g))
    taken: set[int] = set()
    pairs = []
    for row, j in enumerate(kept):
        order = [k for k in np.argsort(-ious[row]).tolist() if k not in taken]
        if order and ious[row, order[0]] >= iou:
            taken.add(order[0])
            pairs.append((order[0], j))
    return pairs


def attribute_scores(truth: Sequence[FrameTruth], found: Sequence[FrameFound]) -> dict[str, float]:
    """Precision and recall of kept detections, and attribute accuracy on the matched objects."""
    n_truth = sum(len(t.rles) for t in truth)
    n_kept = sum(int(f.kept.sum()) for f in found)
    right = np.zeros(len(HEADS) + 1)
    matched = 0
    for t, f in zip(truth, found, strict=True):
        for k, j in match(t, f):
            matched += 1
            same = [a == b for a, b in zip(t.attributes[k], f.attributes[j], strict=True)]
            right += [*same, all(same)]
    out = {
        "precision": matched / n_kept if n_kept else 0.0,
        "recall": matched / n_truth if n_truth else 0.0,
    }
    for k, (name, _) in enumerate(HEADS):
        out[f"{name}_acc"] = right[k] / matched if matched else 0.0
    out["attributes_acc"] = right[-1] / matched if matched else 0.0
    return out


def crop_accuracy(predicted: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Per-head and all-three accuracy of predicted (K, 3) against label (K, 3) indices."""
    if len(labels) == 0:
        return {f"crop_{name}_acc": 0.0 for name, _ in HEADS} | {"crop_attributes_acc": 0.0}
    same = predicted == labels
    out = {f"crop_{name}_acc": float(same[:, k].mean()) for k, (name, _) in enumerate(HEADS)}
    out["crop_attributes_acc"] = float(same.all(axis=1).mean())
    return out

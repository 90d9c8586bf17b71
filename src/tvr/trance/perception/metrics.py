"""The scene parser's scores: detections matched to the true objects of each image, then
per-attribute accuracy, position error (grid units), missed and extra objects; overall, per view
(C, L, R) and per number of objects in the image.

A true object counts when it shows at least `VISIBLE_PIXELS` pixels of 320x240 (the sampler's
occlusion threshold: what the rules call visible); one showing fewer may be found or not, and a
detection of it is not an extra. Matching is greedy by distance between the detected and the
true centre, within `MATCH_RADIUS` pixels of 320x240.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from tvr.trance.perception.labels import COL
from tvr.trance.perception.model import HEADS

VISIBLE_PIXELS = 150
MATCH_RADIUS = 12.0


@dataclass
class ImageParse:
    """One image's parse for scoring: detections as (u, v) in 320x240 pixels with attribute
    indices (size, color, material, shape), grid positions (x, y) as the parser computes them
    (None when not computed), and the image's label rows (10, F)."""

    view: str
    centres: np.ndarray  # (K, 2)
    classes: np.ndarray  # (K, 4)
    labels: np.ndarray  # (10, F)
    grid: np.ndarray | None = None  # (K, 2)


@dataclass
class Tally:
    objects: int = 0
    found: int = 0
    extra: int = 0
    correct: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    pos_errors: list[float] = field(default_factory=list)
    grid_exact: int = 0

    def add(self, other: Tally) -> None:
        self.objects += other.objects
        self.found += other.found
        self.extra += other.extra
        for k, v in other.correct.items():
            self.correct[k] += v
        self.pos_errors += other.pos_errors
        self.grid_exact += other.grid_exact

    def summary(self) -> dict[str, float | int | None]:
        n = max(self.found, 1)
        out: dict[str, float | int | None] = {
            "objects": self.objects,
            "found": self.found,
            "missed": self.objects - self.found,
            "extra": self.extra,
            "recall": self.found / max(self.objects, 1),
        }
        for name, _ in HEADS:
            out[f"{name}_acc"] = self.correct[name] / n
        out["all_attributes_acc"] = self.correct["all"] / n
        out["object_acc"] = self.correct["all"] / max(self.objects + self.extra, 1)
        if self.pos_errors:
            e = np.asarray(self.pos_errors)
            out["position_error_mean"] = float(e.mean())
            out["position_error_p95"] = float(np.quantile(e, 0.95))
            out["position_error_max"] = float(e.max())
            out["position_exact"] = self.grid_exact / len(e)
        return out


def score_image(p: ImageParse) -> Tally:
    t = Tally()
    lab = p.labels
    present = lab[:, COL["present"]] > 0.5
    pixels = lab[:, COL["pixels"]]
    true_idx = np.nonzero(present & (pixels > 0))[0]
    counted = {int(i) for i in true_idx if pixels[i] >= VISIBLE_PIXELS}
    t.objects = len(counted)
    pairs = []
    for k in range(len(p.centres)):
        for i in true_idx:
            d = float(np.hypot(*(p.centres[k] - lab[i, [COL["u"], COL["v"]]])))
            if d <= MATCH_RADIUS:
                pairs.append((d, k, int(i)))
    pairs.sort()
    used_k, used_i = set(), set()
    for _, k, i in pairs:
        if k in used_k or i in used_i:
            continue
        used_k.add(k)
        used_i.add(i)
        if i not in counted:
            continue
        t.found += 1
        ok_all = True
        for j, (name, _) in enumerate(HEADS):
            ok = int(p.classes[k, j]) == int(lab[i, COL[name]])
            t.correct[name] += ok
            ok_all &= ok
        t.correct["all"] += ok_all
        if p.grid is not None:
            gx, gy = p.grid[k]
            tx, ty = lab[i, COL["x"]], lab[i, COL["y"]]
            t.pos_errors.append(float(np.hypot(gx - tx, gy - ty)))
            t.grid_exact += round(gx) == tx and round(gy) == ty
    t.extra = len(p.centres) - len(used_k)
    return t


def score_parses(parses: Iterable[ImageParse]) -> dict[str, dict]:
    """{"all": summary, "view": {V: summary}, "objects": {n: summary}} (n: true objects in the
    visible area of the image)."""
    total, by_view, by_count = Tally(), defaultdict(Tally), defaultdict(Tally)
    for p in parses:
        t = score_image(p)
        total.add(t)
        by_view[p.view].add(t)
        by_count[int((p.labels[:, COL["present"]] > 0.5).sum())].add(t)
    return {
        "all": total.summary(),
        "view": {v: by_view[v].summary() for v in sorted(by_view)},
        "objects": {str(n): by_count[n].summary() for n in sorted(by_count)},
    }

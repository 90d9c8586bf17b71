"""Tracking: a video's per-frame mask proposals (the official layout) -> object trajectories.

Frame by frame, the open tracks are matched to the frame's proposals by the Hungarian algorithm
(scipy) on a cost that adds three terms: the distance from the track's predicted centroid (its
last centroid moved by its last velocity) to the proposal's, over `max_jump` pixels per frame
of gap; the attributes (colour, material, shape) that differ from the track's majority, a third
each, times `attribute_weight`; and one minus the mask IoU with the track's last mask. A pair
further apart than `max_jump` pixels per frame of gap cannot match, nor one that differs in more
than `max_mismatch` attributes (an object that leaves the view where another enters it is not
the same object; a parser rarely gets two attributes wrong at once). A proposal left over opens
a track; a track unseen for more than `max_gap` frames closes.

Then, as NS-DR does, tracks seen in fewer than `min_frames` frames are dropped (the paper keeps
those that appear in more than 10 frames); tracks whose majority attributes agree and whose
frames do not overlap are one object (seen again after an occlusion or a miss: no two objects
of a video share all three attributes) and are joined; and each track gets a distinct
(colour, material, shape), the assignment of all tracks to the 48 combinations that maximises
the attributes its proposals agree with (Hungarian again). Objects are numbered by the frame
they are first seen in.

Where an object is: its mask's centroid, unless the mask is cut by the frame's border; then the
centre is placed from the edge of the mask that is not cut, at the distance from that edge to the
centroid in the object's nearest uncut mask, that distance grown by the ratio of the two masks'
extents along the other axis when it grew (an object coming at the camera grows; a cut round
object's chord only shrinks, so shrinking is not trusted). Whether it is in the view: the world
says an object is in view while its centre projects inside the frame, so an object is in view
when that (estimated) centre is inside the frame; an object whose every mask is cut falls back on
its area (in view when its mask covers at least `half_area` of its largest). A gap of at most
`max_gap` frames between two in-view frames (an occlusion, a miss) is in view too, with the centre
interpolated.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pycocotools import mask as coco_mask
from scipy.optimize import linear_sum_assignment

from tvr.clevrer.data.dynamics import DECIMALS
from tvr.clevrer.data.masks import MaskProposals
from tvr.clevrer.data.rounding import rounded
from tvr.clevrer.programs.dynamics import image_to_grid
from tvr.clevrer.programs.facts import ObjectProps
from tvr.clevrer.vocab import COLORS, FRAME_HEIGHT, FRAME_WIDTH, MATERIALS, SHAPES

ALL_ATTRIBUTES: tuple[tuple[str, str, str], ...] = tuple(
    (c, m, s) for c in COLORS for m in MATERIALS for s in SHAPES
)
UNMATCHABLE = 1e6


@dataclass(frozen=True)
class TrackingOptions:
    """How proposals become tracks (see the module docstring)."""

    max_jump: float = 40.0
    max_gap: int = 5
    attribute_weight: float = 1.0
    max_mismatch: int = 1
    min_frames: int = 10
    half_area: float = 0.5


@dataclass(frozen=True)
class Proposal:
    """One mask of one frame: attributes, centroid (x, y) px, area px, box (x0, y0, x1, y1) px,
    the borders it touches (left, top, right, bottom), its RLE."""

    attributes: tuple[str, str, str]
    centroid: np.ndarray
    area: int
    box: np.ndarray
    cut: tuple[bool, bool, bool, bool]
    rle: dict

    @property
    def touches_border(self) -> bool:
        return any(self.cut)


@dataclass(frozen=True)
class Tracks:
    """Objects followed through a video.

    Args:
        objects: each object's attributes (distinct), numbered by first appearance.
        frame_indices: (T,) the frames, from the proposals.
        xy: (T, N, 2) centre (the mask's centroid, or estimated where the border cuts the mask),
            pixels (x right, y down); 0 where not in view.
        area: (T, N) mask area, pixels (0 where no mask).
        seen: (T, N) a mask of the object was found at this frame.
        visible: (T, N) the object's centre is judged inside the view.
    """

    objects: tuple[ObjectProps, ...]
    frame_indices: np.ndarray
    xy: np.ndarray
    area: np.ndarray
    seen: np.ndarray
    visible: np.ndarray


@dataclass
class _Track:
    frames: list[int] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    votes: Counter = field(default_factory=Counter)

    def add(self, frame: int, p: Proposal) -> None:
        self.frames.append(frame)
        self.proposals.append(p)
        self.votes[p.attributes] += 1

    @property
    def majority(self) -> tuple[str, str, str]:
        return self.votes.most_common(1)[0][0]

    def predicted(self, frame: int) -> np.ndarray:
        last = self.proposals[-1].centroid
        if len(self.frames) < 2:
            return last
        v = (last - self.proposals[-2].centroid) / (self.frames[-1] - self.frames[-2])
        return last + v * (frame - self.frames[-1])


def _proposal(obj: Any, height: int, width: int) -> Proposal:
    rle = dict(obj.mask)
    r = {
        "size": rle["size"],
        "counts": rle["counts"].encode() if isinstance(rle["counts"], str) else rle["counts"],
    }
    x, y, w, h = coco_mask.toBbox(r).tolist()
    m = coco_mask.decode(r)
    ys, xs = np.nonzero(m)
    centroid = (
        np.array([xs.mean() + 0.5, ys.mean() + 0.5])
        if len(xs)
        else np.array([x + w / 2, y + h / 2])
    )
    cut = (x <= 0, y <= 0, x + w >= width, y + h >= height)
    box = np.array([x, y, x + w, y + h])
    return Proposal((obj.color, obj.material, obj.shape), centroid, len(xs), box, cut, r)


def estimated_centre(p: Proposal, ref: Proposal) -> np.ndarray:
    """The centre of a cut mask `p`, placed from its uncut edge as in the uncut mask `ref`, the
    distance scaled by the two masks' extents along the other axis when that one is not cut."""
    c = p.centroid.copy()
    extent = p.box[2:] - p.box[:2]
    ref_extent = np.maximum(ref.box[2:] - ref.box[:2], 1.0)
    for axis in (0, 1):
        low, high = p.cut[axis], p.cut[axis + 2]
        other = 1 - axis
        # the other axis's extent can shrink by the cut (a round object's chord): trust growth only
        scale = (
            1.0
            if (p.cut[other] or p.cut[other + 2])
            else max(extent[other] / ref_extent[other], 1.0)
        )
        if low and not high:  # cut at the left/top: measure from the right/bottom edge
            c[axis] = p.box[axis + 2] - (ref.box[axis + 2] - ref.centroid[axis]) * scale
        elif high and not low:
            c[axis] = p.box[axis] + (ref.centroid[axis] - ref.box[axis]) * scale
    return c


def _mismatch(a: tuple[str, str, str], b: tuple[str, str, str]) -> int:
    return sum(x != y for x, y in zip(a, b, strict=True))


def _link(frames: list[tuple[int, list[Proposal]]], options: TrackingOptions) -> list[_Track]:
    """Frame-to-frame Hungarian matching into raw tracks."""
    tracks: list[_Track] = []
    for frame, props in frames:
        open_ = [t for t in tracks if frame - t.frames[-1] <= options.max_gap + 1]
        matched: set[int] = set()
        if open_ and props:
            cost = np.full((len(open_), len(props)), UNMATCHABLE)
            ious = coco_mask.iou(
                [t.proposals[-1].rle for t in open_], [p.rle for p in props], [0] * len(props)
            )
            ious = np.asarray(ious).reshape(len(open_), len(props))
            for i, t in enumerate(open_):
                gap = frame - t.frames[-1]
                pred = t.predicted(frame)
                for j, p in enumerate(props):
                    d = float(np.linalg.norm(p.centroid - pred))
                    differ = _mismatch(t.majority, p.attributes)
                    if d > options.max_jump * gap or differ > options.max_mismatch:
                        continue
                    cost[i, j] = (
                        d / (options.max_jump * gap)
                        + options.attribute_weight * differ / 3
                        + (1.0 - ious[i, j])
                    )
            rows, cols = linear_sum_assignment(cost)
            for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
                if cost[i, j] < UNMATCHABLE:
                    open_[i].add(frame, props[j])
                    matched.add(j)
        for j, p in enumerate(props):
            if j not in matched:
                t = _Track()
                t.add(frame, p)
                tracks.append(t)
    return tracks


def _join(tracks: list[_Track]) -> list[_Track]:
    """Join tracks with the same majority attributes whose frames do not overlap."""
    tracks = sorted(tracks, key=lambda t: t.frames[0])
    out: list[_Track] = []
    for t in tracks:
        for o in out:
            if o.majority == t.majority and o.frames[-1] < t.frames[0]:
                for f, p in zip(t.frames, t.proposals, strict=True):
                    o.add(f, p)
                break
        else:
            out.append(t)
    return out


def _distinct_attributes(tracks: list[_Track]) -> list[tuple[str, str, str]]:
    """Distinct attributes for the tracks: the assignment that maximises agreeing attributes."""
    score = np.zeros((len(tracks), len(ALL_ATTRIBUTES)))
    for i, t in enumerate(tracks):
        for attrs, n in t.votes.items():
            score[i] += n * np.array([3 - _mismatch(attrs, a) for a in ALL_ATTRIBUTES])
    rows, cols = linear_sum_assignment(-score)
    chosen = dict(zip(rows.tolist(), cols.tolist(), strict=True))
    return [ALL_ATTRIBUTES[chosen[i]] for i in range(len(tracks))]


def _visibility(
    t_index: dict[int, int],
    track: _Track,
    options: TrackingOptions,
    size: tuple[int, int],
    n_frames: int,
) -> tuple[np.ndarray, ...]:
    height, width = size
    xy = np.zeros((n_frames, 2))
    area = np.zeros(n_frames)
    seen = np.zeros(n_frames, dtype=bool)
    visible = np.zeros(n_frames, dtype=bool)
    frames = np.array([t_index[f] for f in track.frames])
    inner = [j for j, p in enumerate(track.proposals) if not p.touches_border]
    largest = max(p.area for p in track.proposals)
    for j, p in enumerate(track.proposals):
        k = frames[j]
        seen[k], area[k] = True, p.area
        if not p.touches_border:
            xy[k], visible[k] = p.centroid, True
        elif inner:
            ref = track.proposals[min(inner, key=lambda i: abs(frames[i] - k))]
            xy[k] = estimated_centre(p, ref)
            visible[k] = 0 <= xy[k, 0] < width and 0 <= xy[k, 1] < height
        else:
            xy[k], visible[k] = p.centroid, p.area >= options.half_area * largest
    # short gaps between in-view frames: in view, centre interpolated
    shown = np.flatnonzero(visible)
    for a, b in itertools.pairwise(shown):
        if 1 < b - a <= options.max_gap + 1:
            w = (np.arange(a + 1, b) - a) / (b - a)
            xy[a + 1 : b] = xy[a] + w[:, None] * (xy[b] - xy[a])
            visible[a + 1 : b] = True
    xy[~visible] = 0.0
    return xy, area, seen, visible


def track(proposals: MaskProposals, options: TrackingOptions | None = None) -> Tracks:
    """The objects of one video's mask proposals, followed through its frames."""
    options = options or TrackingOptions()
    frames = sorted(proposals.frames, key=lambda f: f.frame_index)
    frame_indices = np.array([f.frame_index for f in frames], dtype=int)
    per_frame = []
    size = (FRAME_HEIGHT, FRAME_WIDTH)
    for f in frames:
        props = []
        for o in f.objects:
            size = (int(o.mask["size"][0]), int(o.mask["size"][1]))
            p = _proposal(o, *size)
            if p.area > 0:
                props.append(p)
        per_frame.append((f.frame_index, props))
    raw = [t for t in _link(per_frame, options) if len(t.frames) >= options.min_frames]
    joined = sorted(_join(raw), key=lambda t: (t.frames[0], float(t.proposals[0].centroid[0])))
    names = _distinct_attributes(joined) if joined else []
    t_index = {int(f): k for k, f in enumerate(frame_indices)}
    n, n_frames = len(joined), len(frame_indices)
    xy = np.zeros((n_frames, n, 2))
    area = np.zeros((n_frames, n))
    seen = np.zeros((n_frames, n), dtype=bool)
    visible = np.zeros((n_frames, n), dtype=bool)
    for i, t in enumerate(joined):
        xy[:, i], area[:, i], seen[:, i], visible[:, i] = _visibility(
            t_index, t, options, size, n_frames
        )
    return Tracks(
        objects=tuple(ObjectProps(*a) for a in names),
        frame_indices=frame_indices,
        xy=xy,
        area=area,
        seen=seen,
        visible=visible,
    )


def tracks_to_dynamics(tracks: Tracks) -> dict[str, Any]:
    """The tracks in the official predicted-dynamics layout: the factual run's observed frames
    and no collisions (read it with `collisions="proposed"`, or let the dynamics predictor add
    them and the future: `tvr.clevrer.models.dynamics.predict_dynamics`)."""
    attrs = [{"color": p.color, "material": p.material, "shape": p.shape} for p in tracks.objects]
    gx, gy = image_to_grid(tracks.xy[..., 0], tracks.xy[..., 1])
    rows, cols = rounded(gx, DECIMALS), rounded(gy, DECIMALS)
    trajectory = [
        {"frame_index": int(f),
         "objects": [{"x": rows[k][o], "y": cols[k][o], **attrs[o]}
                     for o in range(len(attrs)) if tracks.visible[k, o]]}
        for k, f in enumerate(tracks.frame_indices)
    ]  # fmt: skip
    return {
        "objects": [{"id": i, **a} for i, a in enumerate(attrs)],
        "predictions": [{"what_if": -1, "trajectory": trajectory, "collisions": []}],
    }

"""Score a frame parser on frames with ground truth (mAP, precision/recall, attribute accuracy),
and tracks against a video's true objects and motion."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from tvr.clevrer.data.masks import encode_mask
from tvr.clevrer.models.perception.attributes import HEADS
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.frames import FrameSample
from tvr.clevrer.models.perception.metrics import (
    FrameFound,
    FrameTruth,
    attribute_scores,
    coco_map,
    crop_accuracy,
)
from tvr.clevrer.models.perception.tracking import Tracks
from tvr.clevrer.programs.facts import SceneFacts


def frame_truth(sample: FrameSample) -> FrameTruth:
    """The ground truth of a validation sample (it must keep its full frame's masks)."""
    names = tuple(
        tuple(values[int(i)] for (_, values), i in zip(HEADS, row, strict=True))
        for row in sample.labels.tolist()
    )
    return FrameTruth(sample.rles, names)  # type: ignore[arg-type]


def parse_samples(
    parser: FrameParser,
    samples: Sequence[FrameSample],
    threshold: float | None = None,
) -> list[FrameFound]:
    """Every detection of each sample's full frame (all scores, for mAP), `kept` at the threshold
    (the parser's own when None)."""
    cut = parser.score_threshold if threshold is None else threshold
    if not samples:
        return []
    frames = np.stack([s.full for s in samples])
    found = []
    for objs in parser.parse(frames, score_threshold=0.0):
        rles = tuple(encode_mask(m) for m in objs.masks)
        found.append(FrameFound(objs.scores, rles, objs.attributes, objs.scores >= cut))
    return found


@torch.no_grad()
def crop_predictions(
    parser: FrameParser, samples: Sequence[FrameSample]
) -> tuple[np.ndarray, np.ndarray]:
    """The classifier's (K, 3) predictions on the samples' ground-truth crops, and the labels."""
    device = next(parser.parameters()).device
    was_training = parser.training
    parser.eval()
    try:
        crops = torch.cat([s.crops for s in samples]).float().to(device)
        labels = torch.cat([s.crop_labels for s in samples]).numpy()
        if len(crops) == 0:
            return np.zeros((0, 3), dtype=np.int64), labels
        logits = parser.attributes(crops)
        pred = torch.stack([logits[name].argmax(1) for name, _ in HEADS], dim=1)
        return pred.cpu().numpy(), labels
    finally:
        parser.train(was_training)


def score_frames(
    truth: Sequence[FrameTruth],
    found: Sequence[FrameFound],
    crops: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, float]:
    """mAP, precision/recall and attribute accuracy (and crop accuracy when given)."""
    out = coco_map(truth, found) | attribute_scores(truth, found)
    if crops is not None:
        out |= crop_accuracy(*crops)
    return out


def evaluate_parser(
    parser: FrameParser,
    samples: Sequence[FrameSample],
    batch_size: int = 8,
    threshold: float | None = None,
) -> dict[str, float]:
    """All scores of `parser` on validation samples (with full frames), in batches."""
    found: list[FrameFound] = []
    for k in range(0, len(samples), batch_size):
        found += parse_samples(parser, samples[k : k + batch_size], threshold)
    truth = [frame_truth(s) for s in samples]
    scores = score_frames(truth, found, crop_predictions(parser, samples))
    scores["frames"] = float(len(samples))
    scores["objects"] = float(sum(len(t.rles) for t in truth))
    scores["score_threshold"] = float(parser.score_threshold if threshold is None else threshold)
    return scores


def tracking_scores(tracks: Tracks, truth: SceneFacts) -> dict[str, float]:
    """How tracks (perceived objects, named by attributes) match a video's true objects and
    factual motion over the tracked frames: objects found, missed and spurious, whether the
    object set is exact, agreement of in-view flags (true objects; a missed object counts as
    never in view) and the centre error (pixels) where both say in view."""
    motion = truth.factual.motion
    assert motion is not None
    names = {(p.color, p.material, p.shape): i for i, p in enumerate(truth.objects)}
    ours = {(p.color, p.material, p.shape): i for i, p in enumerate(tracks.objects)}
    shown = np.asarray(motion.visible).any(axis=0)
    wanted = {k for k, i in names.items() if i < len(shown) and shown[i]}
    found = wanted & set(ours)
    t = min(len(tracks.visible), len(motion.visible))
    agree = total = 0
    errors: list[float] = []
    for key in wanted:
        g = names[key]
        true_vis = np.asarray(motion.visible[:t, g], dtype=bool)
        our_vis = tracks.visible[:t, ours[key]] if key in ours else np.zeros(t, dtype=bool)
        agree += int((true_vis == our_vis).sum())
        total += t
        both = true_vis & our_vis
        if both.any():
            d = np.linalg.norm(
                np.asarray(motion.xy[:t, g])[both] - tracks.xy[:t, ours[key]][both], axis=-1
            )
            errors += d.tolist()
    return {
        "objects": float(len(wanted)),
        "found": float(len(found)),
        "spurious": float(len(set(ours) - wanted)),
        "exact": float(found == wanted and set(ours) == wanted),
        "visible_agreement": agree / total if total else 0.0,
        "centre_error_px": float(np.mean(errors)) if errors else 0.0,
    }

"""NS-DR's video frame parser and tracking: frames -> named object masks -> object trajectories.

- `train_detector(DetectorConfig) -> run_dir`: train a detector (`unet`, `maskrcnn-r18` or the
  paper's `maskrcnn-r50`) with the attribute classifier on a set's frames and masks.
- `load_parser(checkpoint) -> FrameParser`; `detect_video(parser, video, scene_index)` -> the
  video's mask proposals in the official layout (`tvr.clevrer.data.masks.MaskProposals`).
- `track(proposals) -> Tracks`: object trajectories (positions, visibility) from mask proposals,
  ours or the release's; `tracks_to_dynamics` writes them in the predicted-dynamics layout.
- `evaluate_parser(parser, samples)`: COCO mAP (boxes, masks) and attribute accuracy.
- `observed_scene_reader(run, data_root)`: scene index -> tracks, for the NS-DR chain.
"""

from __future__ import annotations

import importlib
from typing import Any

# imported on first use, so that reading a config (as `tvr --help` does) loads no torch
_WHERE = {
    "DETECTOR_NAMES": "tvr.clevrer.models.perception.config",
    "DetectorConfig": "tvr.clevrer.models.perception.config",
    "FrameObjects": "tvr.clevrer.models.perception.frame_parser",
    "FrameParser": "tvr.clevrer.models.perception.frame_parser",
    "TrackingOptions": "tvr.clevrer.models.perception.tracking",
    "Tracks": "tvr.clevrer.models.perception.tracking",
    "detect_video": "tvr.clevrer.models.perception.detect",
    "evaluate_parser": "tvr.clevrer.models.perception.evaluate",
    "load_parser": "tvr.clevrer.models.perception.train",
    "observed_scene_reader": "tvr.clevrer.models.perception.detect",
    "score_detector_split": "tvr.clevrer.models.perception.train",
    "track": "tvr.clevrer.models.perception.tracking",
    "tracks_to_dynamics": "tvr.clevrer.models.perception.tracking",
    "train_detector": "tvr.clevrer.models.perception.train",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)

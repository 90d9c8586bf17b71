"""`detect_video`: every frame of a video through the frame parser -> mask proposals in the
official layout (frames named as the release names them, masks as COCO RLE at 480x320); and
`observed_scene_reader`, perception for the NS-DR chain (detection, then tracking)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from tvr.clevrer.data.layout import find_video, frame_filename, sim_name
from tvr.clevrer.data.masks import MaskFrame, MaskObject, MaskProposals, encode_mask
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.tracking import TrackingOptions, Tracks, track
from tvr.clevrer.report.frames import read_frames


def detect_frames(
    parser: FrameParser,
    frames: np.ndarray,
    scene_index: int,
    first_frame: int = 0,
    batch_size: int = 16,
    score_threshold: float | None = None,
) -> list[MaskFrame]:
    """The `MaskFrame` of each uint8 frame (T, 320, 480, 3), numbered from `first_frame`."""
    out = []
    for start in range(0, len(frames), batch_size):
        for k, objs in enumerate(parser.parse(frames[start : start + batch_size], score_threshold)):
            t = first_frame + start + k
            objects = tuple(
                MaskObject(c, m, s, encode_mask(mask))
                for (c, m, s), mask in zip(objs.attributes, objs.masks, strict=True)
            )
            out.append(MaskFrame(frame_filename(scene_index, t), t, objects))
    return out


def detect_video(
    parser: FrameParser,
    video: str | Path,
    scene_index: int,
    batch_size: int = 16,
    score_threshold: float | None = None,
) -> MaskProposals:
    """The mask proposals of every frame of an mp4 (the parser's threshold unless given)."""
    decoded = read_frames(Path(video))
    frames = np.stack([decoded[k] for k in sorted(decoded)])
    masks = detect_frames(parser, frames, scene_index, 0, batch_size, score_threshold)
    return MaskProposals(sim_name(scene_index), tuple(masks))


def observed_scene_reader(
    checkpoint: str | Path,
    data_root: str | Path,
    options: TrackingOptions | None = None,
    batch_size: int = 16,
) -> Callable[[int], Tracks]:
    """Scene index -> the tracked objects of its video under `data_root` (NS-DR's perception):
    the frame parser of `checkpoint` (a run folder or a .ckpt) on every frame, then `track`."""
    from tvr.clevrer.models.perception.train import load_parser

    parser = load_parser(checkpoint)

    def observe(scene_index: int) -> Tracks:
        proposals = detect_video(
            parser, find_video(data_root, scene_index), scene_index, batch_size
        )
        return track(proposals, options)

    return observe

"""Lay a generated set's shards out as the release: 1000-file folders, one question file per split.

Files are hard links to the shards' files (a copy where the file system has none), so the
layout costs no space and is remade in seconds; the shards stay the job's record of what is done.

    annotations/annotation_00000-01000/annotation_00000.json
    videos/video_00000-01000/video_00000.mp4
    dynamics/sim_00000.json        ground truth in the predicted-dynamics layout
    masks/sim_00000.json           mask proposals layout (ground-truth masks)
    questions/train.json, validation.json, test.json
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tvr.clevrer.data.layout import (
    annotation_filename,
    chunk_folder,
    sim_filename,
    video_filename,
)
from tvr.clevrer.data.questions import VideoQuestions, read_questions, write_questions
from tvr.clevrer.generate.config import GenerateConfig
from tvr.clevrer.generate.symbolic import QUESTIONS_FILE, shard_folder


def annotation_target(out: Path, index: int) -> Path:
    return out / "annotations" / chunk_folder("annotation", index) / annotation_filename(index)


def video_target(out: Path, index: int) -> Path:
    return out / "videos" / chunk_folder("video", index) / video_filename(index)


def link(src: Path, dst: Path) -> None:
    """Make `dst` the same file as `src` (hard link, else a copy), replacing what is there."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists() and os.path.samefile(src, dst):
        return  # already in place (and rename() between two links of one file does nothing)
    tmp = dst.parent / f".{dst.name}.link-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def assemble_symbolic(config: GenerateConfig, out: Path) -> dict[str, Path]:
    """Link annotations and dynamics into place and write the split question files; returns
    the question file of each split."""
    by_index: dict[int, VideoQuestions] = {}
    for shard in range(config.num_shards):
        folder = shard_folder(out, shard)
        for index in config.shard_range(shard):
            link(folder / annotation_filename(index), annotation_target(out, index))
            if config.dynamics:
                link(folder / sim_filename(index), out / "dynamics" / sim_filename(index))
        for video in read_questions(folder / QUESTIONS_FILE):
            by_index[video.scene_index] = video
    written = {}
    for split, indices in config.split_ranges().items():
        path = out / "questions" / f"{split}.json"
        write_questions(path, [by_index[i] for i in indices])
        written[split] = path
    return written

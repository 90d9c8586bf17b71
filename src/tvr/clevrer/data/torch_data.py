"""PyTorch Datasets over a CLEVRER set: each video with its frames, annotation and questions
(`ClevrerVideoDataset`), or each question alone (`ClevrerQuestionDataset`).

A set is a folder made by `tvr clevrer generate`, or a copy of the release however its archives
were unpacked: `tvr.clevrer.data.layout` finds the question file (``questions/<split>.json`` or
``<split>.json``), the mp4s and the annotations. A split's videos are those of its question file,
in file order; split "val" is the release's "validation" (both names are accepted). Questions and
annotations are read and checked by `tvr.clevrer.data.questions` and `.annotations` and given in
the release's JSON fields; frames are decoded with PyAV (`tvr.video.frames`). torch is imported
here only (`pip install 'tvr[train]'`), so `import tvr.clevrer` does not need it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tvr.clevrer.data.annotations import read_annotation
from tvr.clevrer.data.layout import find_annotation, find_questions, find_video
from tvr.clevrer.data.questions import QUESTION_TYPES, Question, VideoQuestions, read_questions
from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.core.errors import UserError, quote
from tvr.training.datasets import require_torch, split_name

torch = require_torch("tvr.clevrer.data.torch_data")

SPLITS: tuple[str, ...] = ("train", "val", "test")
#: the release's names of the splits, as its question files and folders are named
ALIASES = {"validation": "val"}


def open_split(root: str | Path, split: str, what: str) -> tuple[Path, str, list[VideoQuestions]]:
    """(the set's folder, the split's name, its videos' questions) of a CLEVRER set."""
    split = split_name(split, SPLITS, what, ALIASES)
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder (a CLEVRER set: make one with `tvr clevrer "
                        f"generate --out {root}`, or unpack the release there)")  # fmt: skip
    return root, split, read_questions(find_questions(root, split))  # val: the release's validation


def question_dict(q: Question) -> dict[str, Any]:
    """One question in the release's fields, every field present: `program` and `answer` (and
    each choice's) are None where the file has none (the release's test split)."""
    choices = None
    if q.choices is not None:
        choices = [{"choice_id": c.choice_id, "choice": c.choice,
                    "program": None if c.program is None else list(c.program), "answer": c.answer}
                   for c in q.choices]  # fmt: skip
    return {
        "question_id": q.question_id,
        "question": q.question,
        "question_type": q.question_type,
        "program": None if q.program is None else list(q.program),
        "answer": q.answer,
        "choices": choices,
    }


class ClevrerVideoDataset(torch.utils.data.Dataset):
    """The videos of one split of a CLEVRER set, each with its frames, annotation and questions.

    Args:
        root: the set's folder (`tvr clevrer generate --out DIR`, or the release unpacked).
        split: "train", "val" or "test" ("validation" is "val").
        frames: how many frames to take from each video: the middle frame of each of `frames`
            equal parts of it (`tvr.video.frames.sample_indices`), or None for every frame.
        transform: called on the frames tensor (T, H, W, 3) uint8; what it returns is the
            item's "frames".

    An item is a dict: "scene_index" (int), "video" (the mp4's path), "frames" (uint8 tensor
    (T, H, W, 3), RGB; T = `frames`, or 128 for a whole CLEVRER video), "frame_indices" (the
    frames taken, from 0), "annotation" (the annotation file's JSON: object_property,
    motion_trajectory, collision; None where the split has no annotations, as the release's
    test split) and "questions" (a list of dicts: question_id, question, question_type,
    program, answer, choices; a multiple-choice question has "choices", a list of dicts
    choice_id, choice, program, answer, and answer None; programs and answers are None where
    the split has none). Items differ in their number of questions, so batch them with
    `collate_fn=list` (or read them one by one).

    A wrong split, a missing folder, question file, video or (where the split has annotations)
    annotation raises UserError naming it.
    """

    def __init__(
        self,
        root: str | Path,
        split: str,
        frames: int | None = None,
        transform: Callable[[Any], Any] | None = None,
    ) -> None:
        what = type(self).__name__
        if frames is not None and (
            not isinstance(frames, int) or isinstance(frames, bool) or frames < 1
        ):
            raise UserError(f"{what}: frames is how many frames to take from each video (1 or "
                            f"more), or None for all of them, got {quote(frames)}")  # fmt: skip
        self.root, self.split, self.videos = open_split(root, split, what)
        self.frames = frames
        self.transform = transform
        self.video_paths = [find_video(self.root, v.scene_index) for v in self.videos]
        self.annotation_paths = self._annotations()

    def _annotations(self) -> list[Path | None]:
        """Each video's annotation file; None for all where the split has none at all."""
        found: list[Path | None] = []
        missing: UserError | None = None
        for v in self.videos:
            try:
                found.append(find_annotation(self.root, v.scene_index))
            except UserError as err:
                found.append(None)
                missing = missing or err
        if missing is not None and any(p is not None for p in found):
            raise missing
        return found

    def __len__(self) -> int:
        return len(self.videos)

    def frame_indices(self, n: int) -> list[int]:
        """The frames taken from a video of `n` frames."""
        from tvr.video.frames import sample_indices

        if self.frames is None:
            return list(range(n))
        return [int(i) for i in sample_indices(n, self.frames)]

    def read_frames(self, path: Path) -> tuple[Any, list[int]]:
        """(uint8 tensor (T, H, W, 3), the frame indices) of one mp4."""
        from tvr.video.frames import frames_at, probe

        info = probe(path)
        indices = self.frame_indices(info.n_frames or SHOWN_FRAMES)
        arrays = frames_at(path, [i / info.fps for i in indices])
        return torch.from_numpy(np.stack(arrays)), indices

    def __getitem__(self, i: int) -> dict[str, Any]:
        video = self.videos[i]
        frames, indices = self.read_frames(self.video_paths[i])
        if self.transform is not None:
            frames = self.transform(frames)
        ann = self.annotation_paths[i]
        return {
            "scene_index": video.scene_index,
            "video": str(self.video_paths[i]),
            "frames": frames,
            "frame_indices": indices,
            "annotation": None if ann is None else read_annotation(ann).to_json(),
            "questions": [question_dict(q) for q in video.questions],
        }


class ClevrerQuestionDataset(torch.utils.data.Dataset):
    """The questions of one split of a CLEVRER set, one item each (no video is read).

    Args:
        root: the set's folder (`tvr clevrer generate --out DIR`, or the release unpacked).
        split: "train", "val" or "test" ("validation" is "val").
        question_types: keep only these types ("descriptive", "explanatory", "predictive",
            "counterfactual"); None keeps all.

    An item is one question's dict (question_id, question, question_type, program, answer,
    choices, as in `ClevrerVideoDataset`) with the video's "scene_index" and "video_filename".
    """

    def __init__(
        self, root: str | Path, split: str, question_types: Sequence[str] | None = None
    ) -> None:
        what = type(self).__name__
        if question_types is not None:
            if isinstance(question_types, str):
                question_types = (question_types,)
            unknown = [t for t in question_types if t not in QUESTION_TYPES]
            if unknown:
                raise UserError(f"{what}: question_types are among {', '.join(QUESTION_TYPES)}, "
                                f"got {quote(unknown[0])}")  # fmt: skip
        self.root, self.split, videos = open_split(root, split, what)
        keep = set(question_types or QUESTION_TYPES)
        self.items = [(v, q) for v in videos for q in v.questions if q.question_type in keep]

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict[str, Any]:
        video, q = self.items[i]
        return {"scene_index": video.scene_index, "video_filename": video.video_filename,
                **question_dict(q)}  # fmt: skip

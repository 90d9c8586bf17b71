"""The baselines' samples: each video with all its questions, as the paper frames the task.

A descriptive question is a classification over ANSWERS (every descriptive answer of the paper's
appendix A: counts 0-5, yes/no, the colours, shapes and materials); each option of a
multiple-choice question is a binary one (correct or wrong) of the question and the option
together (section 4). The words are the question type as a marker word, the question, and for an
option `<choice>` and the option's words (`tvr.clevrer.models.parser.tokens`). A dataset item is
one video: its frames (for CNN+LSTM) and its items, so a batch runs each video's frames through
the CNN once for all its questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset

from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.eval.baselines import ANSWER_SPACES
from tvr.clevrer.models.baselines.frames import load_frames
from tvr.clevrer.models.parser.data import type_marker
from tvr.clevrer.models.parser.tokens import PAD_ID, Vocab, tokenize

#: the descriptive answer classes, in the order of the sub-types' answer spaces
ANSWERS: tuple[str, ...] = tuple(a for space in ANSWER_SPACES.values() for a in space)
ANSWER_INDEX = {a: i for i, a in enumerate(ANSWERS)}
CHOICE_MARK = "<choice>"
NO_TARGET = -1  # a descriptive answer outside ANSWERS, or none (the test split)


@dataclass(frozen=True)
class QAItem:
    """One question (`choice_id` None) or one option, with its words and target: the answer's
    class, or 1 correct / 0 wrong for an option (NO_TARGET when unknown)."""

    question_id: int
    choice_id: int | None
    words: tuple[str, ...]
    target: int

    @property
    def is_option(self) -> bool:
        return self.choice_id is not None


def video_items(video: VideoQuestions) -> list[QAItem]:
    """The items of one video, in file order."""
    out = []
    for q in video.questions:
        words = (type_marker(q.question_type), *tokenize(q.question))
        if q.choices is None:
            target = ANSWER_INDEX.get(q.answer, NO_TARGET) if q.answer is not None else NO_TARGET
            out.append(QAItem(q.question_id, None, words, target))
            continue
        for c in q.choices:
            target = NO_TARGET if c.answer is None else int(c.answer == "correct")
            out.append(
                QAItem(
                    q.question_id, c.choice_id, (*words, CHOICE_MARK, *tokenize(c.choice)), target
                )
            )
    return out


def build_words(videos: Sequence[VideoQuestions]) -> Vocab:
    """The word vocabulary of a training split's questions and options."""
    return Vocab.build(item.words for v in videos for item in video_items(v))


class VideoQA(Dataset):
    """Videos with their encoded items (and frames from `frames_folder` when given)."""

    def __init__(
        self, videos: Sequence[VideoQuestions], words: Vocab, frames_folder: Path | None = None
    ) -> None:
        self.scenes = [v.scene_index for v in videos]
        self.items = [video_items(v) for v in videos]
        self.encoded = [[words.encode(i.words) for i in items] for items in self.items]
        self.frames_folder = frames_folder

    def __len__(self) -> int:
        return len(self.scenes)

    def __getitem__(self, k: int) -> dict[str, Any]:
        out: dict[str, Any] = {"video": k, "items": self.items[k], "words": self.encoded[k]}
        if self.frames_folder is not None:
            out["frames"] = load_frames(self.frames_folder, self.scenes[k])
        return out


def collate(videos: list[dict[str, Any]]) -> dict[str, Any]:
    """A batch: words (N, L) of all items, their video's position in the batch, option flags and
    targets; frames (B, K, 3, H, W) uint8 when the videos have them."""
    words = [w for v in videos for w in v["words"]]
    items = [i for v in videos for i in v["items"]]
    width = max(1, max((len(w) for w in words), default=1))
    padded = torch.full((len(words), width), PAD_ID, dtype=torch.long)
    for i, w in enumerate(words):
        padded[i, : len(w)] = torch.as_tensor(w, dtype=torch.long)
    batch: dict[str, Any] = {
        "video": torch.as_tensor([v["video"] for v in videos]),
        "words": padded,
        "lengths": torch.as_tensor([max(1, len(w)) for w in words]),
        "item_video": torch.as_tensor(
            [k for k, v in enumerate(videos) for _ in v["words"]], dtype=torch.long
        ),
        "is_option": torch.as_tensor([i.is_option for i in items], dtype=torch.bool),
        "target": torch.as_tensor([i.target for i in items], dtype=torch.long),
    }
    if "frames" in videos[0]:
        frames = np.stack([v["frames"] for v in videos])  # (B, K, H, W, 3)
        batch["frames"] = torch.from_numpy(frames).permute(0, 1, 4, 2, 3).contiguous()
    return batch

"""The CLEVRER sets a viewer serves: their videos, annotations and questions, found by index."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tvr.clevrer.data.annotations import Annotation, read_annotation
from tvr.clevrer.data.layout import SPLITS, scan
from tvr.clevrer.data.questions import VideoQuestions, read_questions
from tvr.core.errors import UserError


@dataclass
class ClevrerSet:
    """One set (tvr's layout or the release's): file paths by scene index, questions read once."""

    root: Path
    annotations: dict[int, Path] = field(default_factory=dict)
    videos: dict[int, Path] = field(default_factory=dict)
    questions: dict[int, VideoQuestions] = field(default_factory=dict)
    split: dict[int, str] = field(default_factory=dict)

    @classmethod
    def open(cls, root: Path) -> ClevrerSet:
        root = Path(root)
        found = cls(root, scan(root, "annotation"), scan(root, "video"))
        for name in SPLITS:
            for path in (root / "questions" / f"{name}.json", root / f"{name}.json"):
                if path.is_file():
                    for video in read_questions(path):
                        found.questions[video.scene_index] = video
                        found.split[video.scene_index] = name
                    break
        if not (found.annotations or found.videos or found.questions):
            raise UserError(
                f"--data {root}: no CLEVRER files (annotation_XXXXX.json, video_XXXXX.mp4 or "
                "question files) found"
            )
        return found

    @property
    def indices(self) -> list[int]:
        return sorted(set(self.annotations) | set(self.videos) | set(self.questions))

    def annotation(self, index: int) -> Annotation | None:
        path = self.annotations.get(index)
        return read_annotation(path) if path else None

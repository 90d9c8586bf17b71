"""Typed records of annotated instructional videos: what the COIN and CrossTask readers return."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise


@dataclass(frozen=True)
class Step:
    """One annotated step of a video: its label and its segment [start, end] in seconds.

    Attributes:
        label: the step's description ("put steak on grill").
        start, end: the segment in seconds from the start of the video, 0 <= start <= end.
        step_id: the source's id of the step: COIN's annotation "id" (a step id shared by every
            video of the task), CrossTask's step number (1-based, as a string).
    """

    label: str
    start: float
    end: float
    step_id: str

    @property
    def duration(self) -> float:
        """end - start, in seconds."""
        return self.end - self.start


@dataclass(frozen=True)
class VideoRecord:
    """One annotated video of COIN or CrossTask.

    Attributes:
        video_id: the YouTube id, also the stem of the local video file.
        source: "coin" or "crosstask".
        task: the task's name (COIN's "class", CrossTask's task title).
        task_id: the task's id (COIN's "recipe_type", CrossTask's task id), as a string.
        subset: the source's split: COIN's "training"/"testing" ("validation" is accepted too);
            CrossTask's "training" (videos.csv) or "validation" (videos_val.csv).
        steps: the annotated steps in the order the source lists them.
        duration: the video's length in seconds when the source gives it (COIN), else None.
        url: the source's video URL, or None.
    """

    video_id: str
    source: str
    task: str
    task_id: str
    subset: str
    steps: tuple[Step, ...]
    duration: float | None = None
    url: str | None = None

    @property
    def n_steps(self) -> int:
        """The number of annotated steps."""
        return len(self.steps)

    def has_overlap(self) -> bool:
        """True when two steps overlap in time (one starts before another ends; touching is not)."""
        spans = sorted((s.start, s.end) for s in self.steps)
        return any(b[0] < a[1] for a, b in pairwise(spans))

    def in_time_order(self) -> bool:
        """True when the steps are listed by non-decreasing start time."""
        return all(a.start <= b.start for a, b in pairwise(self.steps))

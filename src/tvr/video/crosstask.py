"""Read CrossTask's release (task files, video lists, per-video step CSVs) into VideoRecords.

Files, as in `crosstask_release/`:
- `tasks_primary.txt`, `tasks_related.txt`: blocks of five lines (task id, title, URL, number of
  steps, the step names separated by commas), each block followed by a blank line.
- `videos.csv`, `videos_val.csv`: rows `task,vid,url` (a header row `task,vid,url` is skipped).
- `annotations/{task}_{vid}.csv`: rows `step,start,end`, step 1-based into the task's step
  names, times in seconds.

`read_crosstask(root)` reads them all; the `read_*` functions read one file each. A malformed
line raises an InputError naming the file, the line and the field. What is not an error is
listed in the result instead: videos without an annotation file (CrossTask annotates only the
primary tasks), rows whose task is in no task file, and repeated rows (the first one is kept).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tvr.core.errors import InputError, UserError
from tvr.video.records import Step, VideoRecord

TASK_FILES = ("tasks_primary.txt", "tasks_related.txt")
VIDEO_LISTS = {"videos.csv": "training", "videos_val.csv": "validation"}
_BLOCK_FIELDS = ("task id", "title", "url", "number of steps", "steps")


@dataclass(frozen=True)
class CrossTaskTask:
    """One task of a tasks file: its id, title, URL and ordered step names."""

    task_id: str
    title: str
    url: str
    steps: tuple[str, ...]


@dataclass(frozen=True)
class VideoListing:
    """One row of a video list: the task id, the video id, the URL and where the row is."""

    task_id: str
    video_id: str
    url: str
    where: str


@dataclass
class CrossTaskData:
    """What `read_crosstask` found.

    Attributes:
        tasks: the tasks of every task file, by id.
        videos: one VideoRecord per listed video that has an annotation file, in list order.
        without_annotation: (task id, video id) of listed videos with no annotation file.
        unknown_task: listings whose task id is in no task file (skipped).
        repeated: listings of a (task, video) pair already listed (skipped; the first is kept).
    """

    tasks: dict[str, CrossTaskTask]
    videos: list[VideoRecord] = field(default_factory=list)
    without_annotation: list[tuple[str, str]] = field(default_factory=list)
    unknown_task: list[VideoListing] = field(default_factory=list)
    repeated: list[VideoListing] = field(default_factory=list)


def read_tasks(path: str | Path) -> dict[str, CrossTaskTask]:
    """A tasks file's tasks by id; a malformed block raises InputError (file, line, field)."""
    path = _existing(path)
    lines = _text(path).splitlines()
    tasks: dict[str, CrossTaskTask] = {}
    block: list[tuple[int, str]] = []
    for lineno, line in [*enumerate(lines, start=1), (len(lines) + 1, "")]:
        if line.strip():
            block.append((lineno, line.strip()))
            continue
        if not block:
            continue
        task = _task(path, block)
        if task.task_id in tasks:
            raise InputError(path, block[0][0], "task id", f"task {task.task_id} is defined twice")
        tasks[task.task_id] = task
        block = []
    return tasks


def _task(path: Path, block: list[tuple[int, str]]) -> CrossTaskTask:
    if len(block) != len(_BLOCK_FIELDS):
        raise InputError(
            path,
            block[0][0],
            None,
            f"a task block has {len(block)} lines, expected {len(_BLOCK_FIELDS)} "
            f"({', '.join(_BLOCK_FIELDS)}) followed by a blank line",
        )
    (_, task_id), (_, title), (_, url), (n_line, n_text), (s_line, s_text) = block
    try:
        n_steps = int(n_text)
    except ValueError:
        n_steps = -1
    if n_steps < 1:
        raise InputError(
            path, n_line, "number of steps", f"expected a whole number >= 1, got {n_text!r}"
        )
    steps = tuple(name.strip() for name in s_text.split(","))
    if len(steps) != n_steps:
        raise InputError(
            path, s_line, "steps", f"{len(steps)} comma-separated step names, expected {n_steps}"
        )
    if not all(steps):
        raise InputError(path, s_line, "steps", "an empty step name")
    return CrossTaskTask(task_id, title, url, steps)


def read_video_list(path: str | Path) -> list[VideoListing]:
    """The rows `task,vid,url` of a video list; a malformed row raises InputError (file, line)."""
    path = _existing(path)
    out: list[VideoListing] = []
    for lineno, row in _csv_rows(path):
        if lineno == 1 and [c.strip().lower() for c in row] == ["task", "vid", "url"]:
            continue
        if len(row) != 3:
            raise InputError(
                path,
                lineno,
                None,
                f"expected 3 comma-separated fields (task, vid, url), got {len(row)}",
            )
        task_id, vid, url = (c.strip() for c in row)
        if not task_id:
            raise InputError(path, lineno, "task", "empty task id")
        if not vid:
            raise InputError(path, lineno, "vid", "empty video id")
        out.append(VideoListing(task_id, vid, url, f"{path.name}, line {lineno}"))
    return out


def read_annotation(path: str | Path, step_names: Sequence[str]) -> tuple[Step, ...]:
    """The steps of one annotation CSV (rows `step,start,end`), labelled from `step_names`."""
    path = _existing(path)
    steps = []
    for lineno, row in _csv_rows(path):
        if len(row) != 3:
            raise InputError(
                path,
                lineno,
                None,
                f"expected 3 comma-separated fields (step, start, end), got {len(row)}",
            )
        value = _as_float(row[0])
        if not (value.is_integer() and 1 <= value <= len(step_names)):
            raise InputError(
                path,
                lineno,
                "step",
                f"expected a step number 1..{len(step_names)}, got {row[0].strip()!r}",
            )
        start = _as_float(row[1])
        if not (math.isfinite(start) and start >= 0):
            raise InputError(
                path, lineno, "start", f"expected a time >= 0 in seconds, got {row[1].strip()!r}"
            )
        end = _as_float(row[2])
        if not (math.isfinite(end) and end >= start):
            raise InputError(
                path,
                lineno,
                "end",
                f"expected a time >= start ({start:g}) in seconds, got {row[2].strip()!r}",
            )
        steps.append(Step(step_names[int(value) - 1], start, end, str(int(value))))
    return tuple(steps)


def read_crosstask(root: str | Path) -> CrossTaskData:
    """Every annotated video of a CrossTask release folder (`root` or `root/crosstask_release`).

    Reads the task files and video lists that exist (at least one of each) and the annotation
    CSV of every listed video of a known task. Videos keep the order of the lists (videos.csv
    first); their subset is "training" for videos.csv and "validation" for videos_val.csv.
    """
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder")
    if (
        not any((root / name).is_file() for name in TASK_FILES)
        and (root / "crosstask_release").is_dir()
    ):
        root = root / "crosstask_release"
    task_files = [root / n for n in TASK_FILES if (root / n).is_file()]
    lists = [(root / n, subset) for n, subset in VIDEO_LISTS.items() if (root / n).is_file()]
    if not task_files:
        raise UserError(f"{root}: no task file ({' or '.join(TASK_FILES)})")
    if not lists:
        raise UserError(f"{root}: no video list ({' or '.join(VIDEO_LISTS)})")
    return read_crosstask_files(task_files, lists, root / "annotations")


def read_crosstask_files(
    task_files: Iterable[str | Path],
    video_lists: Iterable[tuple[str | Path, str]],
    annotations: str | Path,
) -> CrossTaskData:
    """`read_crosstask` on explicit paths: task files, (video list, subset) pairs, CSV folder."""
    tasks: dict[str, CrossTaskTask] = {}
    for path in task_files:
        for task_id, task in read_tasks(path).items():
            if task_id in tasks:
                raise InputError(
                    path, None, "task id", f"task {task_id} is also defined in another task file"
                )
            tasks[task_id] = task
    annotations = Path(annotations)
    if not annotations.is_dir():
        raise UserError(f"{annotations}: no such folder (the per-video annotation CSVs)")
    data = CrossTaskData(tasks)
    seen: set[tuple[str, str]] = set()
    for path, subset in video_lists:
        for row in read_video_list(path):
            key = (row.task_id, row.video_id)
            if row.task_id not in tasks:
                data.unknown_task.append(row)
                continue
            if key in seen:
                data.repeated.append(row)
                continue
            seen.add(key)
            csv_path = annotations / f"{row.task_id}_{row.video_id}.csv"
            if not csv_path.is_file():
                data.without_annotation.append(key)
                continue
            task = tasks[row.task_id]
            steps = read_annotation(csv_path, task.steps)
            data.videos.append(
                VideoRecord(
                    row.video_id,
                    "crosstask",
                    task.title,
                    task.task_id,
                    subset,
                    steps,
                    None,
                    row.url or None,
                )
            )
    return data


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    return path


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise InputError(
            path, None, None, f"not UTF-8 text ({err.reason} at byte {err.start})"
        ) from None


def _csv_rows(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) of each non-blank line of a CSV file."""
    lines = _text(path).splitlines()
    return [
        (lineno, next(csv.reader([line])))
        for lineno, line in enumerate(lines, start=1)
        if line.strip()
    ]


def _as_float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan

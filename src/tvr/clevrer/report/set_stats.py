"""What a researcher checks first in a CLEVRER set (`tvr clevrer stats`): its question files,
videos and questions, questions per type against the release's shares, per descriptive sub-type
with its answer shares, the options of the multiple-choice types and the share labelled
correct, the language prior of the template families, and events per annotated video.

The counts are those of `tvr clevrer report` (`tvr.clevrer.report.stats`), without its plots,
timelines and frames. The data is a set's folder (made by `tvr clevrer generate`, or the
release's layout: question files in questions/ or at the top, annotation_XXXXX.json anywhere
below) or one question file.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tvr.clevrer.data.annotations import read_annotation
from tvr.clevrer.data.layout import SPLITS, questions_file, scan
from tvr.clevrer.data.questions import (
    MULTIPLE_CHOICE_TYPES,
    VideoQuestions,
    has_answers,
    read_questions,
)
from tvr.clevrer.report.stats import event_stats, question_stats
from tvr.core.errors import UserError


def question_files(root: Path) -> list[Path]:
    """The question files of a set's folder: questions/<split>.json, then <split>.json."""
    files = [root / "questions" / f"{s}.json" for s in SPLITS]
    files += [root / f"{s}.json" for s in SPLITS]
    return [p for p in files if p.is_file()]


def set_stats(path: str | Path, split: str | None = None) -> dict[str, Any]:
    """The statistics of the CLEVRER set (a folder: every split, or `split` alone with the
    annotations and videos of its question file) or question file at `path`."""
    path = Path(path)
    if path.is_file():
        files, annotations, videos = [path], {}, {}
    elif path.is_dir() and split is not None:
        files = [questions_file(path, split)]
        indices = {v.scene_index for v in read_questions(files[0])}
        annotations = {i: p for i, p in scan(path, "annotation").items() if i in indices}
        videos = {i: p for i, p in scan(path, "video").items() if i in indices}
    elif path.is_dir():
        files, annotations, videos = (
            question_files(path),
            scan(path, "annotation"),
            scan(path, "video"),
        )
        if not files and not annotations:
            raise UserError(f"{path}: no CLEVRER question files (questions/train.json, ...) or "
                            "annotation_XXXXX.json found")  # fmt: skip
    else:
        raise UserError(f"{path}: no such file or folder")
    every: list[VideoQuestions] = []
    listed = []
    for file in files:
        found = read_questions(file)
        every.extend(found)
        listed.append({"file": str(file), "videos": len(found),
                       "questions": sum(len(v.questions) for v in found),
                       "answers": has_answers(found)})  # fmt: skip
    q = question_stats(every)
    out: dict[str, Any] = {
        "data": str(path),
        "split": split,
        "question_files": listed,
        "videos": q["videos"],
        "questions": q["questions"],
        "questions_per_video": q["questions_per_video"],
        "release_questions_per_video": q["release_questions_per_video"],
        "types": q["types"],
        "descriptive_subtypes": _subtypes(q["descriptive_answers"]),
        "multiple_choice": _choices(every),
        "families": {k: v for k, v in q["families"].items() if k != "asked_often"},
    }
    if annotations:
        events = event_stats(read_annotation(p) for p in annotations.values())
        out["events"] = {"videos": events["videos"], "per_video": events["summary"]}
    if path.is_dir():
        out["video_files"] = len(videos)
    return out


def _subtypes(answers: dict[str, dict[str, int]]) -> dict[str, Any]:
    """Per descriptive sub-type: questions, share of the descriptive ones, answer shares (the
    answers of questions without one, "None", left out)."""
    total = sum(sum(c.values()) for c in answers.values())
    out = {}
    for sub, counts in answers.items():
        n = sum(counts.values())
        known = {a: c for a, c in counts.items() if a != "None"}
        answered = sum(known.values())
        shares = {a: c / answered for a, c in sorted(known.items(), key=lambda kv: -kv[1])}
        out[sub] = {"questions": n, "share": n / total if total else 0.0, "answers": shares,
                    "most_frequent": max(shares.values()) if shares else None}  # fmt: skip
    return out


def _choices(videos: Iterable[VideoQuestions]) -> dict[str, Any]:
    """Per multiple-choice type: questions, options, options per question, the share of the
    options labelled correct, and the share of questions with every option correct or none."""
    out: dict[str, Any] = {}
    for t in MULTIPLE_CHOICE_TYPES:
        questions = [q for v in videos for q in v.questions
                     if q.question_type == t and q.choices]  # fmt: skip
        options = [c for q in questions for c in q.choices or ()]
        labelled = [c for c in options if c.answer is not None]
        right = sum(c.answer == "correct" for c in labelled)
        out[t] = {
            "questions": len(questions),
            "options": len(options),
            "options_per_question": len(options) / len(questions) if questions else None,
            "correct_share": right / len(labelled) if labelled else None,
        }
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """The statistics as the terminal shows them."""
    lines = [f"{stats['data']}: {stats['videos']} videos with questions, {stats['questions']} "
             f"questions ({stats['questions_per_video']:.1f} per video; the release "
             f"{stats['release_questions_per_video']:.1f})"]  # fmt: skip
    if "video_files" in stats:
        lines[0] += f", {stats['video_files']} video files"
    for f in stats["question_files"]:
        answers = "" if f["answers"] else " (without answers: the test split?)"
        lines.append(f"  {f['file']}: {f['videos']} videos, {f['questions']} questions{answers}")
    if stats["questions"]:
        lines += ["", f"{'question type':<16} {'questions':>9} {'share':>7} {'release':>7}"]
        for t, v in stats["types"].items():
            lines.append(f"{t:<16} {v['count']:>9} {_pct(v['share']):>7} "
                         f"{_pct(v['release_share']):>7}")  # fmt: skip
    if stats["descriptive_subtypes"]:
        lines += ["", f"{'descriptive':<16} {'questions':>9}  answers (share of the sub-type)"]
        for sub, v in stats["descriptive_subtypes"].items():
            shares = ", ".join(f"{a} {_pct(s)}" for a, s in list(v["answers"].items())[:8])
            more = ", ..." if len(v["answers"]) > 8 else ""
            lines.append(f"{sub:<16} {v['questions']:>9}  {shares or '-'}{more}")
    mc = {t: v for t, v in stats["multiple_choice"].items() if v["questions"]}
    if mc:
        lines += ["", f"{'multiple choice':<16} {'questions':>9} {'options':>8} "
                      f"{'per q.':>6} {'correct':>8}"]  # fmt: skip
        for t, v in mc.items():
            lines.append(f"{t:<16} {v['questions']:>9} {v['options']:>8} "
                         f"{v['options_per_question']:>6.2f} {_pct(v['correct_share']):>8}")  # fmt: skip
    fam = stats["families"]
    if fam["families"]:
        lines += ["", f"language prior: {fam['families']} template families; answering each "
                      f"family's most frequent answer gets {_pct(fam['mode_share'])} of the "
                      "descriptive questions"]  # fmt: skip
    if "events" in stats:
        ev = stats["events"]
        lines += ["", f"per annotated video ({ev['videos']} videos): "
                  + "; ".join(f"{k} {v['mean']:.2f} (min {v['min']}, max {v['max']})"
                              for k, v in ev["per_video"].items())]  # fmt: skip
    return lines

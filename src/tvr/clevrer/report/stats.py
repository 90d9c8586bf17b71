"""Counts of a CLEVRER set: questions per type and sub-type, answers per sub-type and template
family, option labels per form and kind, events per video."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from tvr.clevrer.data.annotations import Annotation
from tvr.clevrer.data.events import annotation_events
from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.questions.generate import RELEASE_COUNTS, RELEASE_VIDEOS
from tvr.clevrer.questions.words import negated, option_kind, text_family

QUESTION_TYPES: tuple[str, ...] = tuple(RELEASE_COUNTS)
#: template families asked at least this often are listed one by one
FAMILY_MIN = 10


def question_stats(videos: Iterable[VideoQuestions]) -> dict[str, Any]:
    """Questions per type (count, share, the release's share), per descriptive sub-type with
    its answers, and choices per multiple-choice question."""
    types: Counter[str] = Counter()
    answers: dict[str, Counter[str]] = {}
    families: dict[str, Counter[str]] = {}
    choices: dict[str, Counter[int]] = {}
    correct: dict[str, Counter[int]] = {}
    labels: dict[str, Counter[str]] = {}
    n_videos = 0
    for video in videos:
        n_videos += 1
        for q in video.questions:
            types[q.question_type] += 1
            if q.is_descriptive:
                answers.setdefault(q.subtype, Counter())[str(q.answer)] += 1
                families.setdefault(text_family(q.question), Counter())[str(q.answer)] += 1
            elif q.choices is not None:
                choices.setdefault(q.question_type, Counter())[len(q.choices)] += 1
                right = sum(c.answer == "correct" for c in q.choices)
                correct.setdefault(q.question_type, Counter())[right] += 1
                form = "not" if negated(q.question) else "plain"
                for c in q.choices:
                    cell = f"{q.question_type} / {form} / {option_kind(c.choice)}"
                    labels.setdefault(cell, Counter())[str(c.answer)] += 1
    total = sum(types.values())
    release_total = sum(RELEASE_COUNTS.values())
    per_type = {
        t: {
            "count": types.get(t, 0),
            "share": types.get(t, 0) / total if total else 0.0,
            "release_share": RELEASE_COUNTS[t] / release_total,
        }
        for t in QUESTION_TYPES
    }
    for t in sorted(set(types) - set(QUESTION_TYPES)):
        per_type[t] = {"count": types[t], "share": types[t] / total, "release_share": 0.0}
    return {
        "videos": n_videos,
        "questions": total,
        "questions_per_video": total / n_videos if n_videos else 0.0,
        "release_questions_per_video": release_total / RELEASE_VIDEOS,
        "types": per_type,
        "descriptive_answers": {s: dict(sorted(c.items())) for s, c in sorted(answers.items())},
        "choices_per_question": {t: dict(sorted(c.items())) for t, c in sorted(choices.items())},
        "correct_choices_per_question": {
            t: dict(sorted(c.items())) for t, c in sorted(correct.items())
        },
        "families": family_balance(families),
        "option_labels": {cell: dict(sorted(c.items())) for cell, c in sorted(labels.items())},
    }


def family_balance(families: dict[str, Counter[str]]) -> dict[str, Any]:
    """Answer balance within template families (`tvr.clevrer.questions.words.text_family`):
    the share of questions that answering each family's most frequent answer gets right (a
    question-only model that knows the template, not the attributes), over all families and over
    those asked `FAMILY_MIN` times or more, and those families one by one."""
    def mode_share(items: list[Counter[str]]) -> float:
        total = sum(sum(c.values()) for c in items)
        return sum(max(c.values()) for c in items) / total if total else 0.0

    big = {f: c for f, c in families.items() if sum(c.values()) >= FAMILY_MIN}
    return {
        "families": len(families),
        "mode_share": mode_share(list(families.values())),
        "families_asked_often": len(big),
        "mode_share_asked_often": mode_share(list(big.values())),
        "asked_often": {
            f: dict(c.most_common())
            for f, c in sorted(big.items(), key=lambda kv: -sum(kv[1].values()))
        },
    }


def balance_ratio(counts: dict[str, int]) -> float:
    """Most frequent over least frequent answer of a sub-type (1.0: perfectly balanced)."""
    values = [v for v in counts.values() if v > 0]
    return max(values) / min(values) if values else 0.0


def event_stats(annotations: Iterable[Annotation]) -> dict[str, Any]:
    """Events per video by kind (in, out, collision): per-video counts and their summary."""
    per_video: dict[int, dict[str, int]] = {}
    for ann in annotations:
        kinds = Counter(e.kind for e in annotation_events(ann))
        per_video[ann.scene_index] = {
            "objects": len(ann.object_property),
            "in": kinds.get("in", 0),
            "out": kinds.get("out", 0),
            "collision": kinds.get("collision", 0),
        }
    summary: dict[str, Any] = {}
    for key in ("objects", "in", "out", "collision"):
        values = [v[key] for v in per_video.values()]
        if values:
            summary[key] = {
                "mean": sum(values) / len(values),
                "min": min(values),
                "max": max(values),
                "histogram": dict(sorted(Counter(values).items())),
            }
    return {"videos": len(per_video), "summary": summary, "per_video": per_video}

"""Write a CLEVRER set's report folder: stats.json, report.md, plots, timelines, frames, GIFs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.clevrer.data.annotations import Annotation, read_annotation
from tvr.clevrer.data.events import annotation_events
from tvr.clevrer.data.layout import SPLITS, scan
from tvr.clevrer.data.questions import VideoQuestions, read_questions
from tvr.clevrer.report.frames import animated_gif, contact_sheet
from tvr.clevrer.report.plots import answer_balance_plot, question_types_plot, timeline_plot
from tvr.clevrer.report.stats import balance_ratio, event_stats, question_stats
from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.core.errors import UserError
from tvr.core.jsonl import check_output_folder, write_json, write_text
from tvr.core.progress import step_bar

#: families listed in report.md (stats.json lists all asked 10 times or more)
FAMILY_ROWS = 40


def _question_files(root: Path) -> list[Path]:
    files = [root / "questions" / f"{s}.json" for s in SPLITS]
    files += [root / f"{s}.json" for s in SPLITS]
    return [p for p in files if p.is_file()]


def write_report(
    root: str | Path, out: str | Path, videos: int = 4, gif: bool = True, progress: bool = False
) -> Path:
    """Report on the CLEVRER set at `root` (tvr's layout or the release's) into `out`; per-video
    timelines and sample frames for the first `videos` videos. Returns report.md's path. With
    `progress`, bars on stderr over the question files, the annotations and the videos shown
    (the release's 20,000 annotations take minutes)."""
    root, out = Path(root), Path(out)
    if not root.is_dir():
        raise UserError(f"{root}: no such folder")
    check_output_folder(out)  # a bad --out is one line, before the bars
    question_files = _question_files(root)
    annotations = scan(root, "annotation")
    if not question_files and not annotations:
        raise UserError(f"{root}: no CLEVRER question files or annotation_XXXXX.json found")
    qvideos: list[VideoQuestions] = []
    with step_bar(len(question_files), "question files", "file", progress) as bar:
        for path in question_files:
            qvideos.extend(read_questions(path))
            bar.update(1)
    qstats = question_stats(qvideos)
    anns: list[Annotation] = []
    with step_bar(len(annotations), "annotations", "file", progress) as bar:
        for p in annotations.values():
            anns.append(read_annotation(p))
            bar.update(1)
    estats = event_stats(anns)
    videos_found = scan(root, "video")
    shown: list[dict[str, Any]] = []
    with step_bar(len(anns[:videos]), "videos shown", "video", progress) as bar:
        for ann in anns[:videos]:
            name = f"video_{ann.scene_index:05d}"
            timeline = timeline_plot(ann, out / "timelines" / f"{name}.png")
            item: dict[str, Any] = {"video": name, "timeline": timeline}
            video = videos_found.get(ann.scene_index)
            if video is not None:
                events = annotation_events(ann)
                captions = [
                    (e.frame, f"{e.frame}: {e.kind} {'-'.join(map(str, e.objects))}")
                    for e in events if e.frame < SHOWN_FRAMES
                ]  # fmt: skip
                picks = [(0, "frame 0"), *captions[:7]]
                item["frames"] = contact_sheet(video, picks, out / "frames" / f"{name}.png")
                if gif:
                    item["gif"] = animated_gif(video, out / "frames" / f"{name}.gif")
            shown.append(item)
            bar.update(1)
    types_png = question_types_plot(qstats, out / "question_types.png") if qvideos else None
    balance_png = answer_balance_plot(qstats, out / "answer_balance.png") if qvideos else None
    write_json(out / "stats.json", {"questions": qstats, "events": estats,
                                    "question_files": [str(p) for p in question_files]})
    lines = [f"# CLEVRER set report: {root}", ""]
    lines += _question_lines(qstats, types_png, balance_png) if qvideos else ["No question files."]
    lines += ["", *_event_lines(estats), ""]
    for item in shown:
        lines.append(f"## {item['video']}")
        for key in ("timeline", "frames", "gif"):
            if key in item:
                lines.append(f"![{key}]({Path(item[key]).relative_to(out)})")
        lines.append("")
    write_text(out / "report.md", "\n".join(lines) + "\n")
    return out / "report.md"


def _question_lines(stats: dict[str, Any], types_png: Path | None, balance_png: Path | None) -> list[str]:
    lines = [
        f"{stats['videos']} videos, {stats['questions']} questions "
        f"({stats['questions_per_video']:.1f} per video; the release "
        f"{stats['release_questions_per_video']:.1f}).",
        "",
        "| type | questions | share | release share |",
        "| --- | ---: | ---: | ---: |",
    ]
    for t, v in stats["types"].items():
        lines.append(f"| {t} | {v['count']} | {v['share']:.3f} | {v['release_share']:.3f} |")
    lines += ["", "| descriptive sub-type | answers (count each) | most/least |", "| --- | --- | ---: |"]
    for sub, counts in stats["descriptive_answers"].items():
        spread = ", ".join(f"{a}: {n}" for a, n in counts.items())
        lines.append(f"| {sub} | {spread} | {balance_ratio(counts):.2f} |")
    lines += ["", "| multiple-choice type | choices per question | correct choices per question |",
              "| --- | --- | --- |"]  # fmt: skip
    for t, counts in stats["choices_per_question"].items():
        right = stats["correct_choices_per_question"].get(t, {})
        lines.append(f"| {t} | {counts} | {right} |")
    fam = stats["families"]
    lines += ["", f"Answer balance within template families (the question's words with the "
                  f"attribute values masked): {fam['families']} families; answering each "
                  f"family's most frequent answer gets {100 * fam['mode_share']:.1f}% of the "
                  f"descriptive questions ({100 * fam['mode_share_asked_often']:.1f}% over the "
                  f"{fam['families_asked_often']} families asked 10 times or more).", "",
              "| family (10+ questions) | answers | most frequent |", "| --- | --- | ---: |"]
    for family, counts in list(fam["asked_often"].items())[:FAMILY_ROWS]:
        total = sum(counts.values())
        spread = ", ".join(f"{a}: {n}" for a, n in counts.items())
        lines.append(f"| {family} | {spread} | {max(counts.values()) / total:.2f} |")
    lines += ["", "| option cell (type / form / kind) | correct | wrong | correct share |",
              "| --- | ---: | ---: | ---: |"]  # fmt: skip
    for cell, counts in stats["option_labels"].items():
        right, wrong = counts.get("correct", 0), counts.get("wrong", 0)
        share = right / (right + wrong) if right + wrong else 0.0
        lines.append(f"| {cell} | {right} | {wrong} | {share:.2f} |")
    if types_png is not None:
        lines += ["", f"![question types]({types_png.name})"]
    if balance_png is not None:
        lines += ["", f"![answer balance]({balance_png.name})"]
    return lines


def _event_lines(stats: dict[str, Any]) -> list[str]:
    lines = [f"Events over {stats['videos']} annotated videos:", "",
             "| per video | mean | min | max |", "| --- | ---: | ---: | ---: |"]  # fmt: skip
    for key, v in stats["summary"].items():
        lines.append(f"| {key} | {v['mean']:.2f} | {v['min']} | {v['max']} |")
    return lines

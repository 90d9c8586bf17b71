"""CLEVRER as an lmms-eval task (`tvr export lmms-eval --benchmark clevrer`): one task over the
four question types of the validation split (`tvr_clevrer`; the train split `tvr_clevrer_train`;
the release's test split has no answers, so no task).

The rows are the `tvr export hf` CLEVRER export's `questions` config with one column more,
`video_path`: the video's absolute path, found as `tvr vlm run --task clevrer` finds it (the
`videos` config is left out: the frames are decoded from that file, not from a copy).
`doc_to_visual` gives the video as tvr sends it: `FRAMES` (8, `tvr vlm run`'s default) frames
evenly spaced from the first to the last, each the JPEG tvr sends (`sampled_frames`), decoded.
`doc_to_text` fills tvr's shipped prompt (`clevrer.txt`) with `ClevrerTask`'s fields.
`process_results` reads the reply with tvr's parsers (`parse_descriptive`, `parse_choices`; an
unreadable reply or a failed request is left out, as `tvr vlm export` leaves it out), and each
aggregation rebuilds the question file and the answer file from the rows and scores them with
`tvr clevrer evaluate`'s scorer (`tvr.clevrer.eval.score.score`): descriptive accuracy and, per
multiple-choice type, per-option and per-question accuracy (fractions, as its summary.json).
"""

from __future__ import annotations

import io
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvr.core.lmms_export import LmmsExport, LmmsMetric, LmmsTask

FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
ROW_FIELDS = ("id", "scene_index", "question_id", "video_filename", "question", "question_type",
              "question_subtype", "program", "answer", "choices")  # fmt: skip
MC_TYPES = ("explanatory", "predictive", "counterfactual")
#: metric name -> (the score's key, its level or None for descriptive)
METRIC_KEYS: dict[str, tuple[str, str | None]] = {
    "descriptive": ("descriptive", None),
    **{f"{t}_{level}": (t, level) for t in MC_TYPES for level in ("per_option", "per_question")},
}


@lru_cache(maxsize=1)
def _template() -> Any:
    from tvr.clevrer.vlm_task import ClevrerTask
    from tvr.vlm.templates import shipped_template

    return shipped_template(ClevrerTask.default_prompt, ClevrerTask.prompt_package)


def question_of(row: dict[str, Any]) -> Any:
    """The row as tvr's `Question` (what ClevrerTask reads from the question file)."""
    from tvr.clevrer.data.questions import Choice, Question

    choices = row.get("choices")
    extra = {"question_subtype": row["question_subtype"]} if row.get("question_subtype") else {}
    return Question(
        question_id=row["question_id"], question=row["question"],
        question_type=row["question_type"],
        program=tuple(row["program"]) if row.get("program") is not None else None,
        answer=row.get("answer"),
        choices=None if choices is None else tuple(
            Choice(c["choice_id"], c["choice"],
                   tuple(c["program"]) if c.get("program") is not None else None, c.get("answer"))
            for c in choices),
        extra=extra,
    )  # fmt: skip


def _frames() -> int:
    from tvr.clevrer.vlm_task import FRAMES

    return FRAMES


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    from PIL import Image

    from tvr.clevrer.vlm_task import sampled_frames

    return [Image.open(io.BytesIO(jpeg)).convert("RGB")
            for jpeg in sampled_frames(Path(doc["video_path"]), _frames())]  # fmt: skip


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    """ClevrerTask.item's fields (frames mode, `FRAMES` frames)."""
    from tvr.clevrer.vlm_task import choices_text, instructions

    q, n = question_of(doc), _frames()
    what = (
        f"You will see {n} frames of a video, evenly spaced in time from its first frame to "
        "its last, in time order."
        if n > 1
        else "You will see one frame from the middle of a video."
    )
    fields = {"video_text": what, "question": q.question,
              "choices": choices_text(q) if q.choices is not None else "",
              "answer_instructions": instructions(q), "num_frames": str(n)}  # fmt: skip
    return _template().render(fields)


def parse(doc: dict[str, Any], reply: str | None) -> Any:
    """The answer tvr's export writes for this reply: a string, {choice_id: label}, or None
    (left out: unreadable, or no reply)."""
    from tvr.clevrer.vlm_task import parse_choices, parse_descriptive

    if reply is None or str(reply).startswith(FAILED_PREFIX):
        return None
    q = question_of(doc)
    if q.choices is None:
        found = parse_descriptive(reply, q.subtype)
        return found.answer if found.ok else None
    found = parse_choices(reply, len(q.choices))
    if not found.ok:
        return None
    return {str(c.choice_id): found.answer[k] for k, c in enumerate(q.choices, start=1)}


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    reply = results[0] if results else None
    value = {"row": {k: doc.get(k) for k in ROW_FIELDS}, "answer": parse(doc, reply)}
    return {m: value for m in METRIC_KEYS}


def score(values: list[dict[str, Any]]) -> dict[str, Any]:
    """`tvr clevrer evaluate`'s score (summary.json's `score`) of the answers in `values`."""
    from tvr.clevrer.data.questions import VideoQuestions
    from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo
    from tvr.clevrer.eval.score import score as clevrer_score

    scenes: dict[int, list[dict[str, Any]]] = {}
    for v in values:
        scenes.setdefault(v["row"]["scene_index"], []).append(v)
    questions, answers = [], []
    for scene, vs in scenes.items():
        vs = sorted(vs, key=lambda v: v["row"]["question_id"])
        questions.append(VideoQuestions(scene, vs[0]["row"]["video_filename"] or "",
                                        tuple(question_of(v["row"]) for v in vs)))  # fmt: skip
        given = []
        for v in vs:
            a, qid = v["answer"], v["row"]["question_id"]
            if isinstance(a, dict):
                given.append(SubmittedQuestion(qid, choices={int(k): x for k, x in a.items()}))
            elif a is not None:
                given.append(SubmittedQuestion(qid, answer=a))
        answers.append(SubmittedVideo(scene, tuple(given)))
    return clevrer_score(questions, answers).to_json()


def _aggregate(metric: str) -> Any:
    key, level = METRIC_KEYS[metric]

    def aggregate(values: list[dict[str, Any]]) -> float | None:
        s = score(values)[key]
        return (s if level is None else s[level])["accuracy"]

    aggregate.__name__ = metric
    aggregate.__doc__ = (
        f"`tvr clevrer evaluate`'s score.{key}{'.' + level if level else ''}.accuracy"
    )
    return aggregate


_g = globals()
for _m in METRIC_KEYS:
    _g[_m] = _aggregate(_m)

METRICS = tuple(LmmsMetric(m, m) for m in METRIC_KEYS)


def _with_video_path(table: Any, root: Path, split: str) -> Any:
    from datasets import Value

    from tvr.clevrer.data.layout import find_video, video_path
    from tvr.core.errors import UserError

    def video(scene: int) -> str:
        try:
            return str(find_video(root, scene).resolve())
        except UserError:
            return str(video_path(root, scene, split).resolve())

    def rows() -> Any:
        for row in table.rows():
            yield {**row, "video_path": video(row["scene_index"])}

    return replace(table, features=lambda: {**table.features(), "video_path": Value("string")},
                   rows=rows)  # fmt: skip


def export_lmms(data: str | Path, splits: tuple[str, ...] | None = None) -> LmmsExport:
    from tvr.clevrer.data.layout import release_split
    from tvr.clevrer.hf_export import export_clevrer

    hf = export_clevrer(data, splits)
    hf_split = {"train": "train", "validation": "val"}
    tables = [_with_video_path(t, Path(data), release_split(hf_split.get(t.split, t.split)))
              for t in hf.tables if t.config == "questions" and t.split != "test"]  # fmt: skip
    hf = replace(hf, tables=tables, description=hf.description.split(" Config `videos`")[0]
                 + " `video_path`: the video's absolute path (tvr export lmms-eval).")  # fmt: skip
    tasks = [
        LmmsTask("tvr_clevrer" + ("" if t.split == "validation" else f"_{t.split}"), "questions",
                 t.split, METRICS, max_new_tokens=4096,
                 note="CLEVRER, scored by tvr clevrer evaluate (fractions).")
        for t in tables
    ]  # fmt: skip
    return LmmsExport("clevrer", __name__, "tvr_clevrer", hf, tasks)

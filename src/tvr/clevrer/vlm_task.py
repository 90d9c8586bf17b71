"""The CLEVRER task adapter of `tvr vlm`: ask about each question of a CLEVRER question file.

Items: one per question of the chosen question file (`--data` a set's folder with `--split`, or a
question file), in file order, id `<scene>-<question_id>` (e.g. `10000-3`). The video is sent as
`frames` images (default 8): frames evenly spaced from the video's first frame to its last, in
time order, each a JPEG decoded with PyAV when the request is built (the decoded frames of the
last few videos are kept, so the questions of one video decode it once). Videos are found under
`images` (default: the set's folder; for a question file `questions/<split>.json`, the folder
above `questions/`) in tvr's layout or the release's archives (`tvr.clevrer.data.layout`).
For endpoints that take video (vLLM's `video_url` parts), `video="inline"` sends the mp4 itself
as a data URL and `video="path"` its absolute path as a file:// URL, instead of frames.

The prompt (`prompts/clevrer.txt`) gets `$video_text` (what the pictures are), `$question`,
`$choices` (the numbered choices of a multiple-choice question, empty for a descriptive one),
`$answer_instructions` (what to answer and how) and `$num_frames`.

Replies, read by `parse_descriptive` and `parse_choices` (the last `<answer>` tag, else the last
fenced block, else the reply without `<think>` blocks):

- descriptive: one word or number of the question's answer space (a count as digits, number
  words "two" read as "2"; yes/no; a color, shape or material; a few synonyms: grey, metallic,
  ball, block); anything else is unreadable;
- explanatory, predictive, counterfactual: a verdict, correct or wrong, for every listed choice,
  as CLEVRER scores each option: a JSON object {"1": "correct", "2": "wrong"}, a JSON list of
  verdicts in choice order, {"correct": [1, 3]} (the others wrong), or lines "1: correct". A
  reply that misses a choice or names one that is not listed is unreadable.

An unreadable reply is never guessed: `export_predictions` leaves its question out of the answer
file (`tvr clevrer evaluate` counts it unanswered and wrong) and lists it with the reason in
`OUT.unparsed.jsonl`, as it does a failed request or a question without a reply; and
`OUT.export.json` records the results file read and the counts (`tvr vlm report`).
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.clevrer.data.layout import find_video, questions_file, release_split, video_path
from tvr.clevrer.data.questions import Question, VideoQuestions, read_questions
from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo, write_submission
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES
from tvr.core.errors import UserError
from tvr.core.jsonl import write_jsonl
from tvr.vlm import export as vlm_export
from tvr.vlm.export import EXCERPT_CHARS
from tvr.vlm.images import ComposedImage, ImageRef, VideoFile
from tvr.vlm.replies import json_values
from tvr.vlm.results import ResultsFile, is_success, read_results
from tvr.vlm.tasks import ParsedReply, TaskItem

#: frames sent per video, by default
FRAMES = 8
#: most frames per video (the release's videos have 128)
MAX_FRAMES = 64
JPEG_QUALITY = 90
#: how the video is sent: sampled frames, the file inline, or its path as a file:// URL
VIDEO_MODES = ("frames", "inline", "path")

#: the answer space of each descriptive sub-type (a count is any whole number)
ANSWER_SPACES: dict[str, tuple[str, ...]] = {
    "exist": ("yes", "no"),
    "query_color": COLORS,
    "query_shape": SHAPES,
    "query_material": MATERIALS,
}
#: what a descriptive answer should be, by sub-type (the prompt's instructions)
ANSWER_KINDS: dict[str, str] = {
    "count": "a whole number written in digits, for example 2",
    "exist": "yes or no",
    "query_color": "one color: " + ", ".join(COLORS),
    "query_shape": "one shape: " + ", ".join(SHAPES),
    "query_material": "one material: " + ", ".join(MATERIALS),
    "other": "one word or a whole number in digits: yes or no, a count, a color, a shape or a "
    "material",
}
#: the example answer of the prompt, by sub-type
ANSWER_EXAMPLES: dict[str, str] = {
    "count": "2", "exist": "yes", "query_color": "red", "query_shape": "cube",
    "query_material": "metal", "other": "2",
}  # fmt: skip
#: words read as an answer of the release's vocabulary
SYNONYMS: dict[str, str] = {
    **{w: str(k) for k, w in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"))},
    "none": "0", "grey": "gray", "metallic": "metal", "ball": "sphere", "balls": "sphere",
    "spheres": "sphere", "cubes": "cube", "block": "cube", "blocks": "cube",
    "cylinders": "cylinder", "true": "yes", "false": "no",
}  # fmt: skip
#: a choice's verdict as written -> the answer file's label
VERDICTS: dict[str, str] = {
    "correct": "correct", "right": "correct", "true": "correct", "yes": "correct",
    "wrong": "wrong", "incorrect": "wrong", "false": "wrong", "no": "wrong",
}  # fmt: skip

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.IGNORECASE | re.DOTALL)
_ANSWER_LINE = re.compile(
    r"^\s*(?:final\s+)?answer\s*[:=]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE
)
_VERDICT_LINE = re.compile(
    r"^\s*[-*]?\s*(?:choice|option)?\s*#?\(?(\d+)\)?\s*[:.)=\-]\s*\**\s*([A-Za-z]+)\b",
    re.IGNORECASE | re.MULTILINE,
)


def answer_region(reply: str) -> str:
    """Where the answer is: the last non-empty `<answer>` tag, else the last fenced block, else
    the reply without `<think>` blocks."""
    text = reply or ""
    tags = [t for t in _ANSWER_TAG.findall(text) if t.strip()]
    if tags:
        return tags[-1]
    fences = [t for t in _FENCE.findall(text) if t.strip()]
    return fences[-1] if fences else _THINK_BLOCK.sub("", text)


def _word(text: str) -> str:
    """A short answer as one lower-case word: quotes, brackets and end punctuation dropped,
    synonyms mapped."""
    word = text.strip().strip("\"'`*[]{}()").strip().rstrip(".!").strip().lower()
    return SYNONYMS.get(word, word)


def parse_descriptive(reply: str, subtype: str = "other") -> ParsedReply:
    """The answer of a descriptive question (a string as the answer file holds it), or why not.

    The answer region (`answer_region`) must be one word or number, or a JSON string, or
    {"answer": ...}; without a tag or fence, a last line "Answer: X" also counts. It must lie in
    the sub-type's answer space (any sub-type's for "other")."""
    region = answer_region(reply)
    candidates = [region]
    values = json_values(region)
    if values and isinstance(values[-1], dict) and "answer" in values[-1]:
        candidates = [str(values[-1]["answer"])]
    elif values and isinstance(values[-1], list) and len(values[-1]) == 1:
        candidates = [str(values[-1][0])]
    lines = _ANSWER_LINE.findall(region)
    if lines:
        candidates.append(lines[-1])
    for text in candidates:
        word = _word(text)
        if word and re.fullmatch(r"[a-z0-9]+", word):
            break
    else:
        return ParsedReply(None, "no one-word answer found")
    if subtype == "count" or (subtype not in ANSWER_SPACES and word.isdigit()):
        if word.isdigit():
            return ParsedReply(str(int(word)))
        return ParsedReply(None, f"{word!r} is not a count")
    space = ANSWER_SPACES.get(subtype) or tuple(a for s in ANSWER_SPACES.values() for a in s)
    if word in space:
        return ParsedReply(word)
    kind = subtype.removeprefix("query_") if subtype in ANSWER_SPACES else "CLEVRER"
    return ParsedReply(None, f"{word!r} is not a {kind} answer")


def _verdict(value: Any) -> str | None:
    if isinstance(value, bool):
        return "correct" if value else "wrong"
    if isinstance(value, str):
        return VERDICTS.get(_word(value))
    return None


def _choice_number(key: Any) -> int | None:
    if isinstance(key, int) and not isinstance(key, bool):
        return key
    if isinstance(key, str):
        m = re.fullmatch(r"\s*(?:choice|option)?\s*#?(\d+)\s*", key, re.IGNORECASE)
        return int(m.group(1)) if m else None
    return None


def _json_verdicts(value: Any, count: int) -> dict[int, str] | None:
    """Verdicts by choice number from one JSON value, or None when it is not such a value."""
    if isinstance(value, dict) and set(value) <= {"correct", "wrong"} and value:
        # {"correct": [1, 3]} (and/or "wrong": [...]): the listed numbers, the others the opposite
        named: dict[int, str] = {}
        for label, numbers in value.items():
            if not isinstance(numbers, list):
                return None
            for n in numbers:
                k = _choice_number(n)
                if k is None or named.get(k, label) != label:
                    return None
                named[k] = label
        other = "wrong" if "correct" in value else "correct"
        if "correct" in value and "wrong" in value:
            return named
        return {**{k: other for k in range(1, count + 1)}, **named}
    if isinstance(value, dict) and isinstance(value.get("choices"), (dict, list)):
        return _json_verdicts(value["choices"], count)
    if isinstance(value, dict) and value:
        out = {}
        for key, v in value.items():
            k, verdict = _choice_number(key), _verdict(v)
            if k is None or verdict is None:
                return None
            out[k] = verdict
        return out
    if isinstance(value, list) and value:
        verdicts = [_verdict(v) for v in value]
        if any(v is None for v in verdicts):
            return None
        return {k: v for k, v in enumerate(verdicts, start=1) if v is not None}
    return None


def parse_choices(reply: str, count: int) -> ParsedReply:
    """The verdicts of a multiple-choice reply as {choice number (1..count): "correct" |
    "wrong"}, or why not: the last JSON value of the answer region that gives verdicts, else
    lines "1: correct"; every choice must have one, and no other number may."""
    region = answer_region(reply)
    found = None
    for value in reversed(json_values(region)):
        found = _json_verdicts(value, count)
        if found is not None:
            break
    if found is None:
        lines = {}
        for number, word in _VERDICT_LINE.findall(region):
            verdict = VERDICTS.get(word.lower())
            if verdict is not None:
                lines[int(number)] = verdict
        found = lines or None
    if found is None:
        return ParsedReply(None, "no verdict (correct or wrong) per choice found")
    extra = sorted(k for k in found if not 1 <= k <= count)
    if extra:
        return ParsedReply(None, f"choice {extra[0]} is not among 1..{count}")
    missing = [k for k in range(1, count + 1) if k not in found]
    if missing:
        return ParsedReply(None, f"no verdict for choice {missing[0]}")
    return ParsedReply({k: found[k] for k in range(1, count + 1)})


def frame_indices(total: int, count: int) -> list[int]:
    """`count` frame indices evenly spaced over `total` frames, first and last included (one
    frame: the middle one)."""
    if total < 1:
        raise UserError("the video has no frames")
    if count == 1:
        return [(total - 1) // 2]
    return [round(i * (total - 1) / (count - 1)) for i in range(count)]


@functools.lru_cache(maxsize=4)
def sampled_frames(video: Path, count: int) -> tuple[bytes, ...]:
    """`count` evenly spaced frames of a video as JPEG bytes, in time order (PyAV)."""
    try:
        import av
    except ImportError:
        raise UserError("reading CLEVRER videos needs PyAV (pip install av)") from None
    try:
        with av.open(str(video)) as container:
            frames = list(container.decode(video=0))
            if not frames:
                raise UserError(f"{video}: the video has no frames")
            out = []
            for i in frame_indices(len(frames), count):
                buf = io.BytesIO()
                frames[i].to_image().save(buf, format="JPEG", quality=JPEG_QUALITY)
                out.append(buf.getvalue())
    except FileNotFoundError:
        raise UserError(f"{video}: video not found") from None
    except (OSError, av.error.FFmpegError) as err:
        raise UserError(f"{video}: cannot read the video ({err})") from None
    return tuple(out)


def _frame_jpeg(sources: tuple[Path, ...], index: int, count: int) -> bytes:
    """Frame `index` of the `count` sampled frames of the video `sources[0]`."""
    return sampled_frames(sources[0], count)[index]


def videos_root(data: Path, questions: Path, images: str | Path | None) -> Path:
    """Where the videos are: `images`, else the set's folder (`data` itself, or the folder
    above a question file's `questions/` folder, or the question file's folder)."""
    if images is not None:
        return Path(images)
    if data.is_dir():
        return data
    parent = questions.parent
    return parent.parent if parent.name == "questions" else parent


def choices_text(question: Question) -> str:
    """The numbered choices of a multiple-choice question, one a line."""
    assert question.choices is not None
    lines = [f"{k}. {c.choice}" for k, c in enumerate(question.choices, start=1)]
    return "Choices:\n" + "\n".join(lines) + "\n"


def instructions(question: Question) -> str:
    """What to answer and in which form."""
    if question.is_descriptive:
        kind = ANSWER_KINDS.get(question.subtype, ANSWER_KINDS["other"])
        return (
            f"Answer with a single word or number: {kind}. First think step by step inside "
            "<think>...</think>, then give only the answer inside <answer>...</answer>, for "
            f"example:\n<answer>{ANSWER_EXAMPLES.get(question.subtype, '2')}</answer>"
        )
    assert question.choices is not None
    example = ", ".join(
        f'"{k}": "{"correct" if k % 2 else "wrong"}"' for k in range(1, len(question.choices) + 1)
    )
    return (
        "Each choice is either correct or wrong, on its own: any number of them may be correct. "
        "Judge every choice. First think step by step inside <think>...</think>, then give only "
        'the answer, a JSON object from each choice\'s number to "correct" or "wrong", inside '
        f"<answer>...</answer>, for example:\n<answer>{{{example}}}</answer>"
    )


def item_id(scene_index: int, question_id: int) -> str:
    """A question's id, the same in `tvr vlm run`'s results, the HF/lmms-eval export and
    `tvr clevrer evaluate`'s detail.jsonl: SCENE/QUESTION."""
    return f"{scene_index}/{question_id}"


def legacy_id(record_id: str) -> str:
    """An id of results written before tvr 0.2 (SCENE-QUESTION) in today's form."""
    scene, sep, question = record_id.partition("-")
    return f"{scene}/{question}" if sep and scene.isdigit() and question.isdigit() else record_id


class ClevrerTask:
    """Items of a CLEVRER question file, one per question, the video as sampled frames."""

    name = "clevrer"
    default_prompt = "clevrer.txt"
    prompt_package = "tvr.clevrer"
    fields = frozenset({"video_text", "question", "choices", "answer_instructions", "num_frames"})

    def __init__(
        self,
        data: str | Path,
        images: str | Path | None = None,
        split: str = "test",
        frames: int = FRAMES,
        video: str = "frames",
    ) -> None:
        if video not in VIDEO_MODES:
            raise UserError(f"CLEVRER video must be one of {', '.join(VIDEO_MODES)}, got {video!r}")
        if not 1 <= frames <= MAX_FRAMES:
            raise UserError(f"frames per video must be 1..{MAX_FRAMES}, got {frames}")
        data = Path(data)
        self.questions_path = questions_file(data, split)
        self.videos: list[VideoQuestions] = read_questions(self.questions_path)
        if not any(v.questions for v in self.videos):
            raise UserError(f"{self.questions_path}: no questions")
        self.root = videos_root(data, self.questions_path, images)
        self.split = release_split(split)
        self.frames = frames
        self.video_mode = video
        self._by_id = {item_id(v.scene_index, q.question_id): q
                       for v in self.videos for q in v.questions}  # fmt: skip

    def video(self, scene_index: int) -> Path:
        """The video's file: found under the root, else where tvr's layout puts it (so that a
        missing video is named when the run checks its images, and export needs no videos)."""
        try:
            return find_video(self.root, scene_index)
        except UserError:
            return video_path(self.root, scene_index, self.split)

    def item(self, video: VideoQuestions, question: Question, path: Path) -> TaskItem:
        n = self.frames
        images: tuple[ImageRef, ...] = tuple(
            ComposedImage((path,), functools.partial(_frame_jpeg, index=k, count=n),
                          f"frame {k + 1} of {n} of video {video.scene_index}")
            for k in range(n)
        )  # fmt: skip
        what = (
            f"You will see {n} frames of a video, evenly spaced in time from its first frame to "
            "its last, in time order."
            if n > 1
            else "You will see one frame from the middle of a video."
        )
        if self.video_mode != "frames":
            images = (VideoFile(path, inline=self.video_mode == "inline"),)
            what = "You will see a video."
        fields = {
            "video_text": what,
            "question": question.question,
            "choices": choices_text(question) if question.choices is not None else "",
            "answer_instructions": instructions(question),
            "num_frames": str(n),
        }
        meta = {
            "scene_index": video.scene_index,
            "question_id": question.question_id,
            "question_type": question.question_type,
            "choices": len(question.choices) if question.choices is not None else 0,
        }
        return TaskItem(item_id(video.scene_index, question.question_id), images, fields, meta)

    def items(self) -> list[TaskItem]:
        out = []
        for v in self.videos:
            path = self.video(v.scene_index) if v.questions else None
            out += [self.item(v, q, path) for q in v.questions]  # type: ignore[arg-type]
        return out

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """A descriptive answer (str), or the verdicts by choice id ({choice_id: label})."""
        question = self._by_id[item.id]
        if question.choices is None:
            return parse_descriptive(reply, question.subtype)
        found = parse_choices(reply, len(question.choices))
        if not found.ok:
            return found
        return ParsedReply({c.choice_id: found.answer[k]
                            for k, c in enumerate(question.choices, start=1)})  # fmt: skip


@dataclass
class ExportSummary:
    """What `export_predictions` wrote and counted."""

    predictions: Path
    unparsed_file: Path
    items: int
    parsed: int = 0
    unparsed: int = 0  # a reply that could not be read
    without_reply: int = 0  # no results line, or a failed request
    by_type: dict[str, list[int]] = field(default_factory=dict)  # type -> [read, questions]


def unparsed_path(answers: str | Path) -> Path:
    """`answers.json` -> `answers.unparsed.jsonl`."""
    p = Path(answers)
    return p.with_name(p.stem + ".unparsed.jsonl")


def export_predictions(
    task: ClevrerTask, results: str | Path | ResultsFile, out: str | Path
) -> ExportSummary:
    """Write `out`, the answer file (the challenge's submission format) that `tvr clevrer
    evaluate --predictions` scores, with every question whose reply was read; and beside it
    `OUT.unparsed.jsonl`, each question left out and why (no results line, a failed request, a
    reply that could not be read), and `OUT.export.json`, the results file read and the counts
    (`tvr.vlm.export.write_export_record`, read by `tvr vlm report`)."""
    res = results if isinstance(results, ResultsFile) else read_results(results, missing_ok=False)
    records = {legacy_id(i): r for i, r in res.records.items()}
    records.update({i: r for i, r in res.records.items() if "/" in i})
    out = Path(out)
    items = task.items()
    s = ExportSummary(out, unparsed_path(out), len(items))
    answers: dict[int, list[SubmittedQuestion]] = {v.scene_index: [] for v in task.videos}
    problems: list[dict[str, Any]] = []
    for item in items:
        qtype = str(item.meta["question_type"])
        tally = s.by_type.setdefault(qtype, [0, 0])
        tally[1] += 1
        record = records.get(item.id)
        if record is None:
            problems.append({"id": item.id, "reason": "no result line"})
            s.without_reply += 1
            continue
        if not is_success(record):
            problems.append({"id": item.id, "reason": f"request failed: {record.get('error')}"})
            s.without_reply += 1
            continue
        parsed = task.parse_reply(item, record["reply"])
        if not parsed.ok:
            problems.append({"id": item.id, "reason": parsed.reason,
                             "reply_excerpt": (record.get("reply") or "")[-EXCERPT_CHARS:]})  # fmt: skip
            s.unparsed += 1
            continue
        s.parsed += 1
        tally[0] += 1
        qid = int(item.meta["question_id"])
        answer = parsed.answer
        answers[int(item.meta["scene_index"])].append(
            SubmittedQuestion(qid, choices=answer) if isinstance(answer, dict)
            else SubmittedQuestion(qid, answer=answer)
        )  # fmt: skip
    write_submission(out, (SubmittedVideo(k, tuple(qs)) for k, qs in answers.items()))
    write_jsonl(s.unparsed_file, problems)
    vlm_export.write_export_record(task.name, res.path, s)  # OUT.export.json, for `tvr vlm report`
    return s


def summary_line(s: ExportSummary) -> str:
    """What `tvr vlm export --task clevrer` prints."""
    types = ", ".join(f"{t} {r}/{n}" for t, (r, n) in s.by_type.items())
    return (
        f"{s.items} questions: {s.parsed} answers written to {s.predictions} ({types}), "
        f"{s.unparsed} unreadable, {s.without_reply} without a reply (left out, scored wrong "
        f"by tvr clevrer evaluate; listed in {s.unparsed_file})"
    )

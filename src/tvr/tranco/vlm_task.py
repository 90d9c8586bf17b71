"""The TRANCO task adapter of `tvr vlm`: ask for the ordered step clips among a sample's candidates.

Items: one per sample of the chosen split (default test), id = the sample id, against its stored
tiny candidate set (100 in the paper; the full set of thousands of clips is no prompt). Images:
the initial state, the final state, then the candidates on sheets of `clips_per_image` clips
(`tvr.tranco.clip_sheet`: one clip per row, its number 1..K in a box, its frames left to right),
numbered in the stored candidate order. The prompt (`prompts/tranco.txt`) gets `$process` (what
the pictures show: a COIN video or the rendered testbed), `$num_candidates`, `$clip_images`
(which image holds which numbers), `$frames_per_clip`, `$clips_per_image` and the step range
`$min_steps`..`$max_steps` (that of the training split).

A reply is read by `parse_clip_numbers` (a JSON list of numbers in the last <answer> tag, fenced
block or the reply); `export_predictions` writes one predictions line per item, `{"id",
"clips"}` with the clip ids of the numbers, which `tvr tranco evaluate` scores. A reply that
cannot be read, a failed request and an item without a reply get `"clips": []` (scored wrong)
and are listed with the reason in `OUT.unparsed.jsonl`.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.tranco.clip_sheet import clip_sheet_jpeg
from tvr.tranco.data.dataset import TrancoDataset, TrancoSample, open_dataset
from tvr.tranco.data.layout import SPLITS
from tvr.vlm.export import ExportSummary, write_predictions
from tvr.vlm.images import ComposedImage, ImageRef
from tvr.vlm.replies import json_values
from tvr.vlm.results import ResultsFile
from tvr.vlm.tasks import ParsedReply, TaskItem

#: candidate clips per sheet image
CLIPS_PER_IMAGE = 10
#: what the pictures show, by the dataset's source (`$process`)
PROCESS = {
    "coin": "a real process, taken from an instructional video",
    "trance-clips": "a rendered scene of simple 3D objects that is changed step by step",
}

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.IGNORECASE | re.DOTALL)
#: an answer written as bare numbers: "3, 17, 42", "3 -> 17 -> 42", "[3][17]"
_BARE_NUMBERS = re.compile(r"[\s\[\](),;#>→-]*\d+(?:[\s\[\](),;#>→.-]+\d+)*[\s\[\](),;#>→.-]*")


def _number_list(value: Any) -> list[int] | None:
    """A JSON list of clip numbers (integers or digit strings), or `{"clips": [...]}`."""
    if isinstance(value, dict):
        value = value.get("clips", value.get("answer"))
    if not isinstance(value, list) or not value:
        return None
    out = []
    for v in value:
        if isinstance(v, str) and v.strip().isdigit():
            v = int(v.strip())
        if isinstance(v, bool) or not isinstance(v, int):
            return None
        out.append(v)
    return out


def parse_clip_numbers(reply: str, count: int) -> ParsedReply:
    """The clip numbers of a reply, in order, each within 1..count, or the reason why not.

    Where: the last `<answer>` tag, else the last fenced code block, else the whole reply
    without `<think>` blocks; in it, the last JSON list of numbers (or `{"clips": [...]}`), or
    numbers written bare with separators ("3, 17, 42", "3 -> 17"). A number outside 1..count
    makes the reply unreadable; a repeated number is kept (the metrics count it as a wrong
    step)."""
    text = reply or ""
    tags = [t for t in _ANSWER_TAG.findall(text) if t.strip()]
    fences = [t for t in _FENCE.findall(text) if t.strip()]
    region = tags[-1] if tags else fences[-1] if fences else _THINK_BLOCK.sub("", text)
    lists = [n for v in json_values(region) if (n := _number_list(v)) is not None]
    if lists:
        numbers = lists[-1]
    elif _BARE_NUMBERS.fullmatch(region.strip()):
        numbers = [int(x) for x in re.findall(r"\d+", region)]
    else:
        return ParsedReply(None, "no list of clip numbers found")
    bad = [n for n in numbers if not 1 <= n <= count]
    if bad:
        return ParsedReply(None, f"clip number {bad[0]} is not among 1..{count}")
    return ParsedReply(numbers)


def clip_images_text(count: int, per_image: int, first_image: int = 3) -> str:
    """Which image shows which clip numbers, for the prompt."""
    parts = []
    for k, start in enumerate(range(1, count + 1, per_image)):
        end = min(start + per_image - 1, count)
        numbers = f"clip {start}" if start == end else f"clips {start}-{end}"
        parts.append(f"<image{first_image + k}>: {numbers}")
    sheets = len(parts)
    head = (
        f"Then {sheets} picture{'s' if sheets > 1 else ''} of the {count} candidate clips, one "
        "clip per row: the clip's number in the black box on the left, then frames of the clip "
        "from left to right in time order."
    )
    return head + "\n" + "\n".join(parts)


class TrancoTask:
    """Items of a TRANCO dataset split, each against its stored tiny candidates."""

    name = "tranco"
    default_prompt = "tranco.txt"
    prompt_package = "tvr.tranco"
    fields = frozenset(
        {"process", "num_candidates", "clip_images", "frames_per_clip", "clips_per_image",
         "min_steps", "max_steps"}
    )  # fmt: skip

    def __init__(
        self,
        data: str | Path,
        images: str | Path | None = None,
        split: str = "test",
        clips_per_image: int = CLIPS_PER_IMAGE,
    ) -> None:
        if split not in SPLITS:
            raise UserError(f"TRANCO split must be one of {', '.join(SPLITS)}, got {split!r}")
        if clips_per_image < 1:
            raise UserError(f"clips per image must be 1 or more, got {clips_per_image}")
        self.dataset: TrancoDataset = open_dataset(data, check_images=False)
        # image paths of the files are relative to the dataset folder, or to --images
        self.images = Path(images) if images is not None else self.dataset.root
        self.split = split
        self.samples = self.dataset.split(split)
        self._by_id = {s.id: s for s in self.samples}
        bare = next((s for s in self.samples if s.candidates is None), None)
        if bare is not None:
            raise UserError(f"sample {bare.id!r} of {split} stores no candidates: the VLM task "
                            "asks about the stored (tiny) candidate sets, of val or test")  # fmt: skip
        if not self.samples:
            raise UserError(f"{data}: the {split} split has no samples")
        self.clips_per_image = clips_per_image
        lengths = [s.steps for s in self.dataset.split("train") or self.samples]
        self.min_steps, self.max_steps = min(lengths), max(lengths)

    def _path(self, relative: str) -> Path:
        return self.images / relative

    def sheets(self, sample: TrancoSample) -> tuple[ImageRef, ...]:
        """The candidate sheets of a sample, `clips_per_image` clips each, numbered from 1."""
        assert sample.candidates is not None
        out: list[ImageRef] = []
        for start in range(0, len(sample.candidates), self.clips_per_image):
            clips = sample.candidates[start : start + self.clips_per_image]
            frames = [[self._path(f) for f in self.dataset.clips[c].frames] for c in clips]
            numbers = tuple(range(start + 1, start + len(clips) + 1))
            compose = functools.partial(
                clip_sheet_jpeg, numbers=numbers, frames_per_row=tuple(len(f) for f in frames)
            )
            label = f"clips {numbers[0]}-{numbers[-1]} of {sample.id}"
            out.append(ComposedImage(tuple(p for f in frames for p in f), compose, label))
        return tuple(out)

    def item(self, sample: TrancoSample) -> TaskItem:
        assert sample.candidates is not None
        count = len(sample.candidates)
        fields = {
            "process": PROCESS.get(self.dataset.source, PROCESS["coin"]),
            "num_candidates": str(count),
            "clip_images": clip_images_text(count, self.clips_per_image),
            "frames_per_clip": str(self.dataset.frames_per_clip),
            "clips_per_image": str(self.clips_per_image),
            "min_steps": str(self.min_steps),
            "max_steps": str(self.max_steps),
        }
        images = (self._path(sample.initial), self._path(sample.final), *self.sheets(sample))
        return TaskItem(sample.id, images, fields, {"split": self.split, "candidates": count})

    def items(self) -> list[TaskItem]:
        return [self.item(s) for s in self.samples]

    def candidates_of(self, item: TaskItem) -> tuple[str, ...]:
        candidates = self._by_id[item.id].candidates
        assert candidates is not None
        return candidates

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """The clip ids of the numbers of a reply, in order."""
        candidates = self.candidates_of(item)
        found = parse_clip_numbers(reply, len(candidates))
        if not found.ok:
            return found
        return ParsedReply([candidates[n - 1] for n in found.answer])


def export_predictions(
    task: TrancoTask, results: str | Path | ResultsFile, out: str | Path
) -> ExportSummary:
    """Write `out` ({"id", "clips"} per item) for `tvr tranco evaluate`, and beside it the items
    without a readable answer and why (`tvr.vlm.export`)."""
    return write_predictions(task, results, out, _prediction_line)


def _prediction_line(s: ExportSummary, item: TaskItem, clips: list[str] | None) -> dict[str, Any]:
    return {"id": item.id, "clips": clips or []}


def summary_line(s: ExportSummary) -> str:
    """What `tvr vlm export --task tranco` prints."""
    return (
        f"{s.items} predictions written to {s.predictions}: {s.parsed} read, {s.unparsed} "
        f"unreadable, {s.without_reply} without a reply (scored as empty predictions; listed "
        f"in {s.unparsed_file})"
    )

"""The TRANCE task adapter: ask a VLM for the steps between two images, read them as predictions.

Each reply is read back as a prediction line for `tvr evaluate`.

Items: one per sample in the Basic and Event settings (Basic keeps the one-step samples only),
one per (sample, view) in the View setting - the sample's own `view` if it has one, else each of
the chosen views. Images: `{id}-init.C.png`, then `{id}-fin.{view}.png` (view C outside View).
The prompt gets the table of the ten initial objects (`$objects_table`), the 33 value names
(`$values`), the final view (`$final_view`, `$final_view_name`), the step limit (`$max_steps`)
and a sentence on how many steps to give (`$steps_rule`).

Replies are read by `parse_trance_reply`; `export_predictions` writes one prediction line per
item (`{"id", "steps"}`, plus `"view"` in View) and lists the items whose reply could not be
read, or that have no reply, in a second file; those get `"steps": []` and so score as wrong.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.trance.data.files import read_samples, samples_file, setting_of_data
from tvr.trance.data.sample import Sample, image_name
from tvr.trance.eval.metrics import max_steps_for
from tvr.trance.world import vocab
from tvr.trance.world.vocab import SETTINGS, VIEW_NAMES, VIEWS
from tvr.vlm.export import write_export_record
from tvr.vlm.replies import json_values
from tvr.vlm.results import ResultsFile, is_success, read_results
from tvr.vlm.tasks import ParsedReply, TaskItem

EXCERPT_CHARS = 200


class ImageFinder:
    """A sample's image by name under a folder: the folder itself (`tvr render`'s flat layout,
    the release's images), else any folder below it (a `tvr generate` split keeps its images in
    one folder per shard); the files below are listed once, on the first name not found flat."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._below: dict[str, Path] | None = None

    def find(self, name: str) -> Path:
        flat = self.root / name
        if flat.is_file():
            return flat
        if self._below is None:
            self._below = {p.name: p for p in sorted(self.root.rglob("*.png"))}
        return self._below.get(name, flat)  # a missing image is reported where it is read


def read_sample_lines(path: str | Path) -> list[Sample]:
    """The samples of a `samples.jsonl` file (InputError names the line and field)."""
    samples = read_samples(path)
    if not samples:
        raise InputError(path, None, None, "no samples")
    return samples


def objects_table(objects: list[dict[str, Any]]) -> str:
    """A plain-text table of the initial objects: index, attributes, grid position, in view."""
    lines = ["obj | shape | size | color | material | x | y | in view"]
    for i, o in enumerate(objects):
        x, y = int(o["position"][0]), int(o["position"][1])
        visible = vocab.VISIBLE_MIN <= x <= vocab.VISIBLE_MAX and (
            vocab.VISIBLE_MIN <= y <= vocab.VISIBLE_MAX
        )
        lines.append(
            f"{i} | {o['shape']} | {o['size']} | {o['color']} | {o['material']} | {x} | {y} | "
            f"{'yes' if visible else 'no'}"
        )
    return "\n".join(lines)


def steps_rule(setting: str) -> str:
    if setting == "basic":
        return "Exactly one transformation was applied: answer with exactly one step."
    return (
        f"Between 1 and {vocab.MAX_STEPS} transformations were applied: "
        f"answer with 1 to {vocab.MAX_STEPS} steps, in the order they are applied."
    )


# --- reply parsing --------------------------------------------------------------------------

_ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.IGNORECASE | re.DOTALL)
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.IGNORECASE | re.DOTALL)


def _steps_of(value: Any) -> list[Any] | None:
    """The step list of a parsed JSON value: `{"steps": [...]}` or a bare list of steps."""
    if isinstance(value, dict) and isinstance(value.get("steps"), list):
        return value["steps"]
    if isinstance(value, list) and all(isinstance(s, dict) for s in value):
        return value
    return None


def _read_step(step: Any, k: int) -> tuple[dict[str, Any] | None, str | None]:
    if not isinstance(step, dict):
        return None, f"step {k} is not an object"
    obj = step.get("obj", step.get("object"))
    if isinstance(obj, str) and obj.strip().isdigit():
        obj = int(obj.strip())
    if isinstance(obj, bool) or not isinstance(obj, int) or not 0 <= obj < vocab.NUM_OBJECTS:
        return None, f"step {k}: obj {obj!r} is not an object index 0..9"
    value = step.get("value")
    if not isinstance(value, str):
        return None, f"step {k}: value {value!r} is not a value name"
    name = value.strip().lower()
    attr = step.get("attr", step.get("attribute"))
    if name not in vocab.VALUE_INDEX and isinstance(attr, str):
        name = f"{attr.strip().lower()}.{name}"
    if name not in vocab.VALUE_INDEX:
        return None, f"step {k}: unknown value {value!r}"
    return {"obj": obj, "value": name}, None


def parse_trance_reply(reply: str, max_steps: int | None = None) -> ParsedReply:
    """The steps of a reply, as `[{"obj": int, "value": name}, ...]`, or the reason why not.

    Where: the last `<answer>` tag, else the last fenced code block, else the whole reply without
    `<think>` blocks; in it, the last JSON value that is `{"steps": [...]}` or a list of step
    objects. A step is `{"obj": 0..9, "value": "color.red"}` (`"object"` for `"obj"`, a digit
    string for the index, any case for the value, and `{"attr": "color", "value": "red"}` are
    read too). Any bad step, or more than `max_steps` steps (None: no limit), makes the whole
    reply unreadable. Event and View replies have no limit: `tvr evaluate` applies every step, as
    the released evaluator does (a no-op 5th step can still be right); Basic allows one step.
    """
    text = reply or ""
    tags = [t for t in _ANSWER_TAG.findall(text) if t.strip()]
    fences = [t for t in _FENCE.findall(text) if t.strip()]
    region = tags[-1] if tags else fences[-1] if fences else _THINK_BLOCK.sub("", text)
    candidates = [s for v in json_values(region) if (s := _steps_of(v)) is not None]
    if not candidates:
        return ParsedReply(None, "no JSON step list found")
    steps, problems = [], []
    for k, raw in enumerate(candidates[-1]):
        step, problem = _read_step(raw, k)
        if problem:
            problems.append(problem)
        else:
            steps.append(step)
    if problems:
        return ParsedReply(None, "; ".join(problems))
    if max_steps is not None and len(steps) > max_steps:
        return ParsedReply(None, f"{len(steps)} steps, at most {max_steps} allowed")
    return ParsedReply(steps)


# --- the adapter ----------------------------------------------------------------------------


class TranceTask:
    """Items of a TRANCE `samples.jsonl`, for the Basic, Event or View setting."""

    name = "trance"
    default_prompt = "trance.txt"
    prompt_package = "tvr.trance"
    fields = frozenset(
        {"objects_table", "values", "final_view", "final_view_name", "max_steps", "steps_rule"}
    )

    def __init__(
        self,
        data: str | Path,
        images: str | Path | None = None,
        setting: str | None = None,
        views: tuple[str, ...] = VIEWS,
        split: str = "test",
    ) -> None:
        path = samples_file(data, split)
        setting = setting_of_data(path, setting)  # the data's config.json says it, if it can
        if setting not in SETTINGS:
            raise UserError(f"TRANCE setting must be one of {', '.join(SETTINGS)}, got {setting!r}")
        bad = [v for v in views if v not in VIEWS]
        if bad or not views:
            raise UserError(f"views are a non-empty subset of L, C, R; got {', '.join(views)}")
        self.samples = read_sample_lines(path)
        self.images = ImageFinder(Path(images) if images is not None else path.parent)
        self.setting = setting
        self.views = tuple(views)
        self.max_steps = max_steps_for(setting)

    def _views_of(self, sample: Sample) -> tuple[str | None, ...]:
        if self.setting != "view":
            return (None,)
        own = sample.extra.get("view")
        return (own,) if isinstance(own, str) and own in VIEWS else self.views

    def items(self) -> list[TaskItem]:
        values = "\n".join(vocab.VALUES)
        out = []
        for s in self.samples:
            if self.setting == "basic" and len(s.steps) != 1:
                continue
            table = objects_table(s.objects)
            for view in self._views_of(s):
                final_view = view or "C"
                out.append(
                    TaskItem(
                        id=s.id if view is None else f"{s.id}@{view}",
                        images=(
                            self.images.find(image_name(s.id, "init", "C")),
                            self.images.find(image_name(s.id, "fin", final_view)),
                        ),
                        fields={
                            "objects_table": table,
                            "values": values,
                            "final_view": final_view,
                            "final_view_name": VIEW_NAMES[final_view],
                            "max_steps": str(self.max_steps),
                            "steps_rule": steps_rule(self.setting),
                        },
                        meta={"sample_id": s.id, "view": view},
                    )
                )
        return out

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        # the prompt asks for 1..max_steps steps, but longer Event/View answers are scored as
        # they are (every step simulated), so only Basic's single step is enforced here
        return parse_trance_reply(reply, 1 if self.setting == "basic" else None)


@dataclass
class ExportSummary:
    """What `export_predictions` wrote."""

    predictions: Path
    unparsed_file: Path
    items: int
    parsed: int
    unparsed: int  # a reply that could not be read
    without_reply: int  # no line, or a failed request


def unparsed_path(predictions: str | Path) -> Path:
    """`preds.jsonl` -> `preds.unparsed.jsonl`."""
    p = Path(predictions)
    return p.with_name(p.stem + ".unparsed" + (p.suffix or ".jsonl"))


def export_predictions(
    task: TranceTask, results: str | Path | ResultsFile, out: str | Path
) -> ExportSummary:
    """Write the prediction file for `tvr evaluate` and the list of unreadable/missing items."""
    res = results if isinstance(results, ResultsFile) else read_results(results, missing_ok=False)
    out = Path(out)
    listed = unparsed_path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    parsed = unparsed = without = 0
    items = task.items()
    with out.open("w", encoding="utf-8") as fp, listed.open("w", encoding="utf-8") as fu:
        for item in items:
            record = res.records.get(item.id)
            view = item.meta.get("view")
            head: dict[str, Any] = {"id": item.meta["sample_id"]}
            if view is not None:
                head["view"] = view
            steps: list[dict[str, Any]] = []
            problem: dict[str, Any] | None = None
            if record is None:
                problem = {"reason": "no result line"}
                without += 1
            elif not is_success(record):
                problem = {"reason": f"request failed: {record.get('error')}"}
                without += 1
            else:
                answer = task.parse_reply(item, record["reply"])
                if answer.ok:
                    steps = answer.answer
                    parsed += 1
                else:
                    problem = {
                        "reason": answer.reason,
                        "reply_excerpt": record["reply"][-EXCERPT_CHARS:],
                    }
                    unparsed += 1
            fp.write(json.dumps({**head, "steps": steps}) + "\n")
            if problem is not None:
                fu.write(
                    json.dumps({**head, "item": item.id, **problem}, ensure_ascii=False) + "\n"
                )
    summary = ExportSummary(out, listed, len(items), parsed, unparsed, without)
    write_export_record(task.name, res.path, summary)
    return summary

"""The VTT task adapter of `tvr vlm`: ask for the N transformations of a sample's N+1 states.

Items: one per record of the chosen split, id = the sample id. Three ways to show the states
(the paper's Table 2 rows), each with the prompt of the paper's Fig. 8 (stored in prompts/):

- `strip` (default): one image, the N+1 states side by side in state order, panels numbered
  (`tvr.vtt.strip`); prompt `vtt.txt`, or `vtt_topic.txt` with the topic (`topic=True`).
- `sep`: the N+1 state images as separate images, in state order; the same prompts.
- `multiturn`: a conversation: all states and `vtt_multiturn.txt` ("describe the event"), then
  one turn per adjacent pair (states k and k+1, `vtt_multiturn_pair.txt`), each answered with
  one description, as the released step-by-step script asks (which sent one image per turn;
  here each turn sends the pair).

Template fields: `$num_states` (N+1), `$num_transformations` (N), `$answer_slots` (the N lines
`<the 1st transformation you wrote>, ...` of the JSON answer); a pair turn adds `$step` (k),
`$before` (k) and `$after` (k+1), numbered from 1 like the panels.

`export_predictions` reads the replies (`tvr.vtt.replies`) into a predictions file for
`tvr vtt evaluate` and lists the items whose reply could not be read or that have no reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.vlm.export import ExportSummary as VlmExportSummary
from tvr.vlm.export import write_predictions
from tvr.vlm.images import ComposedImage
from tvr.vlm.results import ResultsFile
from tvr.vlm.tasks import ParsedReply, TaskItem, Turn
from tvr.vtt.data.layout import records_file, states_folder
from tvr.vtt.data.records import SPLITS, VttRecord, read_records
from tvr.vtt.replies import VttReply, parse_turn_replies, parse_vtt_reply
from tvr.vtt.strip import strip_jpeg

VARIANTS = ("strip", "sep", "multiturn")


def ordinal(k: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def answer_slots(n: int) -> str:
    """The N entries of the JSON answer in the prompt, one a line."""
    return ",\n".join(f"    <the {ordinal(k)} transformation you wrote>" for k in range(1, n + 1))


def prompt_name(variant: str, topic: bool) -> str:
    """The shipped template of a variant (with or without the topic)."""
    if variant == "multiturn":
        return "vtt_multiturn.txt"
    return "vtt_topic.txt" if topic else "vtt.txt"


class VttTask:
    """Items of a VTT records file (or release folder), states from `images`."""

    name = "vtt"
    prompt_package = "tvr.vtt"
    fields = frozenset({"num_states", "num_transformations", "answer_slots"})
    followup_fields = frozenset({"step", "before", "after"})

    def __init__(
        self,
        data: str | Path,
        images: str | Path | None = None,
        split: str = "test",
        variant: str = "strip",
        topic: bool = False,
    ) -> None:
        if variant not in VARIANTS:
            raise UserError(f"VTT variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if split not in SPLITS:
            raise UserError(f"VTT split must be one of {', '.join(SPLITS)}, got {split!r}")
        if topic and variant == "multiturn":
            raise UserError(
                "the multiturn conversation asks for the event first; the topic prompt is for "
                "strip and sep"
            )
        path = records_file(data)
        self.records: list[VttRecord] = [r for r in read_records(path) if r.split == split]
        if not self.records:
            raise UserError(f"{path}: no {split} samples")
        self.images = states_folder(data, images)  # default: the release folder's states/
        self.split, self.variant, self.topic = split, variant, topic
        self.default_prompt = prompt_name(variant, topic)
        self.followup_prompt = "vtt_multiturn_pair.txt" if variant == "multiturn" else None

    def states(self, record: VttRecord) -> tuple[Path, ...]:
        """The N+1 state images of a record, in state order."""
        return tuple(self.images / name for name in record.state_names())

    def item(self, record: VttRecord) -> TaskItem:
        """The request(s) of one record."""
        states = self.states(record)
        n = record.n
        fields = {
            "num_states": str(n + 1),
            "num_transformations": str(n),
            "answer_slots": answer_slots(n),
        }
        images: tuple[Any, ...] = states
        followups: tuple[Turn, ...] = ()
        if self.variant == "strip":
            images = (ComposedImage(states, strip_jpeg, f"strip of {n + 1} panels"),)
        elif self.variant == "multiturn":
            followups = tuple(
                Turn(
                    {"step": str(k), "before": str(k), "after": str(k + 1)},
                    (states[k - 1], states[k]),
                )
                for k in range(1, n + 1)
            )
        meta = {"sample_id": record.id, "n": n, "variant": self.variant}
        return TaskItem(record.id, images, fields, meta, followups)

    def items(self) -> list[TaskItem]:
        return [self.item(r) for r in self.records]

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """The descriptions of a single reply (strip, sep) as a `VttReply`."""
        found = parse_vtt_reply(reply)
        if found is None:
            return ParsedReply(None, "no JSON with a transformations list and no numbered lines")
        return ParsedReply(found)

    def parse_record(self, item: TaskItem, record: dict[str, Any]) -> ParsedReply:
        """The descriptions of a results line: its turns for multiturn, else its reply."""
        if self.variant == "multiturn":
            found = parse_turn_replies(record.get("replies"), int(item.meta["n"]))
            return ParsedReply(found, None if found else "no turns in the results line")
        return self.parse_reply(item, record["reply"])


@dataclass
class ExportSummary(VlmExportSummary):
    """What `export_predictions` wrote and counted: the shared counts, and the descriptions'."""

    descriptions: int = 0  # N summed over the items
    missing_descriptions: int = 0  # of those, empty or not given (scored as empty)
    extra_descriptions: int = 0  # beyond N (ignored by the evaluation)
    forms: dict[str, int] = field(default_factory=dict)  # how the read replies were read


def export_predictions(
    task: VttTask, results: str | Path | ResultsFile, out: str | Path
) -> ExportSummary:
    """Write `out` (one line per item: {"id", "transformations", "topic", "form"}) for
    `tvr vtt evaluate`, and beside it the items without readable descriptions and why
    (`tvr.vlm.export`)."""
    return write_predictions(task, results, out, _prediction_line, ExportSummary,
                             task.parse_record)  # fmt: skip


def _prediction_line(s: ExportSummary, item: TaskItem, found: VttReply | None) -> dict[str, Any]:
    """The predictions line of an item; counts its descriptions (json, numbered or turns)."""
    n = int(item.meta["n"])
    s.descriptions += n
    if found is None:
        s.missing_descriptions += n
        return {"id": item.id, "transformations": [], "topic": None, "form": None}
    s.forms[found.form] = s.forms.get(found.form, 0) + 1
    s.missing_descriptions += found.missing(n)
    s.extra_descriptions += found.extra(n)
    return {"id": item.id, "transformations": list(found.transformations), "topic": found.topic,
            "form": found.form}  # fmt: skip


def summary_line(s: ExportSummary) -> str:
    """What `tvr vlm export --task vtt` prints."""
    forms = ", ".join(f"{k} {v}" for k, v in sorted(s.forms.items())) or "none"
    return (
        f"{s.items} predictions written to {s.predictions}: {s.parsed} read ({forms}), "
        f"{s.unparsed} unreadable, {s.without_reply} without a reply (listed in "
        f"{s.unparsed_file}); {s.missing_descriptions} of {s.descriptions} descriptions missing "
        f"(scored as empty by tvr vtt evaluate), {s.extra_descriptions} beyond N (ignored)"
    )

"""The task-adapter interface: what the runner needs from a benchmark, and the registry of them.

An adapter turns a benchmark's data into `TaskItem`s (an id, the images in order, the fields a
prompt template may use, and metadata copied into the results line) and reads a reply back
into that task's answer. The runner and the client know nothing of any benchmark.

An item may be a conversation: after the first message, each of its `followups` is one more
user turn (the adapter's `followup_prompt` filled with the item's fields and the turn's own,
then the turn's images), sent with the conversation so far, the model's replies included.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks
from tvr.vlm.images import ImageRef, VideoFile, image_files, image_ref_data_url
from tvr.vlm.templates import PromptTemplate


@dataclass(frozen=True)
class Turn:
    """A follow-up user turn of a conversation: its own template fields and images."""

    fields: Mapping[str, str]
    images: tuple[ImageRef, ...] = ()


@dataclass(frozen=True)
class TaskItem:
    """One request to make: a stable id, its images in order, template fields, metadata; and
    for a conversation, the follow-up turns asked after the first reply."""

    id: str
    images: tuple[ImageRef, ...]
    fields: Mapping[str, str]
    meta: Mapping[str, Any] = field(default_factory=dict)
    followups: tuple[Turn, ...] = ()

    def all_images(self) -> tuple[ImageRef, ...]:
        """The images of every turn, in the order they are sent."""
        return self.images + tuple(im for turn in self.followups for im in turn.images)


@dataclass(frozen=True)
class ParsedReply:
    """A reply read as the task's answer; `answer` is None when it could not be read."""

    answer: Any
    reason: str | None = None  # why it could not be read

    @property
    def ok(self) -> bool:
        return self.answer is not None


class TaskAdapter(Protocol):
    """What the runner needs from a benchmark."""

    #: the `--task` name
    name: str
    #: the shipped template file used when no `--prompt` is given, in `prompt_package`'s prompts/
    default_prompt: str
    prompt_package: str
    #: the placeholders every item fills
    fields: frozenset[str]
    # A conversation task also has `followup_prompt` (the shipped template of the follow-up
    # turns) and `followup_fields` (the placeholders each turn adds).

    def items(self) -> list[TaskItem]:
        """The items to ask about, one per distinct id, in a stable order."""
        ...

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """The task's answer in a reply."""
        ...


def user_message(
    template: PromptTemplate, fields: Mapping[str, str], images: tuple[ImageRef, ...]
) -> dict[str, Any]:
    """One user message: the filled template, then the images as data URLs, in order (as the
    VisualTrans evaluation code sends them); a video as a `video_url` part."""
    content: list[dict[str, Any]] = [{"type": "text", "text": template.render(dict(fields))}]
    content += [
        {"type": "video_url", "video_url": {"url": image_ref_data_url(im)}}
        if isinstance(im, VideoFile)
        else {"type": "image_url", "image_url": {"url": image_ref_data_url(im)}}
        for im in images
    ]
    return {"role": "user", "content": content}


def build_messages(item: TaskItem, template: PromptTemplate) -> list[dict[str, Any]]:
    """The first (for most tasks the only) message of an item."""
    return [user_message(template, item.fields, item.images)]


def followup_message(item: TaskItem, turn: Turn, template: PromptTemplate) -> dict[str, Any]:
    """The user message of a follow-up turn: the follow-up template filled with the item's fields
    and the turn's, then the turn's images."""
    return user_message(template, {**item.fields, **turn.fields}, turn.images)


def followup_fields(task: Any) -> frozenset[str]:
    """The placeholders a task's follow-up template may use: the item's and each turn's."""
    return frozenset(task.fields) | frozenset(getattr(task, "followup_fields", ()))


def check_images(items: list[TaskItem], limit: int = 5) -> None:
    """UserError naming the first missing images, if any image of any item is not a file."""
    missing = list(
        dict.fromkeys(
            (it.id, p)
            for it in items
            for im in it.all_images()
            for p in image_files(im)
            if not p.is_file()
        )
    )
    if missing:
        shown = "; ".join(f"{i}: {p}" for i, p in missing[:limit])
        more = f" (and {len(missing) - limit} more)" if len(missing) > limit else ""
        raise UserError(f"{len(missing)} image(s) not found: {shown}{more}; check --images")


#: task name -> factory(data, images, **options) -> TaskAdapter; benchmarks register theirs
_TASKS: dict[str, Callable[..., TaskAdapter]] = {}


def register_task(name: str, factory: Callable[..., TaskAdapter]) -> None:
    """Make task `name` available to `make_adapter` (a benchmark's plugin module calls this)."""
    _TASKS[name] = factory


def task_names() -> tuple[str, ...]:
    """The registered tasks, sorted."""
    load_benchmarks()
    return tuple(sorted(_TASKS))


def make_adapter(name: str, data: Path, images: Path | None, **options: Any) -> TaskAdapter:
    """The adapter of a task by name, reading `data` with images under `images` (None: where
    the benchmark's layout keeps them beside `data`)."""
    load_benchmarks()
    if name not in _TASKS:
        raise UserError(f"unknown task {name!r}; expected one of {', '.join(task_names())}")
    return _TASKS[name](data, images, **options)

"""The task-adapter interface: what the runner needs from a benchmark, and the registry of them.

An adapter turns a benchmark's data into `TaskItem`s (an id, the images in order, the fields a
prompt template may use, and metadata copied into the results line) and reads a reply back
into that task's answer. The runner and the client know nothing of any benchmark.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks
from tvr.vlm.images import image_data_url
from tvr.vlm.templates import PromptTemplate


@dataclass(frozen=True)
class TaskItem:
    """One request to make: a stable id, its images in order, template fields, metadata."""

    id: str
    images: tuple[Path, ...]
    fields: Mapping[str, str]
    meta: Mapping[str, Any] = field(default_factory=dict)


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

    def items(self) -> list[TaskItem]:
        """The items to ask about, one per distinct id, in a stable order."""
        ...

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """The task's answer in a reply."""
        ...


def build_messages(item: TaskItem, template: PromptTemplate) -> list[dict[str, Any]]:
    """One user message: the filled template, then the images as data URLs, in order (as the
    VisualTrans evaluation code sends them)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": template.render(dict(item.fields))}]
    content += [
        {"type": "image_url", "image_url": {"url": image_data_url(path)}} for path in item.images
    ]
    return [{"role": "user", "content": content}]


def check_images(items: list[TaskItem], limit: int = 5) -> None:
    """UserError naming the first missing images, if any image of any item is not a file."""
    missing = [(it.id, p) for it in items for p in it.images if not p.is_file()]
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


def make_adapter(name: str, data: Path, images: Path, **options: Any) -> TaskAdapter:
    """The adapter of a task by name, reading `data` with images under `images`."""
    load_benchmarks()
    if name not in _TASKS:
        raise UserError(f"unknown task {name!r}; expected one of {', '.join(task_names())}")
    return _TASKS[name](data, images, **options)

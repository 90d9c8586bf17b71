"""The VisualTrans task adapter: one request per distinct question, images in the file's order."""

from __future__ import annotations

from pathlib import Path

from tvr.visualtrans.data.dataset import Dataset, images_folder, load_dataset
from tvr.visualtrans.data.extract import extract_normalized
from tvr.vlm.tasks import ParsedReply, TaskItem


class VisualTransTask:
    """Items of a VisualTrans JSON file; the template gets `$question`."""

    name = "visualtrans"
    default_prompt = "visualtrans.txt"
    prompt_package = "tvr.visualtrans"
    fields = frozenset({"question", "task_type", "scene"})

    def __init__(self, data: str | Path, images: str | Path | None = None) -> None:
        self.dataset: Dataset = load_dataset(data)
        first = self.dataset.items[0] if self.dataset.items else None
        self.images = images_folder(data, first, images)

    def items(self) -> list[TaskItem]:
        return [
            TaskItem(
                id=it.id,
                images=tuple(self.images / rel for rel in it.images),
                fields={"question": it.question, "task_type": it.task_type, "scene": it.scene},
                meta={"index": it.index, "task_type": it.task_type},
            )
            for it in self.dataset.unique_items()
        ]

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        """The final-answer text (normalized extraction); scoring reads it per its own mode."""
        found = extract_normalized(reply)
        return ParsedReply(found.text or None, None if found.found else "no final answer found")

"""Prompt templates: plain text files with `$name` placeholders, shipped ones or the user's own.

Each benchmark ships its templates in its package's `prompts/` folder (`tvr/trance/prompts/trance.txt`,
`tvr/visualtrans/prompts/visualtrans.txt`). A template
is filled with Python's `string.Template`: `$question` or `${question}` is replaced by the item's
field, `$$` is a literal dollar sign, and braces need no escaping (JSON examples stay readable).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from tvr.core.errors import UserError


@dataclass(frozen=True)
class PromptTemplate:
    """A template's text and where it came from."""

    source: str
    text: str

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def placeholders(self) -> set[str]:
        return {
            named or braced
            for _, named, braced, _ in Template.pattern.findall(self.text)
            if named or braced
        }

    def check_fields(self, available: set[str]) -> None:
        """UserError if the template names a placeholder the task does not provide."""
        unknown = sorted(self.placeholders - available)
        if unknown:
            raise UserError(
                f"prompt {self.source}: unknown placeholder(s) {', '.join('$' + u for u in unknown)}; "
                f"this task provides {', '.join('$' + a for a in sorted(available))}"
            )

    def render(self, fields: dict[str, str]) -> str:
        try:
            return Template(self.text).substitute(fields)
        except (KeyError, ValueError) as err:
            raise UserError(f"prompt {self.source}: cannot fill the template ({err})") from None


def shipped_template(name: str, package: str) -> PromptTemplate:
    """A template shipped in `package`'s `prompts/` folder, by file name (e.g. `trance.txt` of
    `tvr.trance`)."""
    ref = resources.files(package).joinpath("prompts", name)
    if not ref.is_file():
        raise UserError(f"no shipped prompt template {name!r} in {package}")
    source = f"{package.replace('.', '/')}/prompts/{name}"
    return PromptTemplate(source, ref.read_text(encoding="utf-8"))


def load_template(path: str | Path | None, task: Any) -> PromptTemplate:
    """The user's template file if `path` is given, else the task's shipped default (its
    `default_prompt` in its `prompt_package`)."""
    if path is None:
        return shipped_template(task.default_prompt, task.prompt_package)
    return read_template(path)


def load_followup_template(path: str | Path | None, task: Any) -> PromptTemplate | None:
    """The template of a conversation's follow-up turns: the user's file if `path` is given,
    else the task's shipped `followup_prompt`; None for a task without follow-up turns (and
    UserError if a file was given for one)."""
    shipped = getattr(task, "followup_prompt", None)
    if shipped is None:
        if path is not None:
            raise UserError(
                f"{path}: this task asks one question per item; it has no follow-up turns"
            )
        return None
    return (
        read_template(path) if path is not None else shipped_template(shipped, task.prompt_package)
    )


def read_template(path: str | Path) -> PromptTemplate:
    """A template file of the user's."""
    path = Path(path)
    try:
        return PromptTemplate(str(path), path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path}: no such prompt template") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: the prompt template is not UTF-8 text") from None

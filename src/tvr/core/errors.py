"""User-facing errors: a bad file, line or field is reported as a message, never a traceback."""

from __future__ import annotations

from pathlib import Path

#: the longest message a user error prints: a quoted value longer than this is cut
MAX_MESSAGE = 400


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text`, cut to `limit` characters with a note of how long it was (error lines quote
    what they refuse, and a refused value may be 50 MB)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters in all)"


def quote(value: object, limit: int = 60) -> str:
    """repr(value) for a message, cut to about `limit` characters."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}... ({len(value):,} characters)"
    return clip(repr(value), limit)


class UserError(Exception):
    """A mistake in the user's input or options; the CLI prints it and exits with status 2."""


class InputError(UserError):
    """A bad record in an input file, located by file, line (1-based) and field."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        message = clip(message)
        self.reason = message
        where = self.path
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")

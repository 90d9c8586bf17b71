"""User-facing errors: a bad file, line or field is reported as a message, never a traceback."""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """A mistake in the user's input or options; the CLI prints it and exits with status 2."""


class InputError(UserError):
    """A bad record in an input file, located by file, line (1-based) and field."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.reason = message
        where = self.path
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")

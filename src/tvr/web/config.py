"""The typed options of the web app (`tvr serve`), saved next to the database as config.json."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError

DB_FILE = "human-tests.sqlite"


@dataclass(frozen=True)
class ServeConfig:
    """What `create_app` needs: the datasets, the prediction files, the database, the options."""

    data: tuple[Path, ...]  # one dataset folder per setting (tvr generate --out)
    predictions: tuple[Path, ...] = ()  # run folders or JSONL files, each maybe as SETTING:PATH
    db_url: str | None = None  # any SQLAlchemy URL; default: sqlite file beside the first dataset
    viewer: bool = False  # serve the viewer (references, predictions) instead of the study
    admin: bool = False  # the admin view of every tester's results (a viewer server only)
    practice: int = 3  # practice samples of the introduction
    max_name: int = 40  # longest tester name, in characters
    page_size: int = 12  # samples per page of the viewer
    secure_cookies: bool = False  # mark the tester cookie Secure (serve behind HTTPS)
    allowed_hosts: tuple[str, ...] = ()  # host names answered besides the loopback ones ("*": any)
    bind: str | None = None  # the --host address: answered too when it is a specific one
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> ServeConfig:
        if not self.data:
            raise UserError("give at least one --data folder")
        for d in self.data:
            if not Path(d).is_dir():
                raise UserError(f"--data {d}: no such folder")
        for p in self.predictions:
            # NAME=PATH names what it predicts (a setting)
            named = str(p).partition("=")[2]
            if not Path(p).exists() and not (named and Path(named).exists()):
                raise UserError(f"--predictions {p}: no such file or folder")
        if self.admin and not self.viewer:
            raise UserError(
                "--admin needs --viewer: the admin pages show every tester's answers next to the "
                "references, so only a viewer server (tvr serve --viewer --admin) serves them, "
                "never the server testers use"
            )
        if self.predictions and not self.viewer:
            raise UserError(
                "--predictions needs --viewer: predictions are shown by the viewer, which a "
                "study server does not serve"
            )
        if self.practice < 0:
            raise UserError(f"practice must be 0 or more, got {self.practice}")
        if not 1 <= self.max_name <= 200:
            raise UserError(f"max_name must be 1..200, got {self.max_name}")
        return self

    @property
    def database_url(self) -> str:
        """--db, else the study's sqlite file beside the first dataset. A viewer only reads:
        it opens that file if a study made it (the admin pages), else an in-memory database,
        so it never creates one in the data folder."""
        if self.db_url:
            return self.db_url
        path = Path(self.data[0]).resolve() / DB_FILE
        if self.viewer and not path.exists():
            return "sqlite://"
        return f"sqlite:///{path}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["data"] = [str(p) for p in self.data]
        d["predictions"] = [str(p) for p in self.predictions]
        d["allowed_hosts"] = list(self.allowed_hosts)
        return d

"""What a benchmark plugs into the web app: routers, templates, static files, shared objects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks

if TYPE_CHECKING:
    from fastapi import APIRouter

    from tvr.web.config import ServeConfig


@dataclass
class Pages:
    """A benchmark's pages. `templates` are looked up before the shared `tvr/web/templates`:
    they hold `base.html`, which extends the shared `layout.html` (the header, nav, footer and
    stylesheet of every app) and names the benchmark; the shared `error.html` (given `message`
    and `status_code`) is the page of every PageError unless `templates` hold their own.
    `static` is served under /static (beside the shared /static/tvr/); `state` goes onto
    `app.state` (e.g. the benchmark's datasets); `warnings` are what `tvr serve` prints before
    serving (e.g. datasets that share scenes)."""

    title: str
    routers: Sequence[APIRouter]
    templates: Path
    static: Path | None = None
    state: dict[str, Any] = field(default_factory=dict)
    template_globals: dict[str, Any] = field(default_factory=dict)
    filters: dict[str, Callable[..., Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


#: builds a benchmark's Pages for a server's options (opening its datasets)
PagesFactory = Callable[["ServeConfig"], Pages]

_PAGES: dict[str, PagesFactory] = {}


def register_pages(benchmark: str, factory: PagesFactory) -> None:
    """Make `benchmark`'s pages servable (a benchmark's plugin module calls this)."""
    _PAGES[benchmark] = factory


def pages_factory(benchmark: str) -> PagesFactory:
    """The registered pages of `benchmark` (UserError naming the registered ones if unknown)."""
    load_benchmarks()
    if benchmark not in _PAGES:
        known = ", ".join(sorted(_PAGES)) or "none"
        raise UserError(f"no web pages for benchmark {benchmark!r}; registered: {known}")
    return _PAGES[benchmark]

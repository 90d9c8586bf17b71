"""`clevrer_pages(config)`: the CLEVRER viewer's pages for `tvr serve --benchmark clevrer --viewer`."""

from __future__ import annotations

from pathlib import Path

from tvr.clevrer.web import routes
from tvr.clevrer.web.catalog import ClevrerSet
from tvr.core.errors import UserError
from tvr.web.config import ServeConfig
from tvr.web.pages import Pages

HERE = Path(__file__).parent


def clevrer_pages(config: ServeConfig) -> Pages:
    """A viewer of the CLEVRER sets of `config.data` (CLEVRER has no human test to serve)."""
    if not config.viewer:
        raise UserError("CLEVRER has no human test: serve its viewer with --viewer")
    if config.predictions or config.admin:
        raise UserError("the CLEVRER viewer shows sets only (no --predictions, no --admin)")
    sets = [ClevrerSet.open(Path(d)) for d in config.data]
    return Pages(
        title="tvr web: CLEVRER viewer",
        routers=(routes.router,),
        templates=HERE / "templates",
        static=HERE / "static",
        state={"clevrer_sets": sets},
    )

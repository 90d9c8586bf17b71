"""`vtt_pages(config)`: the VTT rating pages of `tvr serve --benchmark vtt`.

The app itself (database, templates, error pages, same-origin checks) is the shared
`tvr.web.factory`; VTT brings its routers, templates, static files and the `Study` (the release
folder of `--data`, the subset, the named prediction files of `config.extra`). Pages are
rendered on the server; `static/rate.js` only posts a rating to the JSON API. A rater is known
by a random token in an HttpOnly cookie (also their resume code); the database keeps its hash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.vtt.web import routes
from tvr.vtt.web.study import Study, StudyOptions
from tvr.web.config import ServeConfig
from tvr.web.pages import Pages

HERE = Path(__file__).parent
#: the keys of ServeConfig.extra that VTT reads (tvr serve --benchmark vtt sets them)
EXTRA_KEYS = {"predictions", "split", "subset", "seed", "raters", "claim_minutes"}


def study_options(extra: dict[str, Any]) -> StudyOptions:
    """The study's options from `ServeConfig.extra`."""
    unknown = sorted(set(extra) - EXTRA_KEYS)
    if unknown:
        raise UserError(f"unknown VTT serve options: {', '.join(unknown)}")
    options = {k: v for k, v in extra.items() if k != "predictions"}
    predictions = {str(k): Path(v) for k, v in dict(extra.get("predictions") or {}).items()}
    return StudyOptions(predictions=predictions, **options)


def vtt_pages(config: ServeConfig) -> Pages:
    """The rating pages of the release folder `config.data[0]`."""
    if config.viewer or config.admin:
        raise UserError(
            "VTT serves its rating pages only (no --viewer, no --admin); "
            "see the ratings with `tvr vtt ratings --db ...`"
        )
    if len(config.data) != 1:
        raise UserError("give one --data folder: the VTT release (meta/vtt.jsonl and states/)")
    study = Study(config.data[0], study_options(config.extra))
    return Pages(
        title="tvr web: VTT ratings",
        routers=(routes.router,),
        templates=HERE / "templates",
        static=HERE / "static",
        state={"study": study},
        template_globals={"target": study.target},
        warnings=study.warnings,
    )

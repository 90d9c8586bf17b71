"""`visualtrans_pages(config)`: the verification pages of `tvr serve --benchmark visualtrans
--verify --data BUILD`, or with `--viewer --admin` their admin view.

The app itself (database, templates, error pages, Host allow-list, same-origin checks) is the
shared `tvr.web.factory`; the sign-in is the shared `tvr.web.signin`, as in TRANCE's human test
and VTT's rating study. VisualTrans brings its routers, templates, static files and the
`Verification` (the build's items). As in TRANCE, the admin view is served only by a server of
its own (`--viewer --admin`), never by the server verifiers use; it counts the verdicts wanted
per item that the verify server saved (BUILD/verify/settings.json), as the export does. The store is
`BUILD/verify/verify.sqlite` (`tvr serve` passes it as the database URL).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.visualtrans.web import admin_routes, routes
from tvr.visualtrans.web.answers import FLAGS
from tvr.visualtrans.web.verify import Verification, VerifyOptions
from tvr.visualtrans.web.verify_export import wanted_verifiers, write_settings
from tvr.web.config import ServeConfig
from tvr.web.pages import Pages

HERE = Path(__file__).parent
#: the keys of ServeConfig.extra that the verification pages read
EXTRA_KEYS = {"verify", "verifiers", "claim_minutes", "seed"}


def verify_options(extra: dict[str, Any]) -> VerifyOptions:
    unknown = sorted(set(extra) - EXTRA_KEYS)
    if unknown:
        raise UserError(f"unknown VisualTrans serve options: {', '.join(unknown)}")
    return VerifyOptions(**{k: v for k, v in extra.items() if k != "verify"})


def visualtrans_pages(config: ServeConfig) -> Pages:
    """The verification pages of the build `config.data[0]` (the admin view with --admin)."""
    if not config.extra.get("verify"):
        raise UserError("VisualTrans serves the verification of a build: tvr serve --benchmark "
                        "visualtrans --verify --data BUILD")  # fmt: skip
    if config.viewer and not config.admin:
        raise UserError("VisualTrans has no viewer; --viewer --admin serves the admin view of "
                        "the verification")  # fmt: skip
    if len(config.data) != 1:
        raise UserError("give one --data folder: the build (questions/VisualTrans.json)")
    options = verify_options(config.extra)
    if config.admin:  # the number of verdicts wanted is the one the export reads
        options = replace(options, verifiers=wanted_verifiers(config.data[0]))
    verification = Verification(config.data[0], options)
    if not config.admin:  # the export reads how many verdicts each item wants
        write_settings(config.data[0], verification.target)
    own = admin_routes.start if config.admin else routes.router  # "/": the view or the sign-in
    return Pages(
        title="tvr web: VisualTrans verification" + (" (admin)" if config.admin else ""),
        routers=(own, admin_routes.router, routes.images),
        templates=HERE / "templates",
        static=HERE / "static",
        state={"verification": verification},
        template_globals={"target": verification.target, "flag_names": FLAGS},
        warnings=verification.warnings,
    )

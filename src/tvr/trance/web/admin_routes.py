"""The admin's routes (a viewer server with --admin): every tester's results, histories, exports."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, Response
from sqlalchemy import func, select

from tvr.trance.web.common import Cat, export_response, tester_history
from tvr.web.db import Answer, Tester
from tvr.web.deps import CurrentTester, Db, require_admin, require_admin_api
from tvr.web.responses import ApiError, PageError, render

router = APIRouter()


def _tester(db: Db, tester_id: str) -> Tester | None:
    """The tester of a path's id (ASCII digits), or None."""
    if not (tester_id.isascii() and tester_id.isdigit()) or len(tester_id) > 18:
        return None
    return db.get(Tester, int(tester_id))


# The guard runs first: without --admin every admin route gives the admin-off answer, whatever
# the rest of its path (the id is a string here, so FastAPI does not refuse it before).
def shown_tester(request: Request, tester_id: str, db: Db) -> Tester:
    """The tester `tester_id` for the admin's pages (guarded; the error page if unknown)."""
    require_admin(request)
    shown = _tester(db, tester_id)
    if shown is None:
        raise PageError(f"no tester {tester_id}", 404)
    return shown


def export_target(
    request: Request, tester_id: str, problem: str, split: str, db: Db
) -> tuple[Tester, str, str]:
    """(tester, problem, split) of the admin's download (guarded; a JSON error if the tester is
    unknown). The path's three parts are declared here, in their order in the path."""
    require_admin_api(request)
    shown = _tester(db, tester_id)
    if shown is None:
        raise ApiError(f"no tester {tester_id}", 404)
    return shown, problem, split


@router.get("/admin", response_class=HTMLResponse, dependencies=[Depends(require_admin)])
def admin_page(request: Request, catalog: Cat, db: Db) -> Response:
    testers = list(db.scalars(select(Tester).order_by(Tester.id)))
    counts = dict(
        db.execute(
            select(Answer.tester_id, func.count())
            .where(Answer.practice.is_(False))
            .group_by(Answer.tester_id)
        ).all()
    )
    rows = [
        {"t": t, "count": counts.get(t.id, 0), "blocks": tester_history(db, catalog, t)}
        for t in testers
    ]
    return render(request, "admin.html", rows=rows)


@router.get("/admin/tester/{tester_id}", response_class=HTMLResponse)
def admin_tester(
    request: Request,
    shown: Annotated[Tester, Depends(shown_tester)],
    catalog: Cat,
    db: Db,
    me: CurrentTester,
) -> Response:
    return render(
        request,
        "history.html",
        tester=me,
        shown=shown,
        blocks=tester_history(db, catalog, shown),
        export_base=f"/admin/export/{shown.id}",
    )


@router.get("/admin/export/{tester_id}/{problem}/{split}")
def admin_export(
    target: Annotated[tuple[Tester, str, str], Depends(export_target)], catalog: Cat, db: Db
) -> Response:
    shown, problem, split = target
    return export_response(db, catalog, shown, problem, split)

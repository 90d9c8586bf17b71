"""The admin view of the verification (a server of its own: `--verify --viewer --admin`; the
verify server answers these routes with the admin-off page, as TRANCE's human test does): how
often verifiers' blind answers agree with the generated ones, per subtask type and family, the
flags, what the export will do with each item (`verify_export.decide`), and every verdict."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy import select
from sqlalchemy.orm import Session

from tvr.visualtrans.data.dataset import TASK_TYPES
from tvr.visualtrans.web.answers import FLAGS
from tvr.visualtrans.web.models import VtVerdict
from tvr.visualtrans.web.routes import Ver, item_view, shown_answer
from tvr.visualtrans.web.verify import Verification
from tvr.visualtrans.web.verify_export import DROP_REASONS, Verdict, decide
from tvr.web.db import Tester
from tvr.web.deps import Db, require_admin, require_admin_api
from tvr.web.responses import PageError, render

router = APIRouter()


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def admin_summary(db: Session, v: Verification) -> dict[str, Any]:
    """Everything the admin pages show, as JSON-ready data."""
    names = dict(db.execute(select(Tester.id, Tester.name)).all())
    rows = list(db.scalars(select(VtVerdict).order_by(VtVerdict.submitted_at, VtVerdict.id)))
    per_item: dict[str, list[VtVerdict]] = {}
    for r in rows:
        if r.item_id in v.by_id and r.label == v.by_id[r.item_id].label:
            per_item.setdefault(r.item_id, []).append(r)
    items, outcomes, flags = [], Counter(), Counter()
    groups: dict[str, dict[str, Counter]] = {"task_type": {}, "family": {}}
    answered = agreed = 0
    for item in v.items:
        mine = per_item.get(item.id, [])
        complete = [
            Verdict(r.tester_id, r.answer, r.agrees, tuple(json.loads(r.flags_json)), r.fix)
            for r in mine
            if r.reviewed
        ]
        decision = decide(item.label, complete, v.target)
        outcomes[decision.reason or decision.outcome] += 1
        for r in mine:
            answered += 1
            agreed += r.agrees
            flags.update(json.loads(r.flags_json))
        for group, key in (("task_type", item.task_type), ("family", v.family(item))):
            c = groups[group].setdefault(key, Counter())
            c["items"] += 1
            c["answers"] += len(mine)
            c["agree"] += sum(r.agrees for r in mine)
            c["flagged"] += sum(r.flags_json != "[]" for r in mine)
        items.append({
            "index": v.position(item),
            "id": item.id,
            "task_type": item.task_type,
            "family": v.family(item),
            "scene": item.scene,
            "generated": item.label,
            "outcome": decision.outcome,
            "reason": decision.reason,
            "fixed_label": decision.label,
            "verdicts": [
                {"verifier": names.get(r.tester_id, str(r.tester_id)), "answer": r.answer,
                 "agrees": r.agrees, "reviewed": r.reviewed, "flags": json.loads(r.flags_json),
                 "fix": r.fix, "note": r.note, "seconds": round(r.server_seconds, 1)}
                for r in mine
            ],
        })  # fmt: skip
    order = {"task_type": list(TASK_TYPES), "family": sorted(groups["family"])}
    tables = {
        group: [
            {"name": key, **dict(c), "agreement": _share(c["agree"], c["answers"])}
            for key in order[group]
            if (c := groups[group].get(key))
        ]
        for group in groups
    }
    return {
        "items": len(v.items),
        "verifiers_wanted": v.target,
        "answers": answered,
        "agreement": _share(agreed, answered),
        "flags": {f: flags[f] for f in FLAGS},
        "outcomes": {k: outcomes[k] for k in ("verified", "fixed", *DROP_REASONS)},
        "tables": tables,
        "per_item": items,
    }


#: the admin server's start page (the verify server's is the sign-in)
start = APIRouter()


@start.get("/", response_class=HTMLResponse)
def admin_start() -> Response:
    """The admin server's start page is the admin view."""
    return RedirectResponse("/admin", status_code=303)


@router.get("/admin", response_class=HTMLResponse, dependencies=[Depends(require_admin)])
def admin_page(request: Request, v: Ver, db: Db) -> Response:
    return render(request, "admin.html", tester=None, s=admin_summary(db, v), flags=FLAGS)


@router.get("/admin/item/{index}", response_class=HTMLResponse)
def admin_item(request: Request, index: str, v: Ver, db: Db) -> Response:
    require_admin(request)
    ok = index.isascii() and index.isdigit() and len(index) <= 9
    if not ok or int(index) >= len(v.items):
        raise PageError(f"no item {index}", 404)
    item = v.items[int(index)]
    entry = admin_summary(db, v)["per_item"][int(index)]
    for d in entry["verdicts"]:
        d["shown"] = shown_answer(item, d["answer"])
    return render(request, "admin_item.html", tester=None, unit={"item": item_view(v, item)},
                  entry=entry, generated=shown_answer(item, item.label),
                  flags=FLAGS)  # fmt: skip


@router.get("/api/admin/summary", dependencies=[Depends(require_admin_api)])
def api_summary(v: Ver, db: Db) -> Response:
    return JSONResponse(admin_summary(db, v))

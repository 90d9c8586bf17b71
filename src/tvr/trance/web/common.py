"""What TRANCE's routers share: the catalog, steps and samples for templates, history, export."""

from __future__ import annotations

import math
from typing import Annotated, Any

import orjson
from fastapi import Depends, Request
from fastapi.responses import Response
from markupsafe import Markup
from sqlalchemy import select
from sqlalchemy.orm import Session

from tvr.trance.web import human
from tvr.trance.web.catalog import Catalog, SplitData
from tvr.trance.web.diagram import objects_svg
from tvr.trance.world import vocab
from tvr.web.db import Answer, Tester
from tvr.web.responses import ApiError

OBJECT_COLUMNS = ("size", "color", "material", "shape")


def get_catalog(request: Request) -> Catalog:
    return request.app.state.catalog


Cat = Annotated[Catalog, Depends(get_catalog)]


def value_choices() -> dict[str, list[list[str]]]:
    """attribute -> [[value name, label]] for the step builder's value lists."""
    out: dict[str, list[list[str]]] = {a: [] for a in vocab.ATTRIBUTES}
    for name in vocab.VALUES:
        attr, rest = name.split(".", 1)
        out[attr].append([name, rest])
    return out


def steps_view(steps: list[tuple[int, int]] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Steps as {obj, attr, value (short name)} for the templates."""
    out = []
    for st in steps:
        obj, v = (st["obj"], vocab.VALUE_INDEX[st["value"]]) if isinstance(st, dict) else st
        name = vocab.VALUES[v]
        out.append(
            {
                "obj": obj,
                "attr": vocab.value_attribute(name),
                "value": name.split(".", 1)[1],
                "name": name,
            }
        )
    return out


def fmt(x: Any, digits: int = 4) -> str:
    """The templates' number format (`|fmt`): "-" for none and NaN."""
    if x is None:
        return "-"
    if isinstance(x, float):
        return "-" if math.isnan(x) else f"{x:.{digits}f}"
    return str(x)


def sample_context(problem: str, sd: SplitData, index: int, view: str) -> dict[str, Any]:
    """The template values of a sample shown on the test and viewer pages."""
    s = sd.sample(index)
    return {
        "sample": s,
        "index": index,
        "split": sd,
        "view": view,
        "init_url": f"/img/{problem}/{sd.name}/{index}/init/C.png",
        "fin_url": f"/img/{problem}/{sd.name}/{index}/fin/{view}.png",
        "diagram": Markup(objects_svg(s.objects)),
    }


def tester_history(db: Session, catalog: Catalog, tester: Tester) -> list[dict[str, Any]]:
    """Per served problem and split, the tester's finished answers and their statistics."""
    answers = list(
        db.scalars(
            select(Answer).where(Answer.tester_id == tester.id).order_by(Answer.submitted_at)
        )
    )
    blocks = []
    for problem in catalog.problems:
        for split in catalog.splits[problem]:
            rows = [
                a for a in answers if a.problem == problem and a.split == split and not a.practice
            ]
            if not rows:
                continue
            sd = catalog.split(problem, split)
            items = []
            for a in rows:
                s = sd.sample(a.sample_index)
                items.append(
                    {
                        "a": a,
                        "answer": steps_view(human.answer_steps(a)),
                        "reference": steps_view([(st.obj, st.value) for st in s.steps]),
                    }
                )
            blocks.append(
                {
                    "problem": problem,
                    "split": split,
                    "stats": human.history_stats(problem, rows),
                    "rows": items,
                    "total": len(sd),
                }
            )
    return blocks


def export_name(tester: Tester, problem: str, split: str) -> str:
    """A file name for a tester's export: the tester id and a filesystem-safe form of the name."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in tester.name)[:40] or "tester"
    return f"human-{tester.id:04d}-{safe}-{problem}-{split}.jsonl"


def export_response(
    db: Session, catalog: Catalog, tester: Tester, problem: str, split: str
) -> Response:
    """The tester's test answers on problem/split as a predictions file download."""
    if catalog.split(problem, split) is None:
        raise ApiError(f"unknown problem/split {problem!r}/{split!r}", 404)
    rows = list(
        db.scalars(
            select(Answer).where(
                Answer.tester_id == tester.id, Answer.problem == problem, Answer.split == split
            )
        )
    )
    text = b"".join(orjson.dumps(r) + b"\n" for r in human.export_records(problem, rows))
    return Response(
        text,
        media_type="application/x-ndjson",
        headers={
            "Content-Disposition": f'attachment; filename="{export_name(tester, problem, split)}"'
        },
    )

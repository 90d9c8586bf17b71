"""`create_app(config)`: the FastAPI app of the human test system and the viewer.

Pages are rendered on the server (Jinja2); `static/app.js` only edits the list of steps and
posts answers to the JSON API. A tester is known by a random token in an HttpOnly cookie; the
database keeps only its hash. File paths never come from a request: images are looked up by
(problem, split, sample index, stage, view) through the dataset store.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import orjson
from fastapi import FastAPI, Form, Request
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from tvr.trance.data.sample import Sample
from tvr.trance.eval.metrics import max_steps_for
from tvr.trance.web import human
from tvr.trance.web.catalog import STAGES, Catalog, SplitData, sample_view
from tvr.trance.web.diagram import objects_svg
from tvr.trance.web.human import AnswerError
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import array_to_objects
from tvr.trance.world.vocab import VIEWS
from tvr.web.config import ServeConfig
from tvr.web.db import Answer, Tester, make_engine, make_sessionmaker

HERE = Path(__file__).parent
COOKIE = "tvr_tester"
OBJECT_COLUMNS = ("size", "color", "material", "shape")


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


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return "-" if math.isnan(x) else f"{x:.{digits}f}"
    return str(x)


def create_app(config: ServeConfig) -> FastAPI:
    """The app for `config`: datasets opened, predictions read, database tables created."""
    config = config.validate()
    catalog = Catalog(config.data, config.predictions)
    engine = make_engine(config.database_url)
    sessions = make_sessionmaker(engine)
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.filters["fmt"] = _fmt
    default_test = next(
        (f"{p}:test" for p in catalog.problems if "test" in catalog.splits[p]),
        next((f"{p}:{s}" for p in catalog.problems for s in catalog.splits[p]), ""),
    )
    templates.env.globals.update(
        admin_enabled=config.admin,
        problems=catalog.problems,
        catalog=catalog,
        VIEWS=VIEWS,
        default_test=default_test,
    )

    app = FastAPI(title="tvr web: TRANCE human test and viewer", docs_url=None, redoc_url=None)
    app.state.config = config
    app.state.catalog = catalog
    app.state.engine = engine
    app.state.sessions = sessions
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    # --- helpers --------------------------------------------------------------------------------
    def db_session() -> Session:
        return sessions()

    def current_tester(request: Request, db: Session) -> Tester | None:
        return human.tester_of(db, request.cookies.get(COOKIE))

    def set_cookie(response: Response, token: str) -> None:
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="lax",
            secure=config.secure_cookies,
            max_age=365 * 86400,
        )

    def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, template, ctx, status_code=status)

    def error_page(request: Request, message: str, status: int) -> HTMLResponse:
        return render(request, "error.html", status=status, message=message)

    def json_error(message: str, status: int) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    def split_or_none(problem: str, split: str) -> SplitData | None:
        return catalog.split(problem, split)

    def sample_context(problem: str, sd: SplitData, index: int, view: str) -> dict[str, Any]:
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

    # --- start ---------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    def start_page(request: Request) -> HTMLResponse:
        with db_session() as db:
            tester = current_tester(request, db)
        return render(request, "start.html", tester=tester, message=None, name="")

    @app.post("/start")
    def start(request: Request, name: str = Form(""), test: str = Form("")) -> Response:
        problem, _, split = test.partition(":")
        with db_session() as db:
            tester = current_tester(request, db)
            try:
                name = human.check_name(name, config.max_name)
                if split_or_none(problem, split) is None:
                    raise AnswerError("choose a problem and a split from the list")
                tester, token = human.start_tester(db, name, request.cookies.get(COOKIE))
            except AnswerError as err:
                return render(
                    request,
                    "start.html",
                    status=err.status,
                    tester=tester,
                    message=str(err),
                    name=name,
                )
        response = RedirectResponse(f"/test/{problem}/{split}", status_code=303)
        set_cookie(response, token)
        return response

    @app.post("/logout")
    def logout() -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    @app.post("/api/start")
    async def api_start(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        with db_session() as db:
            try:
                name = human.check_name(body.get("name"), config.max_name)
                tester, token = human.start_tester(db, name, request.cookies.get(COOKIE))
            except AnswerError as err:
                return json_error(str(err), err.status)
        response = JSONResponse({"tester": tester.name, "id": tester.id})
        set_cookie(response, token)
        return response

    # --- the test --------------------------------------------------------------------------------
    @app.get("/test/{problem}/{split}", response_class=HTMLResponse)
    def test_page(request: Request, problem: str, split: str) -> Response:
        sd = split_or_none(problem, split)
        if sd is None:
            return error_page(request, f"no test {problem}/{split} on this server", 404)
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return RedirectResponse("/", status_code=303)
            nxt = human.next_sample(db, catalog, tester, problem, sd, config.practice)
        if nxt is None:
            return render(request, "done.html", tester=tester, problem=problem, split=split)
        ctx = sample_context(problem, nxt.split, nxt.index, nxt.view)
        boot = {
            "problem": problem,
            "split": nxt.split.name,
            "sample_id": nxt.sample.id,
            "practice": nxt.practice,
            "max_steps": max_steps_for(problem),
            "values": value_choices(),
            "attributes": list(vocab.ATTRIBUTES),
            "objects": [
                f"{i}: {o['size']} {o['color']} {o['material']} {o['shape']}"
                for i, o in enumerate(nxt.sample.objects)
            ],
        }
        return render(
            request,
            "test.html",
            tester=tester,
            problem=problem,
            test_split=split,
            nxt=nxt,
            practice_total=config.practice,
            max_steps=max_steps_for(problem),
            boot=Markup(json.dumps(boot).replace("<", "\\u003c")),
            **ctx,
        )

    @app.get("/api/next/{problem}/{split}")
    def api_next(request: Request, problem: str, split: str) -> Response:
        sd = split_or_none(problem, split)
        if sd is None:
            return json_error(f"unknown problem/split {problem!r}/{split!r}", 404)
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return json_error("start a test first (POST /api/start)", 401)
            nxt = human.next_sample(db, catalog, tester, problem, sd, config.practice)
        if nxt is None:
            return JSONResponse({"done": True})
        return JSONResponse(
            {
                "done": False,
                "practice": nxt.practice,
                "split": nxt.split.name,
                "sample_id": nxt.sample.id,
                "index": nxt.index,
                "view": nxt.view,
                "position": nxt.position,
                "total": nxt.total,
                "objects": nxt.sample.objects,
                "max_steps": max_steps_for(problem),
            }
        )

    @app.post("/api/answer")
    async def api_answer(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return json_error("start a test first: no tester for this browser", 401)
            try:
                problem = body.get("problem")
                if problem not in catalog.splits:
                    raise AnswerError(f"unknown problem {problem!r}", 404)
                answer, stored = human.submit(
                    db,
                    catalog,
                    tester,
                    problem,
                    str(body.get("split")),
                    body.get("sample_id"),
                    body.get("steps"),
                    body.get("key"),
                    body.get("client_seconds"),
                    bool(body.get("practice", False)),
                )
            except AnswerError as err:
                return json_error(str(err), err.status)
        sample = catalog.split(answer.problem, answer.split).sample(answer.sample_index)
        return JSONResponse(
            {
                "stored": stored,
                "answer_id": answer.id,
                "practice": answer.practice,
                "correct": answer.correct,
                "loose_correct": answer.loose_correct,
                "distance": answer.distance,
                "norm_distance": answer.norm_distance,
                "broken_rule": answer.broken_rule,
                "broken_step": answer.broken_step,
                "obj_correct": answer.obj_correct,
                "attr_correct": answer.attr_correct,
                "value_correct": answer.value_correct,
                "server_seconds": round(answer.server_seconds, 3),
                "view": answer.view,
                "answer": steps_view(human.answer_steps(answer)),
                "reference": [
                    {**sv, "options": [vocab.VALUES[o].split(".", 1)[1] for o in st.accepted]}
                    for sv, st in zip(
                        steps_view([(st.obj, st.value) for st in sample.steps]),
                        sample.steps,
                        strict=True,
                    )
                ],
            }
        )

    async def _json_body(request: Request) -> dict[str, Any] | Response:
        if "application/json" not in request.headers.get("content-type", ""):
            return json_error("send JSON (Content-Type: application/json)", 415)
        raw = await request.body()
        if len(raw) > 64_000:
            return json_error("request too large", 413)
        try:
            body = json.loads(raw)
        except ValueError:
            return json_error("the request body is not valid JSON", 400)
        if not isinstance(body, dict):
            return json_error("expected a JSON object", 400)
        return body

    # --- history, export, admin ------------------------------------------------------------------
    def tester_history(db: Session, tester: Tester) -> list[dict[str, Any]]:
        answers = list(
            db.scalars(
                select(Answer).where(Answer.tester_id == tester.id).order_by(Answer.submitted_at)
            )
        )
        blocks = []
        for problem in catalog.problems:
            for split in catalog.splits[problem]:
                rows = [
                    a
                    for a in answers
                    if a.problem == problem and a.split == split and not a.practice
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

    @app.get("/history", response_class=HTMLResponse)
    def history_page(request: Request) -> Response:
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return RedirectResponse("/", status_code=303)
            blocks = tester_history(db, tester)
        return render(
            request,
            "history.html",
            tester=tester,
            shown=tester,
            blocks=blocks,
            export_base="/export",
        )

    @app.get("/api/history/{problem}/{split}")
    def api_history(request: Request, problem: str, split: str) -> Response:
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return json_error("no tester for this browser", 401)
            rows = list(
                db.scalars(
                    select(Answer).where(
                        Answer.tester_id == tester.id,
                        Answer.problem == problem,
                        Answer.split == split,
                    )
                )
            )
        return JSONResponse({"tester": tester.name, **human.history_stats(problem, rows)})

    def export_response(db: Session, tester: Tester, problem: str, split: str) -> Response:
        if split_or_none(problem, split) is None:
            return json_error(f"unknown problem/split {problem!r}/{split!r}", 404)
        rows = list(
            db.scalars(
                select(Answer).where(
                    Answer.tester_id == tester.id, Answer.problem == problem, Answer.split == split
                )
            )
        )
        text = b"".join(orjson.dumps(r) + b"\n" for r in human.export_records(problem, rows))
        fname = export_name(tester, problem, split)
        return Response(
            text,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{fname}"'},
        )

    @app.get("/export/{problem}/{split}")
    def export_own(request: Request, problem: str, split: str) -> Response:
        with db_session() as db:
            tester = current_tester(request, db)
            if tester is None:
                return json_error("no tester for this browser", 401)
            return export_response(db, tester, problem, split)

    @app.get("/admin", response_class=HTMLResponse)
    def admin_page(request: Request) -> Response:
        if not config.admin:
            return error_page(request, "the admin view is off (start the server with --admin)", 404)
        with db_session() as db:
            testers = list(db.scalars(select(Tester).order_by(Tester.id)))
            counts = dict(
                db.execute(
                    select(Answer.tester_id, func.count())
                    .where(Answer.practice.is_(False))
                    .group_by(Answer.tester_id)
                ).all()
            )
            rows = []
            for t in testers:
                rows.append({"t": t, "count": counts.get(t.id, 0), "blocks": tester_history(db, t)})
        return render(request, "admin.html", rows=rows)

    @app.get("/admin/tester/{tester_id}", response_class=HTMLResponse)
    def admin_tester(request: Request, tester_id: int) -> Response:
        if not config.admin:
            return error_page(request, "the admin view is off (start the server with --admin)", 404)
        with db_session() as db:
            shown = db.get(Tester, tester_id)
            if shown is None:
                return error_page(request, f"no tester {tester_id}", 404)
            blocks = tester_history(db, shown)
            me = current_tester(request, db)
        return render(
            request,
            "history.html",
            tester=me,
            shown=shown,
            blocks=blocks,
            export_base=f"/admin/export/{shown.id}",
        )

    @app.get("/admin/export/{tester_id}/{problem}/{split}")
    def admin_export(tester_id: int, problem: str, split: str) -> Response:
        if not config.admin:
            return json_error("the admin view is off (start the server with --admin)", 404)
        with db_session() as db:
            shown = db.get(Tester, tester_id)
            if shown is None:
                return json_error(f"no tester {tester_id}", 404)
            return export_response(db, shown, problem, split)

    # --- images ------------------------------------------------------------------------------------
    @app.get("/img/{problem}/{split}/{index}/{stage}/{view_file}")
    def image(problem: str, split: str, index: str, stage: str, view_file: str) -> Response:
        sd = split_or_none(problem, split)
        view = view_file.removesuffix(".png")
        if (
            sd is None
            or not index.isdigit()
            or not 0 <= int(index) < len(sd)
            or stage not in STAGES
            or view not in VIEWS
            or (stage == "init" and view != "C")
        ):
            return PlainTextResponse("no such image", status_code=404)
        path = sd.store.image_path(int(index), stage, view)
        if not Path(path).is_file():
            return PlainTextResponse("image missing on the server", status_code=404)
        return FileResponse(
            path, media_type="image/png", headers={"Cache-Control": "private, max-age=3600"}
        )

    # --- viewer ----------------------------------------------------------------------------------------
    @app.get("/viewer", response_class=HTMLResponse)
    def viewer_index(request: Request) -> HTMLResponse:
        with db_session() as db:
            tester = current_tester(request, db)
        return render(request, "viewer_index.html", tester=tester)

    def matches(s: Sample, steps: str, move: str, attr: str) -> bool:
        if steps and str(len(s.steps)) != steps:
            return False
        if move and not any(st.move_type == move for st in s.steps):
            return False
        return not (attr and not any(st.attr == attr for st in s.steps))

    @app.get("/viewer/{problem}/{split}", response_class=HTMLResponse)
    def viewer_list(
        request: Request,
        problem: str,
        split: str,
        steps: str = "",
        move: str = "",
        attr: str = "",
        page: int = 1,
    ) -> Response:
        sd = split_or_none(problem, split)
        if sd is None:
            return error_page(request, f"no dataset {problem}/{split} on this server", 404)
        steps = steps if steps in {str(k) for k in range(1, vocab.MAX_STEPS + 1)} else ""
        move = move if move in vocab.MOVE_TYPES else ""
        attr = attr if attr in vocab.ATTRIBUTES else ""
        hits = [i for i, s in enumerate(sd.samples) if matches(s, steps, move, attr)]
        pages = max(1, -(-len(hits) // config.page_size))
        page_no = min(max(page, 1), pages)
        shown = hits[(page_no - 1) * config.page_size : page_no * config.page_size]
        items = [
            {
                "index": i,
                "sample": sd.samples[i],
                "view": sample_view(problem, sd.samples[i]),
                "steps": steps_view([(st.obj, st.value) for st in sd.samples[i].steps]),
            }
            for i in shown
        ]
        with db_session() as db:
            tester = current_tester(request, db)
        return render(
            request,
            "viewer_list.html",
            tester=tester,
            problem=problem,
            sd=sd,
            items=items,
            hits=len(hits),
            page_no=page_no,
            pages=pages,
            f={"steps": steps, "move": move, "attr": attr},
            models=[p.name for p in catalog.predictions_for(problem, split)],
        )

    @app.get("/viewer/{problem}/{split}/{index}", response_class=HTMLResponse)
    def viewer_sample(request: Request, problem: str, split: str, index: int) -> Response:
        sd = split_or_none(problem, split)
        if sd is None or not 0 <= index < len(sd):
            return error_page(request, f"no sample {index} in {problem}/{split}", 404)
        s = sd.sample(index)
        view = sample_view(problem, s)
        ctx = sample_context(problem, sd, index, view)
        changed = [
            [k for k in ("position", *OBJECT_COLUMNS) if a[k] != b[k]]
            for a, b in zip(s.objects, s.final, strict=True)
        ]
        preds = []
        for pset in catalog.predictions_for(problem, split):
            for (sid, pview), steps in pset.steps.items():
                if sid != s.id:
                    continue
                d = human.score_answer(problem, s, steps)
                state, _ = world.apply_steps(s.initial_array, steps)
                rot = [o.get("rotation", 0.0) for o in s.objects]
                sim = array_to_objects(state, rot)
                diff = [
                    [k for k in ("position", *OBJECT_COLUMNS) if sim[i][k] != s.final[i][k]]
                    for i in range(len(sim))
                ]
                preds.append(
                    {
                        "name": pset.name,
                        "view": pview,
                        "steps": steps_view(steps),
                        "d": d,
                        "sim": sim,
                        "diff": diff,
                        "diagram": Markup(objects_svg(sim, {i for i, x in enumerate(diff) if x})),
                    }
                )
        with db_session() as db:
            tester = current_tester(request, db)
        return render(
            request,
            "viewer_sample.html",
            tester=tester,
            problem=problem,
            reference=steps_view([(st.obj, st.value) for st in s.steps]),
            ref_steps=s.steps,
            final_diagram=Markup(objects_svg(s.final, {i for i, x in enumerate(changed) if x})),
            final_diff=changed,
            preds=preds,
            prev_index=index - 1 if index > 0 else None,
            next_index=index + 1 if index + 1 < len(sd) else None,
            **ctx,
        )

    return app


def export_name(tester: Tester, problem: str, split: str) -> str:
    """A file name for a tester's export: the tester id and a filesystem-safe form of the name."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in tester.name)[:40] or "tester"
    return f"human-{tester.id:04d}-{safe}-{problem}-{split}.jsonl"


def export_all(config: ServeConfig, out: str | Path) -> list[Path]:
    """Write every tester's test answers as predictions files OUT/<problem>/<split>/<file>.jsonl."""
    from tvr.core.jsonl import write_jsonl

    config = config.validate()
    catalog = Catalog(config.data)
    engine = make_engine(config.database_url)
    written = []
    with make_sessionmaker(engine)() as db:
        for tester in db.scalars(select(Tester).order_by(Tester.id)):
            for problem in catalog.problems:
                for split in catalog.splits[problem]:
                    rows = list(
                        db.scalars(
                            select(Answer).where(
                                Answer.tester_id == tester.id,
                                Answer.problem == problem,
                                Answer.split == split,
                                Answer.practice.is_(False),
                            )
                        )
                    )
                    if not rows:
                        continue
                    path = Path(out) / problem / split / export_name(tester, problem, split)
                    write_jsonl(path, human.export_records(problem, rows))
                    written.append(path)
    engine.dispose()
    return written

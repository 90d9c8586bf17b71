"""The human test's routes: the shared sign-in (`tvr.web.signin`), welcome, the test page, the
JSON API, history, export."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from markupsafe import Markup
from sqlalchemy import select

from tvr.trance.eval.metrics import max_steps_for
from tvr.trance.web import human
from tvr.trance.web.bodies import AnswerBody
from tvr.trance.web.common import (
    Cat,
    export_response,
    sample_context,
    steps_view,
    tester_history,
    value_choices,
)
from tvr.trance.web.human import AnswerError
from tvr.trance.world import vocab
from tvr.web.db import Answer
from tvr.web.deps import (
    Config,
    CurrentTester,
    Db,
    json_body,
    json_body_openapi,
    required_tester,
)
from tvr.web.responses import ApiError, PageError, render
from tvr.web.signin import Landing, SignIn, code_context, sign_in_router

router = APIRouter()


# --- sign-in (the shared routes), welcome -----------------------------------------------------------
def chosen_test(catalog: Cat, test: Annotated[str, Form()] = "") -> Landing:
    """The test a start or resume form chose (`problem:split`): a new tester sees the resume
    code first, then the test; AnswerError when the choice is not served."""

    def landing() -> tuple[str, str]:
        problem, _, split = test.partition(":")
        if catalog.split(problem, split) is None:
            raise AnswerError("choose a problem and a split from the list")
        return f"/welcome/{problem}/{split}", f"/test/{problem}/{split}"

    return landing


SIGN_IN = SignIn(person="tester", refusal=AnswerError, landing=chosen_test)
router.include_router(sign_in_router(SIGN_IN))


@router.get("/welcome/{problem}/{split}", response_class=HTMLResponse)
def welcome(
    request: Request, problem: str, split: str, catalog: Cat, tester: CurrentTester
) -> Response:
    if catalog.split(problem, split) is None:
        raise PageError(f"no test {problem}/{split} on this server", 404)
    if tester is None:
        return RedirectResponse("/", status_code=303)
    ctx = code_context(request)
    return render(request, "welcome.html", tester=tester, problem=problem, split=split, **ctx)


# --- the test ------------------------------------------------------------------------------------
@router.get("/test/{problem}/{split}", response_class=HTMLResponse)
def test_page(
    request: Request,
    problem: str,
    split: str,
    catalog: Cat,
    config: Config,
    db: Db,
    tester: CurrentTester,
) -> Response:
    sd = catalog.split(problem, split)
    if sd is None:
        raise PageError(f"no test {problem}/{split} on this server", 404)
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
        "next_label": _next_label(nxt),
        "elapsed": round(nxt.elapsed, 3),
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


def _next_label(nxt: human.Next) -> str:
    """What the button after an answer says: what comes next."""
    if nxt.practice:
        return "Start the test" if nxt.last_practice else "Next practice sample"
    return "Finish" if nxt.position == nxt.total else "Next sample"


@router.get("/api/next/{problem}/{split}")
def api_next(
    problem: str, split: str, catalog: Cat, config: Config, db: Db, tester: CurrentTester
) -> Response:
    sd = catalog.split(problem, split)
    if sd is None:
        raise ApiError(f"unknown problem/split {problem!r}/{split!r}", 404)
    if tester is None:
        raise ApiError("start a test first (POST /api/start)", 401)
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


#: the tester of an answer: 401 before the body is looked at when the browser has none
Answering = required_tester("start a test first: no tester for this browser")


@router.post("/api/answer", openapi_extra=json_body_openapi(AnswerBody))
def api_answer(
    tester: Answering,
    body: Annotated[AnswerBody, Depends(json_body(AnswerBody))],
    catalog: Cat,
    db: Db,
) -> Response:
    try:
        if body.problem not in catalog.splits:
            raise AnswerError(f"unknown problem {body.problem!r}", 404)
        answer, stored = human.submit(
            db,
            catalog,
            tester,
            body.problem,
            body.split,
            body.sample_id,
            body.steps,
            body.key,
            body.client_seconds,
            body.practice,
        )
    except AnswerError as err:
        raise ApiError(str(err), err.status) from None
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


# --- history and export --------------------------------------------------------------------------
@router.get("/history", response_class=HTMLResponse)
def history_page(request: Request, catalog: Cat, db: Db, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return render(
        request,
        "history.html",
        tester=tester,
        shown=tester,
        blocks=tester_history(db, catalog, tester),
        export_base="/export",
    )


@router.get("/api/history/{problem}/{split}")
def api_history(problem: str, split: str, catalog: Cat, db: Db, tester: CurrentTester) -> Response:
    if catalog.split(problem, split) is None:
        raise ApiError(f"unknown problem/split {problem!r}/{split!r}", 404)
    if tester is None:
        raise ApiError("no tester for this browser", 401)
    rows = list(
        db.scalars(
            select(Answer).where(
                Answer.tester_id == tester.id, Answer.problem == problem, Answer.split == split
            )
        )
    )
    return JSONResponse({"tester": tester.name, **human.history_stats(problem, rows)})


@router.get("/export/{problem}/{split}")
def export_own(problem: str, split: str, catalog: Cat, db: Db, tester: CurrentTester) -> Response:
    if tester is None:
        raise ApiError("no tester for this browser", 401)
    return export_response(db, catalog, tester, problem, split)

"""The rating pages' routes: the shared sign-in (`tvr.web.signin`), welcome, the rating page,
state images, the JSON API."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from markupsafe import Markup

from tvr.vtt.web.bodies import RatingBody
from tvr.vtt.web.study import (
    CRITERIA,
    Next,
    RateError,
    Study,
    decided_counts,
    next_unit,
    still_needed,
    submit,
)
from tvr.web.db import Tester
from tvr.web.deps import CurrentTester, Db, json_body, json_body_openapi, required_tester
from tvr.web.files import file_response
from tvr.web.responses import ApiError, PageError, render
from tvr.web.signin import Landing, SignIn, code_context, sign_in_router

router = APIRouter()


def get_study(request: Request) -> Study:
    return request.app.state.study


StudyDep = Annotated[Study, Depends(get_study)]


def rating_landing() -> Landing:
    """Where a signed-in rater goes: a new one to the welcome page, one coming back to rating."""
    return lambda: ("/welcome", "/rate")


SIGN_IN = SignIn(person="rater", refusal=RateError, landing=rating_landing)
router.include_router(sign_in_router(SIGN_IN))


@router.get("/welcome", response_class=HTMLResponse)
def welcome(request: Request, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return render(request, "welcome.html", tester=tester, **code_context(request))


# --- rating ----------------------------------------------------------------------------------------
def _unit_view(nxt: Next) -> dict:
    record = nxt.unit.record
    return {
        "serving": nxt.serving.id,
        "category": record.category,
        "topic": record.topic,
        "n": record.n,
        "states": [f"/img/{nxt.unit.index}/{i}" for i in range(record.n + 1)],
        "descriptions": nxt.unit.rows(),
        "rated": nxt.rated,
        "still_needed": nxt.still_needed,
        "elapsed": round(nxt.elapsed, 3),
    }


def _next(db: Db, study: Study, tester: Tester) -> Next | None:
    try:
        return next_unit(db, study, tester)
    except RateError as err:
        raise PageError(str(err), err.status) from None


@router.get("/rate", response_class=HTMLResponse)
def rate_page(request: Request, study: StudyDep, db: Db, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    nxt = _next(db, study, tester)
    if nxt is None:
        return render(
            request,
            "done.html",
            tester=tester,
            still_needed=still_needed(study, decided_counts(db, study)),
        )
    view = _unit_view(nxt)
    boot = {"serving": view["serving"], "elapsed": view["elapsed"], "criteria": list(CRITERIA)}
    return render(
        request,
        "rate.html",
        tester=tester,
        unit=view,
        boot=Markup(json.dumps(boot).replace("<", "\\u003c")),
    )


#: the rater of an API call: 401 before the body is looked at when the browser has none
Rater = required_tester("start first (POST /api/start): no rater for this browser")


@router.get("/api/next")
def api_next(study: StudyDep, db: Db, tester: Rater) -> Response:
    try:
        nxt = next_unit(db, study, tester)
    except RateError as err:
        raise ApiError(str(err), err.status) from None
    if nxt is None:
        return JSONResponse(
            {"done": True, "still_needed": still_needed(study, decided_counts(db, study))}
        )
    return JSONResponse({"done": False, **_unit_view(nxt)})


@router.post("/api/rating", openapi_extra=json_body_openapi(RatingBody))
def api_rating(
    tester: Rater,
    body: Annotated[RatingBody, Depends(json_body(RatingBody))],
    study: StudyDep,
    db: Db,
) -> Response:
    scores = {name: getattr(body, name) for name in CRITERIA}
    try:
        rating, stored = submit(
            db, study, tester, body.serving, scores, body.undecided, body.key, body.client_seconds
        )
    except RateError as err:
        raise ApiError(str(err), err.status) from None
    return JSONResponse(
        {
            "stored": stored,
            "rating_id": rating.id,
            "undecided": rating.undecided,
            **{name: getattr(rating, name) for name in CRITERIA},
            "server_seconds": round(rating.server_seconds, 3),
        }
    )


@router.get("/img/{index}/{state}")
def state_image(index: int, state: int, study: StudyDep) -> Response:
    path = study.state_image(index, state)
    if path is None:
        raise ApiError(f"no state {state} of sample {index}", 404)
    # a JPEG (or PNG) by content, under the states folder once resolved (tvr.web.files)
    return file_response(
        (study.states,),
        path.relative_to(study.states).as_posix(),
        ("jpeg", "png"),
        headers={"Cache-Control": "max-age=3600"},
        missing="state image missing on the server",
    )

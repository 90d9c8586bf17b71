"""The rating pages' routes: start, resume, leave, the rating page, state images, the JSON API."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from markupsafe import Markup

from tvr.vtt.web.bodies import RatingBody, ResumeBody, StartBody
from tvr.vtt.web.study import (
    CRITERIA,
    Next,
    RateError,
    Study,
    check_name,
    decided_counts,
    next_unit,
    resume_rater,
    start_rater,
    still_needed,
    submit,
)
from tvr.web.csrf import check_form_token
from tvr.web.db import Tester
from tvr.web.deps import Config, CurrentTester, Db, json_body, json_body_openapi
from tvr.web.responses import ApiError, PageError, render
from tvr.web.testers import COOKIE, clear_tester_cookie, resume_code, set_tester_cookie

router = APIRouter()


def get_study(request: Request) -> Study:
    return request.app.state.study


StudyDep = Annotated[Study, Depends(get_study)]


def _code(request: Request) -> dict[str, str]:
    """The resume code of the browser's rater (from its cookie), if any."""
    token = request.cookies.get(COOKIE)
    return {"resume_code": resume_code(token)} if token else {}


def _start_page(
    request: Request,
    tester: Tester | None,
    status: int = 200,
    message: str | None = None,
    name: str = "",
) -> HTMLResponse:
    return render(
        request,
        "start.html",
        status=status,
        tester=tester,
        message=message,
        name=name,
        **_code(request),
    )


# --- start, resume, leave --------------------------------------------------------------------------
@router.get("/", response_class=HTMLResponse)
def start_page(request: Request, tester: CurrentTester) -> HTMLResponse:
    return _start_page(request, tester)


@router.post("/start", dependencies=[Depends(check_form_token)])
def start(
    request: Request,
    config: Config,
    db: Db,
    tester: CurrentTester,
    name: Annotated[str, Form()] = "",
) -> Response:
    try:
        name = check_name(name, config.max_name)
        tester, token, new = start_rater(db, name, request.cookies.get(COOKIE))
    except RateError as err:
        return _start_page(request, tester, err.status, str(err), name)
    response = RedirectResponse("/welcome" if new else "/rate", status_code=303)
    set_tester_cookie(response, token, config.secure_cookies)
    return response


@router.post("/resume", dependencies=[Depends(check_form_token)])
def resume(
    request: Request,
    config: Config,
    db: Db,
    tester: CurrentTester,
    code: Annotated[str, Form()] = "",
) -> Response:
    try:
        _, token = resume_rater(db, code)
    except RateError as err:
        return _start_page(request, tester, err.status, str(err))
    response = RedirectResponse("/rate", status_code=303)
    set_tester_cookie(response, token, config.secure_cookies)
    return response


@router.get("/welcome", response_class=HTMLResponse)
def welcome(request: Request, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return render(request, "welcome.html", tester=tester, **_code(request))


@router.get("/leave", response_class=HTMLResponse)
def leave_page(request: Request, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return render(request, "leave.html", tester=tester, **_code(request))


@router.post("/logout", dependencies=[Depends(check_form_token)])
def logout() -> Response:
    response = RedirectResponse("/", status_code=303)
    clear_tester_cookie(response)
    return response


@router.post("/api/start", openapi_extra=json_body_openapi(StartBody))
def api_start(
    request: Request,
    body: Annotated[StartBody, Depends(json_body(StartBody))],
    config: Config,
    db: Db,
) -> Response:
    try:
        name = check_name(body.name, config.max_name)
        tester, token, _ = start_rater(db, name, request.cookies.get(COOKIE))
    except RateError as err:
        raise ApiError(str(err), err.status) from None
    response = JSONResponse(
        {"rater": tester.name, "id": tester.id, "resume_code": resume_code(token)}
    )
    set_tester_cookie(response, token, config.secure_cookies)
    return response


@router.post("/api/resume", openapi_extra=json_body_openapi(ResumeBody))
def api_resume(
    body: Annotated[ResumeBody, Depends(json_body(ResumeBody))], config: Config, db: Db
) -> Response:
    try:
        tester, token = resume_rater(db, body.code)
    except RateError as err:
        raise ApiError(str(err), err.status) from None
    response = JSONResponse({"rater": tester.name, "id": tester.id})
    set_tester_cookie(response, token, config.secure_cookies)
    return response


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


def rating_tester(tester: CurrentTester) -> Tester:
    """The rater of an API call: 401 before the body is looked at when the browser has none."""
    if tester is None:
        raise ApiError("start first (POST /api/start): no rater for this browser", 401)
    return tester


@router.get("/api/next")
def api_next(
    study: StudyDep, db: Db, tester: Annotated[Tester, Depends(rating_tester)]
) -> Response:
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
    tester: Annotated[Tester, Depends(rating_tester)],
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
    return FileResponse(path, headers={"Cache-Control": "max-age=3600"})

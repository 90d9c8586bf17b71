"""Signing testers in and out, as every benchmark's pages do: names, resume codes, their routes.

A benchmark makes one `SignIn`: its word for a person ("tester", "rater": the key of the JSON
answers and the resume message), its kind of `Refusal`, and a `landing` dependency saying where
a signed-in browser goes. `sign_in_router(signin)` then serves the start page (`/`, the
benchmark's `start.html`), the start and resume forms (`/start`, `/resume`), leaving (`/leave`,
its `leave.html`; `/logout`) and the JSON API (`/api/start`, `/api/resume`). The welcome page,
which differs per benchmark, stays the benchmark's own (`code_context` gives its resume code).
"""

# no `from __future__ import annotations`: FastAPI reads the routes' annotations, and those of
# `sign_in_router` name its local `To`
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from tvr.web.bodies import ResumeBody, StartBody
from tvr.web.csrf import check_form_token
from tvr.web.db import Tester
from tvr.web.deps import Config, CurrentTester, Db, json_body, json_body_openapi
from tvr.web.errors import ApiError, Refusal
from tvr.web.responses import render
from tvr.web.testers import (
    COOKIE,
    clear_tester_cookie,
    find_by_code,
    resume_code,
    set_tester_cookie,
    sign_in,
)

#: where a signed-in browser goes: (a new tester's page, a returning tester's page); called
#: after the name is checked, it raises the benchmark's Refusal for a bad choice of the form
Landing = Callable[[], tuple[str, str]]


def code_context(request: Request) -> dict[str, str]:
    """The resume code of the browser's tester for a page (from its cookie), if any."""
    token = request.cookies.get(COOKIE)
    return {"resume_code": resume_code(token)} if token else {}


@dataclass(frozen=True)
class SignIn:
    """How one benchmark signs its testers in (see the module)."""

    person: str  # what the pages call a tester: "tester", "rater"
    refusal: type[Refusal]  # what check_name, start and resume raise
    landing: Callable[..., Landing]  # a FastAPI dependency of the start and resume forms

    def check_name(self, name: Any, max_len: int) -> str:
        """A name: 1..max_len printable characters after NFKC (full-width letters become plain
        ones) and trimming spaces."""
        if not isinstance(name, str):
            raise self.refusal("enter your name")
        name = " ".join(unicodedata.normalize("NFKC", name).split())
        if not name:
            raise self.refusal("enter your name")
        if len(name) > max_len:
            raise self.refusal(f"the name is too long ({len(name)} characters, at most {max_len})")
        if not name.isprintable():
            raise self.refusal("the name has characters that cannot be shown")
        return name

    def start(self, db: Session, name: str, token: str | None) -> tuple[Tester, str, bool]:
        """(tester, token, new) for `name` (`tvr.web.testers.sign_in`); a name held by another
        browser is refused (409)."""
        signed = sign_in(db, name, token)
        if signed is None:
            raise self.refusal(
                f"the name {name!r} is already taken; if it is yours, continue with the resume "
                "code you were given when you started, or choose another name",
                409,
            )
        return signed

    def resume(self, db: Session, code: Any) -> tuple[Tester, str]:
        """(tester, token) of a typed resume code; refused when it is no tester's (404)."""
        if not isinstance(code, str) or not code.strip() or len(code) > 200:
            raise self.refusal("enter the resume code you were given when you started")
        found = find_by_code(db, code)
        if found is None:
            raise self.refusal(
                f"no {self.person} has this resume code; check it and type it again", 404
            )
        return found


def _start_page(
    request: Request,
    tester: Tester | None,
    status: int = 200,
    message: str | None = None,
    name: str = "",
) -> HTMLResponse:
    ctx = code_context(request)
    return render(
        request, "start.html", status=status, tester=tester, message=message, name=name, **ctx
    )


def _signed_in(where: str, token: str, config: Config) -> Response:
    response = RedirectResponse(where, status_code=303)
    set_tester_cookie(response, token, config.secure_cookies)
    return response


def sign_in_router(signin: SignIn) -> APIRouter:
    """The routes of `signin` (see the module), to include in the benchmark's router."""
    router = APIRouter()
    To = Annotated[Landing, Depends(signin.landing)]

    @router.get("/", response_class=HTMLResponse)
    def start_page(request: Request, tester: CurrentTester) -> HTMLResponse:
        return _start_page(request, tester)

    @router.post("/start", dependencies=[Depends(check_form_token)])
    def start(
        request: Request,
        config: Config,
        db: Db,
        tester: CurrentTester,
        landing: To,
        name: Annotated[str, Form()] = "",
    ) -> Response:
        try:
            name = signin.check_name(name, config.max_name)
            welcome, returning = landing()
            tester, token, new = signin.start(db, name, request.cookies.get(COOKIE))
        except Refusal as err:
            return _start_page(request, tester, err.status, str(err), name)
        # a new tester sees the resume code first
        return _signed_in(welcome if new else returning, token, config)

    @router.post("/resume", dependencies=[Depends(check_form_token)])
    def resume(
        request: Request,
        config: Config,
        db: Db,
        tester: CurrentTester,
        landing: To,
        code: Annotated[str, Form()] = "",
    ) -> Response:
        try:
            _, returning = landing()
            _, token = signin.resume(db, code)
        except Refusal as err:
            return _start_page(request, tester, err.status, str(err))
        return _signed_in(returning, token, config)

    @router.get("/leave", response_class=HTMLResponse)
    def leave_page(request: Request, tester: CurrentTester) -> Response:
        if tester is None:
            return RedirectResponse("/", status_code=303)
        return render(request, "leave.html", tester=tester, **code_context(request))

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
            name = signin.check_name(body.name, config.max_name)
            tester, token, _ = signin.start(db, name, request.cookies.get(COOKIE))
        except Refusal as err:
            raise ApiError(str(err), err.status) from None
        response = JSONResponse(
            {signin.person: tester.name, "id": tester.id, "resume_code": resume_code(token)}
        )
        set_tester_cookie(response, token, config.secure_cookies)
        return response

    @router.post("/api/resume", openapi_extra=json_body_openapi(ResumeBody))
    def api_resume(
        body: Annotated[ResumeBody, Depends(json_body(ResumeBody))], config: Config, db: Db
    ) -> Response:
        try:
            tester, token = signin.resume(db, body.code)
        except Refusal as err:
            raise ApiError(str(err), err.status) from None
        response = JSONResponse({signin.person: tester.name, "id": tester.id})
        set_tester_cookie(response, token, config.secure_cookies)
        return response

    return router

"""The verification pages' routes: the shared sign-in (`tvr.web.signin`), welcome, the verify
page and its two forms (answer, then review), the JSON API, and the items' images.

A verifier first answers an item without seeing the generated answer (`/verify/answer`,
`/api/answer`); the page then shows the generated answer beside theirs, and they review it:
flags, a corrected answer, a note (`/verify/review`, `/api/review`). Forms carry the form token
(`tvr.web.csrf.check_form_token`); JSON bodies need `application/json` (`tvr.web.deps.json_body`).
"""

from __future__ import annotations

import json
import secrets
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from tvr.visualtrans.data.dataset import Item
from tvr.visualtrans.web.answers import FLAGS, VerifyError, widget
from tvr.visualtrans.web.bodies import AnswerBody, ReviewBody
from tvr.visualtrans.web.models import VtServing
from tvr.visualtrans.web.verify import (
    Next,
    Verification,
    complete_counts,
    next_item,
    still_needed,
    submit_answer,
    submit_review,
)
from tvr.web.csrf import check_form_token
from tvr.web.db import Tester
from tvr.web.deps import CurrentTester, Db, json_body, json_body_openapi, required_tester
from tvr.web.files import file_response
from tvr.web.responses import ApiError, PageError, render
from tvr.web.signin import Landing, SignIn, code_context, sign_in_router

router = APIRouter()
images = APIRouter()


def get_verification(request: Request) -> Verification:
    return request.app.state.verification


Ver = Annotated[Verification, Depends(get_verification)]


def verify_landing() -> Landing:
    """Where a signed-in verifier goes: a new one to the welcome page, one coming back to work."""
    return lambda: ("/welcome", "/verify")


SIGN_IN = SignIn(person="verifier", refusal=VerifyError, landing=verify_landing)
router.include_router(sign_in_router(SIGN_IN))


@router.get("/welcome", response_class=HTMLResponse)
def welcome(request: Request, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return render(request, "welcome.html", tester=tester, **code_context(request))


# --- what a page and the API show of an item -------------------------------------------------------
def item_view(v: Verification, item: Item) -> dict[str, Any]:
    """An item as a verifier sees it: never its generated answer."""
    index = v.position(item)
    return {
        "index": index,
        "task_type": item.task_type,
        "scene": item.scene,
        "question": item.question,
        "mask": item.mask,
        "images": [f"/img/{index}/{k}" for k in range(len(item.images))],
        "widget": widget(item),
    }


def shown_answer(item: Item, answer: str) -> str:
    """An answer as the pages show it: a letter with its option's text."""
    if item.answer_format == "choice":
        texts = dict(widget(item)["options"])
        if texts.get(answer):
            return f"{answer}. {texts[answer]}"
    return answer


def next_view(v: Verification, nxt: Next) -> dict[str, Any]:
    out = {
        "serving": nxt.serving.id,
        "item": item_view(v, nxt.item),
        "done": nxt.done,
        "still_needed": nxt.still_needed,
        "elapsed": round(nxt.elapsed, 3),
        "stage": "answer",
    }
    if nxt.verdict is not None:  # answered: now the generated answer may be seen
        out |= {
            "stage": "review",
            "answer": nxt.verdict.answer,
            "generated": nxt.verdict.label,
            "agrees": nxt.verdict.agrees,
        }
    return out


def _next(db: Db, v: Verification, tester: Tester) -> Next | None:
    try:
        return next_item(db, v, tester)
    except VerifyError as err:
        raise PageError(str(err), err.status) from None


def _verify_page(
    request: Request, db: Db, v: Verification, tester: Tester, status: int = 200,
    message: str | None = None,
) -> Response:  # fmt: skip
    nxt = _next(db, v, tester)
    if nxt is None:
        left = still_needed(v, complete_counts(db, v))
        return render(request, "done.html", tester=tester, still_needed=left)
    view = next_view(v, nxt)
    extra = {}
    if view["stage"] == "review":
        extra = {
            "shown_answer": shown_answer(nxt.item, view["answer"]),
            "shown_generated": shown_answer(nxt.item, view["generated"]),
        }
    # one key per form shown: a doubled or retried submission of it is stored once
    return render(request, "verify.html", status=status, tester=tester, unit=view,
                  message=message, flags=FLAGS, form_key=secrets.token_urlsafe(16),
                  **extra)  # fmt: skip


@router.get("/verify", response_class=HTMLResponse)
def verify_page(request: Request, v: Ver, db: Db, tester: CurrentTester) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    return _verify_page(request, db, v, tester)


def _serving_of(serving: str) -> int:
    if not (serving.isascii() and serving.isdigit()) or len(serving) > 12:
        raise PageError("this form does not name an item served to you; reload the page", 422)
    return int(serving)


@router.post("/verify/answer", dependencies=[Depends(check_form_token)])
def answer_form(
    request: Request,
    v: Ver,
    db: Db,
    tester: CurrentTester,
    serving: Annotated[str, Form()] = "",
    key: Annotated[str, Form()] = "",
    answer: Annotated[list[str] | None, Form()] = None,
) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    serving_id = _serving_of(serving)
    served = db.get(VtServing, serving_id)
    item = v.by_id.get(served.item_id) if served is not None else None
    raw: Any = answer or []
    if item is None or item.answer_format != "set":  # one field; a set's boxes are a list
        raw = raw[0] if raw else ""
    try:
        submit_answer(db, v, tester, serving_id, raw, key, None)
    except VerifyError as err:
        return _verify_page(request, db, v, tester, err.status, str(err))
    return RedirectResponse("/verify", status_code=303)


@router.post("/verify/review", dependencies=[Depends(check_form_token)])
def review_form(
    request: Request,
    v: Ver,
    db: Db,
    tester: CurrentTester,
    serving: Annotated[str, Form()] = "",
    flags: Annotated[list[str] | None, Form()] = None,
    fix: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
) -> Response:
    if tester is None:
        return RedirectResponse("/", status_code=303)
    serving_id = _serving_of(serving)
    try:
        submit_review(db, v, tester, serving_id, flags or [], fix or None, note)
    except VerifyError as err:
        return _verify_page(request, db, v, tester, err.status, str(err))
    return RedirectResponse("/verify", status_code=303)


# --- the JSON API ----------------------------------------------------------------------------------
#: the verifier of an API call: 401 before the body is looked at when the browser has none
Verifier = required_tester("start first (POST /api/start): no verifier for this browser")


@router.get("/api/next")
def api_next(v: Ver, db: Db, tester: Verifier) -> Response:
    try:
        nxt = next_item(db, v, tester)
    except VerifyError as err:
        raise ApiError(str(err), err.status) from None
    if nxt is None:
        left = still_needed(v, complete_counts(db, v))
        return JSONResponse({"finished": True, "still_needed": left})
    return JSONResponse({"finished": False, **next_view(v, nxt)})


@router.post("/api/answer", openapi_extra=json_body_openapi(AnswerBody))
def api_answer(
    tester: Verifier,
    body: Annotated[AnswerBody, Depends(json_body(AnswerBody))],
    v: Ver,
    db: Db,
) -> Response:
    try:
        verdict, stored = submit_answer(
            db, v, tester, body.serving, body.answer, body.key, body.client_seconds
        )
    except VerifyError as err:
        raise ApiError(str(err), err.status) from None
    return JSONResponse({"stored": stored, "answer": verdict.answer, "agrees": verdict.agrees,
                         "generated": verdict.label,
                         "server_seconds": round(verdict.server_seconds, 3)})  # fmt: skip


@router.post("/api/review", openapi_extra=json_body_openapi(ReviewBody))
def api_review(
    tester: Verifier,
    body: Annotated[ReviewBody, Depends(json_body(ReviewBody))],
    v: Ver,
    db: Db,
) -> Response:
    try:
        verdict = submit_review(db, v, tester, body.serving, body.flags, body.fix, body.note)
    except VerifyError as err:
        raise ApiError(str(err), err.status) from None
    return JSONResponse({"reviewed": True, "flags": json.loads(verdict.flags_json),
                         "fix": verdict.fix, "note": verdict.note})  # fmt: skip


# --- images ----------------------------------------------------------------------------------------
@images.get("/img/{index}/{k}")
def item_image(index: str, k: str, v: Ver) -> Response:
    """The k-th image of the item at `index` (ASCII digits only); never a path from the request:
    the item's own relative path, sent by `tvr.web.files` (a real file under the build's image
    folder, a JPEG or PNG by its content: a PNG under a .jpg name is sent as a PNG)."""
    ok = all(s.isascii() and s.isdigit() and len(s) <= 9 for s in (index, k))
    relative = v.image(int(index), int(k)) if ok else None
    if relative is None:
        raise ApiError(f"no image {k} of item {index}", 404)
    return file_response((v.images,), relative, ("jpeg", "png"),
                         headers={"Cache-Control": "max-age=3600"},
                         missing="image missing on the server")  # fmt: skip

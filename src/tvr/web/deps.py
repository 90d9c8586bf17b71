"""FastAPI dependencies: options, DB session per request, the cookie's tester, admin guard, JSON."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from tvr.web.config import ServeConfig
from tvr.web.db import Tester, commit
from tvr.web.responses import ApiError, PageError
from tvr.web.testers import COOKIE, tester_of

ADMIN_OFF = "the admin view is off (start the server with --admin)"
MAX_BODY = 64_000  # bytes of a JSON request body

M = TypeVar("M", bound=BaseModel)


def get_config(request: Request) -> ServeConfig:
    return request.app.state.config


def get_db(request: Request) -> Iterator[Session]:
    """The request's session: committed when the route returns, rolled back when it raises
    (an error answer included), closed either way. Routes that must know at once whether a
    write went in (unique names and keys) commit it themselves with `tvr.web.db.commit`."""
    db = request.app.state.sessions()
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    else:
        commit(db)
    finally:
        db.close()


# "function": the session ends when the route returns, before the answer is sent, so a failed
# commit is a 500 and not a success the database does not hold
Db = Annotated[Session, Depends(get_db, scope="function")]
Config = Annotated[ServeConfig, Depends(get_config)]


def current_tester(request: Request, db: Db) -> Tester | None:
    """The tester of the browser's cookie, or None."""
    return tester_of(db, request.cookies.get(COOKIE))


CurrentTester = Annotated[Tester | None, Depends(current_tester)]


def require_admin(request: Request) -> None:
    """The admin guard of pages: without --admin, the error page with status 404."""
    if not request.app.state.config.admin:
        raise PageError(ADMIN_OFF, 404)


def require_admin_api(request: Request) -> None:
    """The admin guard of downloads and JSON: without --admin, {"error": ...} with status 404."""
    if not request.app.state.config.admin:
        raise ApiError(ADMIN_OFF, 404)


def json_body(model: type[M]) -> Callable[[Request], Awaitable[M]]:
    """A dependency giving the request's JSON object as `model`. Refusals, as {"error": ...}:
    not JSON (415), over MAX_BODY bytes (413), not parseable (400), not an object (400), and a
    field the model refuses (422, naming the field)."""

    async def parse(request: Request) -> M:
        if "application/json" not in request.headers.get("content-type", ""):
            raise ApiError("send JSON (Content-Type: application/json)", 415)
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise ApiError("request too large", 413)
        try:
            body = json.loads(raw)
        except ValueError:
            raise ApiError("the request body is not valid JSON", 400) from None
        if not isinstance(body, dict):
            raise ApiError("expected a JSON object", 400)
        try:
            return model.model_validate(body)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "body"
            raise ApiError(f"field {where!r}: {first['msg']}", 422) from None

    parse.__name__ = f"json_body_{model.__name__}"
    return parse

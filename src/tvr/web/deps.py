"""FastAPI dependencies: options, DB session per request, the cookie's tester, admin guard, JSON."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import Session

from tvr.core.errors import InputError
from tvr.core.jsonl import parse_json
from tvr.web.config import ServeConfig
from tvr.web.db import Tester, commit
from tvr.web.errors import ApiError, PageError
from tvr.web.testers import COOKIE, tester_of

ADMIN_OFF = "the admin view is off (it is served by a viewer server: tvr serve --viewer --admin)"
MAX_BODY = 64_000  # bytes of a JSON request body
MAX_DEPTH = 32  # arrays and objects inside each other in a JSON request body
MAX_INT = 2**53  # integers beyond +-2^53 are refused (a database column holds 2^63 at most)
MAX_TEXT = 10_000  # characters of any string in a JSON request body

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


def required_tester(message: str) -> Any:
    """The parameter type of an API route that needs the browser's tester, `Annotated[Tester,
    ...]`: 401 with {"error": message}, before the body is looked at, when it has none."""

    def require(tester: CurrentTester) -> Tester:
        if tester is None:
            raise ApiError(message, 401)
        return tester

    return Annotated[Tester, Depends(require)]


def require_admin(request: Request) -> None:
    """The admin guard of pages: without --admin, the error page with status 404."""
    if not request.app.state.config.admin:
        raise PageError(ADMIN_OFF, 404)


def require_admin_api(request: Request) -> None:
    """The admin guard of downloads and JSON: without --admin, {"error": ...} with status 404."""
    if not request.app.state.config.admin:
        raise ApiError(ADMIN_OFF, 404)


def nesting(value: object) -> int:
    """How deeply arrays and objects nest in a parsed JSON value (0 for a scalar, 1 for [1])."""
    depth, level = 0, [value]
    while True:
        containers = [v for v in level if isinstance(v, list | dict)]
        if not containers:
            return depth
        depth += 1
        level = [x for c in containers for x in (c.values() if isinstance(c, dict) else c)]


def out_of_bounds(value: object, where: str = "") -> str | None:
    """The field path of the first integer beyond +-MAX_INT or string longer than MAX_TEXT in a
    parsed JSON value (keys included), or None. Non-finite numbers do not parse."""
    stack: list[tuple[object, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, bool):
            continue
        if isinstance(item, int) and abs(item) > MAX_INT:
            return path or "body"
        if isinstance(item, str) and len(item) > MAX_TEXT:
            return path or "body"
        if isinstance(item, dict):
            for k, v in item.items():
                if len(k) > MAX_TEXT:
                    return path or "body"
                stack.append((v, f"{path}.{k}" if path else k))
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))
    return None


def is_json(content_type: str) -> bool:
    """Whether a Content-Type header is exactly application/json (parameters such as charset
    allowed): `text/plain; x=application/json` is not, so no form or no-cors fetch of another
    origin gets through."""
    return content_type.split(";", 1)[0].strip().lower() == "application/json"


def json_body(model: type[M]) -> Callable[[Request], Awaitable[M]]:
    """A dependency giving the request's JSON object as `model`. Refusals, as {"error": ...}:
    not JSON (415), over MAX_BODY bytes (413), not parseable or nested deeper than MAX_DEPTH
    (400), not an object (400), an integer or string out of bounds (`out_of_bounds`, 422) and a
    field the model refuses (422, naming the field)."""

    async def parse(request: Request) -> M:
        if not is_json(request.headers.get("content-type", "")):
            raise ApiError("send JSON (Content-Type: application/json)", 415)
        raw = await request.body()
        if len(raw) > MAX_BODY:
            raise ApiError("request too large", 413)
        try:  # read as every tvr reader reads JSON (UTF-8, no NUL, no NaN, bounded nesting)
            body = parse_json(raw, "the request body")
        except InputError as err:
            if "nested deeper" in err.reason:
                raise ApiError(f"JSON nested deeper than {MAX_DEPTH}", 400) from None
            why = f": {err.reason}" if "NaN" in err.reason else ""
            raise ApiError(f"the request body is not valid JSON{why}", 400) from None
        if not isinstance(body, dict):
            raise ApiError("expected a JSON object", 400)
        if nesting(body) > MAX_DEPTH:
            raise ApiError(f"JSON nested deeper than {MAX_DEPTH}", 400)
        bad = out_of_bounds(body)
        if bad is not None:
            raise ApiError(f"field {bad!r}: out of range (integers within +-2^53, strings of "
                           f"at most {MAX_TEXT:,} characters)", 422)  # fmt: skip
        try:
            return model.model_validate(body)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "body"
            raise ApiError(f"field {where!r}: {first['msg']}", 422) from None

    parse.__name__ = f"json_body_{model.__name__}"
    return parse


def json_body_openapi(model: type[BaseModel]) -> dict:
    """The `openapi_extra` of a route that reads `json_body(model)`: its body in the schema."""
    return {
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": model.model_json_schema()}},
        }
    }

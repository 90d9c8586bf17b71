"""How pages answer: a template (with the form token), the error page, a JSON error."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse

from tvr.web.csrf import csrf_token, set_csrf_cookie
from tvr.web.errors import ApiError, PageError

__all__ = ["ApiError", "PageError", "error_page", "install_error_handlers", "json_error", "render"]


def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """`template` of the app's templates rendered with `ctx` and `csrf_token`, the browser's form
    token (sent as its cookie the first time)."""
    templates = request.app.state.templates
    ctx.setdefault("csrf_token", csrf_token(request))
    response = templates.TemplateResponse(request, template, ctx, status_code=status)
    set_csrf_cookie(request, response)
    return response


def error_page(request: Request, message: str, status: int) -> HTMLResponse:
    """The error page: `error.html` (the shared one, `tvr/web/templates/error.html`, unless the
    benchmark's templates hold their own) given `message` and `status`."""
    return render(request, "error.html", status=status, message=message, status_code=status)


def json_error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    """Turn PageError and ApiError into their answers; every other error is left as it was."""

    async def on_page_error(request: Request, err: Exception) -> HTMLResponse:
        assert isinstance(err, PageError)
        return error_page(request, err.message, err.status)

    async def on_api_error(_request: Request, err: Exception) -> JSONResponse:
        assert isinstance(err, ApiError)
        return json_error(err.message, err.status)

    app.add_exception_handler(PageError, on_page_error)
    app.add_exception_handler(ApiError, on_api_error)

"""How pages answer: a template, the error page, a JSON error; PageError/ApiError to raise them."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse


class PageError(Exception):
    """Answer with the error page (the pages' `error.html`, given `message`) and this status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message = message
        self.status = status


class ApiError(Exception):
    """Answer with the JSON body {"error": message} and this status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.message = message
        self.status = status


def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    """`template` of the app's templates rendered with `ctx`."""
    templates = request.app.state.templates
    return templates.TemplateResponse(request, template, ctx, status_code=status)


def error_page(request: Request, message: str, status: int) -> HTMLResponse:
    return render(request, "error.html", status=status, message=message)


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

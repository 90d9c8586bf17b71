"""Guards against other sites and pages: state changes only from the app's own origin, form tokens.

Every POST (PUT, PATCH, DELETE) is refused with 403 when the browser says it comes from another
origin: `Sec-Fetch-Site` other than `same-origin` or `none`, or an `Origin` other than the app's
own (scheme, host and port; another port of the same host is another origin). Requests without
these headers do not come from a browser page (curl, scripts, the load test) and pass. Forms also
carry a token equal to the browser's `tvr_csrf` cookie (HttpOnly, SameSite=Lax), which a page of
another origin cannot read; JSON bodies need exactly `application/json` (`deps.json_body`), which
another origin cannot send without a CORS preflight that this app never grants.
"""

from __future__ import annotations

import re
import secrets
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Form, Request
from starlette.responses import Response

from tvr.web.errors import ApiError, PageError

CSRF_COOKIE = "tvr_csrf"
CSRF_FIELD = "csrf"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
SAFE_SITES = frozenset({"same-origin", "none"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{43}$")

CROSS_ORIGIN = (
    "refused: this request came from another site or page, not from the pages of this app"
)
FORM_EXPIRED = (
    "this form has expired or did not come from the pages of this site; "
    "reload the page and send it again"
)


def _origin(scheme: str, host: str | None, port: int | None) -> tuple[str, str, int | None]:
    scheme = scheme.lower()
    return scheme, (host or "").lower(), port if port is not None else DEFAULT_PORTS.get(scheme)


def _is_form(request: Request) -> bool:
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return kind in ("application/x-www-form-urlencoded", "multipart/form-data")


def same_origin(request: Request) -> None:
    """The app-wide guard: a state-changing request from another origin is refused (403; the
    error page for a form, {"error": ...} otherwise)."""
    if request.method not in UNSAFE_METHODS:
        return
    site = request.headers.get("sec-fetch-site")
    refused = site is not None and site.lower() not in SAFE_SITES
    origin = request.headers.get("origin")
    if origin is not None and not refused:
        try:
            parts = urlsplit(origin)
            theirs = _origin(parts.scheme, parts.hostname, parts.port)
        except ValueError:  # "null", a bad port
            theirs = None
        url = request.url
        refused = theirs != _origin(url.scheme, url.hostname, url.port)
    if refused:
        if _is_form(request):
            raise PageError(CROSS_ORIGIN, 403)
        raise ApiError(CROSS_ORIGIN, 403)


def csrf_token(request: Request) -> str:
    """The browser's form token: its cookie's, or a new one (`set_csrf_cookie` sends it)."""
    token = getattr(request.state, "csrf_token", None)
    if token is None:
        cookie = request.cookies.get(CSRF_COOKIE, "")
        token = cookie if TOKEN_RE.match(cookie) else secrets.token_urlsafe(32)
        request.state.csrf_token = token
        request.state.csrf_new = token != cookie
    return token


def set_csrf_cookie(request: Request, response: Response) -> None:
    """Give the browser the token of `csrf_token` when it did not have it yet."""
    if getattr(request.state, "csrf_new", False):
        response.set_cookie(
            CSRF_COOKIE,
            request.state.csrf_token,
            httponly=True,
            samesite="lax",
            secure=request.app.state.config.secure_cookies,
        )


def check_form_token(request: Request, csrf: Annotated[str, Form()] = "") -> None:
    """The guard of a form post: its `csrf` field must equal the browser's cookie (403 if not)."""
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not (TOKEN_RE.match(cookie) and secrets.compare_digest(cookie.encode(), csrf.encode())):
        raise PageError(FORM_EXPIRED, 403)

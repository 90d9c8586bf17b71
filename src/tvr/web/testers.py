"""Testers: the secret token a browser keeps in a cookie, its hash in the database, the lookup."""

from __future__ import annotations

import hashlib

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.responses import Response

from tvr.web.db import Tester

COOKIE = "tvr_tester"
COOKIE_MAX_AGE = 365 * 86400


def hash_token(token: str) -> str:
    """The stored form of a tester's token (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def tester_of(db: Session, token: str | None) -> Tester | None:
    """The tester whose token this is, or None."""
    if not token:
        return None
    return db.scalar(select(Tester).where(Tester.token_hash == hash_token(token)))


def set_tester_cookie(response: Response, token: str, secure: bool) -> None:
    """Give the browser its token: HttpOnly, SameSite=Lax, Secure when served over HTTPS."""
    response.set_cookie(
        COOKIE, token, httponly=True, samesite="lax", secure=secure, max_age=COOKIE_MAX_AGE
    )


def clear_tester_cookie(response: Response) -> None:
    """Make the browser forget its token (leaving a test)."""
    response.delete_cookie(COOKIE)

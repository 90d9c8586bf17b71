"""Testers: the secret token a browser keeps in a cookie (also the tester's resume code), its hash
in the database, the lookup, and the key under which two spellings of a name are one name."""

from __future__ import annotations

import hashlib
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.responses import Response

from tvr.web.db import Tester, insert, name_key

__all__ = [
    "COOKIE",
    "clear_tester_cookie",
    "code_tokens",
    "find_by_code",
    "hash_token",
    "name_key",
    "new_token",
    "resume_code",
    "set_tester_cookie",
    "sign_in",
    "tester_of",
]

COOKIE = "tvr_tester"
COOKIE_MAX_AGE = 365 * 86400
#: the resume code's letters (Crockford's base 32: no I, L, O, U, which read as 1, 1, 0, V)
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_LENGTH = 16  # 80 random bits, shown as four groups of four
_READ_AS = str.maketrans({"I": "1", "L": "1", "O": "0"})


def hash_token(token: str) -> str:
    """The stored form of a tester's token (the token itself is never stored)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    """A new tester's token: 16 letters of CODE_ALPHABET, typed back as the resume code."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def resume_code(token: str) -> str:
    """The resume code shown to a tester: the token in groups of four (`7K2M-...`); a token made
    before resume codes existed (43 letters) is shown as it is."""
    if len(token) == CODE_LENGTH and all(c in CODE_ALPHABET for c in token):
        return "-".join(token[k : k + 4] for k in range(0, CODE_LENGTH, 4))
    return token


def code_tokens(code: str) -> list[str]:
    """The tokens a typed resume code may stand for: as typed (older tokens are case-sensitive),
    and in capitals without spaces and dashes, with I and L read as 1 and O as 0."""
    raw = code.strip()
    canonical = "".join(raw.split()).replace("-", "").upper().translate(_READ_AS)
    return list(dict.fromkeys(t for t in (raw, canonical) if t))


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


def sign_in(db: Session, name: str, token: str | None) -> tuple[Tester, str, bool] | None:
    """(tester, token, new) for `name`: the tester again when the browser's `token` is the one
    of the tester with this name (names that differ only in case or width are one name), else a
    new tester with a new token; None when the name is held by another browser."""
    key = name_key(name)
    existing = db.scalar(select(Tester).where(Tester.name_key == key))
    if existing is not None:
        if token and existing.token_hash == hash_token(token):
            return existing, token, False
        return None
    token = new_token()
    tester = Tester(name=name, name_key=key, token_hash=hash_token(token))
    if not insert(db, tester):  # another request took the name meanwhile
        return None
    return tester, token, True


def find_by_code(db: Session, code: str) -> tuple[Tester, str] | None:
    """(tester, token) of a typed resume code (`code_tokens` reads its spellings); None when it
    is no tester's."""
    for token in code_tokens(code):
        tester = db.scalar(select(Tester).where(Tester.token_hash == hash_token(token)))
        if tester is not None:
            return tester, token
    return None

"""The JSON bodies of the verification pages' API (pydantic): /api/answer and /api/review
(/api/start and /api/resume take the shared `tvr.web.bodies`).

`serving` is a JSON integer; `answer`, `flags`, `fix` and `note` are kept as sent and checked by
`tvr.visualtrans.web.verify`, each with its own message; `client_seconds` is a finite number
>= 0 or null; other fields are ignored.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt


class AnswerBody(BaseModel):
    """POST /api/answer: the verifier's answer to the item served as `serving` (a letter, a
    whole number as text, or a list of objects / "none")."""

    model_config = ConfigDict(extra="ignore")

    serving: StrictInt
    answer: Any = None
    key: Any = None  # the idempotency key: 8-64 letters, digits, - or _
    client_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class ReviewBody(BaseModel):
    """POST /api/review: after the generated answer is shown, the flags (a list of names), a
    corrected answer (with the flag "wrong_answer") and a note, each optional."""

    model_config = ConfigDict(extra="ignore")

    serving: StrictInt
    flags: Any = Field(default_factory=list)
    fix: Any = None
    note: Any = None

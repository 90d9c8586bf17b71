"""The JSON bodies of the rating pages' API (pydantic): /api/start, /api/resume, /api/rating.

Scores are JSON integers 1-5 or null (`"4"`, `4.0` and `true` are refused, 422 naming the
field); `undecided` is a JSON boolean; `client_seconds` a finite number >= 0 or null. The name,
the resume code and the idempotency key are kept as sent and checked by `study`, each with its
own message.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

Score = Annotated[StrictInt, Field(ge=1, le=5)]


class StartBody(BaseModel):
    """POST /api/start: {"name": ...}."""

    model_config = ConfigDict(extra="ignore")

    name: Any = None


class ResumeBody(BaseModel):
    """POST /api/resume: {"code": ...}, the resume code shown when the rater started."""

    model_config = ConfigDict(extra="ignore")

    code: Any = None


class RatingBody(BaseModel):
    """POST /api/rating: the scores of the unit served as `serving`, or `undecided`."""

    model_config = ConfigDict(extra="ignore")

    serving: StrictInt
    fluency: Score | None = None
    relevance: Score | None = None
    logical_soundness: Score | None = None
    undecided: StrictBool = False
    key: Any = None  # the idempotency key: 8-64 letters, digits, - or _
    client_seconds: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None

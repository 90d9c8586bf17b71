"""The JSON body of the rating pages' API (pydantic): /api/rating (/api/start and /api/resume
take the shared `tvr.web.bodies`).

Scores are JSON integers 1-5 or null (`"4"`, `4.0` and `true` are refused, 422 naming the
field); `undecided` is a JSON boolean; `client_seconds` a finite number >= 0 or null. The
idempotency key is kept as sent and checked by `study.submit`, with its own message.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

Score = Annotated[StrictInt, Field(ge=1, le=5)]


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

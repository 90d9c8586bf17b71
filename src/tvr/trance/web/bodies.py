"""The JSON bodies of the human test's API (pydantic): what /api/start and /api/answer accept.

The models take any JSON object and keep each field as sent: the checks and their messages
(`human.check_name`, `human.submit`) run in a fixed order that depends on the database (a
retried submission key returns the stored answer before the steps are looked at), and the API's
answers to bad input are pinned by the tests, so a field's type is not refused here. Two fields
are converted as the API always did: `split` to a string and `practice` to its truth value.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


class StartBody(BaseModel):
    """POST /api/start: {"name": ...}; the name is checked by `human.check_name`."""

    model_config = ConfigDict(extra="ignore")

    name: Any = None


class AnswerBody(BaseModel):
    """POST /api/answer: one answer to a served sample, checked and scored by `human.submit`."""

    model_config = ConfigDict(extra="ignore")

    problem: Any = None  # a served setting; anything else is "unknown problem" (404)
    split: Annotated[str, BeforeValidator(str)] = Field(default=None, validate_default=True)
    sample_id: Any = None  # a sample id served to this tester
    steps: Any = None  # [{"obj": 0..9, "attr": ..., "value": "color.red"}, ...]
    key: Any = None  # the idempotency key: 8-64 letters, digits, - or _
    client_seconds: Any = None  # the browser's clock, seconds (or null)
    practice: Annotated[bool, BeforeValidator(bool)] = False

"""The JSON body of the human test's API (pydantic): what /api/answer accepts (/api/start and
/api/resume take the shared `tvr.web.bodies`).

`problem`, `split` and `practice` must have their JSON types (a string, a string, a boolean:
`"practice": "false"` is refused, not read as true); a wrong type is a 422 naming the field. The
other fields are kept as sent and checked by `human.submit`, in a fixed order that depends on
the database (a retried submission key returns the stored answer before the steps are looked
at), each with its own message.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr


class AnswerBody(BaseModel):
    """POST /api/answer: one answer to a served sample, checked and scored by `human.submit`."""

    model_config = ConfigDict(extra="ignore")

    problem: StrictStr  # a served setting; another string is "unknown problem" (404)
    split: StrictStr
    sample_id: Any = None  # a sample id served to this tester
    steps: Any = None  # [{"obj": 0..9, "attr": ..., "value": "color.red"}, ...]
    key: Any = None  # the idempotency key: 8-64 letters, digits, - or _
    client_seconds: Any = None  # the browser's clock, seconds (or null)
    practice: StrictBool = False

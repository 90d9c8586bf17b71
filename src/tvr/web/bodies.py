"""The JSON bodies of the sign-in API every benchmark serves (pydantic): /api/start, /api/resume.

Both fields are kept as sent (any JSON value) and checked by `tvr.web.signin.SignIn`, each with
its own message; other fields are ignored.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class StartBody(BaseModel):
    """POST /api/start: {"name": ...}; the name is checked by `SignIn.check_name`."""

    model_config = ConfigDict(extra="ignore")

    name: Any = None


class ResumeBody(BaseModel):
    """POST /api/resume: {"code": ...}, the resume code shown when the tester started."""

    model_config = ConfigDict(extra="ignore")

    code: Any = None

"""The refusals a route raises: PageError (the error page) and ApiError ({"error": ...}); and
Refusal, what the code behind a route raises, which each route turns into one of the two."""

from __future__ import annotations


class PageError(Exception):
    """Answer with the error page (`error.html`, given `message`) and this status."""

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


class Refusal(ValueError):
    """A request refused with a message shown to the person who sent it; nothing is stored.
    Touches no HTTP: a route answers it as a page (PageError) or as JSON (ApiError) with
    `status`. Each benchmark names its own kind (TRANCE's AnswerError, VTT's RateError)."""

    def __init__(self, message: str, status: int = 422):
        super().__init__(message)
        self.status = status

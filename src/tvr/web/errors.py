"""The refusals a route raises: PageError (the error page) and ApiError ({"error": ...})."""

from __future__ import annotations


class PageError(Exception):
    """Answer with the error page (the pages' `error.html`, given `message`) and this status."""

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

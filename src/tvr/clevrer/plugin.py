"""CLEVRER's parts of the shared layers: its viewer pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.web.pages import register_pages


def _clevrer_pages(config: Any) -> Any:
    from tvr.clevrer.web.app import clevrer_pages  # FastAPI only when serving (the web extra)

    return clevrer_pages(config)


register_pages("clevrer", _clevrer_pages)

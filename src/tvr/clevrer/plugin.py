"""CLEVRER's parts of the shared layers: viewer pages, result tables (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.clevrer import results
from tvr.results.registry import TableSpec, register_table
from tvr.web.pages import register_pages


def _clevrer_pages(config: Any) -> Any:
    from tvr.clevrer.web.app import clevrer_pages  # FastAPI only when serving (the web extra)

    return clevrer_pages(config)


register_pages("clevrer", _clevrer_pages)
register_table("clevrer", TableSpec("table2", results.table2))
register_table("clevrer", TableSpec("table3", results.table3))
register_table("clevrer", TableSpec("nsdr_ablation", results.nsdr_ablation))
register_table("clevrer", TableSpec("parser", results.parser_table))

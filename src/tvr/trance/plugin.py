"""TRANCE's parts of the shared layers: its VLM task (and, through their own modules, its result
tables and web pages); named in pyproject's `tvr.benchmarks` entry points."""

from __future__ import annotations

from typing import Any

from tvr.vlm.tasks import register_task


def _trance_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.trance.vlm_task import TranceTask

    return TranceTask(data, images, **options)


register_task("trance", _trance_task)

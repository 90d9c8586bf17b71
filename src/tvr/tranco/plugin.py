"""TRANCO's parts of the shared layers: its VLM task (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.vlm.tasks import register_task


def _tranco_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.tranco.vlm_task import TrancoTask

    return TrancoTask(data, images, **options)


register_task("tranco", _tranco_task)

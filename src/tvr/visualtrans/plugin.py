"""VisualTrans's parts of the shared layers: its VLM task (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.vlm.tasks import register_task


def _visualtrans_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.visualtrans.vlm_task import VisualTransTask

    return VisualTransTask(data, images, **options)


register_task("visualtrans", _visualtrans_task)

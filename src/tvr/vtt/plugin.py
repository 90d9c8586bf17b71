"""VTT's parts of the shared layers: its VLM task and its rating pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.vlm.tasks import register_task
from tvr.web.pages import register_pages


def _vtt_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.vtt.vlm_task import VttTask

    return VttTask(data, images, **options)


register_task("vtt", _vtt_task)


def _vtt_pages(config: Any) -> Any:
    from tvr.vtt.web.app import vtt_pages  # FastAPI only when serving (the web extra)

    return vtt_pages(config)


register_pages("vtt", _vtt_pages)

"""The rendered stage as a `tvr.core.jobs.ShardTask`: one shard per video, its mp4 and masks.

Shard `index` is the folder shards/render/video_XXXXX/ with video_XXXXX.mp4 and (if asked) the
mask proposals sim_XXXXX.json. A video is simulated again from (seed, index), which is exact and
costs a fraction of its rendering, so the stage needs nothing from the symbolic shards.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.clevrer.data.layout import sim_filename, video_filename
from tvr.clevrer.generate.assemble import link, video_target
from tvr.clevrer.generate.config import GenerateConfig
from tvr.clevrer.generate.symbolic import Job
from tvr.clevrer.render.backends import make_frame_renderer
from tvr.clevrer.render.video import render_video
from tvr.clevrer.world.video import simulate_video
from tvr.core.extras import missing_extra


def render_folder(out: Path, index: int) -> Path:
    return out / "shards" / "render" / f"video_{index:05d}"


@dataclass
class RenderWorker:
    """Holds one renderer (an EGL context, or a Blender scene) for all its videos."""

    config: GenerateConfig
    threads: int | None
    renderer: Any = field(default=None, init=False)

    def build(self, job: Job, dest: Path, progress: Callable[[int], None]) -> None:
        if self.renderer is None:
            self.renderer = self._make_renderer()
        video = simulate_video(self.config.seed, job.key, self.config.world)
        dest.mkdir(parents=True)
        render_video(
            video.spec.objects, video.factual, dest,
            index=job.key, masks=self.config.masks, renderer=self.renderer,
        )  # fmt: skip
        progress(1)

    def _make_renderer(self) -> Any:
        """The backend's renderer; `threads` (one of several workers on a machine) caps the
        threads of Cycles or of Mesa's llvmpipe (unless LP_NUM_THREADS is set already)."""
        options: dict[str, Any] = {}
        if self.threads:
            if self.config.backend == "cycles":
                options["threads"] = self.threads
            else:
                os.environ.setdefault("LP_NUM_THREADS", str(self.threads))
        try:
            return make_frame_renderer(self.config.backend, self.config.preset, **options)
        except ImportError as err:
            raise missing_extra(err, f"the {self.config.backend} renderer") from None

    def close(self) -> None:
        if self.renderer is not None:
            self.renderer.close()
            self.renderer = None


@dataclass
class RenderTask:
    """`tvr clevrer generate`'s rendered stage on the job engine (one shard = one video)."""

    config: GenerateConfig
    out: Path

    @property
    def name(self) -> str:
        return f"clevrer generate {self.out} (render)"

    def plan(self) -> list[int]:
        return list(range(self.config.num))

    def path(self, key: int) -> Path:
        return render_folder(self.out, key)

    def is_built(self, key: int) -> bool:
        return (self.path(key) / video_filename(key)).is_file()

    def label(self, key: int) -> str:
        return f"render/video_{key:05d}"

    def prepare(self) -> None:
        (self.out / "shards" / "render").mkdir(parents=True, exist_ok=True)

    def jobs(self, todo: list[int]) -> Iterator[Job]:
        yield from (Job(k) for k in todo)

    def make_worker(self, threads: int | None) -> RenderWorker:
        return RenderWorker(self.config, threads)


def assemble_rendered(config: GenerateConfig, out: Path) -> None:
    """Link every video (and its masks) into the released layout."""
    for index in range(config.num):
        folder = render_folder(out, index)
        link(folder / video_filename(index), video_target(out, index))
        if config.masks:
            link(folder / sim_filename(index), out / "masks" / sim_filename(index))

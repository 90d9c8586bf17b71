"""The whole `tvr generate` pipeline against rendering alone, on the same samples.

Runs `generate_dataset` (sampling with the occlusion rules, rendering 4 views, PNG encoding, the
small copy, checksums, manifests, samples.jsonl) in this process, then renders the same samples'
4 views again with a fresh renderer of the same backend/preset (colour images only, as the
pipeline does). Prints wall-clock and CPU seconds of both and the overhead
(pipeline - rendering) / rendering, plus the pipeline's own split from the shard manifests and
the overhead within the one pipeline run (everything but the rendering calls, against them),
which a machine shared with other jobs disturbs much less than two separate runs. Last, the job
engine's own cost (`tvr.core.jobs`): `--engine-shards` shards that each write a few bytes, in
this process and on a pool of 2 processes (its start included), in ms per shard.

    taskset -c 0 python benchmarks/generate_overhead.py --num 60 --backend raster --preset default
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path


def cpu_seconds() -> float:
    """CPU seconds of this process and its threads (llvmpipe renders in threads)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class TinyWorker:
    """Writes a few bytes per shard: what is left is the engine's work."""

    def build(self, job, dest: Path, progress) -> None:
        dest.write_bytes(b"%d\n" % job.key)
        progress(1)

    def close(self) -> None:
        pass


class TinyJob:
    def __init__(self, key: int) -> None:
        self.key = key


class TinyTask:
    """`n` one-file shards in `root`."""

    name = "engine benchmark"

    def __init__(self, root: Path, n: int) -> None:
        self.root, self.n = root, n

    def plan(self) -> list[int]:
        return list(range(self.n))

    def path(self, key: int) -> Path:
        return self.root / f"s{key:06d}"

    def is_built(self, key: int) -> bool:
        return self.path(key).is_file()

    def label(self, key: int) -> str:
        return self.path(key).name

    def prepare(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def jobs(self, todo):
        return (TinyJob(k) for k in todo)

    def make_worker(self, threads):
        return TinyWorker()


def engine_ms_per_shard(n: int, workers: int) -> float:
    """Wall ms per shard of the engine running `n` tiny shards."""
    from tvr.core.jobs import run_shards

    root = Path(tempfile.mkdtemp(prefix="tvr-engine-bench-"))
    try:
        w0 = time.perf_counter()
        run_shards(TinyTask(root / "shards", n), workers=workers)
        return 1000 * (time.perf_counter() - w0) / n
    finally:
        shutil.rmtree(root)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--num", type=int, default=60)
    p.add_argument("--backend", default="raster")
    p.add_argument("--preset", default="default")
    p.add_argument("--shard-size", type=int, default=20)
    p.add_argument("--threads", type=int, default=1, help="llvmpipe threads (LP_NUM_THREADS)")
    p.add_argument("--keep", type=Path, help="keep the dataset here")
    p.add_argument("--engine-shards", type=int, default=500, help="tiny shards for the engine")
    args = p.parse_args()
    os.environ.setdefault("LP_NUM_THREADS", str(args.threads))

    from tvr.trance.generate.config import DatasetConfig
    from tvr.trance.generate.job import (
        generate_dataset,
        make_renderer_for,
        render_sample_images,
    )

    out = args.keep or Path(tempfile.mkdtemp(prefix="tvr-gen-bench-"))
    if out.exists():
        shutil.rmtree(out)
    config = DatasetConfig(
        num=args.num,
        split_sizes={"train": args.num, "val": 0, "test": 0},
        backend=args.backend,
        preset=args.preset,
        shard_size=args.shard_size,
    ).resolved()
    # warm up the renderer once (context, shaders, bpy import) outside both timings
    make_renderer_for(config).close()

    w0, c0 = time.perf_counter(), cpu_seconds()
    ds = generate_dataset(config, out, progress=False)
    pipe_wall, pipe_cpu = time.perf_counter() - w0, cpu_seconds() - c0

    sp = ds.split("train")
    samples = sp.samples()
    w0, c0 = time.perf_counter(), cpu_seconds()
    renderer = make_renderer_for(config)  # the pipeline makes one too: both timings hold it
    for s in samples:
        render_sample_images(config, renderer, s)
    render_wall, render_cpu = time.perf_counter() - w0, cpu_seconds() - c0
    renderer.close()

    parts = {"sample": 0.0, "render": 0.0, "render_cpu": 0.0, "images": 0.0, "write": 0.0}
    for shard in sp.shards:
        for k in parts:
            parts[k] += shard.manifest["seconds"][k]
    n_img = 4 * len(samples)
    result = {
        "backend": args.backend,
        "preset": args.preset,
        "samples": len(samples),
        "images": n_img,
        "pipeline_wall_s": round(pipe_wall, 2),
        "pipeline_cpu_s": round(pipe_cpu, 2),
        "render_only_wall_s": round(render_wall, 2),
        "render_only_cpu_s": round(render_cpu, 2),
        "overhead_wall": round((pipe_wall - render_wall) / render_wall, 4),
        "overhead_cpu": round((pipe_cpu - render_cpu) / render_cpu, 4),
        "pipeline_images_per_s": round(n_img / pipe_wall, 2),
        "render_images_per_s": round(n_img / render_wall, 2),
        "pipeline_parts_s": {k: round(v, 2) for k, v in parts.items()},
        # within the one pipeline run: everything but rendering, against rendering (robust to
        # the load changing between the two runs above)
        "overhead_within_run_wall": round((pipe_wall - parts["render"]) / parts["render"], 4),
        "overhead_within_run_cpu": round(
            (pipe_cpu - parts["render_cpu"]) / parts["render_cpu"], 4
        ),
        "engine_ms_per_shard_in_process": round(engine_ms_per_shard(args.engine_shards, 1), 3),
        "engine_ms_per_shard_pool_of_2": round(engine_ms_per_shard(args.engine_shards, 2), 3),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(result, indent=2))
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()

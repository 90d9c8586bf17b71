"""What a 500,000-sample Event dataset costs: hours per backend/preset and disk size.

For each backend/preset, runs the whole `tvr generate` pipeline (one process) on a few Event
samples and measures CPU seconds per sample (all threads of the process, which is what a core
spends; wall-clock is printed too) and bytes per sample on disk (PNGs, the 160x120 array,
samples.jsonl, manifests). Then extrapolates to `--target` samples: CPU hours, hours on this
machine with one worker per core (`--cores`), and disk size. Cycles `paper` is not re-run (about
77 CPU seconds per image, docs/rendering.md); `--paper-cpu-per-image` feeds that figure in.

    python benchmarks/dataset_cost.py --runs raster:default:40 raster:preview:40 cycles:preview:4 cycles:default:3
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
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", nargs="+", default=["raster:default:40", "cycles:default:3"],
                   help="backend:preset:samples")  # fmt: skip
    p.add_argument("--target", type=int, default=500_000)
    p.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    p.add_argument("--paper-cpu-per-image", type=float, default=77.0)
    args = p.parse_args()

    from tvr.trance.generate.config import DatasetConfig
    from tvr.trance.generate.job import generate_dataset, make_renderer_for

    rows = []
    bytes_per_sample = None
    for run in args.runs:
        backend, preset, n = run.split(":")
        n = int(n)
        out = Path(tempfile.mkdtemp(prefix="tvr-cost-"))
        shutil.rmtree(out)
        config = DatasetConfig(
            split_sizes={"train": n, "val": 0, "test": 0},
            backend=backend,
            preset=preset,
            shard_size=n,
        ).resolved()
        make_renderer_for(config).close()  # warm-up (imports, bpy) outside the timing
        w0, c0 = time.perf_counter(), cpu_seconds()
        generate_dataset(config, out, progress=False)
        wall, cpu = time.perf_counter() - w0, cpu_seconds() - c0
        size = folder_bytes(out) / n
        bytes_per_sample = size
        shutil.rmtree(out)
        cpu_h = args.target * cpu / n / 3600
        rows.append(
            {
                "backend": backend,
                "preset": preset,
                "samples_measured": n,
                "cpu_s_per_sample": round(cpu / n, 3),
                "wall_s_per_sample": round(wall / n, 3),
                "bytes_per_sample": round(size),
                "cpu_hours": round(cpu_h, 1),
                f"hours_on_{args.cores}_cores": round(cpu_h / args.cores, 1),
                "disk_GB": round(args.target * size / 1e9, 1),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    if bytes_per_sample is not None:
        cpu = 4 * args.paper_cpu_per_image
        rows.append(
            {
                "backend": "cycles",
                "preset": "paper",
                "samples_measured": 0,
                "cpu_s_per_sample": cpu,
                "note": "4 x the per-image CPU time of docs/rendering.md; not re-run",
                "cpu_hours": round(args.target * cpu / 3600, 1),
                f"hours_on_{args.cores}_cores": round(args.target * cpu / 3600 / args.cores, 1),
                "disk_GB": round(args.target * bytes_per_sample / 1e9, 1),
            }
        )
        print(json.dumps(rows[-1]))
    print(json.dumps({"target": args.target, "load_average": os.getloadavg()}))


if __name__ == "__main__":
    main()

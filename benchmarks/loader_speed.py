"""The training loader: samples per second from a generated store with a torch DataLoader.

Makes (or reuses, with --store) a raster `preview` Event dataset, then reads its train split with
`tvr.trance.data.torch_data.EventDataset` (images from the memory-mapped 160x120 array, no PNG
decoding) through a DataLoader with `--workers` processes and `collate`, shuffled, batch 128, for
`--epochs` epochs, and prints samples per second (the first batch, which starts the workers, is
not counted) and the CPU time per sample in steady state (the main process and each worker,
read from /proc between the first and the last batch), the steadier figure on a shared machine.
The batch's images are uint8 (B, H, W, 3), as the loader hands them over; the float conversion
runs in the model step on the device and is not part of this figure.

    python benchmarks/loader_speed.py --store /tmp/loader-store --num 512 --workers 2
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import time
from pathlib import Path


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the loader's workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def steady_cpu(pids: list[int]) -> tuple[float, float]:
    """(main process, workers) CPU seconds so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime, sum(process_cpu_seconds(p) for p in pids)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", type=Path, default=Path("/tmp/tvr-loader-store"))
    p.add_argument("--num", type=int, default=512, help="train samples of the store")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--epochs", type=int, default=6)
    p.add_argument("--size", default="small", choices=("small", "full"))
    args = p.parse_args()

    import torch
    from torch.utils.data import DataLoader

    from tvr.trance.data.batch import collate
    from tvr.trance.data.torch_data import store_dataset
    from tvr.trance.generate.config import DatasetConfig
    from tvr.trance.generate.job import generate_dataset

    config = DatasetConfig(
        split_sizes={"train": args.num, "val": 0, "test": 0}, preset="preview", shard_size=128
    )
    t0 = time.perf_counter()
    ds = generate_dataset(config, args.store, workers=2, progress=False)
    made = time.perf_counter() - t0
    data = store_dataset(ds, "train", "event", args.size)
    torch.manual_seed(0)
    loader = DataLoader(
        data,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        collate_fn=collate,
        persistent_workers=args.workers > 0,
        drop_last=False,
    )
    counted = 0
    start = None
    shapes = None
    cpu0 = 0.0
    pids: list[int] = []
    for _ in range(args.epochs):
        for batch in loader:
            if start is None:  # the first batch starts the workers: not counted
                start = time.perf_counter()
                cpu0 = cpu_seconds()
                workers = getattr(loader._iterator, "_workers", [])
                pids = [w.pid for w in workers]
                main0, workers0 = steady_cpu(pids)
                shapes = tuple(batch["init_image"].shape)
                dtype = str(batch["init_image"].dtype)
                continue
            counted += len(batch["id"])
    took = time.perf_counter() - start
    main1, workers1 = steady_cpu(pids)
    main_us = (main1 - main0) / counted * 1e6
    workers_us = (workers1 - workers0) / counted * 1e6
    del loader, batch
    gc.collect()  # the persistent workers exit, so their CPU time is counted
    time.sleep(0.5)
    cpu = cpu_seconds() - cpu0
    print(
        json.dumps(
            {
                "samples_per_s": round(counted / took, 1),
                "cpu_s_all_processes": round(cpu, 2),
                "samples_per_cpu_s": round(counted / cpu, 1),
                "samples": counted,
                "seconds": round(took, 2),
                "steady_cpu_us_per_sample": round(main_us + workers_us),
                "steady_cpu_us_per_sample_main": round(main_us),
                "steady_cpu_us_per_sample_workers": round(workers_us),
                "batch_shape": shapes,
                "image_dtype": dtype,
                "workers": args.workers,
                "batch_size": args.batch_size,
                "store_seconds_to_make_or_open": round(made, 1),
                "load_average": os.getloadavg(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

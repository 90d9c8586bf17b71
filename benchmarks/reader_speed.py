"""The strict reader against bare orjson: MB/s of `tvr.core.jsonl.iter_jsonl` on a JSON lines
file against `orjson.loads` of each line, and of `read_json` on a JSON document (a CLEVRER
question file) against `orjson.loads` of its bytes; best of --repeat, in one process on one
core, alternating.

    taskset -c 1 python benchmarks/reader_speed.py --jsonl /tmp/ev100k/samples.jsonl \\
        --json /tmp/clv/questions/validation.json [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import orjson

from tvr.core.jsonl import iter_jsonl, read_json


def bare_lines(path: Path) -> int:
    n = 0
    with path.open("rb") as f:  # the files have no blank line
        for line in f:
            orjson.loads(line)
            n += 1
    return n


def strict_lines(path: Path) -> int:
    return sum(1 for _ in iter_jsonl(path))


def best(fn, path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(path)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jsonl", type=Path, action="append", default=[])
    parser.add_argument("--json", type=Path, action="append", default=[])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}; cores allowed: {sorted(os.sched_getaffinity(0))}")
    print("| file | MB | bare orjson MB/s | tvr reader MB/s | tvr / bare time |\n|---|---:|---:|---:|---:|")
    cases = [(p, bare_lines, strict_lines) for p in args.jsonl]
    cases += [(p, lambda p: orjson.loads(p.read_bytes()), read_json) for p in args.json]
    for path, bare, strict in cases:
        mb = path.stat().st_size / 1e6
        tb = ts = float("inf")
        for _ in range(args.repeat):  # alternating
            tb = min(tb, best(bare, path, 1))
            ts = min(ts, best(strict, path, 1))
        kind = "iter_jsonl" if strict is strict_lines else "read_json"
        print(f"| {path.name} ({kind}) | {mb:.0f} | {mb / tb:.0f} | {mb / ts:.0f} | {ts / tb:.2f} |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""Start-up of the `tvr` command: wall seconds of four help commands (median of --runs new
processes, as the console script starts: `from tvr.cli import main; main()`), against another
checkout, and each command's ten slowest imports (`python -X importtime`, cumulative).

    taskset -c 1 python benchmarks/startup_speed.py [--tree 8cfe640=/tmp/wt-8cfe640] [--runs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
COMMANDS = (["--help"], ["evaluate", "--help"], ["clevrer", "evaluate", "--help"],
            ["vtt", "evaluate", "--help"])  # fmt: skip
ENTRY = "import sys\nfrom tvr.cli import main\nsys.exit(main())"


def wall(tree: Path, argv: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), HF_HUB_OFFLINE="1")
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", ENTRY, *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return time.perf_counter() - t0


def slowest_imports(tree: Path, argv: list[str], top: int = 10) -> list[tuple[float, str]]:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), HF_HUB_OFFLINE="1")
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", ENTRY, *argv], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    trees = [("this tree", HERE)] + [(n, Path(p)) for n, p in (t.split("=", 1) for t in args.tree)]
    print(f"load average before: {os.getloadavg()}; cores allowed: {sorted(os.sched_getaffinity(0))}")
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):  # alternating, so that a load change hits every row alike
        for name, tree in trees:
            for argv in COMMANDS:
                times.setdefault((name, " ".join(argv)), []).append(wall(tree, argv))
    head = " | ".join(f"{n} (s)" for n, _ in trees)
    ratio = " | ".join(f"{n} / this" for n, _ in trees[1:])
    print(f"\n| command | {head} | {ratio} |\n|---|" + "---:|" * (2 * len(trees) - 1))
    for argv in COMMANDS:
        cmd = " ".join(argv)
        med = [statistics.median(times[(n, cmd)]) for n, _ in trees]
        print(f"| tvr {cmd} | " + " | ".join(f"{m:.3f}" for m in med) + " | "
              + " | ".join(f"{m / med[0]:.1f}x" for m in med[1:]) + " |")  # fmt: skip
    for name, tree in trees:
        for argv in COMMANDS:
            print(f"\n{name}: tvr {' '.join(argv)}: slowest imports (cumulative s)")
            for seconds, module in slowest_imports(tree, argv):
                print(f"  {seconds:7.3f}  {module.strip()}")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

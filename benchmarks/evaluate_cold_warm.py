"""Cold and warm `tvr evaluate` as a user runs it (a new process each time), against older trees.

    git worktree add /tmp/wt-2e91944 2e91944; git worktree add /tmp/wt-8cfe640 8cfe640
    taskset -c 1 python benchmarks/evaluate_cold_warm.py --tree 2e91944=/tmp/wt-2e91944 \\
        --tree 8cfe640=/tmp/wt-8cfe640 [--num 100000] [--rounds 2]

Makes --num Event samples (--distinct drawn without the occlusion rules, replicated with new
ids, as benchmarks/eval_speed.py does) and the oracle's predictions (`tvr baseline oracle`) in a
scratch folder under /tmp (deleted at the end), then runs `python -m tvr evaluate --data
samples.jsonl --predictions oracle.jsonl --out OUT` of this tree and of each --tree (its src/
first on PYTHONPATH), alternating, --rounds times: cold (no samples.ref.npz: the run parses the
JSONL and builds the reference cache) and warm (the cache present). Prints each run's wall
seconds and rows per second (process start included), the ratios to the first --tree, the load
average before and after, and whether every tree's summary.json and detail.jsonl agree.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def make_data(folder: Path, num: int, distinct: int) -> tuple[Path, Path]:
    sys.path.insert(0, str(HERE / "src"))
    from tvr.trance.data.files import write_samples
    from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler

    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=0, shard=0)
    base = [sampler.sample(i) for i in range(distinct)]
    samples = folder / "samples.jsonl"
    write_samples(samples, (type(s)(**{**s.__dict__, "id": f"b{i:07d}"})
                            for i, s in enumerate(base[i % len(base)] for i in range(num))))  # fmt: skip
    oracle = folder / "oracle.jsonl"
    subprocess.run([sys.executable, "-m", "tvr", "baseline", "oracle", "--data", str(samples),
                    "--setting", "event", "--out", str(oracle)], env=env_for(HERE), check=True,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return samples, oracle


def env_for(tree: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), OMP_NUM_THREADS="1",
               HF_HUB_OFFLINE="1")  # fmt: skip
    return env


def run_evaluate(tree: Path, samples: Path, oracle: Path, out: Path) -> float:
    shutil.rmtree(out, ignore_errors=True)
    # 2e91944 names the references --samples (--data came later; --samples still works after)
    option = "--data" if "--data PATH" in (tree / "src/tvr/cli/evaluate.py").read_text() or \
        "add_data_option" in (tree / "src/tvr/cli/evaluate.py").read_text() else "--samples"
    cmd = [sys.executable, "-m", "tvr", "evaluate", option, str(samples), "--predictions",
           str(oracle), "--setting", "event", "--out", str(out)]  # fmt: skip
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env_for(tree), check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=100_000)
    parser.add_argument("--distinct", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--folder", type=Path,
                        help="keep the data here (made if missing) instead of a scratch folder")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH",
                        help="another checkout to time beside this one (repeatable)")  # fmt: skip
    args = parser.parse_args()
    trees = [tuple(t.split("=", 1)) for t in args.tree] + [("this tree", str(HERE))]
    print(f"load average before: {os.getloadavg()}; cores allowed: {sorted(os.sched_getaffinity(0))}")
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="tvr-eval-bench-") as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        if (folder / "samples.jsonl").is_file() and (folder / "oracle.jsonl").is_file():
            samples, oracle = folder / "samples.jsonl", folder / "oracle.jsonl"
        else:
            samples, oracle = make_data(folder, args.num, args.distinct)
        mb = samples.stat().st_size / 1e6
        print(f"data: {args.num:,} Event rows, samples.jsonl {mb:.0f} MB, made in "
              f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
        cache = samples.with_name(samples.name.replace(".jsonl", ".ref.npz"))
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(args.rounds):
            for name, tree in trees:
                for kind in ("cold", "warm"):
                    if kind == "cold":
                        for c in folder.glob("*.ref.npz"):
                            c.unlink()
                    out = folder / f"out-{name.replace(' ', '_')}"
                    wall = run_evaluate(Path(tree), samples, oracle, out)
                    times.setdefault((name, kind), []).append(wall)
                    print(f"round {r + 1} {name:>10} {kind}: {wall:6.2f} s, "
                          f"{args.num / wall:8,.0f} rows/s")  # fmt: skip
        del cache
        base = trees[0][0]
        print("\n| tree | cold (s) | cold rows/s | warm (s) | warm rows/s | cold vs "
              f"{base} | warm vs {base} |\n|---|---:|---:|---:|---:|---:|---:|")
        for name, _ in trees:
            c, w = min(times[(name, "cold")]), min(times[(name, "warm")])
            cb, wb = min(times[(base, "cold")]), min(times[(base, "warm")])
            print(f"| {name} | {c:.2f} | {args.num / c:,.0f} | {w:.2f} | {args.num / w:,.0f} | "
                  f"{c / cb:.2f}x | {w / wb:.2f}x |")  # fmt: skip
        outs = [folder / f"out-{n.replace(' ', '_')}" for n, _ in trees]
        for f in ("summary.json", "detail.jsonl"):
            same = []
            for o in outs[1:]:
                if f == "summary.json":
                    a, b = (json.loads((x / f).read_text()) for x in (outs[0], o))
                    same.append({k: v for k, v in a.items() if not k.endswith("_file")}
                                == {k: v for k, v in b.items() if not k.endswith("_file")})
                else:
                    same.append(filecmp.cmp(outs[0] / f, o / f, shallow=False))
            print(f"{f}: {'the same in every tree' if all(same) else 'DIFFERS'}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

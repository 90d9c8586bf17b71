"""Speed and size of `tvr export hf`: rows/s and MB per benchmark, on sets made here.

    python benchmarks/hf_export_speed.py --num 1000 --clevrer-videos 40

Makes one set per benchmark with tvr's own generators (not timed as export): TRANCE Event
(`tvr generate`, --num samples split 80/10/10, preview preset, --image-size), VisualTrans (the
11-item test set of tests/visualtrans/make_data.py replicated to --num items, each copy's
question marked so the ids differ), VTT (`tvr vtt testbed --num`), TRANCO (`tvr tranco testbed`,
--num samples split 80/10/10, 2 frames a clip) and CLEVRER (`tvr clevrer generate --backend
raster`, --clevrer-videos videos, no dynamics files: its rows are questions, plus one video row
per video). Then times the export (the exporter's readers, the Parquet shards and the card, as
`tvr export hf` does), and `datasets.load_dataset` of the folder (Parquet to its Arrow cache),
and prints per benchmark: rows, export seconds, rows/s, MB written, and load seconds.
Sets go to --out (a temporary folder by default); an existing set there is reused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ("trance", "visualtrans", "vtt", "tranco", "clevrer")


def _tvr(*argv: str) -> None:
    from tvr.cli import main

    if main([*argv, "--quiet"]) != 0:
        raise SystemExit(f"failed: tvr {' '.join(argv)}")


def _splits(num: int) -> str:
    val = test = max(1, num // 10)
    return f"train={num - val - test},val={val},test={test}"


def make_set(bench: str, folder: Path, args: argparse.Namespace) -> Path:
    """The benchmark's set in `folder` (made once), and the --data path of its export."""
    size = args.image_size
    done = folder / ".made"
    data = folder / "visualtrans.json" if bench == "visualtrans" else folder
    if done.exists():
        return data
    if folder.exists():
        shutil.rmtree(folder)
    if bench == "trance":
        w, h = (int(x) for x in size.split("x"))
        _tvr("generate", "--setting", "event", "--split-sizes", _splits(args.num), "--out",
             str(folder), "--preset", "preview", "--image-size", size, "--small-size",
             f"{w // 2}x{h // 2}")  # fmt: skip
    elif bench == "visualtrans":
        sys.path.insert(0, str(ROOT))
        from tests.visualtrans.make_data import make_visualtrans

        path, _, _ = make_visualtrans(folder)
        items = json.loads(path.read_text())
        copies = [
            {**item, "question": f"{item['question']} [copy {i // len(items)}]"}
            for i, item in ((i, items[i % len(items)]) for i in range(args.num))
        ]
        path.write_text(json.dumps(copies))
        data = path
    elif bench == "vtt":
        _tvr("vtt", "testbed", "--out", str(folder), "--num", str(args.num), "--image-size",
             size, "--preset", "preview")  # fmt: skip
    elif bench == "tranco":
        _tvr("tranco", "testbed", "--out", str(folder), "--split-sizes", _splits(args.num),
             "--image-size", size, "--frames-per-clip", "2", "--preset", "preview")  # fmt: skip
    elif bench == "clevrer":
        n = args.clevrer_videos
        val = test = max(1, n // 4)
        _tvr("clevrer", "generate", "--out", str(folder), "--num", str(n), "--split-sizes",
             f"train={n - val - test},val={val},test={test}", "--backend", "raster",
             "--preset", "preview", "--no-dynamics")  # fmt: skip
    done.touch()
    return data


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--num", type=int, default=1000, help="samples (items) per benchmark")
    p.add_argument("--clevrer-videos", type=int, default=40, help="CLEVRER videos")
    p.add_argument("--image-size", default="160x120", help="TRANCE, VTT, TRANCO images")
    p.add_argument("--benchmarks", nargs="+", default=list(BENCHMARKS), choices=BENCHMARKS)
    p.add_argument("--out", type=Path, help="keep the sets and exports here")
    p.add_argument("--no-load", action="store_true", help="skip datasets.load_dataset")
    p.add_argument("--show", choices=BENCHMARKS, help="print the features and one row of it")
    args = p.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="tvr-hf-bench-"))

    import datasets  # imported before any timing (about a second)
    import pyarrow.parquet  # noqa: F401

    from tvr.core.hf_export import exporter, write_hf_dataset

    results = []
    for bench in args.benchmarks:
        t = time.perf_counter()
        data = make_set(bench, out / "sets" / bench, args)
        made = time.perf_counter() - t
        target = out / "hf" / bench
        if target.exists():
            shutil.rmtree(target)
        t = time.perf_counter()
        report = write_hf_dataset(exporter("hf", bench)(data, None), target)
        seconds = time.perf_counter() - t
        rows = {f"{c}/{s}": n for c, splits in report.rows.items() for s, n in splits.items()}
        load = None
        if not args.no_load:
            t = time.perf_counter()
            for config in report.rows:
                ds = datasets.load_dataset(str(target), config, cache_dir=str(out / "cache"))
                assert {s: len(ds[s]) for s in ds} == report.rows[config], bench
            load = time.perf_counter() - t
            if args.show == bench:
                config = next(iter(report.rows))
                ds = datasets.load_dataset(str(target), config, cache_dir=str(out / "cache"))
                _show(ds[next(iter(ds))])
        results.append((bench, report.total_rows, seconds, report.bytes, load, made, rows))
        print(f"{bench}: {report.total_rows} rows ({', '.join(f'{k} {n}' for k, n in rows.items())}) "
              f"in {seconds:.1f} s; set made in {made:.0f} s", flush=True)  # fmt: skip

    print()
    print("| benchmark | rows | export s | rows/s | MB | MB/s | load_dataset s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for bench, n, seconds, size, load, _, _ in results:
        load_s = "-" if load is None else f"{load:.1f}"
        print(f"| {bench} | {n:,} | {seconds:.1f} | {n / seconds:,.0f} | {size / 1e6:.1f} | "
              f"{size / 1e6 / seconds:.1f} | {load_s} |")  # fmt: skip
    print(f"\nsets and exports in {out}")


def _show(split) -> None:
    def short(v):
        if hasattr(v, "size") and hasattr(v, "mode"):
            return f"<PIL image {v.size[0]}x{v.size[1]}>"
        if isinstance(v, dict):
            return {k: short(x) for k, x in v.items()}
        if isinstance(v, list):
            return [short(x) for x in v]
        return v

    print(split.features)
    print(json.dumps(short(split[0]), indent=1))


if __name__ == "__main__":
    main()

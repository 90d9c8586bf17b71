"""Time `tvr report` on a samples file or dataset: reading, statistics, plots, page.

    python benchmarks/report_speed.py data/event/samples.jsonl --out /tmp/report-bench

Prints wall-clock and CPU seconds per phase (on a shared machine CPU seconds are steadier).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tvr.trance.report import plots as report_plots
from tvr.trance.report.sources import open_source
from tvr.trance.report.writer import ReportConfig, write_report
from tvr.trance.sampling.stats import balance_stats


def timed(label: str, fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    print(f"{label:<28} {time.perf_counter() - w:7.2f} s wall {time.process_time() - c:7.2f} s CPU")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("source", help="a samples.jsonl, a `tvr sample` folder or a dataset folder")
    p.add_argument("--out", required=True)
    p.add_argument("--examples", type=int, default=4)
    args = p.parse_args()
    source = timed("read samples", lambda: open_source(args.source))
    samples = [s for sp in source.splits for s in sp.samples]
    print(f"{len(samples):,} samples in {len(source.splits)} split(s)")
    stats = timed("statistics (counts, Table 8)", lambda: balance_stats(samples))
    timed(
        "plots (6 PNGs)",
        lambda: report_plots.plot_balance(stats, Path(args.out) / "plots-only"),
    )
    config = ReportConfig(args.source, args.out, examples=args.examples)
    timed("whole report (after reading)", lambda: write_report(source, config))


if __name__ == "__main__":
    main()

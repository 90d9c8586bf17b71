"""TRANCO's random baseline against Table 6's random row, under both conventions, @100 and full.

    python benchmarks/tranco_random_baseline.py [--runs 2000] [--seed 0] [--json OUT]

On Table 2's test set (1,430 samples: 432, 425, 279, 154, 87, 53 with k = 2..7 clips), with 100
candidates per sample (the sample's clips among them) and with all 4,918 test clips, prints for
each convention:
  exact     the expectation of each metric (tvr.tranco.eval.baselines.expected_random) and the
            standard deviation of one run's mean over that test set (the paper's row is one run)
  MC        --runs runs of the baseline itself (random_prediction) scored by tvr.tranco.eval.metrics:
            the mean and the standard deviation across runs
  z         (Table 6 - exact) / sd, the sd widened by the printed rounding (+-0.00005)
  MC p      two-sided share of runs at least as far from the middle as Table 6's value, the runs
            rounded to 4 decimals as the table is (no normal approximation; "<1/runs" if none)
and the joint tests that tell the conventions apart: Recall/Precision (chi-square of (R, P),
2 degrees) and single-clip KTD (z of KTD). eq2 and prose differ in both choices; the two tests
look at each choice on its own.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from tvr.tranco.eval.baselines import chi_square, expected_random, simulate_random, z_scores
from tvr.tranco.eval.metrics import CONVENTIONS, METRICS
from tvr.tranco.paper import FULL_CANDIDATES, TABLE2, TINY_CANDIDATES, random_row

ROUNDING = 1e-4  # Table 6 prints 4 decimals


def mc_p(values: np.ndarray, target: float) -> float:
    """Two-sided Monte Carlo p of `target` among run means rounded as the table prints them."""
    shown = np.round(values, 4)
    low, high = float(np.mean(shown <= target)), float(np.mean(shown >= target))
    return min(1.0, 2 * min(low, high))


def shown_p(p: float, runs: int) -> str:
    return f"<{1 / runs:.0e}" if p == 0 else f"{p:.3f}"


def row(name: str, cells: list[str]) -> str:
    return f"{name:<22}" + "".join(f"{c:>17}" for c in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="Monte Carlo runs (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()

    counts = TABLE2["test"][2]
    print(f"test set of Table 2: {sum(counts.values())} samples, "
          + ", ".join(f"k={k}: {c}" for k, c in counts.items()))  # fmt: skip
    print("random baseline: n uniform on 2..7, then n distinct candidates in a random order; "
          f"Monte Carlo: {args.runs} runs, seed {args.seed}")  # fmt: skip
    report: dict = {"runs": args.runs, "seed": args.seed, "settings": {}}
    for setting, n_candidates in (("tiny", TINY_CANDIDATES), ("full", FULL_CANDIDATES)):
        table = random_row().values(setting)
        start = time.perf_counter()
        sim = simulate_random(counts, n_candidates, args.runs, seed=args.seed)
        seconds = time.perf_counter() - start
        label = "@100" if setting == "tiny" else f"full ({n_candidates} candidates)"
        print(f"\n== {label}: Monte Carlo {seconds:.0f} s")
        print(row("", list(METRICS)))
        print(row("Table 6 random", [f"{table[m]:.4f}" for m in METRICS]))
        out: dict = {"table6": table, "conventions": {}}
        for name, conv in CONVENTIONS.items():
            exact = expected_random(counts, n_candidates, conv)
            mc = sim.summary(name)
            z = z_scores(table, exact, ROUNDING)
            p = {m: mc_p(sim.run_means[name][:, i], table[m]) for i, m in enumerate(METRICS)}
            print(f"-- {name}: {conv.description}")
            print(
                row("  exact +- sd", [f"{exact.mean[m]:.4f}+-{exact.sd[m]:.4f}" for m in METRICS])
            )
            print(row("  MC +- sd", [f"{mc.mean[m]:.4f}+-{mc.sd[m]:.4f}" for m in METRICS]))
            print(row("  z of Table 6", ["-" if z[m] is None else f"{z[m]:+.2f}" for m in METRICS]))
            print(row("  MC p of Table 6", [shown_p(p[m], args.runs) for m in METRICS]))
            rp = chi_square(table, exact, ("R", "P"), ROUNDING)
            out["conventions"][name] = {
                "exact": {"mean": exact.mean, "sd": exact.sd},
                "monte_carlo": {"mean": mc.mean, "sd": mc.sd},
                "z": z,
                "mc_p": p,
                "recall_precision_chi_square": {"statistic": rp[0], "df": rp[1], "p": rp[2]},
            }
        print("which convention Table 6 follows:")
        for name, conv in CONVENTIONS.items():
            rp = out["conventions"][name]["recall_precision_chi_square"]
            mcp = out["conventions"][name]["mc_p"]
            print(f"  Recall/Precision as {conv.rp:<5}: chi-square of (R, P) {rp['statistic']:8.2f}"
                  f" (2 df), p = {rp['p']:.2g}; MC p of R {shown_p(mcp['R'], args.runs)}, "
                  f"of P {shown_p(mcp['P'], args.runs)}")  # fmt: skip
        for name, conv in CONVENTIONS.items():
            c = out["conventions"][name]
            print(f"  single-clip KTD {conv.ktd_single:<4}: z of KTD {c['z']['KTD']:+7.2f}, "
                  f"MC p {shown_p(c['mc_p']['KTD'], args.runs)}")  # fmt: skip
        report["settings"][setting] = out
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()

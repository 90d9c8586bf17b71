"""Annotation against truth on the VisualTrans testbed, before and after human verification.

For each error rate of the scripted annotator, the rendered testbed is built (frames, filter,
annotate, questions) with that share of episodes' metadata made wrong; two scripted verifiers
(`tvr.visualtrans.testbed.verifier`: they answer blind from the truth, then flag "wrong answer"
with the fix where the generated answer differs) verify every item through the verification
app's HTTP routes (FastAPI's TestClient, the app `tvr serve --benchmark visualtrans --verify`
serves); then the export stage keeps, fixes and drops items by the verdicts, and the wrong
answers are counted against the truth before (BUILD/questions) and after (BUILD/export).

    python benchmarks/visualtrans_verification.py --out /tmp/vt_verif [--testbed TB] \\
        [--rates 0 0.1 0.3] [--malformed-rate 0.1] [--episodes-per-scene 6] [--json FILE]

--testbed reuses the episodes of `tvr visualtrans testbed --out TB` (TB/episodes, TB/truth.jsonl);
without it they are rendered into OUT/testbed first (about a minute for 24 episodes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any


def verify_build(build: Path, verifiers: int = 2) -> dict[str, int]:
    from fastapi.testclient import TestClient

    from tvr.visualtrans.testbed.verifier import true_answers, verify_from_truth
    from tvr.visualtrans.web.verify_export import store_url
    from tvr.web.config import ServeConfig
    from tvr.web.factory import create_app

    (build / "verify").mkdir(exist_ok=True)
    config = ServeConfig(data=(build,), db_url=store_url(build),
                         extra={"verify": True, "verifiers": verifiers})  # fmt: skip
    answers = true_answers(build)
    done: dict[str, int] = {}
    for k in range(verifiers):
        with TestClient(create_app(config, "visualtrans"), base_url="http://localhost") as client:
            for key, n in verify_from_truth(client, f"verifier-{k + 1}", answers).items():
                done[key] = done.get(key, 0) + n
    return done


def run_rate(tb: Path, out: Path, rate: float, malformed: float) -> dict[str, Any]:
    from tvr.core.jsonl import iter_jsonl
    from tvr.visualtrans.build import run_build
    from tvr.visualtrans.build.check import check_against_truth
    from tvr.visualtrans.build.config import BuildConfig
    from tvr.visualtrans.build.scripted import ScriptedAnnotator

    build = out / f"build-e{rate:g}"
    if build.exists():
        shutil.rmtree(build)
    config = BuildConfig(input=str(tb / "episodes"), image_size=240, annotator="scripted",
                         truth=str(tb / "truth.jsonl"), error_rate=rate,
                         malformed_rate=malformed)  # fmt: skip
    stages = ("frames", "filter", "annotate", "questions")
    run_build(config, build, stages, say=lambda line: None)
    scripted = ScriptedAnnotator(tb / "truth.jsonl", rate, malformed, config.seed)
    before = check_against_truth(build, "questions")
    verdicts = verify_build(build)
    export = run_build(config, build, ("export",), say=lambda line: None)["export"]
    after = check_against_truth(build, "export")
    fixed = sum(bool(f.get("fixed")) for _, f in iter_jsonl(build / "export" / "families.jsonl"))
    return {
        "error_rate": rate,
        "wrong_episodes": sum(scripted.is_wrong(e) for e in scripted.truth),
        "episodes": len(scripted.truth),
        "questions": before["items"],
        "wrong_before": before["wrong"],
        "verdicts": verdicts,
        "exported": export["exported"],
        "kept": export["exported"] - fixed,
        "fixed": fixed,
        "dropped": {k: v for k, v in export["dropped"].items() if v},
        "wrong_after": after["wrong"],
        "build": str(build),
    }


def pct(n: int, d: int) -> str:
    return f"{n} ({100 * n / d:.1f}%)" if d else "-"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--testbed", type=Path, help="a `tvr visualtrans testbed` folder to reuse")
    p.add_argument("--rates", type=float, nargs="+", default=[0.0, 0.1, 0.3])
    p.add_argument("--malformed-rate", type=float, default=0.1)
    p.add_argument("--episodes-per-scene", type=int, default=6)
    p.add_argument("--json", type=Path, help="write the rows here too")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    tb = a.testbed
    if tb is None:
        from tvr.visualtrans.testbed.world import make_testbed

        tb = a.out / "testbed"
        if not (tb / "truth.jsonl").is_file():
            make_testbed(tb, a.episodes_per_scene)
    rows = [run_rate(tb, a.out, r, a.malformed_rate) for r in a.rates]
    print("| scripted error rate | episodes with wrong metadata | questions | wrong before verification | exported (kept + fixed)"
          " | dropped | wrong after verification |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(r["dropped"].items())) or "0"
        print(f"| {r['error_rate']:.0%} | {r['wrong_episodes']} of {r['episodes']} | {r['questions']} | {pct(r['wrong_before'], r['questions'])}"
              f" | {r['exported']} ({r['kept']} + {r['fixed']}) | {dropped} | "
              f"{pct(r['wrong_after'], r['exported'])} |")  # fmt: skip
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

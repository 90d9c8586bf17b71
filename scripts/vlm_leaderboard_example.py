"""Remake docs/leaderboard.md's example: scripted runs of all five benchmarks, then `tvr vlm report`.

    python scripts/vlm_leaderboard_example.py            # from the repository root
    python scripts/vlm_leaderboard_example.py --keep /tmp/board-example   # keep the runs too

The "models" are a scripted OpenAI-compatible server (tests/vlm/scripted_runs.py) on the test
data sets, not real models; every run is labelled `scripted-...`. Each run goes the whole way:
`tvr vlm run` -> `tvr vlm export` (not VisualTrans) -> the benchmark's evaluate `--out` ->
`tvr vlm report`. Writes docs/img/vlm-leaderboard-scripted.png and replaces the table between
the markers in docs/leaderboard.md. Needs the test extras (httpx, Pillow, matplotlib), pybullet
and PyAV (CLEVRER), and Java with pycocoevalcap (VTT); about 30 s on one core.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the scripted runs live in tests/

BEGIN = "<!-- scripted-leaderboard:begin (scripts/vlm_leaderboard_example.py) -->"
END = "<!-- scripted-leaderboard:end -->"


def make_runs(work: Path) -> list[str]:
    """The scripted runs' evaluation folders as LABEL=PATH arguments of `tvr vlm report`."""
    from tests.vlm import scripted_runs as sr

    missing = [what for what, ok in (("Java and pycocoevalcap (VTT)", sr.has_vtt_metrics()),
                                     ("pybullet and PyAV (CLEVRER)", sr.has_clevrer_video()))
               if not ok]  # fmt: skip
    if missing:
        raise SystemExit(f"needs {' and '.join(missing)}: all five benchmarks or none")
    vt = sr.visualtrans_runs(work)
    tranco, _ = sr.tranco_run(work)
    return [
        f"scripted-vt-right={vt['vt-right']}",
        f"scripted-vt-garbled={vt['vt-garbled']}",
        f"scripted-trance={sr.trance_run(work)}",
        f"scripted-tranco={tranco}",
        f"scripted-vtt={sr.vtt_run(work)}",
        f"scripted-clevrer={sr.clevrer_run(work).evaluation}",
    ]


def docs_block(markdown: str) -> str:
    """The report's Markdown as a part of docs/leaderboard.md: no title, sections one level down."""
    lines = markdown.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    lines = ["#" + x if x.startswith("## ") else x for x in lines]
    return "\n".join(lines).strip() + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--docs", type=Path, default=ROOT / "docs", help="docs folder (default: ours)")
    p.add_argument("--keep", type=Path, help="make the runs and the board here and keep them")
    args = p.parse_args()

    from tvr.cli import main as tvr

    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        runs = make_runs(work)
        board = work / "board"
        command = ["vlm", "report", *runs, "--out", str(board), "--overwrite"]
        if tvr(command) != 0:
            return 1
        png = args.docs / "img" / "vlm-leaderboard-scripted.png"
        shutil.copyfile(board / "leaderboard.png", png)
        page = args.docs / "leaderboard.md"
        text = page.read_text(encoding="utf-8")
        if BEGIN not in text or END not in text:
            raise SystemExit(f"{page}: no {BEGIN} ... {END} markers")
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        block = docs_block((board / "leaderboard.md").read_text(encoding="utf-8"))
        page.write_text(f"{head}{BEGIN}\n\n{block}\n{END}{tail}", encoding="utf-8")
    print(f"written: {png}, {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

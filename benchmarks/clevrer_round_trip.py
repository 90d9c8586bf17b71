"""Released-layout round trip of a CLEVRER set: read every file with tvr's readers, write it back,
compare bytes; and the time per file.

    python benchmarks/clevrer_round_trip.py --data /tmp/c200/set

Annotations, question files, mask proposals and submissions go through their typed forms
(`tvr.clevrer.data`); dynamics files through the executor's reader (`read_dynamics` checks them)
and are rewritten from the parsed JSON. A file is "identical" when the rewrite has the same bytes.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from tvr.clevrer.data.annotations import read_annotation, write_annotation
from tvr.clevrer.data.dynamics import write_dynamics
from tvr.clevrer.data.fields import load_json
from tvr.clevrer.data.layout import scan
from tvr.clevrer.data.masks import read_masks, write_masks
from tvr.clevrer.data.questions import read_questions, write_questions
from tvr.clevrer.programs.dynamics import read_dynamics


def _check(kind: str, paths: list[Path], read, write, tmp: Path) -> None:
    same, t0 = 0, time.perf_counter()
    for p in paths:
        out = tmp / f"{kind}-{p.name}"
        write(out, read(p))
        same += out.read_bytes() == p.read_bytes()
    dt = time.perf_counter() - t0
    per = 1000 * dt / max(len(paths), 1)
    print(f"{kind:12s} {same}/{len(paths)} identical after read + write ({per:.1f} ms per file)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, type=Path)
    args = ap.parse_args()
    root = args.data
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        _check("annotations", list(scan(root, "annotation").values()), read_annotation,
               write_annotation, tmp)  # fmt: skip
        _check("questions", sorted((root / "questions").glob("*.json")), read_questions,
               write_questions, tmp)  # fmt: skip
        _check("masks", sorted((root / "masks").glob("sim_*.json")), read_masks, write_masks, tmp)

        def read_dyn(p: Path):
            read_dynamics(p)  # validates
            return load_json(p)

        _check("dynamics", sorted((root / "dynamics").glob("sim_*.json")), read_dyn,
               write_dynamics, tmp)  # fmt: skip


if __name__ == "__main__":
    main()

"""SPICE through coco-caption's jar (spice-1.0.jar), run only with a local Stanford CoreNLP.

SPICE parses every text into a scene graph with Stanford CoreNLP 3.6.0, which pycocoevalcap
would download on first use. tvr never downloads: the user gives a folder holding
`stanford-corenlp-3.6.0.jar` and `stanford-corenlp-3.6.0-models.jar` (from
stanford-corenlp-full-2015-12-09), and the jar runs with those on its class path. Without one,
SPICE is "unavailable" (reported as None with the reason, never as 0).

Each description is one SPICE item (its PTB-tokenized text against its one reference); the score
is the item's "All" F-score, as the released evaluation takes it. An item whose F-score is
undefined (SPICE writes NaN when neither text yields a tuple) scores 0 here and is counted.
"""

from __future__ import annotations

import json
import math
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.processes import java_timeout_s

COREOPTION = "--spice-corenlp"
UNAVAILABLE = (
    "SPICE needs Stanford CoreNLP 3.6.0, which is not downloaded: give a local copy with "
    f"{COREOPTION} DIR (stanford-corenlp-3.6.0.jar and stanford-corenlp-3.6.0-models.jar)"
)


@dataclass(frozen=True)
class SpiceResult:
    """Per-description SPICE F-scores and how many were undefined (scored 0)."""

    scores: list[float]
    undefined: int


def corenlp_jars(folder: str | Path) -> tuple[Path, Path]:
    """The CoreNLP code and models jars in `folder` (3.6.0 preferred); UserError if absent."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserError(f"{COREOPTION} {folder}: no such folder")
    models = sorted(folder.glob("stanford-corenlp-*-models.jar"))
    code = sorted(p for p in folder.glob("stanford-corenlp-*.jar") if p not in models
                  and not p.name.endswith(("-sources.jar", "-javadoc.jar")))  # fmt: skip
    if not models or not code:
        raise UserError(f"{COREOPTION} {folder}: no stanford-corenlp-*.jar and "
                        "stanford-corenlp-*-models.jar there (SPICE 1.0 uses CoreNLP 3.6.0)")  # fmt: skip

    def pick(jars: list[Path]) -> Path:
        return next((p for p in jars if "-3.6.0" in p.name), jars[-1])

    return pick(code), pick(models)


def spice(
    hypotheses: Sequence[str], references: Sequence[str], corenlp: str | Path
) -> SpiceResult:
    """SPICE F-score of each PTB-tokenized hypothesis against its reference."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    code, models = corenlp_jars(corenlp)
    if not hypotheses:
        return SpiceResult([], 0)
    try:
        import pycocoevalcap.spice as spice_package
    except ImportError as err:
        raise missing_extra(err, "SPICE") from None
    home = Path(spice_package.__file__).parent
    classpath = [home / "spice-1.0.jar", *sorted((home / "lib").glob("*.jar")), code, models]
    items = [{"image_id": i, "test": h, "refs": [r]}
             for i, (h, r) in enumerate(zip(hypotheses, references, strict=True))]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tvr-spice-") as tmp:
        source, target = Path(tmp) / "in.json", Path(tmp) / "out.json"
        source.write_text(json.dumps(items))
        command = ["java", "-Xmx8G", "-cp", ":".join(str(p) for p in classpath),
                   "edu.anu.spice.SpiceScorer", str(source), "-out", str(target), "-subset",
                   "-silent"]  # fmt: skip
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False,
                                  timeout=java_timeout_s())  # fmt: skip
        except FileNotFoundError:
            raise UserError("SPICE needs Java on the PATH (java not found)") from None
        except subprocess.TimeoutExpired as err:
            raise UserError(f"SPICE (Java) gave no answer within {err.timeout:.0f} s") from None
        if done.returncode != 0 or not target.is_file():
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise UserError(f"SPICE (spice-1.0.jar with {code.name}) failed: {last}")
        results = json.loads(target.read_text())
    by_id = {item["image_id"]: item["scores"]["All"]["f"] for item in results}
    scores, undefined = [], 0
    for i in range(len(items)):
        value = _number(by_id.get(i))
        if value is None:
            undefined += 1
            value = 0.0
        scores.append(value)
    return SpiceResult(scores, undefined)


def _number(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number

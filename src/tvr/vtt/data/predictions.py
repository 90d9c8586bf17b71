"""Prediction files of VTT: JSON lines `{"id": sample id, "transformations": [N descriptions]}`.

Other keys (a model's topic guess, the raw reply) are allowed and ignored. Each id appears once.
How the descriptions meet the references (missing ones scored as empty, extra ones ignored, both
counted) is decided where they are scored, in tvr.vtt.evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvr.core.errors import InputError, quote
from tvr.core.jsonl import iter_jsonl, skip_if_lenient, write_jsonl


@dataclass(frozen=True)
class Prediction:
    """One sample's predicted descriptions and the line they came from."""

    id: str
    transformations: tuple[str, ...]
    line: int


def read_predictions(
    path: str | Path, problems: list[InputError] | None = None
) -> dict[str, Prediction]:
    """id -> Prediction for every line of a prediction file, validated (an empty file is valid:
    every description is then missing). With a `problems` list (--lenient) a bad line is added to
    it and skipped (its sample's descriptions are then missing) instead of raised."""
    path = Path(path)
    found: dict[str, Prediction] = {}
    for lineno, data in iter_jsonl(path, problems):
        with skip_if_lenient(problems):
            prediction = _prediction(path, lineno, data, found)
            found[prediction.id] = prediction
    return found


def _prediction(path: Path, lineno: int, data: object, found: dict[str, Prediction]) -> Prediction:
    if not isinstance(data, dict):
        raise InputError(path, lineno, None, f"expected a JSON object, got {type(data).__name__}")
    sample_id = data.get("id")
    if not isinstance(sample_id, str) or not sample_id:
        raise InputError(path, lineno, "id", f"expected a sample id (a string), got {quote(sample_id)}")
    if "transformations" not in data:
        raise InputError(path, lineno, "transformations", "missing")
    texts = data["transformations"]
    if not isinstance(texts, list):
        raise InputError(path, lineno, "transformations",
                         f"expected a list of descriptions, got {quote(texts)}")  # fmt: skip
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(path, lineno, f"transformations[{i}]",
                             f"expected a string (\"\" if there is none), got {quote(text)}")  # fmt: skip
    if sample_id in found:
        raise InputError(path, lineno, "id",
                         f"{sample_id!r} is also the id of line {found[sample_id].line}")  # fmt: skip
    return Prediction(sample_id, tuple(texts), lineno)


def write_predictions(path: str | Path, predictions: dict[str, list[str]]) -> int:
    """Write id -> descriptions as a prediction file (atomically); returns the number of lines."""
    return write_jsonl(path, ({"id": k, "transformations": list(v)} for k, v in predictions.items()))

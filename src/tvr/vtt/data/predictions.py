"""Prediction files of VTT: JSON lines `{"id": sample id, "transformations": [N descriptions]}`.

The descriptions may also come under `"preds"`, the key of the released human results
(`docs/lists/human_results/human.jsonl` of the VTT repository); a line with both keys uses
`"transformations"`. Other keys (a model's topic guess, the raw reply, the raters' scores) are
allowed and ignored. Each id appears once.
How the descriptions meet the references (missing ones scored as empty, extra ones ignored, both
counted) is decided where they are scored, in tvr.vtt.eval.evaluate.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tvr.core.errors import InputError, quote
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import iter_jsonl, skip_if_lenient, write_jsonl

#: the keys a line's descriptions are read from, in order of preference
KEYS: tuple[str, ...] = ("transformations", "preds")


@dataclass(frozen=True)
class Prediction:
    """One sample's predicted descriptions and the line they came from."""

    id: str
    transformations: tuple[str, ...]
    line: int


@without_gc
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
    key = next((k for k in KEYS if k in data), None)
    if key is None:
        why = 'missing (the list of descriptions, under "transformations" or "preds")'
        response = data.get("response")
        if isinstance(response, dict) and "preds" in response:
            why += ("; the released multi-turn file keeps them under response.preds: lift them "
                    "to the top first (docs/vtt.md, Reproducing Table 2)")  # fmt: skip
        raise InputError(path, lineno, "transformations", why)
    texts = data[key]
    if not isinstance(texts, list):
        raise InputError(path, lineno, key,
                         f"expected a list of descriptions, got {quote(texts)}")  # fmt: skip
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InputError(path, lineno, f"{key}[{i}]",
                             f"expected a string (\"\" if there is none), got {quote(text)}")  # fmt: skip
    if sample_id in found:
        raise InputError(path, lineno, "id",
                         f"{sample_id!r} is also the id of line {found[sample_id].line}")  # fmt: skip
    return Prediction(sample_id, tuple(texts), lineno)


def write_predictions(path: str | Path, predictions: dict[str, list[str]]) -> int:
    """Write id -> descriptions as a prediction file (atomically); returns the number of lines."""
    return write_jsonl(path, ({"id": k, "transformations": list(v)} for k, v in predictions.items()))


def settings_path(predictions: str | Path) -> Path:
    """Where the settings of a prediction file go: `pred.jsonl` -> `pred.config.json`."""
    p = Path(predictions)
    return p.with_name(p.name.removesuffix(".jsonl") + ".config.json")

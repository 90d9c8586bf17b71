"""VTT as an lmms-eval task (`tvr export lmms-eval --benchmark vtt`): `tvr_vtt` (the test split;
other splits `tvr_vtt_train`, `tvr_vtt_validation`), the strip variant of `tvr vlm run --task vtt`.

`doc_to_text` fills tvr's shipped prompt (`vtt.txt`, the one `tvr vlm run --task vtt` sends) with
`VttTask`'s fields; `doc_to_visual` gives the event strip (`tvr.vtt.strip`: the N + 1 states
side by side, panels numbered) made from the row's state images, the image tvr sends.
`process_results` reads the reply with tvr's parser (`parse_vtt_reply`; an unreadable or failed
reply gives no descriptions, as `tvr vlm export` writes it) and keeps the row (without images);
the aggregations write the rows back as a records file and the descriptions as a predictions
file and score them with `tvr vtt evaluate`'s `evaluate`, so the numbers are its summary's
`metrics` (x100; CIDEr-D's document frequencies from the scored references).

METEOR and the PTB tokenizer (every metric's tokens) run Java: `java` must be on PATH where
lmms-eval runs. BERTScore and SPICE are off (as `tvr vtt evaluate --no-bertscore` without
`--spice-corenlp`) unless local models are given at run time: TVR_VTT_BERTSCORE_MODEL (a
roberta-large folder, `--bertscore-model`) and TVR_VTT_SPICE_CORENLP (`--spice-corenlp`); set at
export time too, they add the `BERTScore` / `SPICE` metrics to the task.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvr.core.lmms_export import LmmsExport, LmmsMetric, LmmsTask

FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
#: the environment variables naming the optional metrics' local models
BERTSCORE_ENV = "TVR_VTT_BERTSCORE_MODEL"
SPICE_ENV = "TVR_VTT_SPICE_CORENLP"
#: `tvr vtt evaluate`'s metrics that always run (Java for METEOR and the tokenizer)
BASE_METRICS = ("BLEU_4", "METEOR", "ROUGE_L", "CIDEr")
ROW_FIELDS = ("id", "youtube_id", "ori", "duration", "topic", "category", "transformations",
              "clip_ids", "segments")  # fmt: skip


@lru_cache(maxsize=1)
def _template() -> Any:
    from tvr.vlm.templates import shipped_template
    from tvr.vtt.vlm_task import VttTask, prompt_name

    return shipped_template(prompt_name("strip", False), VttTask.prompt_package)


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The event strip of the row's N + 1 states (one image): the JPEG `tvr vlm run` sends,
    decoded, so lmms-eval (which re-encodes it as PNG) sends the same pixels."""
    import io

    from PIL import Image

    from tvr.vtt.strip import JPEG_QUALITY, strip_of

    out = io.BytesIO()
    strip_of([im.convert("RGB") for im in doc["states"]]).save(out, format="JPEG",
                                                               quality=JPEG_QUALITY)  # fmt: skip
    return [Image.open(io.BytesIO(out.getvalue())).convert("RGB")]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    from tvr.vtt.vlm_task import answer_slots

    n = len(doc["transformations"])
    fields = {"num_states": str(n + 1), "num_transformations": str(n),
              "answer_slots": answer_slots(n)}  # fmt: skip
    return _template().render(fields)


def _descriptions(reply: str | None) -> list[str]:
    from tvr.vtt.replies import parse_vtt_reply

    if reply is None or str(reply).startswith(FAILED_PREFIX):
        return []
    found = parse_vtt_reply(reply)
    return [] if found is None else list(found.transformations)


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    reply = results[0] if results else None
    value = {"row": {k: doc.get(k) for k in ROW_FIELDS}, "transformations": _descriptions(reply)}
    return {m: value for m in (*BASE_METRICS, "BERTScore", "SPICE")}


def _record_line(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "youtube_id": row["youtube_id"], "ori": row["ori"], "split": "test",
            "duration": row["duration"], "topic": row["topic"], "category": row["category"],
            "annotation": [{"clip_id": c, "segment": list(s), "label": t} for c, s, t in
                           zip(row["clip_ids"], row["segments"], row["transformations"],
                               strict=True)]}  # fmt: skip


def _options() -> Any:
    from tvr.vtt.eval.metrics.suite import MetricOptions

    bert, spice = os.environ.get(BERTSCORE_ENV), os.environ.get(SPICE_ENV)
    return MetricOptions(spice_corenlp=Path(spice) if spice else None,
                         bertscore_model=Path(bert) if bert else None,
                         bertscore=bool(bert))  # fmt: skip


_LAST: dict[str, Any] = {}  # the last summary, by its inputs (the aggregations share one run)


def summary(values: list[dict[str, Any]]) -> dict[str, Any]:
    """`tvr vtt evaluate`'s summary of the descriptions in `values` against their rows."""
    from tvr.vtt.eval.evaluate import evaluate

    rows: dict[str, dict[str, Any]] = {}
    for v in values:  # a sample once (its first reply), as tvr asks each sample once
        rows.setdefault(v["row"]["id"], v)
    key = json.dumps([[k, v["transformations"]] for k, v in rows.items()]
                     + [os.environ.get(BERTSCORE_ENV), os.environ.get(SPICE_ENV)])  # fmt: skip
    if key not in _LAST:
        with tempfile.TemporaryDirectory(prefix="tvr-lmms-") as tmp:
            records, preds = Path(tmp) / "vtt.jsonl", Path(tmp) / "preds.jsonl"
            records.write_text("".join(json.dumps(_record_line(v["row"])) + "\n"
                                       for v in rows.values()))  # fmt: skip
            preds.write_text("".join(json.dumps({"id": k, "transformations": v["transformations"]})
                                     + "\n" for k, v in rows.items()))  # fmt: skip
            found = evaluate(records, preds, "test", _options()).summary
        _LAST.clear()
        _LAST[key] = found
    return _LAST[key]


def _aggregate(metric: str) -> Any:
    def aggregate(values: list[dict[str, Any]]) -> float | None:
        return summary(values)["metrics"][metric]

    aggregate.__name__ = metric
    aggregate.__doc__ = f"`tvr vtt evaluate`'s `metrics.{metric}` (x100)."
    return aggregate


BLEU_4 = _aggregate("BLEU_4")
METEOR = _aggregate("METEOR")
ROUGE_L = _aggregate("ROUGE_L")
CIDEr = _aggregate("CIDEr")
BERTScore = _aggregate("BERTScore")
SPICE = _aggregate("SPICE")

NOTE = (
    "VTT (strip), scored by tvr vtt evaluate (x100). METEOR and the PTB tokenizer need Java.\n"
    f"BERTScore and SPICE are off unless {BERTSCORE_ENV} / {SPICE_ENV} name local models."
)


def export_lmms(data: str | Path, splits: tuple[str, ...] | None = None) -> LmmsExport:
    from tvr.vtt.hf_export import export_vtt

    hf = export_vtt(data, splits)
    names = [*BASE_METRICS, *(["BERTScore"] if os.environ.get(BERTSCORE_ENV) else []),
             *(["SPICE"] if os.environ.get(SPICE_ENV) else [])]  # fmt: skip
    metrics = tuple(LmmsMetric(m, m) for m in names)
    tasks = [
        LmmsTask("tvr_vtt" + ("" if t.split == "test" else f"_{t.split}"), t.config, t.split,
                 metrics, max_new_tokens=2048, note=NOTE)
        for t in hf.tables
    ]  # fmt: skip
    return LmmsExport("vtt", __name__, "tvr_vtt_group", hf, tasks)

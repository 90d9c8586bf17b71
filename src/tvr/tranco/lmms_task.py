"""TRANCO as an lmms-eval task (`tvr export lmms-eval --benchmark tranco`): `tvr_tranco` (the
test split) and `tvr_tranco_validation`, each sample against its stored tiny candidates (as `tvr
vlm run --task tranco` asks; train stores none, so no task).

The rows are the `tvr export hf` TRANCO export's with two columns more, made at export time by
`TrancoTask` (default options): `sheets`, the candidate sheets tvr sends (the JPEGs of
`tvr.tranco.clip_sheet`, numbered in the stored candidate order), and `prompt_fields`, the
prompt's fields as JSON (they depend on the dataset: its source, frames per clip and the train
split's step range). `doc_to_visual` gives initial, final, then the sheets (tvr's order);
`doc_to_text` fills tvr's shipped prompt (`tranco.txt`). `process_results` reads the reply with
tvr's parser (`parse_clip_numbers`; an unreadable reply or a failed request becomes an empty
prediction, as `tvr vlm export` writes it), and each aggregation scores the predictions with
`tvr tranco evaluate`'s scorer (`evaluate` + `summarize`): the means of the paper's convention
(eq2), EMR, R, P, KTD, SD, NSD.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvr.core.lmms_export import LmmsExport, LmmsMetric, LmmsTask

FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
TRANCO_METRICS = ("EMR", "R", "P", "KTD", "SD", "NSD")
LOWER_IS_BETTER = ("KTD", "SD", "NSD")


@lru_cache(maxsize=1)
def _template() -> Any:
    from tvr.tranco.vlm_task import TrancoTask
    from tvr.vlm.templates import shipped_template

    return shipped_template(TrancoTask.default_prompt, TrancoTask.prompt_package)


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    return [im.convert("RGB") if im.mode not in ("RGB", "L") else im
            for im in (doc["initial"], doc["final"], *doc["sheets"])]  # fmt: skip


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    return _template().render(json.loads(doc["prompt_fields"]))


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    from tvr.tranco.vlm_task import parse_clip_numbers

    reply = results[0] if results else None
    candidates = list(doc["candidates"])
    clips: list[str] = []
    if reply is not None and not str(reply).startswith(FAILED_PREFIX):
        found = parse_clip_numbers(reply, len(candidates))
        clips = [candidates[n - 1] for n in found.answer] if found.ok else []
    row = {"id": doc["id"], "clips": [c["id"] for c in doc["clips"]], "candidates": candidates}
    value = {"row": row, "prediction": clips}
    return {m: value for m in TRANCO_METRICS}


def summary(values: list[dict[str, Any]]) -> dict[str, Any]:
    """`tvr tranco evaluate`'s summary of the predictions in `values`."""
    from tvr.tranco.data.formats import Prediction, ReferenceSample
    from tvr.tranco.eval.evaluate import evaluate, summarize

    samples = [ReferenceSample(v["row"]["id"], tuple(v["row"]["clips"]),
                               tuple(v["row"]["candidates"])) for v in values]  # fmt: skip
    predictions = {v["row"]["id"]: Prediction(v["row"]["id"], tuple(v["prediction"]))
                   for v in values}  # fmt: skip
    return summarize(evaluate(samples, predictions, "tiny"))


def _aggregate(metric: str) -> Any:
    def aggregate(values: list[dict[str, Any]]) -> float:
        s = summary(values)
        return s["conventions"][s["published"]["convention"]]["metrics"][metric]

    aggregate.__name__ = metric
    aggregate.__doc__ = f"`tvr tranco evaluate`'s {metric} (the paper's convention)"
    return aggregate


_g = globals()
for _m in TRANCO_METRICS:
    _g[_m] = _aggregate(_m)

METRICS = tuple(LmmsMetric(m, m, m not in LOWER_IS_BETTER) for m in TRANCO_METRICS)


def _with_task_columns(table: Any, data: str | Path, split: str) -> Any:
    from datasets import Image, List, Value

    from tvr.tranco.vlm_task import TrancoTask

    def rows() -> Any:
        task = TrancoTask(data, split=split)
        items = {it.id: it for it in task.items()}
        for row in table.rows():
            item = items[row["id"]]
            sheets = [{"bytes": im.compose(im.sources), "path": f"sheet{k + 1}.jpg"}
                      for k, im in enumerate(item.images[2:])]  # fmt: skip
            yield {**row, "sheets": sheets, "prompt_fields": json.dumps(item.fields)}

    return replace(table, rows=rows, features=lambda: {
        **table.features(), "sheets": List(Image()), "prompt_fields": Value("string")})  # fmt: skip


def export_lmms(data: str | Path, splits: tuple[str, ...] | None = None) -> LmmsExport:
    from tvr.tranco.hf_export import export_tranco

    hf = export_tranco(data, splits)
    back = {"validation": "val", "test": "test"}
    tables = [_with_task_columns(t, data, back[t.split]) for t in hf.tables if t.split in back]
    hf = replace(hf, tables=tables)
    tasks = [
        LmmsTask("tvr_tranco" + ("" if t.split == "test" else f"_{t.split}"), "default", t.split,
                 METRICS, max_new_tokens=4096,
                 note="TRANCO (tiny candidates), scored by tvr tranco evaluate (eq2).")
        for t in tables
    ]  # fmt: skip
    return LmmsExport("tranco", __name__, "tvr_tranco_group", hf, tasks)

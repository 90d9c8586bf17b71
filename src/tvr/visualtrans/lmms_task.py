"""VisualTrans as an lmms-eval task (`tvr export lmms-eval --benchmark visualtrans`).

The functions the exported task's `utils.py` re-exports. `doc_to_text` fills tvr's shipped
prompt (`visualtrans.txt`, the one `tvr vlm run --task visualtrans` sends), `doc_to_visual`
gives the item's images in order (sent after the text, as tvr sends them). `process_results`
keeps the row (without images) and the reply; each aggregation rebuilds the items from the rows
and scores them with `tvr visualtrans evaluate`'s scorer (`score_dataset`), so the numbers are
its summary's: the `official` mode (the default of `tvr visualtrans evaluate`) and `normalized`.
Duplicates (the release has items with the same question and images, so the same id): asked
once, as `tvr vlm run` asks each distinct id once, and scored once per item against each item's
own label, as `tvr visualtrans evaluate` scores them. `process_docs` keeps the first row of each
id and carries the others' fields (`duplicate_rows`, JSON), so lmms-eval sends tvr's requests and
the aggregations still score every item of the file.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvr.core.lmms_export import LmmsExport, LmmsMetric, LmmsTask

#: what lmms-eval's API models answer for a request that failed after their retries
FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
ROW_FIELDS = ("id", "index", "task_type", "dimension", "scene", "question", "label",
              "answer_format", "mask", "image_paths")  # fmt: skip


@lru_cache(maxsize=1)
def _template() -> Any:
    from tvr.visualtrans.vlm_task import VisualTransTask
    from tvr.vlm.templates import shipped_template

    return shipped_template(VisualTransTask.default_prompt, VisualTransTask.prompt_package)


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    return [im.convert("RGB") if im.mode not in ("RGB", "L") else im for im in doc["images"]]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
    fields = {"question": doc["question"], "task_type": doc["task_type"], "scene": doc["scene"]}
    return _template().render(fields)


def process_docs(dataset: Any) -> Any:
    """The first row of each id (asked once, as tvr asks), with the fields of the id's other
    rows in `duplicate_rows` (a JSON list; scored with the same reply)."""
    ids = dataset["id"]
    first: dict[str, int] = {}
    for k, i in enumerate(ids):
        first.setdefault(i, k)
    light = dataset.remove_columns([c for c in dataset.column_names if c not in ROW_FIELDS])
    others: dict[str, list[dict[str, Any]]] = {}
    for k, i in enumerate(ids):
        if first[i] != k:
            others.setdefault(i, []).append({f: light[k][f] for f in ROW_FIELDS})
    kept = dataset.select(sorted(first.values())).flatten_indices()
    return kept.add_column("duplicate_rows", [json.dumps(others.get(i, [])) for i in kept["id"]])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    reply = results[0] if results else None
    rows = [{k: doc.get(k) for k in ROW_FIELDS}, *json.loads(doc.get("duplicate_rows") or "[]")]
    value = {"rows": rows, "reply": reply}
    return {m.name: value for m in METRICS}


def _record(reply: str | None) -> dict[str, Any]:
    if reply is None or str(reply).startswith(FAILED_PREFIX):
        return {"reply": None, "error": str(reply or "no reply")}
    return {"reply": reply, "error": None}


def summary(values: list[dict[str, Any]], mode: str) -> dict[str, Any]:
    """`tvr visualtrans evaluate`'s summary of the replies in `values` (process_results')."""
    from tvr.visualtrans.data.dataset import Dataset, Item
    from tvr.visualtrans.eval.scoring import score_dataset

    rows = sorted((r for v in values for r in v["rows"]), key=lambda r: r["index"])
    items = [
        Item(index=r["index"], id=r["id"], task_type=r["task_type"], scene=r["scene"],
             images=tuple(r["image_paths"]), question=r["question"], label=r["label"],
             answer_format=r["answer_format"], mask=r["mask"])
        for r in rows
    ]  # fmt: skip
    records: dict[str, dict[str, Any]] = {}
    for v in sorted(values, key=lambda v: v["rows"][0]["index"]):
        records.setdefault(v["rows"][0]["id"], {"id": v["rows"][0]["id"], **_record(v["reply"])})
    return score_dataset(Dataset(Path("lmms-eval"), items), records, mode).summary()


def _pct(fraction: float | None) -> float | None:
    return None if fraction is None else 100 * fraction


def overall_official(values: list[dict[str, Any]]) -> float | None:
    """Overall accuracy (percent), official mode: `overall.accuracy` x 100."""
    return _pct(summary(values, "official")["overall"]["accuracy"])


def overall_normalized(values: list[dict[str, Any]]) -> float | None:
    return _pct(summary(values, "normalized")["overall"]["accuracy"])


def _dimension(name: str) -> Any:
    def aggregate(values: list[dict[str, Any]]) -> float | None:
        return summary(values, "official")["dimensions"][name]["table2_pct"]

    aggregate.__name__ = f"{name}_official"
    aggregate.__doc__ = f"Table 2's {name} column (official mode): `dimensions.{name}.table2_pct`."
    return aggregate


spatial_official = _dimension("spatial")
procedural_official = _dimension("procedural")
quantitative_official = _dimension("quantitative")

METRICS = (
    LmmsMetric("overall_official", "overall_official"),
    LmmsMetric("overall_normalized", "overall_normalized"),
    LmmsMetric("spatial_official", "spatial_official"),
    LmmsMetric("procedural_official", "procedural_official"),
    LmmsMetric("quantitative_official", "quantitative_official"),
)


def export_lmms(data: str | Path, splits: tuple[str, ...] | None = None) -> LmmsExport:
    from tvr.visualtrans.hf_export import export_visualtrans

    task = LmmsTask("tvr_visualtrans", "default", "test", METRICS, max_new_tokens=4096,
                    process_docs="process_docs",
                    note="VisualTrans, scored by tvr visualtrans evaluate (percent).")  # fmt: skip
    return LmmsExport("visualtrans", __name__, "tvr_visualtrans_group",
                      export_visualtrans(data, splits), [task])  # fmt: skip

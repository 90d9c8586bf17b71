"""TRANCE as lmms-eval tasks (`tvr export lmms-eval --benchmark trance`): one task per setting
of the exported set (`tvr_trance_basic`, `tvr_trance_event`, `tvr_trance_view`).

`doc_to_text_SETTING` fills tvr's shipped prompt (`trance.txt`) with the fields `tvr vlm run
--task trance` fills (`TranceTask`: the objects table, the value names, the final view, the
step rule), `doc_to_visual` gives init.C then fin.C. `process_results_SETTING` reads the reply
with tvr's parser (`parse_trance_reply`; an unreadable reply becomes `"steps": []`, as `tvr vlm
export` writes it), and the aggregations write the rows back as a samples file and the replies as
a predictions file and score them with `tvr evaluate`'s `evaluate_files` (by simulation), so the
numbers are its summary's metrics. Basic keeps the one-step samples only, as TranceTask does.

View: `process_docs_view` makes one doc per (sample, final view), as TranceTask's items: the
sample's own `view` if it has one, else each of L, C, R (`final_view`, and `item_id`
`SAMPLE@VIEW`, are added); the prompt names that view and `doc_to_visual_view` gives init.C then
that view's final image. The aggregation writes each sample once (with its own `view`, if any)
and the predictions with their `view`, and `tvr evaluate --setting view` scores them (the views
of the samples without their own are those the docs have): AD, AND, LAcc, Acc and the same per
view (`AD_L`, ..., `Acc_R`, the summary's `by_view`).
"""

from __future__ import annotations

import json
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from tvr.core.lmms_export import LmmsExport, LmmsMetric, LmmsTask

FAILED_PREFIX = "[LMMS_EVAL_REQUEST_FAILED"
#: the summary's metrics that become lmms-eval metrics (fractions, as `tvr evaluate` prints)
EVENT_METRICS = ("AD", "AND", "LAcc", "Acc")
SUMMARY_METRICS = {"basic": ("ObjAcc", "AttrAcc", "ValAcc", "Acc"), "event": EVENT_METRICS,
                   "view": EVENT_METRICS + tuple(f"{m}_{v}" for v in ("L", "C", "R")
                                                 for m in EVENT_METRICS)}  # fmt: skip
LOWER_IS_BETTER = ("AD", "AND")


@lru_cache(maxsize=1)
def _template() -> Any:
    from tvr.trance.vlm_task import TranceTask
    from tvr.vlm.templates import shipped_template

    return shipped_template(TranceTask.default_prompt, TranceTask.prompt_package)


def _fields(doc: dict[str, Any], setting: str, view: str = "C") -> dict[str, str]:
    from tvr.trance.eval.metrics import max_steps_for
    from tvr.trance.vlm_task import objects_table, steps_rule
    from tvr.trance.world import vocab

    return {"objects_table": objects_table(doc["objects"]), "values": "\n".join(vocab.VALUES),
            "final_view": view, "final_view_name": vocab.VIEW_NAMES[view],
            "max_steps": str(max_steps_for(setting)), "steps_rule": steps_rule(setting)}  # fmt: skip


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    return [doc["init_C"].convert("RGB"), doc["fin_C"].convert("RGB")]


def doc_to_visual_view(doc: dict[str, Any]) -> list[Any]:
    """View: init.C, then the final image of the doc's view (`process_docs_view`'s rows)."""
    return [doc["init_C"].convert("RGB"), doc[f"fin_{doc['final_view']}"].convert("RGB")]


def _text(setting: str) -> Any:
    def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> str:
        view = doc["final_view"] if setting == "view" else "C"
        return _template().render(_fields(doc, setting, view))

    doc_to_text.__name__ = f"doc_to_text_{setting}"
    return doc_to_text


def _process(setting: str) -> Any:
    def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
        from tvr.trance.vlm_task import parse_trance_reply

        reply = results[0] if results else None
        steps: list[dict[str, Any]] = []
        if reply is not None and not str(reply).startswith(FAILED_PREFIX):
            parsed = parse_trance_reply(reply, 1 if setting == "basic" else None)
            steps = parsed.answer if parsed.ok else []
        row = {k: doc[k] for k in ("id", "objects", "steps", "final")}
        prediction: dict[str, Any] = {"id": doc["id"], "steps": steps}
        if setting == "view":
            row["view"] = _own_view(doc)
            prediction = {"id": doc["id"], "view": doc["final_view"], "steps": steps}
        value = {"row": row, "prediction": prediction}
        return {m: value for m in SUMMARY_METRICS[setting]}

    process_results.__name__ = f"process_results_{setting}"
    return process_results


def _sample_line(row: dict[str, Any]) -> dict[str, Any]:
    steps = [{k: v for k, v in s.items() if v is not None and not (k == "options" and not v)}
             for s in row["steps"]]  # fmt: skip
    from tvr.trance.data.sample import FORMAT

    return {
        "format": FORMAT,
        "id": row["id"],
        **({"view": row["view"]} if row.get("view") else {}),
        "objects": row["objects"],
        "steps": steps,
        "final": row["final"],
    }


def _own_view(doc: dict[str, Any]) -> str | None:
    from tvr.trance.world.vocab import VIEWS

    own = doc.get("view")
    return own if isinstance(own, str) and own in VIEWS else None


def summary(values: list[dict[str, Any]], setting: str) -> dict[str, Any]:
    """`tvr evaluate`'s summary of the predictions in `values` against their rows (View: each
    sample once, scored in the views its docs have where it has no own view)."""
    from tvr.trance.eval.evaluate import evaluate_files
    from tvr.trance.world.vocab import VIEWS

    first: dict[str, dict[str, Any]] = {}
    for v in values:
        first.setdefault(v["row"]["id"], v["row"])
    rows = list(first.values())
    views = VIEWS
    if setting == "view":
        asked = {v["prediction"]["view"] for v in values if not v["row"].get("view")}
        views = tuple(x for x in VIEWS if x in asked) or VIEWS
    with tempfile.TemporaryDirectory(prefix="tvr-lmms-") as tmp:
        samples, preds = Path(tmp) / "samples.jsonl", Path(tmp) / "preds.jsonl"
        samples.write_text("".join(json.dumps(_sample_line(r)) + "\n" for r in rows))
        preds.write_text("".join(json.dumps(v["prediction"]) + "\n" for v in values))
        return evaluate_files(samples, preds, setting, views=views)


def _aggregate(setting: str, metric: str) -> Any:
    def aggregate(values: list[dict[str, Any]]) -> float | None:
        out = summary(values, setting)
        if setting == "view" and "_" in metric:
            name, view = metric.rsplit("_", 1)
            return out["by_view"][view][name]
        return out["metrics"][metric]

    aggregate.__name__ = f"{metric}_{setting}"
    return aggregate


SETTINGS = ("basic", "event", "view")
_g = globals()
for _s in SETTINGS:
    _g[f"doc_to_text_{_s}"] = _text(_s)
    _g[f"process_results_{_s}"] = _process(_s)
    for _m in SUMMARY_METRICS[_s]:
        _g[f"{_m}_{_s}"] = _aggregate(_s, _m)


def process_docs_basic(dataset: Any) -> Any:
    """Basic asks about the one-step samples only (as `tvr vlm run --task trance` does)."""
    return dataset.filter(lambda row: len(row["steps"]) == 1)


def process_docs_view(dataset: Any) -> Any:
    """View: one doc per (sample, final view), in TranceTask's order: the sample's own `view`
    if it has one, else L, C, R; adds `final_view` and `item_id` (`SAMPLE@VIEW`, tvr's item id).
    The rows are selected, not decoded (the images stay as they are)."""
    from tvr.trance.world.vocab import VIEWS

    index: list[int] = []
    views: list[str] = []
    for k, own in enumerate(dataset["view"]):
        for v in (own,) if isinstance(own, str) and own in VIEWS else VIEWS:
            index.append(k)
            views.append(v)
    out = dataset.select(index)
    ids = [f"{sid}@{v}" for sid, v in zip(out["id"], views, strict=True)]
    return out.add_column("final_view", views).add_column("item_id", ids)


PROCESS_DOCS = {"basic": "process_docs_basic", "view": "process_docs_view"}


def export_lmms(data: str | Path, splits: tuple[str, ...] | None = None) -> LmmsExport:
    from tvr.core.errors import UserError
    from tvr.trance.hf_export import export_trance

    hf = export_trance(data, splits)
    setting = hf.tables[0].config
    if setting not in SETTINGS:
        raise UserError(f"tvr export lmms-eval: TRANCE's {setting} setting has no lmms-eval task")
    tasks = [
        LmmsTask(f"tvr_trance_{setting}" + ("" if t.split == "test" else f"_{t.split}"),
                 setting, t.split,
                 tuple(LmmsMetric(m, f"{m}_{setting}", m.split("_")[0] not in LOWER_IS_BETTER) for m in SUMMARY_METRICS[setting]),
                 doc_to_text=f"doc_to_text_{setting}", process_results=f"process_results_{setting}",
                 max_new_tokens=2048, process_docs=PROCESS_DOCS.get(setting),
                 doc_to_visual="doc_to_visual_view" if setting == "view" else "doc_to_visual",
                 doc_to_target="item_id" if setting == "view" else "id",
                 note=f"TRANCE {setting}, scored by tvr evaluate (simulation).")
        for t in hf.tables
    ]  # fmt: skip
    return LmmsExport("trance", __name__, "tvr_trance", hf, tasks)

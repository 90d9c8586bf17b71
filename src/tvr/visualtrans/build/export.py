"""Stage 5, `export`: the built questions in the release's format, verified where a verification
store exists.

If BUILD/verify/verify.sqlite exists (the human verification of `tvr serve --benchmark
visualtrans --verify`) and its reader `tvr.visualtrans.web.verify_export` imports, the items
are the ones it keeps (fixed items with their fix) and the dropped ones are counted by
reason; otherwise every item is exported with the note "not verified". Output:
BUILD/export/VisualTrans.json, images/, families.jsonl and report.json: a folder that every
`tvr visualtrans` command, `tvr export hf --benchmark visualtrans` and the lmms-eval task read
as they read the release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.jsonl import iter_jsonl, read_json
from tvr.visualtrans.build.questions import STAGE as QUESTIONS
from tvr.visualtrans.build.questions import write_items

STAGE = "export"
STORE = Path("verify") / "verify.sqlite"


def verified(build: Path, items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, int], str]:
    """(kept items, dropped counts by reason, note): the verification store's verdicts when
    there is one and its reader imports, else every item and the note "not verified"."""
    if not (build / STORE).is_file():
        return items, {}, f"not verified (no {STORE})"
    try:
        from tvr.visualtrans.web.verify_export import verified_items
    except ImportError:
        return items, {}, "not verified (tvr.visualtrans.web.verify_export is not available)"
    kept, dropped = verified_items(build, items)
    return kept, dict(dropped), "verified"


def answer_of(item: dict[str, Any]) -> str:
    """The answer's content of a released item: the text (or image) of its letter, else the
    label."""
    from tvr.visualtrans.data.dataset import CHOICE_LETTERS, infer_answer_format, question_options
    from tvr.visualtrans.data.dataset import _parse_item as parse

    label = item["label"].strip()
    if infer_answer_format(item["task_type"], label) != "choice":
        return item["label"]
    k = CHOICE_LETTERS.index(label.upper())
    if item["task_type"] == "procedural_interm":
        return item["images"][2 + k]
    options = question_options(parse(Path("export"), 0, item, []))
    return options[k] if k < len(options) else label


def run_export(out: Path) -> dict[str, Any]:
    from tvr.visualtrans.data.dataset import item_id

    src = out / QUESTIONS
    items = read_json(src / "VisualTrans.json")
    kept, dropped, note = verified(out, items)
    families = {r["id"]: r for _, r in iter_jsonl(src / "families.jsonl")}
    labels = {item_id(it["question"], it["images"]): it["label"] for it in items}
    fams = []
    for it in kept:
        i = item_id(it["question"], it["images"])
        line = {**families.get(i, {"family": None, "task_type": it["task_type"]}), "id": i}
        if labels.get(i) != it["label"]:  # fixed by a verifier: the answer the fix means
            line.update(answer=answer_of(it), fixed=True)
        fams.append(line)
    write_items(out / STAGE, kept, src / "images", fams)
    return {"items": len(items), "exported": len(kept), "dropped": dropped, "note": note}

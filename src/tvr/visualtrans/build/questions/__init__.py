"""Stage 4, `questions`: rule-based questions from the metadata, a table of small generators.

Each family (`FAMILIES`, one module per subtask type) turns one episode's metadata into draft
questions; the drafts of a family are then sub-sampled and given their option order here:

* counting answers of 0 or 1 are kept with probability `low_count_keep` (the release's
  sub-sampling of low-change cases), seeded;
* at most `questions_per_family` drafts per family (0: all), drawn with the seed;
* multiple-choice answers are balanced: the n questions of a family get the letters A-D
  n // 4 or n // 4 + 1 times each (fewer letters where a question has fewer options), in a
  seeded order; ordered options (layers) show a window of four placed to put the answer at
  its letter where the stack allows; distractors are drawn from each draft's pool with the
  seed.

Output: BUILD/questions/VisualTrans.json (the release's format), images/ (the keyframes the
items name, as SCENE/SCENE_N_ROLE.jpg), families.jsonl (id, family, task_type, key, episode,
answer), balance.json (answers per family).
"""

from __future__ import annotations

import os
import shutil
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from tvr.visualtrans.build.questions import (
    causal,
    count,
    interm,
    plan,
    spatial_fine,
    spatial_global,
)
from tvr.visualtrans.build.questions.base import (
    Context,
    Draft,
    EpisodeView,
    Family,
    balanced_targets,
    render,
)

#: the family table, in the order of the paper's Table 2 columns
FAMILIES: tuple[Family, ...] = (*spatial_fine.FAMILIES, *spatial_global.FAMILIES,
                                *interm.FAMILIES, *causal.FAMILIES, *plan.FAMILIES,
                                *count.FAMILIES)  # fmt: skip
BY_NAME = {f.name: f for f in FAMILIES}
STAGE = "questions"


def drafts_of(episodes: list[EpisodeView], seed: int) -> dict[str, list[Draft]]:
    """Every family's drafts over the episodes, family -> drafts in episode order."""
    from tvr.visualtrans.build.schemas import family_of

    ctx = Context(seed, episodes)
    out: dict[str, list[Draft]] = {f.name: [] for f in FAMILIES}
    for ep in episodes:
        fam = family_of(ep.scene)
        for f in FAMILIES:
            if fam in f.scene_families:
                for d in f.generate(ep, ctx):
                    out[d.family].append(d)
    return out


def assemble(drafts: dict[str, list[Draft]], seed: int, per_family: int = 0,
             low_count_keep: float = 0.3) -> list[tuple[dict[str, Any], Draft]]:  # fmt: skip
    """The released items of the drafts (sub-sampled, balanced), with their drafts."""
    out = []
    for f in FAMILIES:
        rng = np.random.default_rng([seed, zlib.crc32(f.name.encode())])
        ds = list(drafts.get(f.name, []))
        if f.answer_format == "count":
            ds = [d for d in ds if int(d.label) > 1 or rng.random() < low_count_keep]  # type: ignore[arg-type]
        if per_family and len(ds) > per_family:
            keep = sorted(rng.choice(len(ds), size=per_family, replace=False))
            ds = [ds[i] for i in keep]
        targets = balanced_targets(len(ds), rng)
        for d, t in zip(ds, targets, strict=False):
            item = render(d, t, rng)
            if item is None:
                continue
            item["task_type"] = f.task_type
            out.append((item, d))
    return out


def episode_views(out: Path) -> list[EpisodeView]:
    """The annotated episodes of a build, with their keyframes."""
    from tvr.core.jsonl import iter_jsonl
    from tvr.visualtrans.build.annotate import STAGE as ANNOTATE
    from tvr.visualtrans.build.frames import episode_records
    from tvr.visualtrans.build.schemas import validate_metadata

    frames = {r["episode"]: r for r in episode_records(out)}
    views = []
    for _, line in iter_jsonl(out / ANNOTATE / "metadata.jsonl"):
        r = frames[line["episode"]]
        meta = validate_metadata(line["metadata"], line["scene"], line["episode"])
        views.append(EpisodeView(line["episode"], line["scene"], meta,
                                 {role: f["image"] for role, f in r["frames"].items()}))  # fmt: skip
    return views


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists():
        return
    tmp = dst.with_name(f".{dst.name}.tmp-{os.getpid()}")
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)


def write_items(folder: Path, items: list[dict[str, Any]], images_from: Path,
                families: list[dict[str, Any]] | None = None) -> None:  # fmt: skip
    """VisualTrans.json (last), its images/ and families.jsonl into `folder`."""
    from tvr.core.jsonl import write_json, write_jsonl

    folder.mkdir(parents=True, exist_ok=True)
    for rel in sorted({rel for it in items for rel in it["images"]}):
        _link_or_copy(images_from / rel, folder / "images" / rel)
    if families is not None:
        write_jsonl(folder / "families.jsonl", families)
    write_json(folder / "VisualTrans.json", items)


def balance(items: list[dict[str, Any]], families: list[dict[str, Any]]) -> dict[str, Any]:
    """Answers per family: letter counts, count values, set sizes; the largest share."""
    by: dict[str, Counter[str]] = {}
    for it, fam in zip(items, families, strict=True):
        f = BY_NAME[fam["family"]]
        value = it["label"] if f.answer_format != "set" else f"{len(it['label'].split(','))} objects"
        by.setdefault(fam["family"], Counter())[value] += 1
    return {name: {"items": sum(c.values()), "answers": dict(sorted(c.items())),
                   "largest_share": round(max(c.values()) / sum(c.values()), 3)}
            for name, c in by.items()}  # fmt: skip


def run_questions(out: Path, seed: int, per_family: int, low_count_keep: float) -> dict[str, Any]:
    from tvr.core.jsonl import write_json
    from tvr.visualtrans.build.frames import IMAGES
    from tvr.visualtrans.build.frames import STAGE as FRAMES
    from tvr.visualtrans.data.dataset import item_id

    views = episode_views(out)
    drafts = drafts_of(views, seed)
    pairs = assemble(drafts, seed, per_family, low_count_keep)
    items = [it for it, _ in pairs]
    families = [{"id": item_id(it["question"], it["images"]), "family": d.family,
                 "task_type": it["task_type"], "key": d.key, "episode": d.episode,
                 "answer": d.answer} for it, d in pairs]  # fmt: skip
    folder = out / STAGE
    write_items(folder, items, out / FRAMES / IMAGES, families)
    bal = balance(items, families)
    write_json(folder / "balance.json", bal)
    return {"episodes": len(views), "drafts": {k: len(v) for k, v in drafts.items()},
            "items": len(items),
            "per_task_type": dict(Counter(it["task_type"] for it in items)),
            "per_family": dict(Counter(f["family"] for f in families)),
            "balance": bal}  # fmt: skip


# --- matching released questions to families (`tvr visualtrans stats --families`) -------------
def match_family(task_type: str, scene: str, question: str, answer_format: str) -> tuple[str | None, str]:
    """(family, "") of the family that would write this question, or (None, the reason)."""
    from tvr.visualtrans.build.schemas import SCENE_FAMILY

    stems = [f for f in FAMILIES if f.matches(question)]
    if not stems:
        return None, "no family's question stem matches"
    typed = [f for f in stems if f.task_type == task_type]
    if not typed:
        return None, f"stem of {stems[0].name}, but task_type {task_type} (it writes {stems[0].task_type})"
    scened = [f for f in typed if SCENE_FAMILY.get(scene) in f.scene_families]
    if not scened:
        return None, (f"stem of {typed[0].name}, but scene {scene} (family "
                      f"{SCENE_FAMILY.get(scene)}) is not one it writes for "
                      f"({', '.join(typed[0].scene_families)})")  # fmt: skip
    formatted = [f for f in scened if f.answer_format == answer_format]
    if not formatted:
        return None, (f"stem of {scened[0].name}, but answer format {answer_format} (it writes "
                      f"{scened[0].answer_format})")  # fmt: skip
    return formatted[0].name, ""


def family_coverage(dataset: Any) -> dict[str, Any]:
    """Each item of a loaded VisualTrans file matched to a family: coverage, the families no
    item matches, the items no family matches with the reason."""
    matched: Counter[str] = Counter()
    unmatched = []
    for it in dataset.items:
        name, reason = match_family(it.task_type, it.scene, it.question, it.answer_format)
        if name is None:
            unmatched.append({"index": it.index, "task_type": it.task_type, "scene": it.scene,
                              "question": it.question[:120], "reason": reason})  # fmt: skip
        else:
            matched[name] += 1
    n = len(dataset.items)
    return {"items": n, "matched": n - len(unmatched),
            "coverage": round((n - len(unmatched)) / n, 4) if n else None,
            "per_family": {f.name: matched[f.name] for f in FAMILIES},
            "families_unmatched": [f.name for f in FAMILIES if not matched[f.name]],
            "unmatched_items": unmatched}  # fmt: skip

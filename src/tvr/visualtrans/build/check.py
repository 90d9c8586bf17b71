"""A testbed build's answers against the truth (`tvr visualtrans testbed`): the same generators run on the truth's metadata
(same episodes, same seed); each built question is compared, by its key (family, episode,
parameters), with the truth's answer to the same question (a set's objects in any order)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tvr.core.jsonl import iter_jsonl, read_json


def truth_answers(build: Path, truth: Path, seed: int) -> dict[str, str]:
    """key -> the answer the generators give on the truth's metadata of the build's episodes."""
    from tvr.visualtrans.build.questions import assemble, drafts_of, episode_views
    from tvr.visualtrans.build.questions.base import EpisodeView
    from tvr.visualtrans.build.schemas import validate_metadata

    rows = {r["episode"]: r for _, r in iter_jsonl(truth)}
    views = [EpisodeView(v.episode, v.scene,
                         validate_metadata(rows[v.episode]["metadata"], v.scene, v.episode),
                         v.frames) for v in episode_views(build)]  # fmt: skip
    return {d.key: d.answer for _, d in assemble(drafts_of(views, seed), seed, 0, 1.0)}


def same_answer(family: str, a: str, b: str) -> bool:
    """Whether two answers of `family` are the same: a set's objects in any order (as the
    scorer reads a set), else the same text."""
    from tvr.visualtrans.build.questions import BY_NAME

    if family in BY_NAME and BY_NAME[family].answer_format == "set":
        return sorted(a.split(", ")) == sorted(b.split(", "))
    return a == b


def check_against_truth(build: str | Path, folder: str = "questions") -> dict[str, Any]:
    """Wrong answers among a build's questions (BUILD/FOLDER/families.jsonl), in all and per
    family; the build's config names the truth and the seed."""
    build = Path(build)
    config = read_json(build / "config.json")
    truth = truth_answers(build, Path(config["truth"]), config["seed"])
    wrong: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missing = 0
    for _, f in iter_jsonl(build / folder / "families.jsonl"):
        expected = truth.get(f["key"])
        if expected is None:  # the wrong metadata made a question the truth does not have
            missing += 1
            wrong[f["family"]] += 1
        elif not same_answer(f["family"], expected, f["answer"]):
            wrong[f["family"]] += 1
        total[f["family"]] += 1
    n = sum(total.values())
    return {"items": n, "wrong": sum(wrong.values()), "not_in_truth": missing,
            "wrong_share": round(sum(wrong.values()) / n, 4) if n else None,
            "per_family": {k: {"items": total[k], "wrong": wrong[k]} for k in total}}  # fmt: skip

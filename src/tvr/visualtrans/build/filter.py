"""Stage 2, `filter`: a vision-language model judges each episode's start and end frames.

The prompt of the scene's family asks for {"usable": bool, "reason": str,
"manipulated_objects": int}; an episode is kept when usable. Rejected episodes stay listed
with the model's reason; episodes whose reply stayed invalid, or whose request failed, are
listed as failed with the reason (`vlm_stage`). Output: BUILD/filter/verdicts.jsonl, one line
per episode with keyframes: episode, scene, status (kept | rejected | failed), reason,
attempts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tvr.core.jsonl import write_jsonl
from tvr.visualtrans.build.frames import STAGE as FRAMES
from tvr.visualtrans.build.frames import episode_records
from tvr.visualtrans.build.schemas import parse_reply_json
from tvr.visualtrans.build.vlm_stage import Asker, EpisodeRequest, ask_episodes

STAGE = "filter"


class FilterVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    usable: bool
    reason: str = ""
    manipulated_objects: int | None = Field(default=None, ge=0)


def parse_verdict(request: EpisodeRequest, reply: str) -> FilterVerdict:
    raw = parse_reply_json(reply)
    try:
        return FilterVerdict.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first.get("loc", ())) or "(record)"
        raise ValueError(f"{loc}: {first.get('msg')}") from None


def run_filter(out: Path, asker: Asker, parse_retries: int) -> dict[str, Any]:
    episodes = episode_records(out)
    images = out / FRAMES / "images"
    requests = [EpisodeRequest(r["episode"], r["scene"],
                               (images / r["frames"]["start"]["image"],
                                images / r["frames"]["end"]["image"]),
                               r.get("language"), "Two images follow: the start, then the end.")
                for r in episodes]  # fmt: skip
    outcomes = ask_episodes(STAGE, out, requests, parse_verdict, asker, parse_retries)
    lines = []
    for r in episodes:
        o = outcomes[r["episode"]]
        if o.status == "ok":
            status = "kept" if o.value.usable else "rejected"
            reason = o.value.reason
        else:
            status, reason = "failed", f"{o.status}: {o.reason}"
        lines.append({"episode": r["episode"], "scene": r["scene"], "status": status,
                      "reason": reason, "attempts": o.attempts})  # fmt: skip
    write_jsonl(out / STAGE / "verdicts.jsonl", lines)
    counts = {s: sum(line["status"] == s for line in lines) for s in ("kept", "rejected", "failed")}
    return {"episodes": len(lines), **counts,
            "retried": sum(line["attempts"] > 1 for line in lines),
            "failed_reasons": {line["episode"]: line["reason"] for line in lines
                               if line["status"] == "failed"}}  # fmt: skip


def kept_episodes(out: Path) -> list[str]:
    from tvr.core.jsonl import iter_jsonl

    path = out / STAGE / "verdicts.jsonl"
    from tvr.core.errors import UserError

    if not path.is_file():
        raise UserError(f"{out}: the filter stage has not run (no {path})")
    return [r["episode"] for _, r in iter_jsonl(path) if r["status"] == "kept"]

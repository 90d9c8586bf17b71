"""Stage 3, `annotate`: structured metadata for every kept episode.

For each episode kept by the filter: the object crops first (`crops`, with `--detector` only;
without one the stage notes that it ran without crops, as the paper's scenes without crops),
then the metadata, one record of the scene family's schema (`schemas`), either

* from a human file (`--metadata FILE`, JSON lines with `scene` and `episode`), validated the
  same way (a fault names the file, the line and the field; the build stops), or
* from the model: the scene family's prompt with the keyframes (start, end, intermediate) and
  the crops; the reply is validated, asked again when invalid, then recorded as failed with
  its reason (`vlm_stage`).

Output: BUILD/annotate/metadata.jsonl (episode, scene, source: human | model, metadata) and
BUILD/annotate/failed.jsonl (episode, scene, status, reason, attempts); crops in
BUILD/annotate/crops/ when a detector is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.jsonl import write_jsonl
from tvr.visualtrans.build.config import BuildConfig
from tvr.visualtrans.build.filter import kept_episodes
from tvr.visualtrans.build.frames import STAGE as FRAMES
from tvr.visualtrans.build.frames import episode_records
from tvr.visualtrans.build.schemas import (
    parse_reply_json,
    read_human_metadata,
    validate_metadata,
)
from tvr.visualtrans.build.vlm_stage import Asker, EpisodeRequest, ask_episodes

STAGE = "annotate"


def parse_metadata(request: EpisodeRequest, reply: str) -> Any:
    return validate_metadata(parse_reply_json(reply), request.scene, request.episode)


def run_annotate(config: BuildConfig, out: Path, asker: Asker | None) -> dict[str, Any]:
    kept = set(kept_episodes(out))
    records = [r for r in episode_records(out) if r["episode"] in kept]
    human = read_human_metadata(config.metadata) if config.metadata else {}
    images = out / FRAMES / "images"
    crops: dict[str, list[Path]] = {}
    crop_note = "no --detector: annotated without object crops"
    if config.detector:
        from tvr.visualtrans.build.crops import crop_episodes

        crops, crop_note = crop_episodes(config.detector, records, images, out / STAGE / "crops")
    requests = []
    for r in records:
        if r["episode"] in human:
            continue
        frames = [images / f["image"] for f in r["frames"].values()]
        order = ", ".join(r["frames"])
        extra = crops.get(r["episode"], [])
        note = (f"{len(frames)} keyframes follow ({order})"
                + (f", then {len(extra)} object crops." if extra else "."))  # fmt: skip
        requests.append(EpisodeRequest(r["episode"], r["scene"], (*frames, *extra),
                                       r.get("language"), note))  # fmt: skip
    outcomes = {}
    if requests:
        if asker is None:
            from tvr.core.errors import UserError

            raise UserError("the annotate stage needs an endpoint for the episodes that "
                            "--metadata does not cover")  # fmt: skip
        outcomes = ask_episodes(STAGE, out, requests, parse_metadata, asker, config.parse_retries)
    lines, failed = [], []
    for r in records:
        e = r["episode"]
        if e in human:
            lines.append({"episode": e, "scene": r["scene"], "source": "human",
                          "metadata": human[e].model_dump(mode="json")})  # fmt: skip
            continue
        o = outcomes[e]
        if o.status == "ok":
            lines.append({"episode": e, "scene": r["scene"], "source": "model",
                          "metadata": o.value.model_dump(mode="json")})  # fmt: skip
        else:
            failed.append({"episode": e, "scene": r["scene"], "status": o.status,
                           "reason": o.reason, "attempts": o.attempts})  # fmt: skip
    write_jsonl(out / STAGE / "failed.jsonl", failed)
    write_jsonl(out / STAGE / "metadata.jsonl", lines)
    unused = sorted(set(human) - {r["episode"] for r in records})
    return {"episodes": len(records), "annotated": len(lines),
            "from_human_file": sum(line["source"] == "human" for line in lines),
            "from_model": sum(line["source"] == "model" for line in lines),
            "invalid_reply": sum(f["status"] == "invalid" for f in failed),
            "failed_request": sum(f["status"] == "failed" for f in failed),
            "retried": sum(o.attempts > 1 for o in outcomes.values()),
            "crops": crop_note, "human_file_episodes_not_kept": unused}  # fmt: skip

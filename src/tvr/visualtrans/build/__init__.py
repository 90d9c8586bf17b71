"""`tvr visualtrans build`: the VisualTrans construction pipeline, stage by stage.

BUILD/config.json     the BuildConfig (a second build with other settings is refused)
BUILD/frames/         keyframes of every episode (images/SCENE/...), episodes.jsonl
BUILD/filter/         the model's verdict per episode (verdicts.jsonl), its replies
BUILD/annotate/       metadata per kept episode (metadata.jsonl), failures, crops
BUILD/questions/      VisualTrans.json + images/ + families.jsonl + balance.json
BUILD/export/         the exported set (verified where BUILD/verify/verify.sqlite exists)

Each stage writes its BUILD/STAGE/report.json last: the stage's counts, and its wall and CPU
seconds (in all and per episode). A stage with a report is finished and is not run again; a
stage killed halfway resumes (frames: the job engine's shards; filter and annotate: the
runner's results files; questions and export write their files atomically, the report last).
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import read_json, write_json
from tvr.core.manifest import check_same_config, save_config
from tvr.visualtrans.build.config import STAGES, BuildConfig

REPORT = "report.json"


def stage_done(out: Path, stage: str) -> bool:
    return (out / stage / REPORT).is_file()


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def run_build(
    config: BuildConfig,
    out: str | Path,
    stages: tuple[str, ...] = STAGES,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    model: str | None = None,
    workers: int = 1,
    concurrency: int = 4,
    say: Callable[[str], None] = print,
) -> dict[str, dict[str, Any]]:
    """Run the `stages` of the build of `config` into `out` (each only if not finished);
    returns stage -> its report."""
    config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a VisualTrans build")
    save_config(out, config.to_dict())
    reports: dict[str, dict[str, Any]] = {}
    for stage in STAGES:
        if stage not in stages:
            continue
        if stage_done(out, stage):
            reports[stage] = read_json(out / stage / REPORT)
            say(f"{stage}: already built ({out / stage / REPORT})")
            continue
        wall, cpu = time.perf_counter(), _cpu()
        counts = _run_stage(stage, config, out, base_url, api_key, model, workers, concurrency)
        wall, cpu = time.perf_counter() - wall, _cpu() - cpu
        episodes = counts.get("episodes") or 0
        counts["seconds"] = {"wall": round(wall, 3), "cpu": round(cpu, 3),
                             "wall_per_episode": round(wall / episodes, 4) if episodes else None,
                             "cpu_per_episode": round(cpu / episodes, 4) if episodes else None}  # fmt: skip
        write_json(out / stage / REPORT, counts)
        reports[stage] = counts
        say(f"{stage}: {summary_line(stage, counts)}")
    return reports


def _run_stage(stage: str, config: BuildConfig, out: Path, base_url: str | None,
               api_key: str | None, model: str | None, workers: int,
               concurrency: int) -> dict[str, Any]:  # fmt: skip
    needs = {"filter": "frames", "annotate": "filter", "questions": "annotate",
             "export": "questions"}  # fmt: skip
    if stage in needs and not stage_done(out, needs[stage]):
        raise UserError(f"{out}: stage {stage} needs stage {needs[stage]} first "
                        f"(tvr visualtrans build --stage {needs[stage]} ...)")  # fmt: skip
    (out / stage).mkdir(parents=True, exist_ok=True)
    if stage == "frames":
        from tvr.visualtrans.build.frames import run_frames

        return run_frames(config, out, workers)
    if stage in ("filter", "annotate"):
        from tvr.visualtrans.build.vlm_stage import endpoint_for

        if stage == "annotate" and config.metadata and _all_human(config, out):
            from tvr.visualtrans.build.annotate import run_annotate

            return run_annotate(config, out, None)
        with endpoint_for(config, base_url, api_key, concurrency, model) as asker:
            if stage == "filter":
                from tvr.visualtrans.build.filter import run_filter

                return {**run_filter(out, asker, config.parse_retries), "model": asker.model}
            from tvr.visualtrans.build.annotate import run_annotate

            return {**run_annotate(config, out, asker), "model": asker.model}
    if stage == "questions":
        from tvr.visualtrans.build.questions import run_questions

        return run_questions(out, config.seed, config.questions_per_family, config.low_count_keep)
    from tvr.visualtrans.build.export import run_export

    return run_export(out)


def _all_human(config: BuildConfig, out: Path) -> bool:
    from tvr.visualtrans.build.filter import kept_episodes
    from tvr.visualtrans.build.schemas import read_human_metadata

    assert config.metadata is not None
    return set(kept_episodes(out)) <= set(read_human_metadata(config.metadata))


def summary_line(stage: str, c: dict[str, Any]) -> str:
    s = c.get("seconds", {})
    t = f" ({s.get('wall', 0):.1f} s wall, {s.get('cpu', 0):.1f} s CPU)" if s else ""
    if stage == "frames":
        return f"{c['with_keyframes']} of {c['episodes']} episodes with keyframes, {c['skipped']} skipped{t}"
    if stage == "filter":
        return (f"{c['kept']} kept, {c['rejected']} rejected, {c['failed']} failed of "
                f"{c['episodes']} ({c['retried']} asked again){t}")  # fmt: skip
    if stage == "annotate":
        return (f"{c['annotated']} of {c['episodes']} annotated ({c['from_human_file']} from the "
                f"human file), {c['invalid_reply']} invalid replies, {c['failed_request']} failed "
                f"requests, {c['retried']} asked again; {c['crops']}{t}")  # fmt: skip
    if stage == "questions":
        return f"{c['items']} items from {c['episodes']} episodes: {c['per_task_type']}{t}"
    return f"{c['exported']} of {c['items']} items exported ({c['note']}){t}"

"""`tvr clevrer generate`: the symbolic stage, then the rendered one, then the released layout.

Both stages are shard jobs of `tvr.core.jobs` (in process, a spawn pool of `workers`, or Ray):
a killed run loses at most the shards in progress, and a rerun with the same config builds only
what is missing, byte-identical to an uninterrupted run (every video is drawn from (seed, index)).
"""

from __future__ import annotations

from pathlib import Path

from tqdm import tqdm

from tvr.clevrer.generate.assemble import assemble_symbolic
from tvr.clevrer.generate.config import GenerateConfig
from tvr.clevrer.generate.symbolic import SymbolicTask
from tvr.core.jobs import pending, run_shards
from tvr.core.manifest import check_same_config


def generate(
    config: GenerateConfig,
    out: str | Path,
    workers: int = 1,
    ray: str | None = None,
    progress: bool = True,
) -> dict[str, Path]:
    """Make (or finish) the set of `config` in folder `out`; returns the split question files."""
    config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a CLEVRER set")
    symbolic = SymbolicTask(config, out)
    todo = pending(symbolic)
    with tqdm(total=config.num, disable=not progress, unit="video", desc="simulating") as bar:
        bar.update(config.num - sum(len(config.shard_range(k)) for k in todo))
        run_shards(symbolic, todo, workers=workers, ray=ray, progress=bar.update)
    questions = assemble_symbolic(config, out)
    if config.backend != "none":
        from tvr.clevrer.generate.rendered import RenderTask, assemble_rendered

        render = RenderTask(config, out)
        todo = pending(render)
        with tqdm(total=config.num, disable=not progress, unit="video", desc="rendering") as bar:
            bar.update(config.num - len(todo))
            run_shards(render, todo, workers=workers, ray=ray, progress=bar.update)
        assemble_rendered(config, out)
    return questions

"""`train_scene_parser(config) -> run_dir`: one scene parser run on `tvr.training.runs`, then its
best checkpoint scored on the validation images.

The run folder holds what every tvr run holds (config.json, metrics.csv with `val/acc` = objects
found with all four attributes right over true plus extra objects, checkpoints/best.ckpt and
last.ckpt; a rerun resumes), `labels/` (the cached labels of each split), `looks.json` (the looks trained on:
`tvr.trance.perception.looks`) and, once training
ends, `eval/<val_split>/parser_eval.json` (`score_split`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from tvr.core.jsonl import write_json
from tvr.training.runs import fit_config, open_run
from tvr.trance.perception.config import SceneParserConfig
from tvr.trance.perception.data import SceneParserData
from tvr.trance.perception.looks import record_looks
from tvr.trance.perception.module import SceneParserModule


def train_scene_parser(
    config: SceneParserConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train the parser as configured (resuming its run folder); returns the run folder."""
    run_dir = open_run(config)
    # the looks it reads: checked by `tvr solve` against the images it is given
    record_looks(run_dir, config.data, config.augment_look)
    data = SceneParserData(config)
    data.setup()
    assert data.train_set is not None and data.val_set is not None
    print(f"scene parser: {len(data.train_set)} training images, {len(data.val_set)} "
          f"validation images (160x120)")  # fmt: skip
    cfg = config.to_dict()
    result = fit_config(
        config, lambda: SceneParserModule(cfg), data, callbacks, progress_bar, epoch_lines,
        batch_size=lambda b: b["images"].shape[0], monitor="val/acc", mode="max",
        monitor_label="val object Acc",
    )  # fmt: skip
    if result.trainer.is_global_zero:
        from tvr.trance.perception.predict import SceneParser, score_split

        scores = score_split(SceneParser.load(result.best), config.data, config.val_split)
        write_json(run_dir / "eval" / config.val_split / "parser_eval.json", scores)
    return run_dir

"""`train_baseline(config) -> run_dir`: one LSTM or CNN+LSTM run on `fit_run`, then its answers.

The run folder holds config.json, metrics.csv (per epoch: train loss, val loss, `val/desc_acc`,
`val/option_acc`, `val/acc`), checkpoints/best.ckpt and last.ckpt (a rerun resumes) and, once
training ends, the best checkpoint's answers to the validation split in the submission format,
`predictions/<val_split>.json`, scored in `eval/<val_split>/` (summary.json, summary.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from tvr.clevrer.data.layout import find_questions
from tvr.clevrer.data.questions import has_answers, read_questions
from tvr.clevrer.data.submission import write_submission
from tvr.clevrer.models.baselines.config import RESNETS, BaselineConfig
from tvr.clevrer.models.baselines.model import load_cnn_weights, resnet_cnn
from tvr.clevrer.models.baselines.module import BaselineData, BaselineModule
from tvr.clevrer.models.baselines.predict import Baseline
from tvr.clevrer.results import evaluate_into
from tvr.core.notices import warn_random_weights
from tvr.training.runs import fit_config, open_run


def train_baseline(
    config: BaselineConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train the baseline as configured (resuming its run folder); returns the run folder."""
    config.validate()
    pretrained = None
    if config.uses_video and config.cnn in RESNETS and not config.cnn_weights:
        # a ResNet is meant to start from ImageNet weights; the small CNN from scratch
        warn_random_weights(f"the frame CNN {config.cnn}" + (" (frozen)" if config.freeze_cnn
                            else " (trained in this run)"), "--cnn-weights")  # fmt: skip
    if config.cnn_weights and config.uses_video:  # read and checked before anything is written
        cnn, _ = resnet_cnn(config.cnn)
        load_cnn_weights(cnn, config.cnn_weights)
        pretrained = cnn.state_dict()
    run_dir = open_run(config)
    data = BaselineData(config)
    data.setup()
    assert data.words is not None and data.train_set is not None and data.val_set is not None
    print(
        f"{config.model}: {len(data.train_set)} training videos, {len(data.val_set)} validation "
        f"videos, {len(data.words)} words"
    )
    words = data.words.to_json()

    def make_module() -> BaselineModule:
        module = BaselineModule(config.to_dict(), words)
        if pretrained is not None and module.model.video is not None:
            module.model.video.cnn.load_state_dict(pretrained)  # a resumed run's checkpoint wins
        return module

    result = fit_config(
        config, make_module, data, callbacks, progress_bar, epoch_lines,
        batch_size=lambda b: int(b["video"].shape[0]), monitor="val/acc", mode="max",
    )  # fmt: skip
    if result.trainer.is_global_zero:
        write_answers(result.best, config.data, config.val_split, run_dir, progress=False)
    return run_dir


def write_answers(
    checkpoint: Path,
    data: str,
    split: str,
    run_dir: Path,
    progress: bool = True,
    name: str | None = None,
) -> Path:
    """Answer `split` of `data` with `checkpoint` into run_dir/predictions/<name>.json, and score
    it into run_dir/eval/<name>/ when the questions have answers (`name` defaults to `split`);
    returns the answer file."""
    questions_file = find_questions(data, split)
    videos = read_questions(questions_file)
    answers = Baseline.load(checkpoint).answer(videos, data, progress)
    name = name or split
    path = run_dir / "predictions" / f"{name}.json"
    write_submission(path, answers)
    if has_answers(videos):
        evaluate_into(questions_file, path, run_dir / "eval" / name)
    return path

"""The Table 2 baselines: items and targets, the networks forward and backward, the frame cache, and
two-epoch runs whose answer files `tvr clevrer evaluate` scores."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

from tvr.clevrer.data.questions import read_questions  # noqa: E402
from tvr.clevrer.data.submission import read_submission  # noqa: E402
from tvr.clevrer.models.baselines.config import BaselineConfig  # noqa: E402
from tvr.clevrer.models.baselines.data import (  # noqa: E402
    ANSWERS,
    NO_TARGET,
    VideoQA,
    build_words,
    collate,
    video_items,
)
from tvr.clevrer.models.baselines.model import QAModel  # noqa: E402
from tvr.clevrer.models.baselines.module import qa_loss  # noqa: E402
from tvr.cli import main  # noqa: E402


def test_items_are_questions_and_options_with_their_targets(symbolic_set):
    video = read_questions(symbolic_set / "questions" / "train.json")[0]
    items = video_items(video)
    assert len(items) == sum(1 if q.choices is None else len(q.choices) for q in video.questions)
    for item, q in zip(
        (i for i in items if not i.is_option),
        (q for q in video.questions if q.choices is None),
        strict=True,
    ):
        assert ANSWERS[item.target] == q.answer
    options = [i for i in items if i.is_option]
    labels = [c.answer for q in video.questions for c in q.choices or ()]
    assert [i.target for i in options] == [int(a == "correct") for a in labels]
    assert all("<choice>" in i.words for i in options)
    assert len(ANSWERS) == 21 and len(set(ANSWERS)) == 21


def _batch(symbolic_set, frames: int = 0):
    videos = read_questions(symbolic_set / "questions" / "train.json")[:2]
    dataset = VideoQA(videos, build_words(videos))
    batch = collate([dataset[0], dataset[1]])
    if frames:
        batch["frames"] = torch.randint(0, 256, (2, frames, 3, 32, 48), dtype=torch.uint8)
    return dataset, batch


@pytest.mark.parametrize(
    "model,cnn",
    [("lstm", "small"), ("cnn-lstm", "small"), ("cnn-lstm", "resnet18"), ("cnn-lstm", "resnet50")],
)
def test_each_network_runs_forward_and_backward_on_a_tiny_batch(symbolic_set, model, cnn):
    torch.manual_seed(0)
    config = BaselineConfig(model=model, cnn=cnn, data="-", frames=3, embed_dim=16, hidden=24)
    dataset, batch = _batch(symbolic_set, frames=3 if model == "cnn-lstm" else 0)
    net = QAModel(config, len(dataset.items) + 200)
    answer, option = net(batch["words"], batch["lengths"], batch["item_video"], batch.get("frames"))
    n = batch["words"].shape[0]
    assert answer.shape == (n, len(ANSWERS)) and option.shape == (n,)
    loss = qa_loss(answer, option, batch)
    loss.backward()
    assert torch.isfinite(loss)
    assert net.question.lstm.weight_ih_l0.grad.abs().sum() > 0
    if model == "cnn-lstm":
        first_conv = next(m for m in net.video.cnn.modules() if isinstance(m, torch.nn.Conv2d))
        assert first_conv.weight.grad.abs().sum() > 0
        with pytest.raises(ValueError, match="frames"):
            net(batch["words"], batch["lengths"], batch["item_video"], None)


def test_the_loss_ignores_unknown_targets(symbolic_set):
    _, batch = _batch(symbolic_set)
    n = batch["words"].shape[0]
    answer, option = torch.zeros(n, len(ANSWERS)), torch.zeros(n)
    batch["target"] = torch.full((n,), NO_TARGET)
    assert float(qa_loss(answer, option, batch)) == 0.0


def _config(root, tmp_path, model, **kw):
    values = dict(
        model=model,
        data=str(root),
        epochs=2,
        embed_dim=16,
        hidden=24,
        batch_videos=2,
        frames=2,
        frame_width=48,
        frame_height=32,
        accelerator="cpu",
        output_dir=str(tmp_path / "runs"),
    )
    values.update(kw)
    return BaselineConfig(**values)


def test_lstm_two_epochs_then_predict_and_evaluate_through_the_cli(symbolic_set, tmp_path, capsys):
    from tvr.clevrer.models.baselines.run import train_baseline

    run = train_baseline(_config(symbolic_set, tmp_path, "lstm"))
    assert run.name == "lstm"
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 3 and {"val/desc_acc", "val/option_acc", "val/acc"} <= set(
        rows[0].split(",")
    )
    summary = json.loads((run / "eval" / "validation" / "summary.json").read_text())
    assert summary["score"]["missing"] == {"videos": 0, "questions": 0, "options": 0}
    # predict the test split and score it with `tvr clevrer evaluate`
    assert main(["clevrer", "predict", "--run", str(run), "--split", "test",
                 "--out", str(tmp_path / "answers.json")]) == 0  # fmt: skip
    answers = run / "predictions" / "test.json"
    assert (tmp_path / "answers.json").read_bytes() == answers.read_bytes()  # --out: a copy
    submitted = read_submission(answers)
    gold = read_questions(symbolic_set / "questions" / "test.json")
    assert [v.scene_index for v in submitted] == [v.scene_index for v in gold]
    out = tmp_path / "eval"
    capsys.readouterr()
    assert (
        main(
            [
                "clevrer",
                "evaluate",
                "--data",
                str(symbolic_set / "questions" / "test.json"),
                "--predictions",
                str(answers),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    scored = json.loads((out / "summary.json").read_text())["score"]
    assert scored["questions"] == sum(len(v.questions) for v in gold)
    assert scored["missing"]["questions"] == 0 and scored["wrong_kind"] == 0
    # on another set, the answers go to SET-SPLIT and the run's own test answers stay
    other = tmp_path / "other-set"
    shutil.copytree(symbolic_set, other)
    before = answers.read_bytes()
    assert main(["clevrer", "predict", "--run", str(run), "--data", str(other)]) == 0
    assert answers.read_bytes() == before
    elsewhere = read_submission(run / "predictions" / "other-set-test.json")
    assert [v.scene_index for v in elsewhere] == [v.scene_index for v in gold]
    assert (run / "eval" / "other-set-test" / "summary.json").is_file()
    # the tables: our LSTM row with the paper's beside it
    assert main(["clevrer", "results", str(run), "--out", str(tmp_path / "tables")]) == 0
    table = (tmp_path / "tables" / "table2.md").read_text()
    assert "| LSTM |" in table and "| LSTM (paper) | 34.7 |" in table


def test_cnn_lstm_caches_frames_and_trains_two_epochs(rendered_set, tmp_path):
    from tvr.clevrer.models.baselines.frames import FrameSpec, frame_times, load_frames
    from tvr.clevrer.models.baselines.run import train_baseline

    config = _config(rendered_set, tmp_path, "cnn-lstm")
    run = train_baseline(config)
    cache = tmp_path / "runs" / "frame-cache" / FrameSpec(2, 48, 32).folder_name
    frames = load_frames(cache, 0)
    assert frames.shape == (2, 32, 48, 3) and frames.dtype == np.uint8 and frames.std() > 0
    assert frame_times(2) == [32 / 25, 96 / 25]
    assert len((run / "metrics.csv").read_text().splitlines()) == 3
    answers = read_submission(run / "predictions" / "validation.json")
    assert answers and all(v.questions for v in answers)
    summary = json.loads((run / "eval" / "validation" / "summary.json").read_text())
    assert summary["score"]["missing"]["questions"] == 0


def test_cnn_lstm_starts_from_a_weights_file_and_keeps_a_frozen_resnet_fixed(
    rendered_set, tmp_path, capsys
):
    """--cnn-weights: a torchvision ResNet state dict (its classifier too) from a local file;
    --freeze-cnn: after training, the CNN's weights and BatchNorm statistics are the file's."""
    from torchvision.models import resnet18

    from tvr.clevrer.models.baselines.run import train_baseline

    torch.manual_seed(3)
    weights = tmp_path / "resnet18-imagenet.pth"
    torch.save(resnet18(weights=None).state_dict(), weights)
    config = _config(rendered_set, tmp_path, "cnn-lstm", cnn="resnet18", epochs=1,
                     cnn_weights=str(weights), freeze_cnn=True)  # fmt: skip
    run = train_baseline(config)
    assert "random weights" not in capsys.readouterr().err  # weights given: no warning
    state = torch.load(run / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)
    trained = {
        k.removeprefix("model.video.cnn."): v
        for k, v in state["state_dict"].items()
        if k.startswith("model.video.cnn.")
    }
    given = {k: v for k, v in torch.load(weights).items() if not k.startswith("fc.")}
    assert trained.keys() == given.keys()
    assert [k for k in given if not torch.equal(trained[k], given[k])] == []
    # the rest of the network did learn
    assert not torch.equal(
        state["state_dict"]["model.answer.weight"],
        torch.zeros_like(state["state_dict"]["model.answer.weight"]),
    )
    saved = json.loads((run / "config.json").read_text())
    assert saved["freeze_cnn"] is True and saved["cnn_weights"].endswith("resnet18-imagenet.pth")


def test_a_bad_weights_file_is_one_line(rendered_set, tmp_path, capsys):
    from torchvision.models import resnet50

    text = tmp_path / "notes.txt"
    text.write_text("not weights")
    other = tmp_path / "resnet50.pth"
    torch.save(resnet50(weights=None).state_dict(), other)
    common = ["clevrer", "train", "cnn-lstm", "--data", str(rendered_set), "--cnn", "resnet18",
              "--output-dir", str(tmp_path / "runs"), "--accelerator", "cpu"]  # fmt: skip
    for path, says in (
        (tmp_path / "missing.pth", "no such file (weights are only read from a local file"),
        (text, "not a torch state dict"),
        (other, "not weights of this ResNet"),
    ):
        assert main([*common, "--cnn-weights", str(path), "--run-name", path.stem]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(path) in err[0] and says in err[0], err
        assert not (tmp_path / "runs" / path.stem).exists()  # nothing written for a bad start
    assert main([*common[:5], "--freeze-cnn"]) == 2
    assert "freeze_cnn needs cnn_weights" in capsys.readouterr().err


def test_a_resnet_without_weights_is_said_to_be_random(rendered_set, tmp_path, capsys):
    """Issue 29: a ResNet meant to start from ImageNet weights, given none, warns once."""
    from tvr.clevrer.models.baselines.run import train_baseline

    train_baseline(_config(rendered_set, tmp_path, "cnn-lstm", cnn="resnet18", epochs=1))
    warned = [line for line in capsys.readouterr().err.splitlines() if "random weights" in line]
    assert len(warned) == 1 and "resnet18" in warned[0] and "--cnn-weights" in warned[0]

"""NS-DR's chain: ground-truth parts give the executor's 100%, perception joined with the true
dynamics by matching, a resumable folder, and a two-epoch parser chain that `tvr clevrer
evaluate` scores."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest

from tvr.clevrer.data.layout import sim_filename
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.models.sets import split_files
from tvr.clevrer.nsdr import (
    NsdrConfig,
    Observed,
    join_ground_truth,
    match_objects,
    observed_from_facts,
    run_nsdr,
)
from tvr.clevrer.programs.dynamics import facts_from_dynamics, read_dynamics
from tvr.clevrer.programs.executor import answer_or_error
from tvr.cli import main
from tvr.core.errors import UserError

# torchvision before the rendered set's OpenGL (llvmpipe): imported after it, it segfaults
with contextlib.suppress(ImportError):
    import torchvision.ops  # noqa: F401


def _score(result):
    s = result.summary["score"]
    return [s["descriptive"]["accuracy"]] + [
        s[t][k]["accuracy"]
        for t in ("explanatory", "predictive", "counterfactual")
        for k in ("per_option", "per_question")
        if s[t][k]["total"]
    ]


def test_ground_truth_parts_give_the_executors_100_percent_and_resume(symbolic_set, tmp_path):
    out = tmp_path / "nsdr"
    config = NsdrConfig(data=str(symbolic_set), split="test")
    result = run_nsdr(config, out, progress=False)
    assert _score(result) and all(a == 1.0 for a in _score(result))
    assert result.summary["score"]["error_options"] == 0
    saved = json.loads((out / "config.json").read_text())
    assert (saved["programs"], saved["perception"], saved["dynamics"]) == ("gt", "gt", "gt")
    # the scene files are the set's own scenes
    for v in read_questions(out / "questions.json"):
        ours = read_dynamics(out / "dynamics" / sim_filename(v.scene_index))
        truth = read_dynamics(symbolic_set / "dynamics" / sim_filename(v.scene_index))
        np.testing.assert_allclose(ours.factual.motion.xy, truth.factual.motion.xy, atol=1e-6)
        assert ours.factual.events == truth.factual.events
        assert ours.counterfactual.keys() == truth.counterfactual.keys()
    # a killed run resumes: only the missing scene is built again
    first, second = sorted((out / "dynamics").iterdir())[:2]
    first.unlink()
    before = second.stat().st_mtime_ns
    assert all(a == 1.0 for a in _score(run_nsdr(config, out, progress=False)))
    assert first.is_file() and second.stat().st_mtime_ns == before
    with pytest.raises(UserError, match="another config"):
        run_nsdr(NsdrConfig(data=str(symbolic_set), split="test", collisions="proposed"), out)


def _truth(root, scene):
    return read_dynamics(root / "dynamics" / sim_filename(scene))


def test_matching_recovers_shuffled_noisy_objects_and_drops_far_ones(symbolic_set):
    truth = _truth(symbolic_set, 6)
    seen = observed_from_facts(truth)
    order = np.random.default_rng(0).permutation(len(truth.objects))
    noisy = seen.xy[:, order] + np.random.default_rng(1).normal(0, 2.0, seen.xy[:, order].shape)
    observed = Observed(tuple(truth.objects[i] for i in order), noisy, seen.visible[:, order])
    assert match_objects(observed, truth) == {k: int(g) for k, g in enumerate(order)}
    far = Observed(observed.objects, observed.xy + 200.0, observed.visible)
    assert match_objects(far, truth) == {}


def test_perceived_objects_get_the_true_dynamics_of_their_match(symbolic_set):
    """Perception that finds every object (in another order) answers as the truth does; one that
    misses an object loses the questions about it, and nothing crashes."""
    gold = read_questions(symbolic_set / "questions" / "test.json")
    for video in gold:
        truth = _truth(symbolic_set, video.scene_index)
        seen = observed_from_facts(truth)
        order = np.arange(len(truth.objects))[::-1]
        observed = Observed(
            tuple(truth.objects[i] for i in order), seen.xy[:, order], seen.visible[:, order]
        )
        joined = facts_from_dynamics(join_ground_truth(observed, truth))
        for q in video.questions:
            if q.choices is None:
                assert answer_or_error(q.program, joined) == q.answer
            else:
                for c in q.choices:
                    assert answer_or_error(q.program, joined, c.program) == c.answer
        missing = Observed(observed.objects[1:], observed.xy[:, 1:], observed.visible[:, 1:])
        joined = facts_from_dynamics(join_ground_truth(missing, truth))
        assert len(joined.objects) == len(truth.objects) - 1
        assert len(joined.counterfactual) == len(truth.objects) - 1


def test_learned_perception_plugs_in_and_is_joined_with_the_true_dynamics(
    symbolic_set, tmp_path, monkeypatch
):
    """`--perception model` takes the frame parser's scenes; here a stand-in that perceives the
    objects in reverse order, which the join undoes (100%)."""
    import tvr.clevrer.nsdr as nsdr

    def fake_perception(config):
        def perceive(scene):
            seen = observed_from_facts(_truth(symbolic_set, scene))
            order = np.arange(len(seen.objects))[::-1]
            return Observed(
                tuple(seen.objects[i] for i in order), seen.xy[:, order], seen.visible[:, order]
            )

        return perceive

    monkeypatch.setattr(nsdr, "load_perception", fake_perception)
    config = NsdrConfig(data=str(symbolic_set), split="test", perception="model", detector="-")
    result = run_nsdr(config, tmp_path / "nsdr", progress=False)
    assert all(a == 1.0 for a in _score(result))


def test_a_pool_worker_with_learned_parts_runs_torch_on_its_share_of_the_cores(
    symbolic_set, tmp_path, monkeypatch
):
    """`--workers N`: each pool process gets `threads` (the engine's share of the cores) and
    must run torch on that many threads, not on every core (two processes on two cores were ten
    times slower)."""
    import torch

    import tvr.clevrer.nsdr as nsdr

    monkeypatch.setattr(nsdr, "load_perception", lambda config: None)
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        config = NsdrConfig(data=str(symbolic_set), split="test", perception="model", detector="-")
        nsdr.SceneTask(config, tmp_path / "nsdr").make_worker(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_the_parser_chain_ends_in_answers_that_evaluate_scores(symbolic_set, tmp_path, capsys):
    """Two epochs of the parser, NS-DR with its programs, `tvr clevrer evaluate` on the answers,
    and the tables of `tvr clevrer results`."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    runs = tmp_path / "runs"
    assert (
        main(
            [
                "clevrer",
                "train",
                "parser",
                "--data",
                str(symbolic_set),
                "--parser-programs",
                "all",
                "--epochs",
                "2",
                "--hidden",
                "24",
                "--embed-dim",
                "16",
                "--layers",
                "1",
                "--accelerator",
                "cpu",
                "--output-dir",
                str(runs),
            ]
        )
        == 0
    )
    parser_run = runs / "parser-all"
    assert len((parser_run / "metrics.csv").read_text().splitlines()) == 3
    out = tmp_path / "nsdr-parsed"
    assert (
        main(
            [
                "clevrer",
                "nsdr",
                "--data",
                str(symbolic_set),
                "--split",
                "test",
                "--programs",
                "model",
                "--parser",
                str(parser_run),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    parsed = read_questions(out / "questions.json")
    gold = read_questions(symbolic_set / "questions" / "test.json")
    assert [len(v.questions) for v in parsed] == [len(v.questions) for v in gold]
    capsys.readouterr()
    assert (
        main(
            [
                "clevrer",
                "evaluate",
                "--data",
                str(symbolic_set / "questions" / "test.json"),
                "--predictions",
                str(out / "answers.json"),
                "--json",
            ]
        )
        == 0
    )
    scored = json.loads(capsys.readouterr().out)
    assert scored["score"]["questions"] == sum(len(v.questions) for v in gold)
    assert scored["score"]["missing"]["questions"] == 0
    # the tables: NS-DR's ablation rows, and the parser's exact match
    gt = tmp_path / "nsdr-gt"
    assert main(["clevrer", "nsdr", "--data", str(symbolic_set), "--out", str(gt)]) == 0
    assert main(["clevrer", "predict", "--run", str(parser_run), "--split", "test"]) == 0
    assert (
        main(
            [
                "clevrer",
                "results",
                str(gt),
                str(out),
                str(parser_run),
                "--out",
                str(tmp_path / "tables"),
            ]
        )
        == 0
    )
    ablation = (tmp_path / "tables" / "nsdr_ablation.md").read_text()
    assert (
        "| NS-DR (ground-truth programs, perception, dynamics) | gt | gt | gt | 100.0 |" in ablation
    )
    assert "| NS-DR (ground-truth perception, dynamics) | model | gt | gt |" in ablation
    parser_table = (tmp_path / "tables" / "parser.md").read_text()
    assert "| parser (all programs) | all |" in parser_table


def test_a_learned_part_without_its_run_is_one_line(symbolic_set, tmp_path, capsys):
    code = main(
        [
            "clevrer",
            "nsdr",
            "--data",
            str(symbolic_set),
            "--programs",
            "model",
            "--out",
            str(tmp_path / "x"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["tvr clevrer nsdr: error: --programs model needs --parser (a trained run)"]


def test_every_part_learned_two_epochs_each_ends_in_answers_that_evaluate_scores(
    rendered_set, tmp_path, capsys
):
    """The whole NS-DR chain through the commands: the frame parser, the dynamics predictor and
    the question parser trained two epochs each on a tiny rendered set, NS-DR with all three, and
    `tvr clevrer evaluate` on its answers."""
    torch = pytest.importorskip("torch")
    torch.set_num_threads(1)
    runs = str(tmp_path / "runs")
    common = ["--data", str(rendered_set), "--epochs", "2", "--accelerator", "cpu",
              "--output-dir", runs]  # fmt: skip
    assert main(["clevrer", "train", "detector", *common, "--detector", "unet", "--image-size",
                 "96x64", "--frames-per-video", "2", "--val-frames-per-video", "1", "--width",
                 "8", "--crop-size", "16", "--batch-size", "4", "--threads", "1"]) == 0  # fmt: skip
    assert main(["clevrer", "train", "dynamics", *common, "--hidden", "16", "--batch-size", "16",
                 "--window-step", "16", "--threads", "1"]) == 0  # fmt: skip
    assert main(["clevrer", "train", "parser", *common, "--parser-programs", "all", "--hidden",
                 "16", "--embed-dim", "8", "--layers", "1"]) == 0  # fmt: skip
    # `predict` on the perception and dynamics runs: a split's scores, and rollouts in the
    # official layout that the executor reads
    for part, name in (
        ("detector-unet", "detector_eval.json"),
        ("dynamics-propnet", "dynamics_eval.json"),
    ):
        assert main(["clevrer", "predict", "--run", f"{runs}/{part}", "--split", "validation",
                     "--threads", "1"]) == 0  # fmt: skip
        scores = json.loads((tmp_path / "runs" / part / "eval" / "validation" / name).read_text())
        assert scores["split"] == "validation" and scores["checkpoint"] == "best.ckpt"
    assert 0.0 <= scores["collisions"]["observed"]["recall"] <= 1.0
    rolled = sorted(
        (tmp_path / "runs" / "dynamics-propnet" / "predictions" / "validation").iterdir()
    )
    wanted = split_files(rendered_set, "validation", "dynamics")
    assert [p.name for p in rolled] == [sim_filename(i) for i in sorted(wanted)] and rolled
    assert read_dynamics(rolled[0]).objects
    out = tmp_path / "nsdr"
    assert main(["clevrer", "nsdr", "--data", str(rendered_set), "--split", "validation",
                 "--programs", "model", "--parser", f"{runs}/parser-all", "--perception", "model",
                 "--detector", f"{runs}/detector-unet", "--dynamics", "model", "--dynamics-run",
                 f"{runs}/dynamics-propnet", "--out", str(out)]) == 0  # fmt: skip
    questions = rendered_set / "questions" / "validation.json"
    capsys.readouterr()
    assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(out / "answers.json"), "--json"]) == 0  # fmt: skip
    scored = json.loads(capsys.readouterr().out)["score"]
    assert scored["questions"] == sum(len(v.questions) for v in read_questions(questions))
    assert scored["missing"]["questions"] == 0
    saved = json.loads((out / "config.json").read_text())
    assert (saved["programs"], saved["perception"], saved["dynamics"]) == ("model",) * 3

"""The dynamics predictor: PropNet's forward and backward and its masking, training windows and
their collision labels, overfitting a few trajectories, rollouts (factual future, counterfactual
runs that follow the factual one until the removed object's first collision), the official
layout read back, the scores, and a training run that resumes."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

from tvr.clevrer.data.dynamics import write_dynamics  # noqa: E402
from tvr.clevrer.models.dynamics import (  # noqa: E402
    DynamicsConfig,
    DynamicsPredictor,
    load_dynamics,
    observation_from_facts,
    predict_dynamics,
    scene_predictor,
    train_dynamics,
)
from tvr.clevrer.models.dynamics.metrics import DynamicsScores, match_collisions  # noqa: E402
from tvr.clevrer.models.dynamics.module import rollout_losses  # noqa: E402
from tvr.clevrer.models.dynamics.observation import ATTRIBUTE_DIM, to_unit  # noqa: E402
from tvr.clevrer.models.dynamics.propnet import VELOCITY_SCALE, PropNet  # noqa: E402
from tvr.clevrer.models.dynamics.rollout import RunPrediction, VideoPrediction, predict_video  # noqa: E402
from tvr.clevrer.models.dynamics.windows import WindowDataset, collate_windows, video_runs  # noqa: E402
from tvr.clevrer.programs.dynamics import facts_from_dynamics, read_dynamics  # noqa: E402
from tvr.core.errors import UserError  # noqa: E402


def _facts(root, index):
    return read_dynamics(root / "dynamics" / f"sim_{index:05d}.json")


def _batch(b=2, h=3, n=4, k=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    active = torch.ones(b, n, dtype=torch.bool)
    active[0, -1] = False
    return {
        "positions": torch.rand(b, h + k, n, 2, generator=g) * 2 - 1,
        "visible": torch.ones(b, h + k, n, dtype=torch.bool),
        "collisions": torch.zeros(b, h + k, n, n, dtype=torch.bool),
        "attributes": torch.rand(b, n, ATTRIBUTE_DIM, generator=g),
        "active": active,
    }


def test_propnet_runs_forward_and_backward_and_ignores_what_is_not_in_the_scene():
    torch.manual_seed(0)
    model = PropNet(history=3, hidden=32, steps=2)
    batch = _batch()
    pos, attrs, active = batch["positions"][:, :3], batch["attributes"], batch["active"]
    col = torch.rand(2, 4, 4)
    delta, logits = model(pos, attrs, active, col)
    assert delta.shape == (2, 4, 2) and logits.shape == (2, 4, 4)
    assert torch.allclose(logits, logits.transpose(1, 2))
    (delta.pow(2).sum() + logits.sum()).backward()
    assert all(p.grad is not None for p in model.parameters())
    moved = pos.clone()
    moved[0, :, -1] += 0.5  # the inactive object of the first scene
    attrs2 = attrs.clone()
    attrs2[0, -1] = 1.0
    col2 = col.clone()
    col2[0, -1, :] = col2[0, :, -1] = 1.0
    delta2, logits2 = model(moved, attrs2, active, col2)
    assert torch.allclose(delta[0, :3], delta2[0, :3], atol=1e-6)
    assert torch.allclose(logits[0, :3, :3], logits2[0, :3, :3], atol=1e-6)


def test_windows_label_each_collision_in_the_step_that_holds_it(symbolic_set):
    facts = _facts(symbolic_set, 0)
    ds = WindowDataset(
        video_runs(facts, counterfactual=False), stride=5, history=3, rollout=2, window_step=1
    )
    collisions = [e for e in facts.factual.events if e.kind == "collision"]
    assert collisions
    checked = 0
    for e in collisions:
        f0 = e.frame - 5 * 3  # the first predicted step (f0 + 10, f0 + 15] holds the collision
        if (0, f0) not in ds.index:
            continue
        item = ds[ds.index.index((0, f0))]
        a, b = e.objects
        assert item["collisions"][3, a, b] and item["collisions"][3, b, a]
        assert int(item["collisions"][3].sum()) == 2 * sum(
            1 for c in collisions if f0 + 10 < c.frame <= f0 + 15
        )
        assert not item["collisions"][2, a, b] or any(
            c.objects == e.objects and f0 + 5 < c.frame <= f0 + 10 for c in collisions
        )
        checked += 1
    assert checked
    batch = collate_windows([ds[0], ds[len(ds) - 1]])
    assert batch["positions"].shape[1:3] == (5, len(facts.objects))


def test_propnet_overfits_a_few_trajectories(symbolic_set):
    torch.manual_seed(0)
    runs = [r for i in (0, 1) for r in video_runs(_facts(symbolic_set, i), counterfactual=False)]
    ds = WindowDataset(runs, stride=5, history=3, rollout=1, window_step=5)
    batch = collate_windows([ds[i] for i in range(len(ds))])
    model = PropNet(history=3, hidden=64, steps=2)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    first = None
    for _ in range(150):
        out = rollout_losses(model, batch, 3, pos_weight=5.0)
        loss = out["position"] + out["collision"]
        first = float(loss.detach()) if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    out = rollout_losses(model, batch, 3, pos_weight=5.0)
    err_px = float(out["err_px"].sum() / out["count"].sum())
    assert float(out["position"] + out["collision"]) < 0.01 * first
    assert err_px < 0.5  # from about 4 px untrained
    # the windows of the two videos hold 4 collisions: found, with at most one miss and one extra
    assert float(out["tp"] + out["fn"]) >= 4
    assert float(out["tp"]) >= 3 and float(out["fn"]) <= 1 and float(out["fp"]) <= 1


class ConstantVelocity(PropNet):
    """A stand-in PropNet: keeps each object's last step, and flags pair (0, 1) when they are
    closer than `near` (unit coordinates)."""

    def __init__(self, near: float = -1.0) -> None:
        super().__init__(history=3, hidden=4, steps=1)
        self.near = near

    def forward(self, positions, attributes, active, colliding):
        delta = (positions[:, -1] - positions[:, -2]) * VELOCITY_SCALE * active[..., None]
        n = positions.shape[2]
        logits = torch.full((positions.shape[0], n, n), -10.0)
        d = (positions[:, -1, 0] - positions[:, -1, 1]).norm(dim=-1)
        logits[:, 0, 1] = logits[:, 1, 0] = torch.where(d < self.near, 10.0, -10.0)
        return delta, logits


def test_rollout_extrapolates_and_counterfactuals_copy_without_collisions(symbolic_set):
    facts = _facts(symbolic_set, 2)
    obs = observation_from_facts(facts)
    pred = predict_video(ConstantVelocity(), obs, stride=5)
    fac = pred.factual
    assert fac.start == 25 and fac.collisions == ()
    xy = to_unit(obs.xy)
    for k in range(26, len(fac.frames)):
        for i in np.flatnonzero(fac.active[k]):
            want = xy[125, i] + (k - 25) * (xy[125, i] - xy[120, i])
            assert np.allclose(fac.positions[k, i], want, atol=1e-5)
    assert sorted(pred.counterfactual) == list(range(len(obs.objects)))
    for r, run in pred.counterfactual.items():
        assert run.start is None and not run.active[:, r].any()
        others = [i for i in range(len(obs.objects)) if i != r]
        assert np.array_equal(run.active[:, others], fac.active[:, others])


def test_counterfactual_runs_follow_the_factual_one_until_the_first_collision(symbolic_set):
    facts = _facts(symbolic_set, 2)
    obs = observation_from_facts(facts)
    model = ConstantVelocity(near=0.15)
    pred = predict_video(model, obs, stride=5)
    hit = [c for c in pred.factual.collisions if c[1:] == (0, 1)]
    assert hit, "the stand-in flags objects 0 and 1 when close"
    for r in (0, 1):
        run = pred.counterfactual[r]
        first = min(c[0] for c in pred.factual.collisions if r in c[1:])
        assert run.start is not None and run.frames[run.start + 1] == first
        keep = [i for i in range(len(obs.objects)) if i != r]
        head = slice(0, run.start + 1)
        assert np.array_equal(run.active[head][:, keep], pred.factual.active[head][:, keep])
        assert not run.active[:, r].any()
        assert all(r not in c[1:] for c in run.collisions)


def test_predicted_dynamics_are_the_official_layout_and_read_back(symbolic_set, tmp_path):
    facts = _facts(symbolic_set, 3)
    obs = observation_from_facts(facts)
    predictor = DynamicsPredictor(ConstantVelocity(near=0.15), 5)
    layout = predict_dynamics(predictor, obs)
    write_dynamics(tmp_path / "sim_00003.json", layout, check=True)
    back = read_dynamics(tmp_path / "sim_00003.json")
    assert back.objects == facts.objects
    assert sorted(back.counterfactual) == list(range(len(facts.objects)))
    motion = back.factual.motion
    assert motion is not None and motion.visible.shape[0] == 171  # up to frame 170
    assert np.array_equal(motion.visible[:128], obs.visible[:128])
    assert np.allclose(motion.xy[:128][obs.visible], obs.xy[obs.visible], atol=0.01)
    pred = predictor.predict(obs)
    got = sorted((e.frame, *e.objects) for e in back.factual.events if e.kind == "collision")
    assert got == sorted(pred.factual.collisions)
    assert json.loads(json.dumps(layout)) == layout


def _oracle(facts, stride=5, shift=0.0):
    """A VideoPrediction holding the truth on the sample grid (positions moved by `shift` units)."""
    obs = observation_from_facts(facts)
    frames = np.arange(0, 171, stride)

    def run(r, start):
        m = r.motion
        pos = to_unit(np.nan_to_num(m.xy[frames])) + shift
        cols = tuple(
            sorted((e.frame, *sorted(e.objects)) for e in r.events if e.kind == "collision")
        )
        return RunPrediction(frames, pos, m.visible[frames].copy(), start, cols)

    cf = {k: run(r, 0) for k, r in facts.counterfactual.items()}
    return VideoPrediction(obs, stride, run(facts.factual, 25), cf)


def test_scores_are_perfect_for_the_truth_and_measure_a_shift(symbolic_set):
    facts = _facts(symbolic_set, 4)
    scores = DynamicsScores()
    scores.add(_oracle(facts), facts)
    res = scores.result()
    assert res["position_error_px"]["predictive"]["mean"] == pytest.approx(0.0, abs=1e-9)
    assert res["position_error_px"]["counterfactual"]["mean"] == pytest.approx(0.0, abs=1e-9)
    for part in ("observed", "counterfactual"):
        assert (
            res["collisions"][part]["precision"] == 1.0 and res["collisions"][part]["recall"] == 1.0
        )
    shifted = DynamicsScores()
    shifted.add(_oracle(facts, shift=0.01), facts)  # 0.01 unit = (2.4, 1.6) px
    err = shifted.result()["position_error_px"]["predictive"]["per_step"]
    assert np.allclose(err, np.hypot(2.4, 1.6))
    assert match_collisions([(50, 1, 2), (90, 0, 1)], [(45, 2, 1), (70, 0, 1)]) == 1


def _config(root, out, **kw) -> DynamicsConfig:
    base = dict(
        data_root=str(root), train_videos=2, val_videos=1, hidden=16, batch_size=64,
        window_step=10, epochs=1, output_dir=str(out), accelerator="cpu", log_every_n_steps=1,
    )  # fmt: skip
    return DynamicsConfig(**{**base, **kw})


def test_a_training_run_scores_rollouts_resumes_and_predicts(symbolic_set, tmp_path, capsys):
    run = train_dynamics(_config(symbolic_set, tmp_path))
    assert (run / "config.json").is_file() and (run / "checkpoints" / "best.ckpt").is_file()
    scores = json.loads((run / "dynamics_eval.json").read_text())
    assert scores["videos"] == 1
    assert set(scores["position_error_px"]) >= {"predictive", "predictive_constant_velocity"}
    assert set(scores["collisions"]) == {"observed", "predictive", "counterfactual"}
    train_dynamics(_config(symbolic_set, tmp_path, epochs=2))
    rows = (run / "metrics.csv").read_text().strip().splitlines()
    assert [r.split(",")[0] for r in rows[1:]] == ["0", "1"]
    assert "epoch 2/2" in capsys.readouterr().out
    with pytest.raises(UserError, match="holds another run"):
        train_dynamics(_config(symbolic_set, tmp_path, hidden=32))
    facts = _facts(symbolic_set, 6)
    layout = scene_predictor(run)(observation_from_facts(facts), 6)
    assert facts_from_dynamics(layout).objects == facts.objects
    assert load_dynamics(run / "checkpoints" / "last.ckpt").stride == 5

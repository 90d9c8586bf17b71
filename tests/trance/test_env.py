"""The Gymnasium environments of tvr.trance.env: registration, check_env, seeds, rules, rewards."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import tvr  # noqa: E402,F401  (registers the environments)
from tvr.trance.env import STOP, TranceEnv, decode_action, encode_action  # noqa: E402
from tvr.trance.train.scoring import event_scores, reward  # noqa: E402
from tvr.trance.world import simulator as world  # noqa: E402
from tvr.trance.world import vocab  # noqa: E402

IDS = ["tvr/TRANCE-Basic-v0", "tvr/TRANCE-Event-v0", "tvr/TRANCE-View-v0"]


def test_import_tvr_does_not_import_gymnasium_and_registers_on_its_import():
    code = (
        "import sys, tvr; assert 'gymnasium' not in sys.modules; import gymnasium; "
        f"assert all(i in gymnasium.registry for i in {IDS!r}); "
        "assert 'tvr.trance.env' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_symbolic(env_id):
    from gymnasium.utils.env_checker import check_env

    check_env(gym.make(env_id).unwrapped)


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_images(env_id):
    pytest.importorskip("moderngl")
    from gymnasium.utils.env_checker import check_env

    env = gym.make(env_id, obs_mode="images", include_state=True, image_size=(64, 48))
    check_env(env.unwrapped)
    obs, _ = env.reset(seed=1)
    assert obs["init_image"].shape == (48, 64, 3) and obs["init_image"].dtype == np.uint8
    assert obs["init_image"].std() > 0
    assert "init_state" in obs and "final_state" not in obs


def test_seeded_resets_repeat():
    a, b = gym.make(IDS[1]), gym.make(IDS[1])
    for seed in (0, 7):
        (oa, ia), (ob, ib) = a.reset(seed=seed), b.reset(seed=seed)
        assert ia["sample_id"] == ib["sample_id"]
        np.testing.assert_array_equal(oa["final_state"], ob["final_state"])
    # unseeded resets go on from the seeded generator, alike
    assert a.reset()[1]["sample_id"] == b.reset()[1]["sample_id"]


def test_samples_file(tmp_path):
    from tvr.trance.data.files import write_samples
    from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler

    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=3, shard=0)
    samples = [sampler.sample(i) for i in range(5)]
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    env = gym.make(IDS[1], samples=path)
    _, info = env.reset(seed=0, options={"index": 2})
    assert info["sample_id"] == samples[2].id
    ids = {env.reset(seed=s)[1]["sample_id"] for s in range(20)}
    assert ids <= {s.id for s in samples}


def test_actions_round_trip():
    assert decode_action(STOP) is None
    for obj, value in [(0, 0), (9, 32), (4, 17)]:
        assert decode_action(encode_action(obj, value)) == (obj, value)


def _off_plane_step(state):
    """An (object, value) that leaves the plane from `state`."""
    for obj in range(vocab.NUM_OBJECTS):
        for value in range(vocab.NUM_VALUES):
            _, r = world.apply_step(state, obj, value)
            if r.broken_rule == "off_plane":
                return obj, value
    raise AssertionError("no off-plane step")


def test_illegal_step_info_and_reward():
    env = TranceEnv("event")
    obs, _ = env.reset(seed=4)
    obj, value = _off_plane_step(obs["init_state"])
    _, r, term, _, info = env.step(encode_action(obj, value))
    assert info["broken_rule"] == "off_plane" and r == 0.0 and not term
    _, r, term, _, info = env.step(STOP)
    assert term and info["correct"] is False


def test_reference_steps_are_correct_and_reward_is_the_simulators():
    for setting in ("basic", "event", "view"):
        env = TranceEnv(setting)
        for seed in range(5):
            env.reset(seed=seed)
            for s in env.sample.steps:
                _, r, term, _, info = env.step(encode_action(s.obj, s.value))
                assert info["broken_rule"] is None
            if not term:
                _, r, term, _, info = env.step(STOP)
            assert term and info["correct"] and r == pytest.approx(1.0)


@pytest.mark.parametrize("kind", ["corr", "dist", "both"])
def test_reward_equals_reinforce_reward(kind):
    env = TranceEnv("event", reward_kind=kind)
    rng = np.random.default_rng(0)
    for seed in range(20):
        env.reset(seed=seed)
        objs, values = [], []
        for _ in range(int(rng.integers(1, 5))):
            o, v = int(rng.integers(10)), int(rng.integers(33))
            objs.append(o)
            values.append(v)
            _, r, term, _, _ = env.step(encode_action(o, v))
        if not term:
            _, r, term, _, _ = env.step(STOP)
        s = event_scores(
            env.sample.initial_array[None], env.sample.final_array[None],
            np.array([objs]), np.array([values]), np.array([len(env.sample.steps)]),
        )  # fmt: skip
        assert r == pytest.approx(float(reward(kind, s)[0]))


def test_basic_ends_after_one_step():
    env = TranceEnv("basic")
    env.reset(seed=0)
    *_, term, _, info = env.step(encode_action(0, 0))
    assert term and "correct" in info


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_env(mode):
    envs = gym.make_vec(IDS[1], num_envs=3, vectorization_mode=mode)
    try:
        obs, _ = envs.reset(seed=0)
        assert obs["final_state"].shape == (3, 10, 6)
        rewards = []
        for _ in range(10):
            _, r, _, _, _ = envs.step(envs.action_space.sample())
            rewards.append(r)
        assert np.asarray(rewards).shape == (10, 3)
    finally:
        envs.close()

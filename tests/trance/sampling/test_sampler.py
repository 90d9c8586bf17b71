"""Balanced sampling: every sample obeys the rules, shards are deterministic, jobs resume."""

import json

import numpy as np
import pytest

from tvr.core.errors import UserError
from tvr.trance.data.files import check_consistent, read_samples
from tvr.trance.sampling.balance import BalanceCounts, balanced_choice, sample_factors
from tvr.trance.sampling.jobs import GenerateConfig, generate, shard_path
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.occlusion import OCCLUSION_THRESHOLD, visible_pixel_counts


@pytest.fixture(scope="module")
def samples():
    sampler = ShardSampler(SamplerConfig(), seed=3, shard=1)
    return [sampler.sample(i) for i in range(120)]


def test_algorithm_1_probabilities():
    rng = np.random.default_rng(0)
    counts = np.array([5, 3, 5, 4])
    draws = np.bincount([balanced_choice(rng, counts) for _ in range(20000)], minlength=4)
    expected = np.array([0.1, 2.1, 0.1, 1.1]) / 3.4
    assert np.allclose(draws / draws.sum(), expected, atol=0.015)
    allowed = np.array([True, False, True, False])
    assert {balanced_choice(rng, counts, allowed=allowed) for _ in range(100)} <= {0, 2}
    assert balanced_choice(rng, counts, allowed=np.zeros(4, dtype=bool)) is None


def test_every_reference_is_valid_in_its_order_and_reproduces_the_final_state(samples):
    for s in samples:
        assert check_consistent(s) is None, s.id
        _, results = world.apply_steps(s.initial_array, [(t.obj, t.value) for t in s.steps])
        assert not any(r.noop for r in results), s.id


def test_rules_b1_b2_b3_hold(samples):
    for s in samples:
        init = s.initial_array
        rot = np.array([o["rotation"] for o in s.objects])
        moved_out = set()
        state = init
        transformed = set()
        for t in s.steps:
            x, y = int(state[t.obj, 0]), int(state[t.obj, 1])
            if t.move_type != "in":
                # B1: not occluded in the initial centre view (checked with the exact counter)
                assert world.is_visible(x, y)
                if world.is_visible(int(init[t.obj, 0]), int(init[t.obj, 1])):
                    c = visible_pixel_counts(init, rot, s.cameras["C"], [t.obj])
                    assert c[t.obj] >= OCCLUSION_THRESHOLD, (s.id, t)
            if t.move_type == "out":
                assert t.obj not in transformed, "B2: a transformed object is never moved out"
                moved_out.add(t.obj)
            state, _ = world.apply_step(state, t.obj, t.value)
            transformed.add(t.obj)
        # B3: every transformed object in view shows in all three final views
        final = s.final_array
        shown = [i for i in transformed if world.is_visible(int(final[i, 0]), int(final[i, 1]))]
        for view in "LCR":
            c = visible_pixel_counts(final, rot, s.cameras[view], shown)
            assert all(c[i] >= OCCLUSION_THRESHOLD for i in shown), (s.id, view)


def test_move_types_and_out_options(samples):
    seen = set()
    for s in samples:
        state = s.initial_array
        for t in s.steps:
            new, _ = world.apply_step(state, t.obj, t.value)
            if t.move_type is not None:
                seen.add(t.move_type)
                before = world.area(state[t.obj, 0], state[t.obj, 1])
                after = world.area(new[t.obj, 0], new[t.obj, 1])
                expected = {(1, 1): "inner", (1, 0): "out", (0, 1): "in"}[(int(before), int(after))]
                assert t.move_type == expected
                if t.move_type == "out":
                    assert t.value in t.options
                    for opt in t.options:
                        moved, r = world.apply_step(state, t.obj, opt)
                        assert (
                            r.valid
                            and world.area(moved[t.obj, 0], moved[t.obj, 1]) == world.INVISIBLE
                        )
                else:
                    assert t.accepted == (t.value,)
            state = new
    assert seen == {"inner", "out", "in"}


def test_factors_are_balanced(samples):
    counts = BalanceCounts()
    for s in samples:
        counts.record(sample_factors(s))
    assert counts.steps[1:].max() - counts.steps[1:].min() <= 1
    assert counts.visible[1:].max() - counts.visible[1:].min() <= 1
    mt = counts.move_types
    assert mt.max() - mt.min() <= max(3, 0.1 * mt.sum())
    ones = np.array([counts.grams[1].get((i,), 0) for i in range(vocab.NUM_VALUES)])
    # unbalanced draws would spread like a multinomial (std ~ sqrt(mean) = 3 here)
    assert ones.std() < 1.5 and ones.max() - ones.min() <= 5
    table = counts.ngram_table()
    assert table[1]["options"] == 33 and table[2]["options"] == 1089
    assert table[1]["mean"] == pytest.approx(ones.sum() / 33)
    assert table[1]["std"] == pytest.approx(ones.std())


def test_sampling_is_deterministic_per_seed_and_shard():
    def make(seed, shard):
        sampler = ShardSampler(SamplerConfig(), seed=seed, shard=shard)
        return [sampler.sample(i).to_dict() for i in range(15)]

    a = make(7, 2)
    assert a == make(7, 2)
    assert a != make(7, 3)
    assert a != make(8, 2)
    assert len({s["id"] for s in a}) == 15


def test_parallel_shards_equal_serial_and_a_killed_job_resumes(tmp_path):
    config = GenerateConfig(num=45, seed=1, shard_size=10)
    serial = generate(config, tmp_path / "serial", workers=1, progress=False).read_bytes()
    parallel = generate(config, tmp_path / "parallel", workers=2, progress=False).read_bytes()
    assert serial == parallel
    # lose two shards and the merged file, as a job killed mid-way would: a rerun fills them in
    shard_path(tmp_path / "parallel", 1).unlink()
    shard_path(tmp_path / "parallel", 4).unlink()
    (tmp_path / "parallel" / "samples.jsonl").unlink()
    # with the temporary files a kill leaves (this version's and older versions' names)
    leftovers = [
        shard_path(tmp_path / "parallel", 1).with_name(".shard-00001.jsonl.tmp-9-0123abcd"),
        shard_path(tmp_path / "parallel", 4).with_name(".shard-00004.jsonl.x8y7z6"),
        tmp_path / "parallel" / ".samples.jsonl.k2j3h4",
    ]
    for path in leftovers:
        path.write_text("{half a line")
    again = generate(config, tmp_path / "parallel", workers=2, progress=False).read_bytes()
    assert again == serial
    assert not any(path.exists() for path in leftovers)
    stats = json.loads((tmp_path / "serial" / "balance.json").read_text())
    assert stats["samples"] == 45
    assert len(read_samples(tmp_path / "serial" / "samples.jsonl")) == 45


def test_a_changed_config_does_not_mix_into_old_data(tmp_path):
    generate(GenerateConfig(num=5, seed=1, shard_size=5), tmp_path, progress=False)
    with pytest.raises(UserError, match="another config"):
        generate(GenerateConfig(num=5, seed=2, shard_size=5), tmp_path, progress=False)
    (tmp_path / "config.json").write_text("{not json")  # an unreadable config is another one
    with pytest.raises(UserError, match=r"already holds data made with another config \("):
        generate(GenerateConfig(num=5, seed=1, shard_size=5), tmp_path, progress=False)


def test_basic_setting_has_one_step():
    config = GenerateConfig.for_setting("basic", num=10)
    sampler = ShardSampler(config.sampler, 0, 0)
    assert all(len(sampler.sample(i).steps) == 1 for i in range(10))


@pytest.mark.parametrize(
    "options,match",
    [
        ({"min_visible": 0}, "visible"),
        ({"max_steps": 5}, "steps"),
        ({"attributes": ["colour"]}, "attributes"),
        ({"tolerance": 0}, "tolerance"),
        ({"max_visibel": 3}, "unknown"),
    ],
)
def test_bad_sampler_options_fail_early(options, match):
    with pytest.raises(UserError, match=match):
        SamplerConfig.from_dict(options)


def test_attribute_subset_is_respected():
    sampler = ShardSampler(SamplerConfig(attributes=("color", "shape")), 0, 0)
    for i in range(20):
        assert all(t.attr in ("color", "shape") for t in sampler.sample(i).steps)

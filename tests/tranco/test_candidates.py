"""Candidate sets: training draws of K, stored tiny sets, the full set; seeded; never across splits."""

from __future__ import annotations

import pytest

from tvr.tranco.data.candidates import (
    TrainingCandidates,
    check_open_world,
    full_candidates,
    tiny_candidates,
)


def _samples(prefix: str, n: int, steps=(2, 3, 4, 5, 6, 7)) -> list[tuple[str, list[str]]]:
    out = []
    for i in range(n):
        sid = f"{prefix}{i:03d}"
        out.append((sid, [f"{sid}_{k}" for k in range(steps[i % len(steps)])]))
    return out


TRAIN = _samples("tr", 60)
TEST = _samples("te", 40)


def test_training_candidates_hold_the_sample_and_k_minus_n_other_training_clips():
    draw = TrainingCandidates(TRAIN, k=20, seed=0)
    train_clips = {c for _, clips in TRAIN for c in clips}
    for sid, clips in TRAIN:
        got = draw(sid, epoch=0)
        assert len(got) == 20 == len(set(got))
        assert set(clips) <= set(got) and set(got) <= train_clips
        others = [c for c in got if c not in clips]
        assert len(others) == 20 - len(clips) and not any(c.startswith(f"{sid}_") for c in others)
        assert not set(got) & {c for _, cs in TEST for c in cs}
    few = TrainingCandidates(TRAIN[:2], k=20)  # 2 + 3 clips in all
    assert sorted(few("tr000", 0)) == sorted(TRAIN[0][1] + TRAIN[1][1])
    assert sorted(TrainingCandidates(TRAIN, k=3)("tr005", 0)) == sorted(TRAIN[5][1])  # n >= K


def test_training_candidates_are_seeded_per_seed_epoch_and_sample():
    a, b = TrainingCandidates(TRAIN, seed=0), TrainingCandidates(TRAIN[::-1], seed=0)
    assert a("tr007", 3) == b("tr007", 3)  # the order of the samples does not matter
    assert [a(s, 1) for s, _ in TRAIN[:5]] == [a(s, 1) for s, _ in TRAIN[:5]]
    assert a("tr007", 3) != a("tr007", 4)
    assert a("tr007", 3) != TrainingCandidates(TRAIN, seed=1)("tr007", 3)
    with pytest.raises(KeyError, match="te000"):
        a("te000", 0)


def test_tiny_sets_hold_the_sample_and_other_clips_of_its_split_seeded():
    tiny = tiny_candidates(TEST, size=100, seed=0)
    test_clips = {c for _, clips in TEST for c in clips}
    for sid, clips in TEST:
        assert len(tiny[sid]) == 100 == len(set(tiny[sid]))
        assert set(clips) <= set(tiny[sid]) <= test_clips
    assert tiny == tiny_candidates(TEST, size=100, seed=0)
    assert tiny_candidates(TEST[:3], size=100)["te000"]  # the split has 9 clips: all of them
    assert sorted(tiny_candidates(TEST[:3], size=100)["te000"]) == sorted(full_candidates(TEST[:3]))
    other = tiny_candidates(TEST, size=100, seed=1)
    assert all(set(other[s]) >= set(c) for s, c in TEST)
    assert sum(set(other[s]) != set(tiny[s]) for s, _ in TEST) == len(TEST)


def test_full_is_every_clip_of_the_split_in_order():
    assert full_candidates(TEST[:2]) == ["te000_0", "te000_1", "te001_0", "te001_1", "te001_2"]


def test_open_world_check_finds_shared_clips_and_foreign_candidates():
    tiny = tiny_candidates(TEST, size=30)
    ok = {
        "train": [(s, c, None) for s, c in TRAIN],
        "test": [(s, c, tiny[s]) for s, c in TEST],
    }
    assert check_open_world(ok) == []
    leaked = {**ok, "test": [*ok["test"][:-1], ("te_x", ["tr001_0"], ["tr001_0"])]}
    assert any("is also a train clip" in p for p in check_open_world(leaked))
    first = ok["test"][0]
    foreign = {**ok, "test": [(*first[:2], [*first[2], "tr000_0"]), *ok["test"][1:]]}
    assert check_open_world(foreign) == [
        "candidate 'tr000_0' of test sample 'te000' is a clip of train"
    ]
    with pytest.raises(ValueError, match="belongs to two samples"):
        tiny_candidates([("a", ["x"]), ("b", ["x"])])

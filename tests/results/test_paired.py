"""Paired comparisons of `tvr results`: McNemar, the bootstrap interval, and the table."""

import json
from math import comb

import pytest

from tvr.core.errors import InputError
from tvr.core.jsonl import write_jsonl
from tvr.core.stats import compare_paired, mcnemar_exact
from tvr.results.paired import read_correct
from tvr.trance.data.files import write_samples
from tvr.trance.eval.baselines import predict
from tvr.trance.results.make import ResultsOptions, make_results
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler


def test_mcnemar_exact_against_the_binomial_tail():
    assert mcnemar_exact(10, 0) == pytest.approx(2 / 2**10)
    assert mcnemar_exact(0, 10) == mcnemar_exact(10, 0)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(5, 5) == 1.0
    # 28 against 65: twice the lower tail of Binomial(93, 1/2) at 28
    tail = sum(comb(93, k) for k in range(29)) / 2**93
    assert mcnemar_exact(65, 28) == pytest.approx(2 * tail)
    assert 1e-4 < mcnemar_exact(65, 28) < 2e-4
    assert mcnemar_exact(12, 8) > mcnemar_exact(16, 4) > mcnemar_exact(20, 0)


def _runs(n, only_a, only_b, both):
    ids = [f"s{i:04d}" for i in range(n)]
    a = {k: i < only_a + both for i, k in enumerate(ids)}
    b = {k: (i < both) or (only_a + both <= i < only_a + both + only_b) for i, k in enumerate(ids)}
    return a, b


def test_compare_paired_counts_and_interval():
    a, b = _runs(1000, only_a=65, only_b=28, both=78)
    c = compare_paired(a, b)
    assert (c.samples, c.only_a, c.only_b) == (1000, 65, 28)
    assert c.acc_a == pytest.approx(0.143) and c.acc_b == pytest.approx(0.106)
    assert c.difference == pytest.approx(0.037)
    low, high = c.interval
    assert 0 < low < 0.037 < high < 0.08  # the difference is significant and inside
    assert compare_paired(a, b).interval == c.interval  # seeded
    assert compare_paired(a, b, seed=1).interval != c.interval
    # the interval is the mirror image with the runs swapped
    swapped = compare_paired(b, a)
    assert swapped.difference == pytest.approx(-0.037) and swapped.p_value == c.p_value
    assert swapped.interval[0] == pytest.approx(-high, abs=0.006)
    # a run against itself: no discordant sample, no difference
    same = compare_paired(a, a)
    assert same.interval == (0.0, 0.0) and same.p_value == 1.0
    # an even split of the discordant samples: the interval covers 0
    even = compare_paired(*_runs(1000, only_a=40, only_b=40, both=50))
    assert even.interval[0] < 0 < even.interval[1] and even.p_value == 1.0


def test_compare_paired_needs_the_same_samples():
    a, b = _runs(10, 2, 1, 3)
    del b["s0007"]
    with pytest.raises(ValueError, match="s0007"):
        compare_paired(a, b)
    with pytest.raises(ValueError, match="no samples"):
        compare_paired({}, {})


def test_read_correct_names_file_line_and_field(tmp_path):
    detail = tmp_path / "detail.jsonl"
    detail.write_text(
        '{"id": "a", "correct": true}\n{"id": "a", "view": "L", "correct": false}\n'
        '{"id": "b", "correct": "yes"}\n'
    )
    with pytest.raises(InputError) as err:
        read_correct(detail)
    assert "detail.jsonl" in str(err.value) and "3" in str(err.value)
    assert "correct" in str(err.value)
    detail.write_text('{"id": "a", "correct": true}\n{"id": "a", "view": "L", "correct": false}\n')
    assert read_correct(detail) == {"a": True, "a/L": False}
    detail.write_text('{"id": "a", "correct": true}\n{"id": "a", "correct": false}\n')
    with pytest.raises(InputError, match="twice"):
        read_correct(detail)


def test_results_writes_the_paired_table(tmp_path):
    sampler = ShardSampler(SamplerConfig(max_steps=4, occlusion=False), seed=3, shard=0)
    samples = [sampler.sample(k) for k in range(80)]
    write_samples(tmp_path / "event.jsonl", samples)
    runs = []
    for name in ("oracle", "random", "reversed"):
        path = tmp_path / f"{name}.jsonl"
        write_jsonl(path, predict(name, samples, "event", seed=1))
        runs.append(f"{name.capitalize()}={path}")
    opts = ResultsOptions(
        runs=runs, out=str(tmp_path / "out"), samples=[str(tmp_path / "event.jsonl")], plots=False
    )
    report = make_results(opts)
    rows = json.loads((tmp_path / "out" / "paired.json").read_text())["rows"]
    assert [(r["Run A"], r["Run B"]) for r in rows] == [
        ("Oracle", "Random"),
        ("Oracle", "Reversed"),
        ("Random", "Reversed"),
    ]
    acc = {e.label: e.summary["metrics"]["Acc"] for e in report.entries}
    for r in rows:
        assert r["Samples"] == 80
        assert (r["Acc A"], r["Acc B"]) == pytest.approx((acc[r["Run A"]], acc[r["Run B"]]))
        assert r["A - B"] == pytest.approx(r["Acc A"] - r["Acc B"])
        assert r["A only"] - r["B only"] == round(80 * r["A - B"])
        assert r["95% low"] <= r["A - B"] <= r["95% high"]
    oracle_reversed = rows[1]
    # the oracle is right everywhere, the reversed order exactly where the order does not matter
    assert oracle_reversed["B only"] == 0 and oracle_reversed["A only"] == round(
        80 * (1 - acc["Reversed"])
    )
    assert "Paired comparisons (Acc)" in (tmp_path / "out" / "results.md").read_text()

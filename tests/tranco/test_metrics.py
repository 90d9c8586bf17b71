"""TRANCO's metrics on hand-computed cases: both conventions, empty and single intersections,
KTD orders, empty predictions and repeated clips."""

from itertools import permutations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tvr.tranco.eval.metrics import (
    CONVENTIONS,
    METRICS,
    by_length,
    convention_named,
    ktd_means,
    mean_values,
    score_sample,
)


def values(reference, prediction, convention):
    return score_sample(reference, prediction).values(convention)


def test_an_exact_match_is_perfect_under_both_conventions():
    for name in CONVENTIONS:
        assert values("abc", "abc", name) == {
            "R": 1.0, "P": 1.0, "KTD": 0.0, "SD": 0.0, "NSD": 0.0, "EMR": 1.0,
        }  # fmt: skip


def test_the_two_conventions_swap_recall_and_precision_and_score_a_single_clip_apart():
    # T = a b c d (n = 4), T^ = a x (n^ = 2): one shared clip
    s = score_sample("abcd", "ax")
    assert (s.length, s.predicted, s.hits, s.pairs) == (4, 2, 1, 0)
    prose, eq2 = values("abcd", "ax", "prose"), values("abcd", "ax", "eq2")
    assert (prose["R"], prose["P"]) == (1 / 4, 1 / 2)  # found 1 of 4; 1 of 2 predicted is right
    assert (eq2["R"], eq2["P"]) == (1 / 2, 1 / 4)  # Eq. 2 as printed
    assert prose["KTD"] == 0.0 and eq2["KTD"] == 1.0
    assert s.ktd("zero") == 0.0 and s.ktd("one") == 1.0
    for v in (prose, eq2):
        assert (v["SD"], v["NSD"], v["EMR"]) == (2.0, 0.5, 0.0)


def test_an_empty_intersection_scores_zero_and_ktd_one():
    for name in CONVENTIONS:
        assert values("ab", "xyz", name) == {
            "R": 0.0, "P": 0.0, "KTD": 1.0, "SD": 1.0, "NSD": 0.5, "EMR": 0.0,
        }  # fmt: skip


def test_an_empty_prediction_scores_zero_without_dividing_by_zero():
    for name in CONVENTIONS:
        assert values("abc", "", name) == {
            "R": 0.0, "P": 0.0, "KTD": 1.0, "SD": 3.0, "NSD": 1.0, "EMR": 0.0,
        }  # fmt: skip


@pytest.mark.parametrize(
    ("prediction", "discordant", "ktd"),
    [
        ("abcd", 0, 0.0),  # identical
        ("axbycd", 0, 0.0),  # the same order with wrong clips between
        ("dcba", 6, 1.0),  # reversed: all 6 pairs
        ("acbd", 1, 1 / 6),  # one adjacent swap
        ("dbca", 5, 5 / 6),  # a and d swapped: (a,b) (a,c) (a,d) (b,d) (c,d)
        ("cxa", 1, 1.0),  # two shared clips, reversed
        ("axc", 0, 0.0),  # two shared clips, in order
        ("bdy", 0, 0.0),
    ],
)
def test_ktd_counts_the_misordered_pairs_of_the_shared_clips(prediction, discordant, ktd):
    s = score_sample("abcd", prediction)
    assert s.discordant == discordant
    for name in CONVENTIONS:
        assert s.values(name)["KTD"] == pytest.approx(ktd)


def test_reversed_is_not_an_exact_match_but_finds_every_clip():
    assert values("abcd", "dcba", "eq2") == {
        "R": 1.0, "P": 1.0, "KTD": 1.0, "SD": 0.0, "NSD": 0.0, "EMR": 0.0,
    }  # fmt: skip


def test_a_repeated_clip_is_a_wrong_step_counted_once_and_placed_at_its_first_occurrence():
    s = score_sample("ab", "aab")
    assert (s.predicted, s.hits, s.duplicates, s.discordant, s.exact) == (3, 2, 1, 0, False)
    assert values("ab", "aab", "prose") == {
        "R": 1.0, "P": 2 / 3, "KTD": 0.0, "SD": 1.0, "NSD": 0.5, "EMR": 0.0,
    }  # fmt: skip
    assert score_sample("ab", "bab").ktd("one") == 1.0  # b first, then a: reversed
    assert score_sample("ab", "aaaa").precision("prose") == 1 / 4  # repeating cannot pay


def test_clips_are_compared_as_ids_not_characters():
    s = score_sample(["c1", "c12"], ["c12", "c1"])
    assert (s.hits, s.discordant) == (2, 1)


def test_a_reference_must_be_a_non_empty_sequence_of_distinct_clips():
    with pytest.raises(ValueError, match="no clip"):
        score_sample([], ["a"])
    with pytest.raises(ValueError, match="twice"):
        score_sample(["a", "a"], ["a"])


def test_unknown_conventions_are_refused():
    with pytest.raises(ValueError, match="unknown convention"):
        convention_named("mixed")
    with pytest.raises(ValueError, match="Recall/Precision"):
        score_sample("ab", "a").recall("text")
    with pytest.raises(ValueError, match="single-clip"):
        score_sample("ab", "a").ktd("half")


def test_means_and_the_breakdown_by_length():
    scores = [score_sample("ab", "ab"), score_sample("ab", "ba"), score_sample("abcd", "ax")]
    eq2 = mean_values(scores, "eq2")
    assert eq2["EMR"] == pytest.approx(1 / 3)
    assert eq2["R"] == pytest.approx((1 + 1 + 1 / 2) / 3)
    assert eq2["P"] == pytest.approx((1 + 1 + 1 / 4) / 3)
    assert eq2["KTD"] == pytest.approx((0 + 1 + 1) / 3)
    assert eq2["SD"] == pytest.approx(2 / 3)
    assert mean_values(scores, "prose")["KTD"] == pytest.approx(1 / 3)
    assert ktd_means(scores) == {"zero": pytest.approx(1 / 3), "one": pytest.approx(2 / 3)}
    rows = by_length(scores, "eq2")
    assert list(rows) == [2, 4]
    assert rows[2]["samples"] == 2 and rows[2]["EMR"] == 0.5 and rows[2]["KTD"] == 0.5
    assert rows[4] == {"samples": 1, "R": 0.5, "P": 0.25, "KTD": 1.0, "SD": 2.0, "NSD": 0.5,
                       "EMR": 0.0}  # fmt: skip
    with pytest.raises(ValueError, match="no sample"):
        mean_values([], "eq2")


clip_ids = st.sampled_from("abcdefgh")


@given(
    reference=st.lists(clip_ids, min_size=1, max_size=6, unique=True),
    prediction=st.lists(clip_ids, max_size=9),
)
def test_properties_and_kendall_tau(reference, prediction):
    s = score_sample(reference, prediction)
    eq2, prose = s.values("eq2"), s.values("prose")
    assert (eq2["R"], eq2["P"]) == (prose["P"], prose["R"])
    for v in (eq2, prose):
        assert set(v) == set(METRICS)
        assert all(0.0 <= v[m] <= 1.0 for m in ("R", "P", "KTD", "EMR"))
    assert s.hits == len(set(reference) & set(prediction))
    if s.hits >= 2:
        # against an independent count: the normalised distance is (1 - Kendall's tau) / 2
        first = {c: prediction.index(c) for c in set(prediction)}
        ranks = [first[c] for c in reference if c in first]
        pairs = [(i, j) for i in range(len(ranks)) for j in range(i + 1, len(ranks))]
        concordant = sum(ranks[i] < ranks[j] for i, j in pairs)
        tau = (2 * concordant - len(pairs)) / len(pairs)
        assert eq2["KTD"] == pytest.approx((1 - tau) / 2)
    assert eq2["EMR"] == float(list(reference) == list(prediction))


def test_every_order_of_four_clips_averages_to_one_half():
    orders = list(permutations("abcd"))
    assert sum(score_sample("abcd", p).ktd("one") for p in orders) / len(orders) == 0.5

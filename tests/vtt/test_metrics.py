"""The paper's metrics against independent computations: BLEU-4 and CIDEr-D worked by hand,
ROUGE-L against a separate LCS implementation, METEOR on hand-worked alignments; the text paths."""

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vtt.samples import needs_java
from tvr.vtt.eval.metrics.bleu import bleu4
from tvr.vtt.eval.metrics.coco import cider_d, meteor, rouge_l
from tvr.vtt.eval.metrics.text import clip_words, ptb_tokenize


def test_bleu_matches_a_hand_computation_of_smoothing_method_7():
    pytest.importorskip("nltk")
    # identical 4-word texts: p1..p4 = 1; method 4 leaves them; method 5 averages each with its
    # neighbours, starting from p1 + 1 = 2 and ending at the empty 5-gram precision 0:
    p1 = (2 + 1 + 1) / Fraction(3)  # 4/3
    p2 = (p1 + 1 + 1) / 3  # 10/9
    p3 = (p2 + 1 + 1) / 3  # 28/27
    p4 = (p3 + 1 + 0) / 3  # 55/81
    same = float(p1 * p2 * p3 * p4) ** 0.25  # brevity penalty 1; above 1 for short texts
    # "put steak" against "put steak on grill": p1 = p2 = 1; p3, p4 have no match, so method 4
    # gives them 1 / (2^k * 5 / ln 2), k = 1, 2 (hypothesis length 2)
    q3, q4 = math.log(2) / 10, math.log(2) / 20
    s1 = (2 + 1 + 1) / 3
    s2 = (s1 + 1 + q3) / 3
    s3 = (s2 + q3 + q4) / 3
    s4 = (s3 + q4 + 0) / 3
    short = math.exp(1 - 4 / 2) * (s1 * s2 * s3 * s4) ** 0.25
    scores = bleu4(["put steak on grill", "put steak", "", "pour water"],
                   ["put steak on grill", "put steak on grill", "flip steak", "flip steak"])  # fmt: skip
    assert scores[0] == pytest.approx(same, abs=1e-12)
    assert same == pytest.approx(1.010629663, abs=1e-9)
    assert scores[1] == pytest.approx(short, abs=1e-12)
    assert scores[2] == 0.0  # an empty description
    assert scores[3] == 0.0  # no word in common


def test_paper_bleu_exceeds_100_for_every_perfect_text_of_four_words_or_more():
    """Issue 42: with five words or more p5 = 1 too, so method 5 gives 4/3, 10/9, 28/27, 82/81;
    the standard convention (method 3) gives 1 for a perfect text and never more."""
    pytest.importorskip("nltk")
    from tvr.vtt.eval.metrics.bleu import bleu4_standard

    p = [Fraction(4, 3), Fraction(10, 9), Fraction(28, 27), Fraction(82, 81)]
    above = float(p[0] * p[1] * p[2] * p[3]) ** 0.25
    texts = [" ".join(f"w{i}" for i in range(n)) for n in (4, 5, 7, 12, 30)]
    paper = bleu4(texts, texts)
    assert paper[0] == pytest.approx(1.010629663, abs=1e-9)
    assert paper[1:] == pytest.approx([above] * 4, abs=1e-12)
    assert round(100 * above, 2) == 111.67
    assert bleu4_standard(texts, texts) == pytest.approx([1.0] * 5, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(h=st.lists(st.sampled_from("abcdefg"), max_size=14),
       r=st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=14))  # fmt: skip
def test_standard_bleu_never_exceeds_one(h, r):
    pytest.importorskip("nltk")
    from tvr.vtt.eval.metrics.bleu import bleu4_standard

    (score,) = bleu4_standard([" ".join(h)], [" ".join(r)])
    assert 0.0 <= score <= 1.0 + 1e-12


def _lcs(a, b):
    """LCS length by recursion over suffixes (a different algorithm from the library's table)."""
    from functools import cache

    @cache
    def go(i, j):
        if i == len(a) or j == len(b):
            return 0
        if a[i] == b[j]:
            return 1 + go(i + 1, j + 1)
        return max(go(i + 1, j), go(i, j + 1))

    return go(0, 0)


def _rouge_l(hyp, ref, beta=1.2):
    h, r = hyp.split(" "), ref.split(" ")
    lcs = _lcs(tuple(h), tuple(r))
    p, rec = lcs / len(h), lcs / len(r)
    return 0.0 if p == 0 or rec == 0 else (1 + beta**2) * p * rec / (rec + beta**2 * p)


_words = st.lists(st.sampled_from(["a", "b", "c", "d", "steak", "grill"]), min_size=1, max_size=9)


@settings(max_examples=200, deadline=None)
@given(_words, _words)
def test_rouge_l_is_the_lcs_f_measure_with_beta_1_2(hyp, ref):
    h, r = " ".join(hyp), " ".join(ref)
    assert rouge_l([h], [r])[0] == pytest.approx(_rouge_l(h, r), abs=1e-12)


def test_rouge_l_by_hand():
    # LCS("put the steak on grill", "put steak on the grill") = 4 (put steak on grill):
    # P = 4/5, R = 4/5, so F = P whatever beta
    assert rouge_l(["put the steak on grill"], ["put steak on the grill"]) == [pytest.approx(0.8)]
    # LCS = 1 of 1 and 3 words: P = 1, R = 1/3: (1 + 1.44) * 1/3 / (1/3 + 1.44) = 0.4586...
    assert rouge_l(["steak"], ["flip the steak"])[0] == pytest.approx(2.44 / 3 / (1 / 3 + 1.44))


def test_cider_d_by_hand():
    # three references, each one document: N = 3, idf(g) = ln 3 - ln df(g)
    refs = ["a b c", "a d", "e f"]
    hyps = ["a b", "a d", "x"]
    got = cider_d(hyps, refs)
    ln3, idf_a = math.log(3), math.log(3) - math.log(2)  # "a" is in two references
    # "a b" against "a b c": unigrams h = (a, b), r = (a, b, c) weighted by idf (tf 1 each)
    dot1 = idf_a**2 + ln3**2
    cos1 = dot1 / (math.sqrt(dot1) * math.sqrt(dot1 + ln3**2))
    cos2 = ln3**2 / (ln3 * math.sqrt(2) * ln3)  # bigram "a b" against "a b", "b c"
    # 3- and 4-grams: none in the hypothesis, 0; length = number of bigrams: 1 vs 2
    penalty = math.exp(-((1 - 2) ** 2) / (2 * 6.0**2))
    first = 10 * penalty * (cos1 + cos2 + 0 + 0) / 4
    # "a d" against itself: cosine 1 for unigrams and bigrams, equal lengths
    second = 10 * (1 + 1 + 0 + 0) / 4
    assert got == [pytest.approx(first, abs=1e-9), pytest.approx(second), 0.0]
    assert first == pytest.approx(3.5415, abs=1e-4)
    # the document frequencies come from the references passed: alone, "a" is rarer
    assert cider_d(["a b"], ["a b c"])[0] != pytest.approx(first)


@needs_java
def test_meteor_on_hand_worked_alignments():
    # METEOR 1.5 (en): Fmean = P R / (alpha P + (1 - alpha) R), alpha = 0.85;
    # penalty = gamma (chunks / matches)^beta, gamma = 0.6, beta = 0.2 (function-word weighting
    # does not enter: every word here is a content word, and P, R are over all of them)
    # "steak grill" against "grill steak": P = R = 1, 2 matches in 2 chunks -> 1 - 0.6 = 0.4
    # "grill" against "grill steak": P = 1, R = 1/2, 1 match in 1 chunk -> Fmean (1 - 0.6)
    fmean = 0.5 / (0.85 * 1 + 0.15 * 0.5)
    got = meteor(["steak grill", "grill", ""], ["grill steak", "grill steak", "grill steak"])
    assert got == [pytest.approx(0.4), pytest.approx(fmean * 0.4), 0.0]


@needs_java
def test_ptb_tokenize_removes_punctuation_and_keeps_lines():
    texts = ["Put the steak on the grill.", "", "Don't stir-fry, it's hot!", "a\rb", "last"]
    assert ptb_tokenize(texts) == [
        "put the steak on the grill", "", "do n't stir-fry it 's hot", "a b", "last",
    ]  # fmt: skip


def test_clip_words_is_the_clip_round_trip():
    assert clip_words("Don't stir-fry, it's 3.5cm!") == "don 't stir - fry , it 's 3 . 5 cm !"
    assert clip_words("  Put the STEAK\ton &amp;amp; grill. ") == "put the steak on & grill ."
    assert clip_words("") == ""

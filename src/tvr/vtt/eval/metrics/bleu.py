"""BLEU-4 in two conventions: the paper's (NLTK's sentence_bleu with Chen & Cherry's smoothing
method 7, what the released `src/criterion/components/metrics.py` calls) and a standard one that
never exceeds 1 (the same, with smoothing method 3: sacreBLEU's sentence default "exp").

Inputs are PTB-tokenized texts split on white space; each hypothesis against its one reference,
uniform weights over 1- to 4-grams. An empty hypothesis scores 0 in both.

Why the paper's exceeds 1: method 7 is method 4 then NLTK's method 5, which replaces each
precision p_n by the mean of its left neighbour, itself and p_(n+1), the left neighbour of p_1
being p_1 + 1 and p_5 the 5-gram precision. For a perfect match of five words or more every p_n
is 1, so the smoothed ones are 4/3, 10/9, 28/27, 82/81 and their geometric mean is 1.11675 (a
perfect description of any length >= 5 scores 111.67 after x100); of four words p_5 is 0 and it
scores 101.06. A near-perfect description exceeds 1 too (see `bleu4_standard` for one that
cannot: its smoothing only fills zero counts with 1/2^k, so every p_n stays <= 1).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from tvr.core.extras import missing_extra

#: the conventions `convention=` takes: NLTK's smoothing method of each
SMOOTHING = {"paper": "method7", "standard": "method3"}


def bleu4(
    hypotheses: Sequence[str], references: Sequence[str], convention: str = "paper"
) -> list[float]:
    """NLTK sentence BLEU-4 of each hypothesis against its reference: smoothing method 7
    (`paper`, can exceed 1) or method 3 (`standard`, at most 1)."""
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError as err:
        raise missing_extra(err, "the VTT metrics") from None
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    smoothing = getattr(SmoothingFunction(), SMOOTHING[convention])
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns about zero n-gram counts of short texts
        for h, r in zip(hypotheses, references, strict=True):
            scores.append(float(sentence_bleu([r.split()], h.split(), smoothing_function=smoothing)))
    return scores


def bleu4_standard(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """BLEU-4 that never exceeds 1 (NLTK smoothing method 3, sacreBLEU's sentence default)."""
    return bleu4(hypotheses, references, "standard")

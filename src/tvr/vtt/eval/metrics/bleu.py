"""BLEU-4 as the paper computes it: NLTK's sentence_bleu with Chen & Cherry's smoothing method 7.

Inputs are PTB-tokenized texts split on white space; each hypothesis against its one reference,
uniform weights over 1- to 4-grams. Method 7 (method 4 then method 5) can score a perfect match
above 1 when the texts are shorter than five words (method 5 averages in the empty 5-gram
precision); the paper's numbers carry that, so it is kept. An empty hypothesis scores 0.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from tvr.core.extras import missing_extra


def bleu4(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """NLTK sentence BLEU-4 (smoothing method 7) of each hypothesis against its reference."""
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError as err:
        raise missing_extra(err, "the VTT metrics") from None
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    smoothing = SmoothingFunction().method7
    scores = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns about zero n-gram counts of short texts
        for h, r in zip(hypotheses, references, strict=True):
            scores.append(float(sentence_bleu([r.split()], h.split(), smoothing_function=smoothing)))
    return scores

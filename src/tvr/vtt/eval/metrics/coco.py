"""METEOR, ROUGE-L and CIDEr-D from pycocoevalcap (coco-caption), one score per description.

Inputs are PTB-tokenized texts (tvr.vtt.eval.metrics.text), hypotheses[i] scored against its one
reference references[i]; scores are as the library returns them (0..1, CIDEr-D 0..10).

- METEOR: coco-caption's wrapper of METEOR 1.5 (Java; `-l en -norm`); the per-description
  (segment) scores, not the jar's corpus-level aggregate, as the released evaluation averages
  them. One Java process is started per Python process and reused. An exchange that fails or
  takes longer than `tvr.core.processes.java_timeout_s()` ends the process and the command
  with one line (coco-caption's wrapper would leave its lock held and hang the exit).
- ROUGE-L: coco-caption's LCS F-measure with beta = 1.2 on space-split tokens.
- CIDEr-D: coco-caption's CiderScorer, n = 4, sigma = 6: TF-IDF n-gram vectors, clipped,
  length penalty exp(-delta^2 / (2 sigma^2)), mean over n, x10. The document frequencies and the
  log number of documents come from the references passed in, each reference one document, so
  pass every reference of the evaluated split at once. The library's "length" is the number of
  bigrams (a quirk of coco-caption kept as is).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.processes import Watchdog


def rouge_l(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """coco-caption ROUGE-L of each hypothesis against its reference."""
    from pycocoevalcap.rouge.rouge import Rouge

    rouge = Rouge()
    return [float(rouge.calc_score([h], [r])) for h, r in _pairs(hypotheses, references)]


def cider_d(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """coco-caption CIDEr-D of each hypothesis; document frequencies from all `references`."""
    from pycocoevalcap.cider.cider_scorer import CiderScorer

    pairs = _pairs(hypotheses, references)
    if not any(r.split() for _, r in pairs):  # the library's max() over no n-gram would fail
        return [0.0] * len(pairs)
    scorer = CiderScorer(n=4, sigma=6.0)
    for h, r in pairs:
        scorer += (h, [r])
    _, scores = scorer.compute_score()
    return [float(s) for s in scores]


def meteor(hypotheses: Sequence[str], references: Sequence[str]) -> list[float]:
    """coco-caption METEOR 1.5 of each hypothesis against its reference (segment scores)."""
    pairs = _pairs(hypotheses, references)
    if not pairs:
        return []
    gts = {i: [r] for i, (_, r) in enumerate(pairs)}
    res = {i: [h] for i, (h, _) in enumerate(pairs)}
    scorer = _meteor()
    watchdog = Watchdog(scorer.meteor_p)
    try:
        with watchdog:
            _, scores = scorer.compute_score(gts, res)
    except (ValueError, BrokenPipeError, OSError) as err:
        _discard(scorer)
        why = f"no answer within {watchdog.seconds:.0f} s" if watchdog.fired else str(err)
        raise UserError(f"METEOR (Java, meteor-1.5.jar) failed: {why}") from None
    return [float(s) for s in scores]


def _discard(scorer: Any) -> None:
    """End a METEOR process that failed mid-exchange so that nothing waits on it: coco-caption's
    wrapper keeps its lock held when an exchange fails, and its `__del__` (at exit) would wait on
    that lock forever."""
    _meteor.cache_clear()
    process = scorer.meteor_p
    try:
        process.kill()
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass
    for pipe in (process.stdin, process.stdout, process.stderr):
        with contextlib.suppress(OSError, ValueError):
            pipe.close()
    process.stdin = open(os.devnull, "wb")  # what `__del__` closes  # noqa: SIM115
    scorer.lock = threading.Lock()


def start_meteor() -> None:
    """Start METEOR's Java process now (it loads its tables for seconds while Python works)."""
    _meteor()


@functools.cache
def _meteor() -> Any:
    try:
        from pycocoevalcap.meteor.meteor import Meteor
    except ImportError as err:
        raise missing_extra(err, "the VTT metrics") from None
    try:
        return Meteor()
    except FileNotFoundError:
        raise UserError("METEOR needs Java on the PATH (java not found)") from None


def _pairs(hypotheses: Sequence[str], references: Sequence[str]) -> list[tuple[str, str]]:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    return list(zip(hypotheses, references, strict=True))

"""All of VTT's metrics on a list of descriptions, each against its one reference, x100.

The texts take the paths of the released evaluation (its scoring of MLLM replies, which like a
prediction file start from raw strings):

- BLEU-4, METEOR, ROUGE-L, SPICE: PTB tokens of the raw texts;
- CIDEr-D: PTB tokens, then CLIP's word split (the released CIDEr re-encodes with CLIP's BPE);
- BERTScore: CLIP's word split of the raw texts (likewise).

Every score is x100 (CIDEr-D's 0..10 becomes 0..1000, as Table 2 prints it). A metric that cannot
run here (SPICE without CoreNLP, BERTScore without a model) has scores None and says why; it is
never reported as 0.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from tvr.core.progress import step_bar
from tvr.vtt.eval.metrics.bertscore import (
    NOT_PAPER,
    BertScoreSetting,
    BertScoreUnavailable,
    bertscore,
    offline_setting,
    paper_setting,
)
from tvr.vtt.eval.metrics.bleu import bleu4, bleu4_standard
from tvr.vtt.eval.metrics.coco import cider_d, meteor, rouge_l, start_meteor
from tvr.vtt.eval.metrics.spice import UNAVAILABLE, corenlp_jars, spice
from tvr.vtt.eval.metrics.text import clip_words, ptb_tokenize
from tvr.vtt.paper import METRICS

#: the key of BLEU-4 in the standard convention (`BLEU_4` is the paper's, Table 2's column)
STANDARD_BLEU = "BLEU_4_standard"

#: descriptions per call of a per-description metric (one progress step; each description's
#: score does not depend on the others, so the chunks change nothing but the bar)
CHUNK = 1000


@dataclass(frozen=True)
class MetricOptions:
    """Where the optional models are: CoreNLP for SPICE, roberta-large for the paper's
    BERTScore (else the offline default, or none with `bertscore=False`)."""

    spice_corenlp: Path | None = None
    bertscore_model: Path | None = None
    bertscore: bool = True
    bertscore_cache: Path | None = None


@dataclass
class MetricScores:
    """One metric's per-description scores (x100; None if it did not run) and how it ran."""

    name: str
    scores: list[float] | None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def mean(self) -> float | None:
        if self.scores is None or not self.scores:
            return None
        return sum(self.scores) / len(self.scores)


def score_descriptions(
    hypotheses: Sequence[str],
    references: Sequence[str],
    options: MetricOptions | None = None,
    progress: bool = False,
) -> dict[str, MetricScores]:
    """Every metric of Table 2 for hypotheses[i] against references[i], in paper.METRICS order,
    then BLEU-4 in the standard convention (`STANDARD_BLEU`, at most 100).
    CIDEr-D's document frequencies come from all of `references`: pass a whole split.
    `progress`: a bar on stderr for each step (tokenising, then each metric)."""
    options = options or MetricOptions()
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses for {len(references)} references")
    # check the optional models' paths before the long part
    import pycocoevalcap  # noqa: F401  (the vtt extra: missing, one line before any bar)

    bert = _bertscore_setting(options)
    if options.spice_corenlp is not None:
        corenlp_jars(options.spice_corenlp)

    n = len(hypotheses)
    with step_bar(2 * n, "tokenising (PTB)", "text", progress) as bar:
        tokens = ptb_tokenize([*references, *hypotheses])
        bar.update(2 * n)
    refs, hyps = tokens[:n], tokens[n:]
    if n:
        start_meteor()  # Java loads METEOR's tables while the other metrics run
    found: dict[str, MetricScores] = {}
    bleu = _steps(bleu4, hyps, refs, "BLEU-4", progress)
    found["BLEU_4"] = MetricScores("BLEU_4", _x100(bleu), {
        "available": True,
        "setting": f"NLTK {_version('nltk')} sentence_bleu, smoothing method 7, on PTB tokens "
                   "(the paper's convention: a perfect description of 5+ words scores 111.67)",
        "convention": "paper",
    })  # fmt: skip
    standard = _steps(bleu4_standard, hyps, refs, "BLEU-4 (standard)", progress)
    found[STANDARD_BLEU] = MetricScores(STANDARD_BLEU, _x100(standard), {
        "available": True,
        "setting": f"NLTK {_version('nltk')} sentence_bleu, smoothing method 3 (sacreBLEU's "
                   "sentence default), on PTB tokens: never above 100",
        "convention": "standard",
    })  # fmt: skip
    rouge = _steps(rouge_l, hyps, refs, "ROUGE-L", progress)
    found["ROUGE_L"] = MetricScores("ROUGE_L", _x100(rouge), {
        "available": True,
        "setting": "coco-caption ROUGE-L (LCS F-measure, beta 1.2), on PTB tokens",
    })  # fmt: skip
    cider_refs = [clip_words(r) for r in refs]
    cider_hyps = [clip_words(h) for h in hyps]  # one call: document frequencies from all refs
    cider = _steps(cider_d, cider_hyps, cider_refs, "CIDEr-D", progress, chunk=None)
    found["CIDEr"] = MetricScores("CIDEr", _x100(cider), {
        "available": True,
        "setting": f"coco-caption CIDEr-D (n 4, sigma 6), document frequencies from the {n} "
                   "references scored, on PTB tokens then CLIP's word split",
    })  # fmt: skip
    found["SPICE"] = _spice(hyps, refs, options, progress)
    found["BERTScore"] = _bertscore(hypotheses, references, bert, progress)
    meteor_scores = _steps(meteor, hyps, refs, "METEOR", progress)
    found["METEOR"] = MetricScores("METEOR", _x100(meteor_scores), {
        "available": True,
        "setting": "coco-caption METEOR 1.5 (-l en -norm), per-description (segment) scores, "
                   "on PTB tokens",
    })  # fmt: skip
    return {name: found[name] for name in (*METRICS, STANDARD_BLEU)}


def _steps(
    metric: Callable[[Sequence[str], Sequence[str]], list[float]],
    hyps: Sequence[str],
    refs: Sequence[str],
    desc: str,
    progress: bool,
    chunk: int | None = CHUNK,
) -> list[float]:
    """`metric(hyps, refs)` under a progress bar named `desc`: run on `chunk` descriptions at a
    time (metrics whose scores are per description), or at once (chunk None: CIDEr-D)."""
    out: list[float] = []
    size = chunk or max(1, len(hyps))
    with step_bar(len(hyps), desc, "descr", progress) as bar:
        for start in range(0, len(hyps), size):
            part = metric(hyps[start : start + size], refs[start : start + size])
            out += part
            bar.update(len(part))
    return out


def _spice(
    hyps: list[str], refs: list[str], options: MetricOptions, progress: bool = False
) -> MetricScores:
    if options.spice_corenlp is None:
        return MetricScores("SPICE", None, {"available": False, "reason": UNAVAILABLE})
    with step_bar(len(hyps), "SPICE", "descr", progress) as bar:
        result = spice(hyps, refs, options.spice_corenlp)
        bar.update(len(hyps))
    return MetricScores("SPICE", _x100(result.scores), {
        "available": True,
        "setting": f"coco-caption SPICE 1.0 with Stanford CoreNLP from {options.spice_corenlp}, "
                   "the 'All' F-score of each description, on PTB tokens",
        "undefined_scored_0": result.undefined,
    })  # fmt: skip


def _bertscore_setting(options: MetricOptions) -> BertScoreSetting | str:
    """The setting to run, or the reason BERTScore is unavailable."""
    if options.bertscore_model is not None:
        return paper_setting(options.bertscore_model)
    if not options.bertscore:
        return "skipped (--no-bertscore)"
    try:
        return offline_setting(options.bertscore_cache)
    except BertScoreUnavailable as err:
        return str(err)


def _bertscore(
    hypotheses: Sequence[str],
    references: Sequence[str],
    setting: BertScoreSetting | str,
    progress: bool = False,
) -> MetricScores:
    if isinstance(setting, str):
        return MetricScores("BERTScore", None, {"available": False, "reason": setting})
    if progress:  # bert-score's own bars follow (embedding, then matching)
        print(f"BERTScore ({setting.model}): {len(hypotheses)} descriptions", file=sys.stderr)
    scores = bertscore([clip_words(h) for h in hypotheses], [clip_words(r) for r in references],
                       setting, progress)  # fmt: skip
    info: dict[str, Any] = {
        "available": True,
        "setting": setting.describe() + ", on CLIP's word split of the raw texts",
        "paper_setting": setting.paper,
    }
    if not setting.paper:
        info["label"] = NOT_PAPER
    return MetricScores("BERTScore", _x100(scores), info)


def _x100(scores: list[float]) -> list[float]:
    return [100.0 * s for s in scores]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"

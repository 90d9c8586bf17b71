"""VTT's metrics at the size of the test split: time per metric, and BLEU-4 / ROUGE-L / CIDEr-D
checked against independent implementations written here from the definitions.

    python benchmarks/vtt_metrics.py [--samples 1436 --descriptions 5903 --seed 0] [--no-bertscore]

A synthetic test split of Table 1's size (1,436 samples, 5,903 descriptions; N drawn mostly from
2..5; 806 distinct two- to four-word descriptions) and predictions of four kinds: exact (40%),
one word replaced (30%), another description (20%), missing (10%). Prints:
  time      seconds (wall and CPU of this process; Java's CPU is not counted) of the PTB
            tokenization, BLEU-4, ROUGE-L, CIDEr-D, METEOR (Java start included) and BERTScore
            (the offline default, model load included), and `evaluate` end to end from files
  checks    the largest absolute difference between the library metric and the implementation
            here, over every description: BLEU-4 (NLTK sentence_bleu + smoothing 7 from Chen &
            Cherry's definitions as NLTK implements them), ROUGE-L (LCS F-measure, beta 1.2),
            CIDEr-D (coco-caption's formula, bigram count as length)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tvr.vtt.eval.evaluate import evaluate
from tvr.vtt.eval.metrics.bertscore import bertscore, offline_setting
from tvr.vtt.eval.metrics.bleu import bleu4
from tvr.vtt.eval.metrics.coco import cider_d, meteor, rouge_l
from tvr.vtt.eval.metrics.suite import MetricOptions
from tvr.vtt.eval.metrics.text import clip_words, ptb_tokenize

VERBS = ["add", "cut", "put", "remove", "pour", "stir", "wash", "peel", "install", "fold",
         "tighten", "open", "close", "spread", "mix", "heat", "attach", "insert", "clean", "dry"]
OBJECTS = ["salt", "the onion", "steak on grill", "whipped cream", "water", "the sauce",
           "the tire", "the screw", "the lid", "the paper", "butter on bread", "the battery",
           "oil into pan", "the mango", "the cable", "the seat", "the filter", "the glue",
           "the bolt", "the cover", "flour", "the dough", "the chain", "the bulb", "the tea",
           "the ice", "the lemon", "the cloth", "the hose", "the frame", "sugar", "the egg",
           "the rice", "the blade", "the tube", "the panel", "the pipe", "the strap", "milk",
           "the card", "the lens"]  # fmt: skip


def synthetic_split(samples: int, descriptions: int, rng: np.random.Generator):
    vocab = sorted({f"{v} {o}" for v in VERBS for o in OBJECTS})
    vocab = [vocab[i] for i in rng.choice(len(vocab), 806, replace=False)]
    ns = np.clip(rng.poisson(3.0, samples) + 1, 1, 12)
    while ns.sum() != descriptions:  # adjust to the exact total
        i = rng.integers(samples)
        step = 1 if ns.sum() < descriptions else -1
        if 1 <= ns[i] + step <= 12:
            ns[i] += step
    records, predictions = [], []
    for k, n in enumerate(ns):
        sid = f"{k:016x}"
        labels = [vocab[i] for i in rng.integers(0, len(vocab), n)]
        records.append({
            "id": sid, "youtube_id": f"v{k}", "ori": "coin", "split": "test", "duration": 600.0,
            "topic": f"topic {k % 198}", "category": f"category {k % 12}",
            "annotation": [{"clip_id": f"{sid}_{n}_{i}", "segment": [10.0 * i, 10.0 * i + 5],
                            "label": label} for i, label in enumerate(labels)],
        })  # fmt: skip
        guesses = []
        for label in labels:
            u = rng.random()
            if u < 0.4:
                guesses.append(label)
            elif u < 0.7:
                words = label.split()
                words[rng.integers(len(words))] = str(rng.choice(["the", "a", "new", "it"]))
                guesses.append(" ".join(words))
            elif u < 0.9:
                guesses.append(vocab[rng.integers(len(vocab))])
            else:
                guesses.append("")
        predictions.append({"id": sid, "transformations": guesses})
    return records, predictions


def ngrams(words: list[str], n: int) -> Counter:
    return Counter(tuple(words[i:i + n]) for i in range(len(words) - n + 1))


def my_bleu(hyp: str, ref: str) -> float:
    """NLTK's sentence BLEU-4 with smoothing method 7, from the definitions."""
    h, r = hyp.split(), ref.split()
    if not h:
        return 0.0
    nums, dens = [], []
    for n in range(1, 6):
        hc, rc = ngrams(h, n), ngrams(r, n)
        nums.append(sum(min(c, rc[g]) for g, c in hc.items()))
        dens.append(max(1, sum(hc.values())))
    if nums[0] == 0:
        return 0.0
    p = []
    k = 1
    for num, den in zip(nums[:4], dens[:4], strict=True):  # method 4
        if num == 0 and len(h) > 1:
            p.append(1 / (2**k * 5 / math.log(len(h))) / den)
            k += 1
        else:
            p.append(num / den)
    nxt = [*p, nums[4] / dens[4]]
    prev, q = p[0] + 1, []
    for i in range(4):  # method 5: average with the neighbours
        prev = (prev + p[i] + nxt[i + 1]) / 3
        q.append(prev)
    bp = 1.0 if len(h) > len(r) else math.exp(1 - len(r) / len(h))
    return bp * math.exp(math.fsum(0.25 * math.log(x) for x in q if x > 0))


def my_rouge(hyp: str, ref: str, beta: float = 1.2) -> float:
    h, r = hyp.split(" "), ref.split(" ")
    prev = [0] * (len(r) + 1)
    for a in h:
        cur = [0]
        for j, b in enumerate(r):
            cur.append(prev[j] + 1 if a == b else max(prev[j + 1], cur[j]))
        prev = cur
    lcs = prev[-1]
    p, rec = lcs / len(h), lcs / len(r)
    return 0.0 if p == 0 or rec == 0 else (1 + beta**2) * p * rec / (rec + beta**2 * p)


def my_cider(hyps: list[str], refs: list[str]) -> list[float]:
    docs = len(refs)
    grams = [[ngrams(t.split(), n) for n in range(1, 5)] for t in refs]
    df = Counter(g for doc in grams for counts in doc for g in counts)

    def vec(counts):
        return {g: c * (math.log(docs) - math.log(max(1.0, df[g]))) for g, c in counts.items()}

    scores = []
    for hyp, rgrams in zip(hyps, grams, strict=True):
        hgrams = [ngrams(hyp.split(), n) for n in range(1, 5)]
        delta = sum(hgrams[1].values()) - sum(rgrams[1].values())  # lengths: bigram counts
        total = 0.0
        for hc, rc in zip(hgrams, rgrams, strict=True):
            vh, vr = vec(hc), vec(rc)
            dot = sum(min(v, vr.get(g, 0.0)) * vr.get(g, 0.0) for g, v in vh.items())
            nh, nr = math.sqrt(sum(v * v for v in vh.values())), math.sqrt(sum(v * v for v in vr.values()))
            cos = dot / (nh * nr) if nh and nr else dot
            total += cos * math.exp(-(delta**2) / (2 * 6.0**2))
        scores.append(10 * total / 4)
    return scores


class Clock:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float]] = []

    def __call__(self, name, fn, *args):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*args)
        self.rows.append((name, time.perf_counter() - w, time.process_time() - c))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1436)
    parser.add_argument("--descriptions", type=int, default=5903)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-bertscore", action="store_true")
    args = parser.parse_args()
    records, predictions = synthetic_split(args.samples, args.descriptions,
                                           np.random.default_rng(args.seed))  # fmt: skip
    refs = [s["label"] for r in records for s in r["annotation"]]
    hyps = [t for p in predictions for t in p["transformations"]]
    print(f"{len(records)} samples, {len(refs)} descriptions, {len(set(refs))} distinct, "
          f"{sum(not h for h in hyps)} missing")  # fmt: skip
    clock = Clock()
    tokens = clock("PTB tokenization", ptb_tokenize, [*refs, *hyps])
    rt, ht = tokens[:len(refs)], tokens[len(refs):]
    bleu = clock("BLEU-4", bleu4, ht, rt)
    rouge = clock("ROUGE-L", rouge_l, ht, rt)
    ch, cr = [clip_words(t) for t in ht], [clip_words(t) for t in rt]
    cider = clock("CIDEr-D", cider_d, ch, cr)
    met = clock("METEOR (with the Java start)", meteor, ht, rt)
    if not args.no_bertscore:
        setting = offline_setting()
        bert = clock("BERTScore offline (with the model load)", bertscore,
                     [clip_words(t) for t in hyps], [clip_words(t) for t in refs], setting)  # fmt: skip
        print(f"BERTScore (offline, not the paper's setting) mean x100: {100 * np.mean(bert):.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        rpath, ppath = Path(tmp) / "vtt.jsonl", Path(tmp) / "pred.jsonl"
        rpath.write_text("".join(json.dumps(r) + "\n" for r in records))
        ppath.write_text("".join(json.dumps(p) + "\n" for p in predictions))
        options = MetricOptions(bertscore=not args.no_bertscore)
        result = clock("evaluate end to end (files, all metrics)", evaluate, rpath, ppath,
                       "test", options)  # fmt: skip
    print("\ntime (s)                                   wall      cpu")
    for name, wall, cpu in clock.rows:
        print(f"  {name:<40} {wall:6.2f}  {cpu:7.2f}")
    print("\nmeans x100:", {k: None if v is None else round(v, 2)
                            for k, v in result.summary["metrics"].items()})  # fmt: skip
    print(f"METEOR mean x100 (direct call): {100 * np.mean(met):.2f}")
    print("\nchecks against the implementations here (max |difference| over all descriptions):")
    for name, got, mine in (
        ("BLEU-4", bleu, [my_bleu(h, r) for h, r in zip(ht, rt, strict=True)]),
        ("ROUGE-L", rouge, [my_rouge(h, r) for h, r in zip(ht, rt, strict=True)]),
        ("CIDEr-D", cider, my_cider(ch, cr)),
    ):
        diff = max(abs(a - b) for a, b in zip(got, mine, strict=True))
        print(f"  {name:<8} {diff:.3g}  (mean x100 {100 * np.mean(got):.2f})")


if __name__ == "__main__":
    main()

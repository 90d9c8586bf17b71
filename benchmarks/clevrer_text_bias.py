"""How much of a CLEVRER set's answers the words alone give away, beside Table 2's language-only rows.

Probes trained on the set's train split (model selection on validation), scored on test:
- a logistic regression over word 1- and 2-grams: descriptive, the question's (one classifier
  over all answers); multiple choice, per option, the question's and the option's n-grams and
  every (question word, option word) pair (one classifier per question type);
- the paper's LSTM, `tvr clevrer train lstm` then `tvr clevrer predict` (`--lstm-epochs N`; or an
  existing run with `--lstm-run RUN`);
and two rules on predictive questions, from the annotations at the last shown frame (world
coordinates, no learning, no simulation): the pair whose constant-velocity paths come closest
within 2 s, and the pair closest now. Prints a Markdown table (accuracy %, multiple choice per
option / per question) with Table 2's Q-type and LSTM rows; `--out FILE` writes it as JSON too.

    python benchmarks/clevrer_text_bias.py --data clevrer-2k --lstm-epochs 30 --threads 1 --out bias.json

Needs scikit-learn (the `bench` extra) and, for the LSTM, the `train` extra.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from sklearn.feature_extraction import FeatureHasher
from sklearn.linear_model import LogisticRegression

from clevrer_predictive_geometry_rule import choice_objects, closest_approach
from tvr.clevrer.data.annotations import read_annotation
from tvr.clevrer.data.layout import find_annotation, find_questions
from tvr.clevrer.data.questions import Question, VideoQuestions, read_questions
from tvr.clevrer.paper import TABLE2

TYPES = ("explanatory", "predictive", "counterfactual")
C_GRID = (0.1, 1.0, 10.0)


def words(text: str) -> list[str]:
    return [w.strip("?,.").lower() for w in text.split() if w.strip("?,.")]


def ngrams(tokens: list[str], prefix: str) -> Iterator[str]:
    for i, t in enumerate(tokens):
        yield f"{prefix}:{t}"
        if i + 1 < len(tokens):
            yield f"{prefix}:{t}_{tokens[i + 1]}"


def question_features(q: Question) -> dict[str, float]:
    return dict.fromkeys(ngrams(words(q.question), "q"), 1.0)


def option_features(q: Question, choice: str) -> dict[str, float]:
    qw, ow = words(q.question), words(choice)
    feats = dict.fromkeys(ngrams(qw, "q"), 1.0)
    feats.update(dict.fromkeys(ngrams(ow, "o"), 1.0))
    feats.update(dict.fromkeys((f"x:{a}|{b}" for a in set(qw) for b in set(ow)), 1.0))
    return feats


HASHER = FeatureHasher(n_features=2**18, input_type="dict", alternate_sign=False)


def fit(x: list[dict], y: list[str], xv: list[dict], yv: list[str]) -> LogisticRegression:
    """The logistic regression with the best validation accuracy over C_GRID (liblinear for two
    labels, lbfgs for more)."""
    xs, xvs = HASHER.transform(x), HASHER.transform(xv)
    solver = "liblinear" if len(set(y)) <= 2 else "lbfgs"
    best = None
    for c in C_GRID:
        model = LogisticRegression(C=c, max_iter=1000, solver=solver).fit(xs, y)
        acc = float(np.mean(model.predict(xvs) == np.asarray(yv))) if yv else 0.0
        if best is None or acc > best[0]:
            best = (acc, model)
    assert best is not None
    return best[1]


def load(data: str, split: str) -> list[VideoQuestions]:
    return read_questions(find_questions(data, split))


def logistic_probe(data: str) -> dict[str, float]:
    """Test accuracies (%) of the n-gram logistic regressions (descriptive: one classifier per
    sub-type, which the question's first words tell; multiple choice: one per type)."""
    splits = {s: load(data, s) for s in ("train", "validation", "test")}

    def rows(split: str, qtype: str) -> list[Question]:
        return [q for v in splits[split] for q in v.questions if q.question_type == qtype]

    out: dict[str, float] = {}
    right = total = 0
    for subtype in sorted({q.subtype for q in rows("train", "descriptive")}):
        def desc(split: str, subtype: str = subtype) -> tuple[list[dict], list[str]]:
            qs = [q for q in rows(split, "descriptive") if q.subtype == subtype]
            return [question_features(q) for q in qs], [q.answer or "" for q in qs]

        x, y = desc("train")
        xt, yt = desc("test")
        if not xt:
            continue
        if len(set(y)) < 2:  # one answer in training: that is the prediction
            hits = sum(a == y[0] for a in yt)
        else:
            model = fit(x, y, *desc("validation"))
            hits = int(np.sum(model.predict(HASHER.transform(xt)) == np.asarray(yt)))
        out[f"descriptive_{subtype}"] = 100 * hits / len(yt)
        right, total = right + hits, total + len(yt)
    out["descriptive"] = 100 * right / max(total, 1)
    for qtype in TYPES:
        def options(split: str, qtype: str = qtype) -> tuple[list[dict], list[str]]:
            feats, labels = [], []
            for q in rows(split, qtype):
                for c in q.choices or ():
                    feats.append(option_features(q, c.choice))
                    labels.append(c.answer or "")
            return feats, labels

        model = fit(*options("train"), *options("validation"))
        right = whole = n_opts = n_qs = 0
        for q in rows("test", qtype):
            choices = q.choices or ()
            pred = model.predict(HASHER.transform([option_features(q, c.choice) for c in choices]))
            hits = [p == c.answer for p, c in zip(pred, choices, strict=True)]
            right, n_opts = right + sum(hits), n_opts + len(hits)
            whole, n_qs = whole + all(hits), n_qs + 1
        out[f"{qtype}_per_option"] = 100 * right / max(n_opts, 1)
        out[f"{qtype}_per_question"] = 100 * whole / max(n_qs, 1)
    return out


def predictive_rules(data: str, split: str = "test") -> dict[str, float]:
    """Accuracy (%) of the constant-velocity and the closer-now rule on predictive questions
    (one correct and one wrong option each, so per option = per question)."""
    right = {"constant_velocity_2s": 0, "closer_now": 0}
    asked = 0
    for video in load(data, split):
        questions = [q for q in video.questions if q.question_type == "predictive" and q.choices]
        if not questions:
            continue
        annotation = read_annotation(find_annotation(data, video.scene_index)).to_json()
        properties = annotation["object_property"]
        last = {o["object_id"]: o for o in annotation["motion_trajectory"][-1]["objects"]}
        for q in questions:
            choices = q.choices or ()
            pairs = [choice_objects(c, properties) for c in choices]
            if len(choices) != 2 or any(p is None or p[0] not in last or p[1] not in last
                                        for p in pairs):
                continue
            asked += 1
            happens = [c.answer == "correct" for c in choices]
            for name, horizon in (("constant_velocity_2s", 2.0), ("closer_now", 0.0)):
                gaps = [closest_approach(last[p[0]], last[p[1]], horizon) for p in pairs if p]
                right[name] += happens[int(np.argmin(gaps))]
    return {k: 100 * v / max(asked, 1) for k, v in right.items()} | {"predictive_asked": asked}


def lstm_scores(run: Path) -> dict[str, float]:
    """The test scores of a baseline run (after `tvr clevrer predict --run RUN --split test`)."""
    summary = json.loads((run / "eval" / "test" / "summary.json").read_text())["score"]
    out = {"descriptive": 100 * summary["descriptive"]["accuracy"]}
    for qtype in TYPES:
        out[f"{qtype}_per_option"] = 100 * summary[qtype]["per_option"]["accuracy"]
        out[f"{qtype}_per_question"] = 100 * summary[qtype]["per_question"]["accuracy"]
    return out


def train_lstm(data: str, epochs: int, threads: int, out_dir: Path) -> Path:
    name = f"lstm-bias-{Path(data).name}"
    tvr = [sys.executable, "-m", "tvr", "clevrer"]
    subprocess.run([*tvr, "train", "lstm", "--data", data, "--epochs", str(epochs),
                    "--threads", str(threads), "--accelerator", "cpu",
                    "--output-dir", str(out_dir), "--run-name", name], check=True)
    run = out_dir / name
    subprocess.run([*tvr, "predict", "--run", str(run), "--split", "test",
                    "--threads", str(threads)], check=True)
    return run


COLUMNS = ("descriptive", *(f"{t}_{m}" for t in TYPES for m in ("per_option", "per_question")))


def row(name: str, values: dict[str, float]) -> str:
    cells = [f"{values['descriptive']:.1f}"]
    for t in TYPES:
        cells.append(f"{values[f'{t}_per_option']:.1f} / {values[f'{t}_per_question']:.1f}")
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a CLEVRER set with train/validation/test")
    ap.add_argument("--lstm-epochs", type=int, default=0, help="train the LSTM this long (0: no)")
    ap.add_argument("--lstm-run", type=Path, help="an LSTM run already trained and predicted")
    ap.add_argument("--runs", type=Path, default=Path("runs/clevrer-bias"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, help="write the figures as JSON")
    args = ap.parse_args()
    started = time.perf_counter()
    results: dict[str, dict[str, float]] = {"logistic": logistic_probe(args.data)}
    print(f"logistic probe: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    run = args.lstm_run
    if run is None and args.lstm_epochs > 0:
        run = train_lstm(args.data, args.lstm_epochs, args.threads, args.runs)
    if run is not None:
        results["lstm"] = lstm_scores(run)
    results["predictive_rules"] = predictive_rules(args.data)
    print(f"{args.data}: test accuracy (%), multiple choice per option / per question\n")
    print("| probe | descriptive | explanatory | predictive | counterfactual |")
    print("|---|---:|---:|---:|---:|")
    for paper_row in TABLE2:
        if paper_row.model in ("Q-type (random)", "Q-type (frequent)", "LSTM"):
            print(row(f"paper's {paper_row.model}", paper_row.as_dict()))
    print(row("logistic regression (n-grams, question x option words)", results["logistic"]))
    if "lstm" in results:
        print(row(f"LSTM ({run})", results["lstm"]))
    rules = results["predictive_rules"]
    print(f"\npredictive rules on {rules['predictive_asked']:.0f} test questions: constant "
          f"velocity, closest within 2 s {rules['constant_velocity_2s']:.1f}%; closer pair now "
          f"{rules['closer_now']:.1f}%")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""One video's questions in the released layout: `generate_questions(facts, rng, config)`.

Every answer is what the program executor gives for the question's program on the video's facts
(`tvr.clevrer.programs.executor`); a question whose program fails, or whose answer changes when
its moment is moved a few frames, is not emitted. Layout (as the release):
descriptive `{question_id, question, question_type, question_subtype, program, answer}` and
multiple choice `{question_id, question, question_type, program, choices: [{choice_id, choice,
program, answer: "correct" | "wrong"}]}`; a choice is scored by running its program followed by
the question's. Answers are strings: counts "0".."5", "yes"/"no", attribute words.

Decisions the paper leaves open (all fields of `QuestionConfig`):
- Questions per video: the release's means, 219,918 / 33,811 / 14,298 / 37,253 questions of the
  four types over 20,000 videos (10.996, 1.691, 0.715, 1.863 per video, 15.26 in all).
- Descriptive sub-type shares: the paper shows them only as a pie (figure 3) without numbers;
  we use count 0.30, exist 0.25, query colour 0.17, shape 0.15, material 0.13.
- Options per question: explanatory 2/3/4 with probabilities 0.05/0.15/0.80 and counterfactual
  0.10/0.30/0.60, chosen so that a random answerer's per-question accuracy (the mean of 2^-k)
  is 8.1% and 10.0%, the paper's Q-type random figures (8.1% and 10.3%, table 2); predictive
  always 2 (random 25%, the paper's 25.5%).
- Correct options: the number of correct options is drawn Binomial(k, 1/2) (the paper balances
  correct and wrong options), conditioned on at least one responsible option for explanatory
  (and one not responsible when asked negated), at least one correct and one wrong for counterfactual (the paper's Q-type frequent baseline gets
  1.0% of counterfactual questions right, so nearly all mix both), and exactly one of each for
  predictive (its frequent baseline gets 0.0%). Wrong explanatory options prefer events before
  the target and objects; counterfactual options prefer pairs that collide in the factual or
  the counterfactual run.
- Negated forms ("not responsible", "will not happen") are asked with probability `negated`.
- A predictive question needs a collision after the shown frames between two objects seen in the
  video; the release's predictive ratio is reached only where about 70% of videos have one
  (videos without one ask none, and a shared `Balancer` asks up to 2 more in later videos).
- Counterfactual questions remove an object that takes part in a factual collision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import comb

import numpy as np

from tvr.clevrer.programs.facts import SceneFacts
from tvr.clevrer.questions import templates as T
from tvr.clevrer.questions.balance import ANSWERS, Balancer
from tvr.clevrer.questions.builders import (
    DESCRIPTIVE,
    Candidate,
    Choice,
    Runner,
    VideoView,
    draw,
    explanatory_choices,
    explanatory_target,
    pair,
    pair_choices,
    pick,
)

RELEASE_VIDEOS = 20_000
RELEASE_COUNTS: dict[str, int] = {
    "descriptive": 219_918,
    "explanatory": 33_811,
    "predictive": 14_298,
    "counterfactual": 37_253,
}


@dataclass(frozen=True)
class QuestionConfig:
    """Questions per video by type, sub-type shares, option counts (see the module docstring)."""

    descriptive: float = RELEASE_COUNTS["descriptive"] / RELEASE_VIDEOS
    explanatory: float = RELEASE_COUNTS["explanatory"] / RELEASE_VIDEOS
    predictive: float = RELEASE_COUNTS["predictive"] / RELEASE_VIDEOS
    counterfactual: float = RELEASE_COUNTS["counterfactual"] / RELEASE_VIDEOS
    subtypes: tuple[tuple[str, float], ...] = (
        ("count", 0.30),
        ("exist", 0.25),
        ("query_color", 0.17),
        ("query_shape", 0.15),
        ("query_material", 0.13),
    )
    #: probabilities of 2, 3 and 4 options
    explanatory_options: tuple[float, float, float] = (0.05, 0.15, 0.80)
    counterfactual_options: tuple[float, float, float] = (0.10, 0.30, 0.60)
    negated: float = 0.3
    #: candidate questions drawn (and executed) per descriptive sub-type and video
    pool_size: int = 24
    #: targets / removed objects tried per multiple-choice question
    tries: int = 6

    def __post_init__(self) -> None:
        for name in ("descriptive", "explanatory", "predictive", "counterfactual"):
            if getattr(self, name) < 0:
                raise ValueError(f"QuestionConfig.{name}: must be >= 0")
        names = [s for s, _ in self.subtypes]
        if set(names) - set(ANSWERS) or len(set(names)) != len(names):
            raise ValueError(f"QuestionConfig.subtypes: names must be distinct, from {sorted(ANSWERS)}")
        for name in ("explanatory_options", "counterfactual_options"):
            p = getattr(self, name)
            if min(p) < 0 or abs(sum(p) - 1) > 1e-9:
                raise ValueError(f"QuestionConfig.{name}: 3 probabilities summing to 1")
        if not 0 <= self.negated <= 1:
            raise ValueError("QuestionConfig.negated: a probability")
        if self.pool_size < 1 or self.tries < 1:
            raise ValueError("QuestionConfig.pool_size and tries: at least 1")

    def means(self) -> dict[str, float]:
        """Mean questions per video of each type."""
        return {
            "descriptive": self.descriptive,
            "explanatory": self.explanatory,
            "predictive": self.predictive,
            "counterfactual": self.counterfactual,
        }


def generate_questions(
    facts: SceneFacts,
    rng: np.random.Generator,
    config: QuestionConfig | None = None,
    balancer: Balancer | None = None,
) -> list[dict]:
    """The questions of one video, numbered from 0, descriptive first then the three others.

    `balancer` carries answer and type counts across videos (one per shard, videos in order);
    without one, answers are balanced within this video only.
    """
    config = config or QuestionConfig()
    balancer = balancer if balancer is not None else Balancer()
    view = VideoView(facts, Runner(facts))
    plan = balancer.plan(config.means(), rng)
    out: list[dict] = []
    out += _descriptive(view, rng, config, balancer, plan["descriptive"])
    out += _explanatory(view, rng, config, plan["explanatory"])
    out += _predictive(view, rng, plan["predictive"])
    out += _counterfactual(view, rng, config, plan["counterfactual"])
    for k, q in enumerate(out):
        q["question_id"] = k
    questions = [_layout(q) for q in out]
    for q in questions:
        if q["question_type"] != "descriptive":
            balancer.record(q)
    return questions


def _layout(q: dict) -> dict:
    """Key order of the release."""
    if q["question_type"] == "descriptive":
        keys = ("question_id", "question", "question_type", "question_subtype", "program", "answer")
    else:
        keys = ("question_id", "question", "question_type", "program", "choices")
    return {k: q[k] for k in keys}


# ---- descriptive -------------------------------------------------------------------------
def _pool(view: VideoView, rng: np.random.Generator, subtype: str,
          size: int) -> dict[str, list[Candidate]]:
    """Candidate questions of a sub-type grouped by their answers (within the answer space)."""
    builders = DESCRIPTIVE[subtype]
    space = set(ANSWERS[subtype])
    seen: set[str] = set()
    pool: dict[str, list[Candidate]] = {}
    found = 0
    for _ in range(3 * size):
        if found >= size:
            break
        cand = builders[int(rng.integers(len(builders)))](view, rng)
        if cand is None or cand.text in seen:
            continue
        seen.add(cand.text)
        answer = view.runner.answer(cand.program)
        if answer is None or answer not in space:
            continue
        pool.setdefault(answer, []).append(cand)
        found += 1
    return pool


def _take(view: VideoView, rng: np.random.Generator, subtype: str,
          pool: dict[str, list[Candidate]], balancer: Balancer,
          asked: set[str]) -> dict | None:
    """The next question of a sub-type: the least-used feasible answer, a family at random."""
    while True:
        for a in [a for a, cands in pool.items() if not cands]:
            del pool[a]
        answer = balancer.pick(subtype, pool, rng)
        if answer is None:
            return None
        cands = pool[answer]
        families = sorted({c.family for c in cands})
        family = families[int(rng.integers(len(families)))]
        options = [k for k, c in enumerate(cands) if c.family == family]
        cand = cands.pop(options[int(rng.integers(len(options)))])
        if cand.text in asked:
            continue
        if any(view.runner.answer(v) != answer for v in cand.variants):
            continue
        return {
            "question": cand.text,
            "question_type": "descriptive",
            "question_subtype": subtype,
            "program": list(cand.program),
            "answer": answer,
        }


def _descriptive(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                 balancer: Balancer, n: int) -> list[dict]:
    names = [s for s, _ in config.subtypes]
    weights = [w for _, w in config.subtypes]
    pools: dict[str, dict[str, list[Candidate]]] = {}
    asked: set[str] = set()
    out: list[dict] = []
    while len(out) < n and sum(weights) > 0:
        k = draw(rng, weights)
        subtype = names[k]
        if subtype not in pools:
            pools[subtype] = _pool(view, rng, subtype, config.pool_size)
        q = _take(view, rng, subtype, pools[subtype], balancer, asked)
        if q is None:
            weights[k] = 0.0
            continue
        asked.add(q["question"])
        balancer.record(q)
        out.append(q)
    return out


# ---- multiple choice ---------------------------------------------------------------------
def _n_options(rng: np.random.Generator, probs: Sequence[float]) -> int:
    return 2 + draw(rng, probs)


def _select(
    labelled: Sequence[tuple[Choice, str, int]],
    k: int,
    rng: np.random.Generator,
    min_correct: int,
    min_wrong: int,
) -> list[tuple[Choice, str]] | None:
    """k options with a Binomial(k, 1/2) number correct, within the minimums and what exists.

    `labelled` holds (choice, answer, priority); lower priority values are taken first.
    """
    groups: dict[str, list[tuple[Choice, str, int]]] = {"correct": [], "wrong": []}
    for c, a, p in labelled:
        groups[a].append((c, a, p))
    for name, items in groups.items():
        order = rng.permutation(len(items))
        groups[name] = sorted((items[i] for i in order), key=lambda t: t[2])
    n_c, n_w = len(groups["correct"]), len(groups["wrong"])
    k = min(k, n_c + n_w)
    lo, hi = max(min_correct, k - n_w), min(n_c, k - min_wrong)
    if k < 2 or lo > hi:
        return None
    n_correct = draw(rng, [float(comb(k, j)) if lo <= j <= hi else 0.0 for j in range(k + 1)])
    chosen = groups["correct"][:n_correct] + groups["wrong"][: k - n_correct]
    order = rng.permutation(len(chosen))
    return [(chosen[i][0], chosen[i][1]) for i in order]


def _mc(text: str, qtype: str, program: Sequence[str],
        options: Sequence[tuple[Choice, str]]) -> dict:
    return {
        "question": text,
        "question_type": qtype,
        "program": list(program),
        "choices": [
            {"choice_id": i, "choice": c.text, "program": list(c.program), "answer": a}
            for i, (c, a) in enumerate(options)
        ],
    }


def _label(view: VideoView, choices: Sequence[Choice], program: Sequence[str],
           priority: Mapping[tuple, int] | None = None) -> list[tuple[Choice, str, int]]:
    out = []
    for c in choices:
        a = view.runner.choice(c.program, program)
        if a in ("correct", "wrong"):
            out.append((c, a, (priority or {}).get(c.key, 0)))
    return out


def _event_frame(view: VideoView, key: tuple) -> int | None:
    if key[0] == "collision":
        return view.pairs[key[1]][0].frame
    if key[0] == "in":
        return view.ins[key[1]][0].frame
    return None


def _explanatory(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                 n: int) -> list[dict]:
    out: list[dict] = []
    used: set[tuple] = set()
    for _ in range(n * config.tries):
        if len(out) >= n:
            break
        target = explanatory_target(view, rng)
        if target is None:
            continue
        negate = bool(rng.random() < config.negated)
        key = (target.kind, target.objects)
        if key in used:
            continue
        program = ["events", *target.program, "filter_ancestor", "belong_to"]
        if negate:
            program.append("negate")
        choices = explanatory_choices(view, target, rng)
        # events after the target, and objects not yet in view then, cannot cause it: kept
        # only as a last resort
        priority = {}
        for c in choices:
            if c.kind == "object":
                frame = view.first_seen.get(c.key[1])
            else:
                frame = _event_frame(view, c.key)
            priority[c.key] = int(frame is not None and frame > (target.frame or 0))
        labelled = _label(view, choices, program, priority)
        # at least one option is responsible and, asked negated, one is not
        options = _select(labelled, _n_options(rng, config.explanatory_options), rng, 1,
                          int(negate))
        if options is None:
            continue
        used.add(key)
        form = "not_responsible" if negate else "responsible"
        text = pick(rng, T.EXPLANATORY[form]).format(target=target.text)
        out.append(_mc(text, "explanatory", program, options))
    return out


def _predictive(view: VideoView, rng: np.random.Generator, n: int) -> list[dict]:
    if n <= 0:
        return []
    program = ["unseen_events", "belong_to"]
    labelled = _label(view, pair_choices(view, rng), program)
    correct = [c for c, a, _ in labelled if a == "correct"]
    wrong = [c for c, a, _ in labelled if a == "wrong"]
    out: list[dict] = []
    for i in rng.permutation(len(correct))[:n]:
        if not wrong:
            break
        right = correct[int(i)]
        near = [w for w in wrong if set(w.key[1]) & set(right.key[1])]
        options = near if near and rng.random() < 0.5 else wrong
        distractor = options[int(rng.integers(len(options)))]
        pairs = [(right, "correct"), (distractor, "wrong")]
        if rng.random() < 0.5:
            pairs.reverse()
        out.append(_mc(pick(rng, T.PREDICTIVE), "predictive", program, pairs))
    return out


def _counterfactual(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                    n: int) -> list[dict]:
    facts = view.facts
    factual_pairs = {pair(*e.objects) for e in facts.factual.events if e.kind == "collision"}
    movers = sorted({o for p in factual_pairs for o in p} & set(facts.counterfactual))
    if n <= 0 or not movers:
        return []
    out: list[dict] = []
    used: set[tuple] = set()
    for _ in range(n * config.tries):
        if len(out) >= n:
            break
        x = movers[int(rng.integers(len(movers)))]
        negate = bool(rng.random() < config.negated)
        if (x, negate) in used:
            continue
        ref = view.obj(x, rng)
        if ref is None:
            continue
        program = [*ref.program, "counterfact_events", "belong_to"]
        if negate:
            program.append("negate")
        cf_pairs = {pair(*e.objects) for e in facts.counterfactual[x].events
                    if e.kind == "collision"}
        interesting = factual_pairs | cf_pairs
        choices = pair_choices(view, rng, exclude=(x,))
        priority = {c.key: int(c.key[1] not in interesting) for c in choices}
        labelled = _label(view, choices, program, priority)
        options = _select(labelled, _n_options(rng, config.counterfactual_options), rng, 1, 1)
        if options is None:
            continue
        used.add((x, negate))
        form = "not_happen" if negate else "happen"
        text = pick(rng, T.COUNTERFACTUAL[form]).format(obj=ref.text)
        out.append(_mc(text, "counterfactual", program, options))
    return out

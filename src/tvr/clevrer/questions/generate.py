"""One video's questions in the released layout: `generate_questions(facts, rng, config)`.

Every answer is what the program executor gives for the question's program on the video's facts
(`tvr.clevrer.programs.executor`); a question (or option) whose program fails, whose answer
changes when its moment is moved a few frames, or whose answer another reading of a convention
changes (`Runner.robust`: same-frame order, end frame 125, moving threshold +-15%, direction
+-10 degrees) is not emitted. Layout (as the release, plus tvr's sub-type and family):
descriptive `{question_id, question, question_type, question_subtype, question_family, program,
answer}` and multiple choice `{question_id, question, question_type, program, choices:
[{choice_id, choice, program, answer: "correct" | "wrong"}]}`; a choice is scored by running its
program followed by the question's. Answers are strings: counts "0".."5", "yes"/"no", attribute
words. Balance (descriptive answers within template families, option labels within what the
words show) is `tvr.clevrer.questions.balance`'s.

Decisions the paper leaves open (all fields of `QuestionConfig`):
- Questions per video: the release's means, 219,918 / 33,811 / 14,298 / 37,253 questions of the
  four types over 20,000 videos (10.996, 1.691, 0.715, 1.863 per video, 15.26 in all).
- Descriptive sub-type shares: the paper shows them only as a pie (figure 3) without numbers,
  but its Q-type random row fixes their mix: a random answer within the sub-type's answer space
  (6 counts, yes/no, 8 colours, 3 shapes, 2 materials) is right 29.2% of the time. Count 0.33,
  exist 0.21, query colour 0.21, shape 0.13, material 0.12 give 29.0% (the shares 0.30 / 0.25 /
  0.17 / 0.15 / 0.13 used before gave 31.1%).
- Options per question: explanatory 2/3/4 with probabilities 0.05/0.15/0.80 and counterfactual
  0.10/0.30/0.60, chosen so that a random answerer's per-question accuracy (the mean of 2^-k)
  is 8.1% and 10.0%, the paper's Q-type random figures (8.1% and 10.3%, table 2); predictive
  always 2 (random 25%, the paper's 25.5%).
- Correct options: the number of correct options is drawn Binomial(k, 1/2) (the paper balances
  correct and wrong options), steered towards the question form's balance, conditioned on at
  least one responsible option for explanatory (and one not responsible when asked negated), at
  least one correct and one wrong for counterfactual (the paper's Q-type frequent baseline gets
  1.0% of counterfactual questions right, so nearly all mix both), and exactly one of each for
  predictive (its frequent baseline gets 0.0%). Which options fill the places: those whose
  cell of what the words show is behind on the label, then (explanatory) events before the
  target and objects seen by then, (counterfactual) pairs that collide in the factual or the
  what-if run.
- Negated forms ("not responsible", "will not happen") are asked with probability `negated`.
- A predictive question needs a collision after the shown frames between two objects seen in the
  video, and a plausible distractor (`_predictive`); videos without one ask none, and a shared
  `Balancer` asks up to 2 more in later videos.
- Counterfactual questions remove an object that takes part in a factual collision.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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
#: predictive distractors: frames after the last shown one that a constant-velocity path is
#: followed (2 s), and the closest approach (pixels) under which a pair is a plausible collision
PREDICT_HORIZON = 50.0
PLAUSIBLE_GAP_PX = 80.0
PLAUSIBLE_GAP = 2.0  # scene units, where the facts know the floor (about 3 object widths)
#: the balancer's cell counting predictive distractors nearer ("correct") or farther ("wrong")
#: than the true pair under constant velocity
NEARER = ("predictive", "distractor nearer at constant velocity")
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
        ("count", 0.33),
        ("exist", 0.21),
        ("query_color", 0.21),
        ("query_shape", 0.13),
        ("query_material", 0.12),
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
    drops: Counter | None = None,
) -> list[dict]:
    """The questions of one video, numbered from 0, descriptive first then the three others.

    `balancer` carries answer, label and type counts across videos (one per shard, videos in
    order); without one, answers are balanced within this video only. `drops` (if given) counts
    the candidate questions and options each robustness rule turned away.
    """
    config = config or QuestionConfig()
    balancer = balancer if balancer is not None else Balancer()
    view = VideoView(facts, Runner(facts, drops))
    plan = balancer.plan(config.means(), rng)
    out: list[dict] = []
    out += _descriptive(view, rng, config, balancer, plan["descriptive"])
    out += _explanatory(view, rng, config, balancer, plan["explanatory"])
    out += _predictive(view, rng, balancer, plan["predictive"])
    out += _counterfactual(view, rng, config, balancer, plan["counterfactual"])
    for k, q in enumerate(out):
        q["question_id"] = k
    questions = [_layout(q) for q in out]
    for q in questions:
        if q["question_type"] != "descriptive":
            balancer.record(q)
    return questions


def _layout(q: dict) -> dict:
    """Key order of the release (tvr adds the descriptive sub-type and template family)."""
    if q["question_type"] == "descriptive":
        keys = ("question_id", "question", "question_type", "question_subtype",
                "question_family", "program", "answer")
    else:
        keys = ("question_id", "question", "question_type", "program", "choices")
    return {k: q[k] for k in keys}


# ---- descriptive -------------------------------------------------------------------------
def _pool(view: VideoView, rng: np.random.Generator, subtype: str,
          size: int) -> dict[str, dict[str, list[Candidate]]]:
    """Candidate questions of a sub-type by family and answer (within the answer space); only
    those whose answer survives every convention and moving its moment a few frames."""
    builders = DESCRIPTIVE[subtype]
    space = set(ANSWERS[subtype])
    seen: set[str] = set()
    pool: dict[str, dict[str, list[Candidate]]] = {}
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
        if any(view.runner.answer(v) != answer for v in cand.variants):
            view.runner.drops["moment_shift"] += 1
            continue
        if view.runner.robust(cand.program) is None:
            continue
        pool.setdefault(cand.family, {}).setdefault(answer, []).append(cand)
        found += 1
    return pool


def _take(view: VideoView, rng: np.random.Generator, subtype: str,
          pool: dict[str, dict[str, list[Candidate]]], balancer: Balancer,
          asked: set[str]) -> dict | None:
    """The next question of a sub-type: a family and an answer the balancer accepts."""
    while True:
        feasible = {f: [a for a, cands in by.items() if cands] for f, by in pool.items()}
        chosen = balancer.choose(subtype, {f: a for f, a in feasible.items() if a}, rng)
        if chosen is None:
            return None
        family, answer = chosen
        cands = pool[family][answer]
        cand = cands.pop(int(rng.integers(len(cands))))
        if cand.text in asked:
            continue
        return {
            "question": cand.text,
            "question_type": "descriptive",
            "question_subtype": subtype,
            "question_family": family,
            "program": list(cand.program),
            "answer": answer,
        }


def _descriptive(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                 balancer: Balancer, n: int) -> list[dict]:
    names = [s for s, _ in config.subtypes]
    shares = [w / sum(w for _, w in config.subtypes) for _, w in config.subtypes]
    open_ = [w > 0 for _, w in config.subtypes]
    pools: dict[str, dict[str, dict[str, list[Candidate]]]] = {}
    asked: set[str] = set()
    out: list[dict] = []
    while len(out) < n and any(open_):
        # each sub-type by its share, plus what the shard's earlier questions fell short of it
        # (a video that cannot ask a sub-type's balanced answers leaves it to later videos)
        done = [sum(balancer.answers[name].values()) for name in names]
        total = sum(done) + 1
        weights = [
            (share + max(share * total - d, 0.0)) if ok else 0.0
            for share, d, ok in zip(shares, done, open_, strict=True)
        ]
        k = draw(rng, weights)
        subtype = names[k]
        if subtype not in pools:
            pools[subtype] = _pool(view, rng, subtype, config.pool_size)
            for family, by in sorted(pools[subtype].items()):
                balancer.observe(family, by)
        q = _take(view, rng, subtype, pools[subtype], balancer, asked)
        if q is None:
            open_[k] = False
            continue
        asked.add(q["question"])
        balancer.record(q)
        out.append(q)
    return out


# ---- multiple choice ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Option:
    """A labelled candidate option: its choice, answer, what the text shows of it (`cell`) and
    its priority (lower first, after the cell's balance)."""

    choice: Choice
    label: str
    cell: tuple
    priority: int = 0


def _n_options(rng: np.random.Generator, probs: Sequence[float]) -> int:
    return 2 + draw(rng, probs)


def _select(
    options: Sequence[_Option],
    k: int,
    rng: np.random.Generator,
    min_correct: int,
    min_wrong: int,
    form: tuple,
    balancer: Balancer,
) -> list[_Option] | None:
    """k options, a Binomial(k, 1/2) number of them correct (steered to the form's balance)
    within the minimums and what exists; each place goes to the option whose cell is most
    behind on its label, then by priority, ties at random. Counted in the balancer."""
    groups: dict[str, list[_Option]] = {"correct": [], "wrong": []}
    for o in options:
        groups[o.label].append(o)
    n_c, n_w = len(groups["correct"]), len(groups["wrong"])
    k = min(k, n_c + n_w)
    lo, hi = max(min_correct, k - n_w), min(n_c, k - min_wrong)
    if k < 2 or lo > hi:
        return None
    n_correct = balancer.steered_correct(form, k, lo, hi, rng)
    chosen: list[_Option] = []
    for label, count in (("correct", n_correct), ("wrong", k - n_correct)):
        pool = list(groups[label])
        for _ in range(count):
            keys = [(balancer.behind(o.cell, label), o.priority, float(rng.random()))
                    for o in pool]
            best = min(range(len(pool)), key=keys.__getitem__)
            chosen.append(pool.pop(best))
            balancer.record_options(form, [(chosen[-1].cell, label)])
    order = rng.permutation(len(chosen))
    return [chosen[i] for i in order]


def _mc(text: str, qtype: str, program: Sequence[str], options: Sequence[_Option]) -> dict:
    return {
        "question": text,
        "question_type": qtype,
        "program": list(program),
        "choices": [
            {"choice_id": i, "choice": o.choice.text, "program": list(o.choice.program),
             "answer": o.label}
            for i, o in enumerate(options)
        ],
    }


def _label(view: VideoView, choices: Sequence[Choice], program: Sequence[str]
           ) -> list[tuple[Choice, str]]:
    """Each choice with its robust answer; choices a convention can flip are left out."""
    out = []
    for c in choices:
        a = view.runner.robust_choice(c.program, program)
        if a in ("correct", "wrong"):
            out.append((c, a))
    return out


def _event_frame(view: VideoView, key: tuple) -> int | None:
    if key[0] == "collision":
        return view.pairs[key[1]][0].frame
    if key[0] == "in":
        return view.ins[key[1]][0].frame
    return None


def _choice_objects(key: tuple) -> set[int]:
    return set(key[1]) if isinstance(key[1], tuple) else {key[1]}


def _explanatory(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                 balancer: Balancer, n: int) -> list[dict]:
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
        options = []
        for c, label in _label(view, explanatory_choices(view, target, rng), program):
            # events after the target, and objects not yet in view then, cannot cause it: kept
            # only as a last resort
            if c.kind == "object":
                frame = view.first_seen.get(c.key[1])
            else:
                frame = _event_frame(view, c.key)
            late = int(frame is not None and frame > (target.frame or 0))
            overlap = bool(_choice_objects(c.key) & set(target.objects))
            options.append(_Option(c, label, ("explanatory", negate, c.kind, overlap), late))
        # at least one option is responsible and, asked negated, one is not
        chosen = _select(options, _n_options(rng, config.explanatory_options), rng, 1,
                         int(negate), ("explanatory", negate), balancer)
        if chosen is None:
            continue
        used.add(key)
        form = "not_responsible" if negate else "responsible"
        text = pick(rng, T.EXPLANATORY[form]).format(target=target.text)
        out.append(_mc(text, "explanatory", program, chosen))
    return out


def closest_approach(xy: np.ndarray, velocity: np.ndarray, a: int, b: int,
                     horizon: float) -> float:
    """The least distance of objects a and b over [0, horizon] frames if both keep their
    velocity (positions and velocities per frame in any one plane: the floor, or the image)."""
    dp = xy[b] - xy[a]
    dv = velocity[b] - velocity[a]
    speed2 = float(dv @ dv)
    t = 0.0 if speed2 == 0 else float(np.clip(-(dp @ dv) / speed2, 0.0, horizon))
    return float(np.linalg.norm(dp + dv * t))


def _predictive(view: VideoView, rng: np.random.Generator, balancer: Balancer,
                n: int) -> list[dict]:
    """Predictive questions: a collision after the video against a plausible one that does not
    happen: a pair that collides in some what-if run after the video, or whose constant-velocity
    paths from the last shown frame pass within `PLAUSIBLE_GAP` units on the floor (or
    `PLAUSIBLE_GAP_PX` in the image, for facts without the world) in the next 2 s. The
    distractor's constant-velocity closest approach is often nearer than the true pair's, so
    extrapolating the last frame does not answer it: nearer
    ones are taken whenever the balancer's count of them is behind, so about half are nearer
    where the videos offer that many, and a rule that picks the farther pair gains no more."""
    facts = view.facts
    motion = facts.factual.motion
    if n <= 0 or motion is None:
        return []
    last = facts.n_shown_frames - 1
    if last >= len(motion.xy):
        return []
    if motion.floor is not None:  # the world's floor plane, where it is known
        floor = np.asarray(motion.floor, dtype=float)
        xy = np.nan_to_num(floor[last])
        vel = np.nan_to_num(floor[last] - floor[last - 1])
        near = PLAUSIBLE_GAP
    else:  # the image: perspective shrinks far gaps, but the order of near ones holds
        xy = np.nan_to_num(np.asarray(motion.xy[last], dtype=float))
        vel = np.nan_to_num(np.asarray(motion.velocity[last], dtype=float))
        near = PLAUSIBLE_GAP_PX
    what_if = {
        pair(*e.objects)
        for run in facts.counterfactual.values()
        for e in run.events
        if e.kind == "collision" and e.frame >= facts.n_shown_frames
    }
    program = ["unseen_events", "belong_to"]
    labelled = _label(view, pair_choices(view, rng), program)
    correct = [c for c, a in labelled if a == "correct"]
    # a pair that collided in the video never collides again (the world's rule), so a model
    # could reject such a distractor without looking at the motion
    wrong = [c for c, a in labelled if a == "wrong" and c.key[1] not in view.pairs]
    gap = {c.key[1]: closest_approach(xy, vel, *c.key[1], PREDICT_HORIZON) for c, _ in labelled}
    plausible = [w for w in wrong if w.key[1] in what_if or gap[w.key[1]] < near]
    out: list[dict] = []
    for i in rng.permutation(len(correct))[:n]:
        right = correct[int(i)]
        nearer = [w for w in plausible if gap[w.key[1]] <= gap[right.key[1]]]
        farther = [w for w in plausible if gap[w.key[1]] > gap[right.key[1]]]
        if not nearer and not farther:
            view.runner.drops["no_plausible_distractor"] += 1
            continue
        # nearer and farther distractors as evenly as the videos allow (nearer ones are rarer)
        if nearer and (not farther or balancer.behind(NEARER, "correct") <= 0):
            group, side = nearer, "correct"
        else:
            group, side = farther, "wrong"
        balancer.record_options(NEARER, [(NEARER, side)])
        distractor = group[int(rng.integers(len(group)))]
        pairs = [_Option(right, "correct", ("predictive",)),
                 _Option(distractor, "wrong", ("predictive",))]
        if rng.random() < 0.5:
            pairs.reverse()
        balancer.record_options(("predictive",), [(o.cell, o.label) for o in pairs])
        out.append(_mc(pick(rng, T.PREDICTIVE), "predictive", program, pairs))
    return out


def _counterfactual(view: VideoView, rng: np.random.Generator, config: QuestionConfig,
                    balancer: Balancer, n: int) -> list[dict]:
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
        options = [
            _Option(c, label, ("counterfactual", negate, "collision", False),
                    int(c.key[1] not in interesting))
            for c, label in _label(view, pair_choices(view, rng, exclude=(x,)), program)
        ]
        chosen = _select(options, _n_options(rng, config.counterfactual_options), rng, 1, 1,
                         ("counterfactual", negate), balancer)
        if chosen is None:
            continue
        used.add((x, negate))
        form = "not_happen" if negate else "happen"
        text = pick(rng, T.COUNTERFACTUAL[form]).format(obj=ref.text)
        out.append(_mc(text, "counterfactual", program, chosen))
    return out

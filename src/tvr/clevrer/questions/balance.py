"""Answer balance over a shard's videos: descriptive answers within each template family, multiple-
choice labels within each kind of option, and question-type quotas.

The paper (section 3.2, appendix A) balances descriptive answers within each sub-type and samples
options "to balance the number of correct and wrong ones, and minimize text-only biases". Balance
within a sub-type is not enough: a question-only model learns the answers of each template
("Are there any stationary objects when the video ends?" was "yes" 70 times in 71), so tvr
balances within each template family, and multiple-choice labels within each cell of what the
text shows about an option.

- Descriptive. A family is a builder's template with what the text shows of it (the moment or
  event kind, which attributes a set phrase names, whether it names one of the event's;
  `Candidate.family`). Per family the balancer counts the answers asked and, per video, which
  answers the video could give. The family's common answers are those feasible in at least
  `COMMON_SHARE` of the videos that could ask it; an answer is asked only while it is at most
  `SLACK` ahead of the family's least-asked common answer (rarer answers are always welcome).
  A family with fewer than `MIN_ANSWERS` common answers (two for yes/no and materials) keeps
  pace with its rare ones, and one with fewer answers seen is not asked: "How many objects
  enter the scene?" is 2 or 3 in most videos, so it is asked only as often as it is 1 or 4
  (`lead`). An answer a video offers is taken with the chance that evens out how often videos
  offer each (`pace`), so the slack of each shard does not add up. Among the
  (family, answer) pairs allowed, the answer least asked in the sub-type wins (the paper's
  balance within a sub-type), then the one least asked in its family, then chance. A family
  whose common answers are rarely all feasible is asked less: its answers stay balanced.
- Multiple choice. A cell is what a question-only model sees of an option: the question type and
  form (responsible / not responsible, happen / not happen) and the option's kind (a collision,
  an entering, the presence of an object) and whether it names an object of the question's
  event. The number of correct options of a question is Binomial(k, 1/2) within what the video
  offers, steered towards the question form's balance (`steered_correct`); the correct and wrong
  places go first to options whose cell is behind on that label (`behind`).
- Event kind. Families about entering ("How many spheres enter the scene?") and about exiting
  share their templates at `EXIT_SHARE` exits. Videos hold about half as many exits as
  entries, so without help the exit families fall behind; within each sub-type the balancer
  counts the two kinds asked; a kind ahead of its share is not asked when the video also
  offers the other, nor at all once it leads by more than `SLACK` (`kind_lead`), as sub-types
  catch up on their shares.
- Types. A video asks floor(m) or floor(m) + 1 questions of a type with mean m (the fraction
  drawn at random), plus what earlier videos seen by the same balancer fell short of (or minus
  what they asked too many; at most `MAX_CATCH_UP` either way), so videos without, say, unseen
  collisions do not lower the dataset's predictive ratio.

One balancer per shard, fed its videos in index order, gives the same questions on every run.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

#: the answer space of each descriptive sub-type (appendix A); counts are "0".."5"
ANSWERS: dict[str, tuple[str, ...]] = {
    "count": tuple(str(k) for k in range(6)),
    "exist": ("yes", "no"),
    "query_color": COLORS,
    "query_shape": SHAPES,
    "query_material": MATERIALS,
}

QUESTION_TYPES: tuple[str, ...] = ("descriptive", "explanatory", "predictive", "counterfactual")
LABELS: tuple[str, str] = ("correct", "wrong")

MAX_CATCH_UP = 2


def event_kind(family: str) -> str | None:
    """"in" or "out" for a family about entering or exiting ("count/exit/shape",
    "exist/enter_after/collision/any", "query_color/exit_order/first"), else None."""
    parts = family.split("/")
    if len(parts) < 2:
        return None
    head = parts[1].split("_", 1)[0]
    return {"enter": "in", "exit": "out"}.get(head)

#: an answer of a family is common when this share of the videos that could ask the family
#: could give it
COMMON_SHARE = 0.05
#: how far an answer may run ahead of its family's least-asked common answer
SLACK = 1
#: a family is balanced over at least this many answers (or its whole answer space)
MIN_ANSWERS = 3
#: the share of exits among the descriptive questions about entering or exiting (the templates'
#: 0.6 / 0.4)
EXIT_SHARE = 0.4
#: how strongly the number of correct options follows the form's balance (0: pure binomial)
STEER = 0.05


@dataclass
class Balancer:
    """Counts over the videos of one shard: answers per family and sub-type, labels per option
    cell and form, questions per type."""

    answers: dict[str, Counter] = field(default_factory=lambda: {s: Counter() for s in ANSWERS})
    families: dict[str, Counter] = field(default_factory=dict)
    family_videos: Counter = field(default_factory=Counter)
    feasible: dict[str, Counter] = field(default_factory=dict)
    cells: dict[Hashable, Counter] = field(default_factory=dict)
    forms: dict[Hashable, Counter] = field(default_factory=dict)
    types: Counter = field(default_factory=Counter)
    kinds: dict[str, Counter] = field(default_factory=dict)
    videos: int = 0

    # ---- descriptive ------------------------------------------------------------------------
    def observe(self, family: str, answers: Iterable[str]) -> None:
        """Count one video that could ask `family` with these answers."""
        self.family_videos[family] += 1
        self.feasible.setdefault(family, Counter()).update(set(answers))

    def lead(self, family: str, answer: str) -> int:
        """How far the answer is ahead of the family's least-asked answer that it must keep pace
        with (<= 0: it may be asked).

        The family's answers to balance are its common ones (feasible in `COMMON_SHARE` of the
        videos that could ask it). With fewer than `MIN_ANSWERS` of them (or its whole answer
        space, if smaller), its words narrow the answer down too far: then every answer seen
        sets the pace, and a family with fewer answers seen is not asked. An answer outside
        that set is rare and always welcome.
        """
        base = self._base(family)
        if base is None:
            return SLACK
        if answer not in base:
            return -1
        asked = self.families.get(family, Counter())
        return asked[answer] - min(asked[a] for a in base)

    def _base(self, family: str) -> list[str] | None:
        """The answers a family is balanced over (see `lead`), or None if it is not asked."""
        seen = self.feasible.get(family, Counter())
        need = COMMON_SHARE * self.family_videos[family]
        common = [a for a, n in seen.items() if n >= need]
        want = min(MIN_ANSWERS, len(ANSWERS[family.split("/", 1)[0]]))
        if len(common) >= want:
            return common
        if len(seen) >= want:
            return list(seen)
        return None

    def pace(self, family: str, answer: str) -> float:
        """The chance of taking an answer when the video offers it: the rarest balanced answer's
        share of videos over this one's. Each answer is then taken about equally often per
        video, so no answer runs ahead by the `SLACK` of every shard (a family that nearly
        always offers "yes" would otherwise be one "yes" ahead in each shard)."""
        base = self._base(family)
        if base is None or answer not in base:
            return 1.0
        seen = self.feasible[family]
        return min(seen[a] for a in base) / max(seen[answer], 1)

    def choose(
        self, subtype: str, feasible: Mapping[str, Iterable[str]], rng: np.random.Generator
    ) -> tuple[str, str] | None:
        """(family, answer) for the next question of a sub-type, or None if every family this
        video offers is ahead on every answer it can give.

        `feasible` maps each family to the answers this video can give it.
        """
        options: dict[str, list[str]] = {}
        for family in sorted(feasible):
            ok = [a for a in sorted(set(feasible[family]))
                  if self.lead(family, a) < SLACK and rng.random() < self.pace(family, a)]
            if ok:
                options[family] = ok
        if not options:
            return None
        options = self._kind_caught_up(subtype, options)
        if not options:
            return None
        # the sub-type's least-asked answer among them, then the family's, then at random
        sub = self.answers[subtype]
        keyed = [
            ((sub[a], self.families.get(f, Counter())[a]), f, a)
            for f, answers in options.items() for a in answers
        ]
        low = min(k for k, _, _ in keyed)
        best = [(f, a) for k, f, a in keyed if k == low]
        return best[int(rng.integers(len(best)))]

    def kind_lead(self, subtype: str) -> dict[str, float]:
        """How many questions each event kind ("in", "out") is ahead of its template share
        among the sub-type's questions about entering or exiting (negative: behind)."""
        asked = self.kinds.get(subtype, Counter())
        total = asked["in"] + asked["out"]
        out = asked["out"] - EXIT_SHARE * total
        return {"out": out, "in": -out}

    def _kind_caught_up(self, subtype: str,
                        options: dict[str, list[str]]) -> dict[str, list[str]]:
        """The options without the event kind that is ahead of its share: always when it leads
        by more than `SLACK`, and by any amount when the video also offers the kind behind."""
        lead = self.kind_lead(subtype)
        offered = {event_kind(f) for f in options}
        drop = {k for k, v in lead.items()
                if v > SLACK or (v > 0 and {"in", "out"} <= offered)}
        return {f: a for f, a in options.items() if event_kind(f) not in drop}

    # ---- multiple choice --------------------------------------------------------------------
    def steered_correct(self, form: Hashable, k: int, lo: int, hi: int,
                        rng: np.random.Generator) -> int:
        """How many of k options are correct: Binomial(k, 1/2) on [lo, hi], steered so that the
        form's correct and wrong options stay balanced."""
        counts = self.forms.get(form, Counter())
        surplus = counts["correct"] - counts["wrong"]
        weights = [
            math.comb(k, j) * math.exp(-STEER * (surplus + 2 * j - k) ** 2) if lo <= j <= hi
            else 0.0
            for j in range(k + 1)
        ]
        total = sum(weights)
        r = rng.random() * total
        for j, w in enumerate(weights):
            r -= w
            if r < 0 and w > 0:
                return j
        return max(j for j, w in enumerate(weights) if w > 0)

    def behind(self, cell: Hashable, label: str) -> int:
        """How far `label` leads the other label in a cell (negative: it is behind)."""
        c = self.cells.get(cell, Counter())
        other = LABELS[1] if label == LABELS[0] else LABELS[0]
        return c[label] - c[other]

    def record_options(self, form: Hashable, chosen: Iterable[tuple[Hashable, str]]) -> None:
        """Count the options asked: (cell, label) pairs of one question of `form`."""
        for cell, label in chosen:
            self.cells.setdefault(cell, Counter())[label] += 1
            self.forms.setdefault(form, Counter())[label] += 1

    # ---- types ------------------------------------------------------------------------------
    def plan(self, means: Mapping[str, float], rng: np.random.Generator) -> dict[str, int]:
        """How many questions of each type the next video should ask; counts it as seen."""
        out = {}
        for qtype, mean in means.items():
            base = int(np.floor(mean))
            n = base + int(rng.random() < mean - base)
            short = round(self.videos * mean - self.types[qtype])
            out[qtype] = max(n + min(max(short, -MAX_CATCH_UP), MAX_CATCH_UP), 0)
        self.videos += 1
        return out

    def record(self, question: Mapping) -> None:
        """Count one generated question: its type and, for descriptive, its answer (per
        sub-type, and per family when the question names one)."""
        self.types[question["question_type"]] += 1
        if question["question_type"] == "descriptive":
            self.answers[question["question_subtype"]][question["answer"]] += 1
            family = question.get("question_family")
            if family:
                self.families.setdefault(family, Counter())[question["answer"]] += 1
                kind = event_kind(family)
                if kind is not None:
                    self.kinds.setdefault(question["question_subtype"], Counter())[kind] += 1

    def add(self, questions: Iterable[Mapping], videos: int) -> None:
        """Count questions generated earlier for `videos` videos (e.g. earlier shards' files)."""
        for q in questions:
            self.record(q)
        self.videos += videos

    def spread(self, subtype: str) -> float:
        """max/min answer count of the sub-type over its whole answer space (inf if one is 0)."""
        counts = [self.answers[subtype][a] for a in ANSWERS[subtype]]
        return max(counts) / min(counts) if min(counts) else float("inf")

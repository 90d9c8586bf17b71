"""How much of an explanatory option's answer its words give away: a two-word rule, learned on the
training questions and scored on a test split, that sees only whether the question says "not" and
what kind of event or object the option names (a collision, an entering, "the presence of").

    python benchmarks/clevrer_explanatory_text_rule.py --train clevrer-10k-symbolic/questions/train.json \
        --test clevrer-10k-symbolic/questions/test.json clevrer-1k/questions/test.json
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from collections.abc import Iterator

from tvr.clevrer.data.questions import Choice, Question, read_questions


def explanatory(path: str) -> Iterator[Question]:
    """The explanatory questions of a question file."""
    for video in read_questions(path):
        for q in video.questions:
            if q.question_type == "explanatory" and q.choices:
                yield q


def words_key(q: Question, c: Choice) -> tuple[bool, str]:
    """What the rule sees: does the question say "not", and which kind of option is this."""
    text = c.choice
    if text.startswith("The presence of"):
        kind = "presence"
    elif "entering" in text:
        kind = "entering"
    else:
        kind = "collision"
    return "not" in q.question.split(), kind


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", required=True, help="training question file (with answers)")
    ap.add_argument("--test", required=True, nargs="+", help="question files to score")
    args = ap.parse_args()
    counts: dict[tuple[bool, str], Counter[str]] = defaultdict(Counter)
    for q in explanatory(args.train):
        for c in q.choices or ():
            counts[words_key(q, c)][c.answer or ""] += 1
    rule = {k: c.most_common(1)[0][0] for k, c in counts.items()}
    print("rule learned on", args.train)
    for (negated, kind), answer in sorted(rule.items()):
        c = counts[(negated, kind)]
        share = c[answer] / sum(c.values())
        asks = "not responsible" if negated else "responsible"
        print(f"  {asks:16s} {kind:9s} -> {answer:7s} ({share:.1%} of {sum(c.values())} options)")
    for path in args.test:
        options = right = questions = whole = 0
        for q in explanatory(path):
            all_right = True
            for c in q.choices or ():
                hit = rule.get(words_key(q, c)) == c.answer
                options, right, all_right = options + 1, right + hit, all_right and hit
            questions, whole = questions + 1, whole + all_right
        print(
            f"{path}: per option {100 * right / options:.1f} ({options} options), "
            f"per question {100 * whole / questions:.1f} ({questions} questions)"
        )


if __name__ == "__main__":
    main()

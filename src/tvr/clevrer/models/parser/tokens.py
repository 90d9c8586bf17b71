"""Words of questions and choices, and a token vocabulary with the seq2seq's special tokens.

`tokenize` lowercases and splits a sentence into words, the possessive "'s" as a word of its own
("the sphere's entering" -> the, sphere, 's, entering); other punctuation is dropped. A `Vocab`
numbers tokens with the specials first, as the official parser's vocabularies do: `<NULL>` (0,
padding), `<START>`, `<END>`, `<UNK>` (a word never seen in training). The executor skips
`<START>` and stops at `<END>`/`<NULL>`, so a decoded program can be run as it is.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PAD, START, END, UNK = "<NULL>", "<START>", "<END>", "<UNK>"
SPECIALS: tuple[str, ...] = (PAD, START, END, UNK)
PAD_ID, START_ID, END_ID, UNK_ID = range(4)

_WORD = re.compile(r"'s\b|[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """The words of a question or choice, lowercased; "'s" is a word, punctuation is dropped."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Vocab:
    """Tokens numbered from 0, the specials first."""

    tokens: tuple[str, ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.tokens[: len(SPECIALS)] != SPECIALS:
            raise ValueError(f"a vocabulary starts with {SPECIALS}, got {self.tokens[:4]}")
        object.__setattr__(self, "index", {t: i for i, t in enumerate(self.tokens)})

    @classmethod
    def build(cls, sequences: Iterable[Sequence[str]]) -> Vocab:
        """Every token of `sequences`, by decreasing count then name (so the numbering does not
        depend on the order the sequences come in)."""
        counts = Counter(t for seq in sequences for t in seq if t not in SPECIALS)
        ordered = sorted(counts, key=lambda t: (-counts[t], t))
        return cls(SPECIALS + tuple(ordered))

    def __len__(self) -> int:
        return len(self.tokens)

    def encode(self, tokens: Sequence[str], ends: bool = False) -> list[int]:
        """Ids of `tokens` (unknown ones as `<UNK>`), between `<START>` and `<END>` with `ends`."""
        ids = [self.index.get(t, UNK_ID) for t in tokens]
        return [START_ID, *ids, END_ID] if ends else ids

    def decode(self, ids: Iterable[int]) -> tuple[str, ...]:
        """Tokens of `ids` up to the first `<END>` or `<NULL>`, without `<START>`."""
        out = []
        for i in ids:
            i = int(i)
            if i in (END_ID, PAD_ID):
                break
            if i != START_ID:
                out.append(self.tokens[i] if 0 <= i < len(self.tokens) else UNK)
        return tuple(out)

    def to_json(self) -> list[str]:
        return list(self.tokens)

    @classmethod
    def from_json(cls, data: Any) -> Vocab:
        return cls(tuple(str(t) for t in data))

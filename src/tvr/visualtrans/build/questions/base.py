"""The pieces every question family uses: a draft question, the family table entry, the
episode a generator reads, and the balanced assembly of drafts into released items."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class EpisodeView:
    """What a generator reads of one episode: its metadata and its keyframes' image paths (as
    the released items write them: SCENE/SCENE_N_ROLE.jpg)."""

    episode: str
    scene: str
    meta: Any
    frames: dict[str, str]

    @property
    def start(self) -> str:
        return self.frames["start"]

    @property
    def end(self) -> str:
        return self.frames["end"]

    def mediums(self) -> list[str]:
        return [v for k, v in self.frames.items() if k.startswith("medium")]


@dataclass
class Draft:
    """One question before its options are ordered.

    choice: `correct` and `distractors` (option texts; 3 are drawn), or `ordered` (the options in
    their natural order, e.g. Layer 1, 2, ...; a window of at most 4 around the answer is
    shown) with `correct` one of them; `image_options`: the options are images appended to
    `images` and the texts are <image3> ... <image6>. count and set: `label`.
    `key` names the question independently of the metadata's answer ("FAMILY|EPISODE|..." with
    the question's parameters; the family is prefixed when not given), so two builds of one episode can be compared item by item.
    """

    family: str
    key: str
    scene: str
    episode: str
    images: list[str]
    stem: str
    answer_format: str
    correct: str | None = None
    distractors: tuple[str, ...] = ()
    ordered: tuple[str, ...] | None = None
    label: str | None = None
    mask: str | None = None
    sep: str = "\n"
    image_options: bool = False

    def __post_init__(self) -> None:
        if not self.key.startswith(self.family + "|"):
            self.key = f"{self.family}|{self.key}"

    @property
    def answer(self) -> str:
        """The answer's content (the correct option's text, the count, the set)."""
        return self.correct if self.answer_format == "choice" else str(self.label)  # type: ignore[return-value]


@dataclass(frozen=True)
class Family:
    """One question family: what it writes and how a released question is recognised."""

    name: str
    task_type: str
    answer_format: str
    scene_families: tuple[str, ...]
    generate: Callable[[EpisodeView, Context], list[Draft]]
    pattern: str  # a regular expression on the question's text (case-insensitive)
    doc: str = ""

    def matches(self, question: str) -> bool:
        return re.search(self.pattern, question.strip(), re.I) is not None


@dataclass
class Context:
    """Shared by the generators of one build: the seed and every episode (for distractors)."""

    seed: int
    episodes: list[EpisodeView] = field(default_factory=list)

    def rng(self, *parts: str) -> np.random.Generator:
        return np.random.default_rng([self.seed, *(zlib.crc32(p.encode()) for p in parts)])


def pick(rng: np.random.Generator, pool: Sequence[str], k: int) -> list[str]:
    """k distinct entries of `pool` (sorted first, so the draw depends on the seed alone)."""
    pool = sorted(set(pool))
    if k >= len(pool):
        return list(rng.permutation(pool)) if pool else []
    idx = rng.choice(len(pool), size=k, replace=False)
    return [pool[i] for i in idx]


def shuffled(rng: np.random.Generator, names: Sequence[str]) -> list[str]:
    return [names[i] for i in rng.permutation(len(names))]


def balanced_targets(n: int, rng: np.random.Generator, letters: int = 4) -> list[int]:
    """n answer positions, each of `letters` used n // letters or n // letters + 1 times."""
    targets = [i % letters for i in range(n)]
    return [targets[i] for i in rng.permutation(n)]


def render(draft: Draft, target: int, rng: np.random.Generator) -> dict[str, Any] | None:
    """The released item of a draft with its correct option at `target` where the options
    allow (None when a choice draft has fewer than 2 options)."""
    item: dict[str, Any] = {"task_type": "", "images": list(draft.images), "scene": draft.scene}
    if draft.answer_format != "choice":
        item.update(question=draft.stem, label=str(draft.label))
        return _with_mask(item, draft)
    if draft.ordered is not None:
        pool = list(draft.ordered)
        ci = pool.index(draft.correct)  # type: ignore[arg-type]
        n = min(4, len(pool))
        start = min(max(ci - target, 0), len(pool) - n)
        options = pool[start : start + n]
        letter = ci - start
    else:
        others = pick(rng, draft.distractors, 3)
        if not others:
            return None
        n = len(others) + 1
        letter = min(target, n - 1)
        options = [*others[:letter], draft.correct, *others[letter:]]  # type: ignore[list-item]
    if draft.image_options:
        item["images"] = list(draft.images) + options
        texts = [f"<image{3 + i}>" for i in range(n)]
    else:
        texts = options
    lines = [f"{LETTERS[i]}. {t}" for i, t in enumerate(texts)]
    item.update(question=draft.stem + "\n" + draft.sep.join(lines), label=LETTERS[letter])
    return _with_mask(item, draft)


def _with_mask(item: dict[str, Any], draft: Draft) -> dict[str, Any]:
    if draft.mask is not None:
        item["mask"] = draft.mask
    return item

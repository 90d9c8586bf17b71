"""Parse question files with a trained parser: the questions with parsed programs, and exact match.

`parse_questions` returns the videos with every question's and choice's program replaced by its
parse (answers and other fields kept), ready for the executor; `exact_match` scores parses against
the file's own programs, per role and per question type. A parse is right only if it equals the
program token for token.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.models.parser.data import ROLES, ParserSample, parser_samples
from tvr.clevrer.models.parser.module import ParserModule, pad
from tvr.core.progress import step_bar
from tvr.training.runs import load_run_module

Key = tuple[int, int, int | None]


@dataclass
class Parser:
    """A trained parser ready to parse (eval mode, on `device`)."""

    module: ParserModule
    device: torch.device

    @classmethod
    def load(cls, checkpoint: str | Path, device: str = "cpu") -> Parser:
        module = load_run_module(ParserModule, checkpoint, "parser", device)
        return cls(module, torch.device(device))

    def parse(
        self, samples: Sequence[ParserSample], batch_size: int = 256, progress: bool = False
    ) -> list[tuple[str, ...]]:
        """The parse of each sample, in order; with `progress`, a bar over them on stderr."""
        words = self.module.word_vocab
        tokens = self.module.token_vocab
        max_length = self.module.config.max_length + 1
        out: list[tuple[str, ...] | None] = [None] * len(samples)
        with step_bar(len(samples), "parsing", "text", progress) as bar:
            for role in ROLES:
                index = [i for i, s in enumerate(samples) if s.role == role]
                net = self.module.networks[role]
                for k in range(0, len(index), batch_size):
                    chunk = index[k : k + batch_size]
                    ids = [words.encode(samples[i].words) for i in chunk]
                    lengths = torch.as_tensor([max(1, len(w)) for w in ids])
                    parsed = net.greedy(pad(ids).to(self.device), lengths, max_length)
                    for i, row in zip(chunk, parsed.tolist(), strict=True):
                        out[i] = tokens.decode(row)
                    bar.update(len(chunk))
        return [p if p is not None else () for p in out]


def parse_questions(
    parser: Parser, videos: Sequence[VideoQuestions], progress: bool = False
) -> list[VideoQuestions]:
    """`videos` with every program replaced by its parse (`progress`: a bar on stderr)."""
    samples = parser_samples(videos)
    parsed = parser.parse(samples, progress=progress)
    parses = dict(zip((_key(s) for s in samples), parsed, strict=True))
    out = []
    for v in videos:
        questions = []
        for q in v.questions:
            choices = None
            if q.choices is not None:
                choices = tuple(
                    dataclasses.replace(
                        c, program=parses[(v.scene_index, q.question_id, c.choice_id)]
                    )
                    for c in q.choices
                )
            program = parses[(v.scene_index, q.question_id, None)]
            questions.append(dataclasses.replace(q, program=program, choices=choices))
        out.append(dataclasses.replace(v, questions=tuple(questions)))
    return out


def exact_match(gold: Sequence[VideoQuestions], parsed: Sequence[VideoQuestions]) -> dict[str, Any]:
    """Exact program match of `parsed` against `gold`'s programs (texts without a gold program
    are left out): overall, per role, per question type, and whole questions (the question's
    program and all its choices' right)."""
    gold_samples = {_key(s): s for s in parser_samples(gold, with_programs=True)}
    got = {_key(s): s.program for s in parser_samples(parsed)}
    types = {(v.scene_index, q.question_id): q.question_type for v in gold for q in v.questions}
    counts: dict[str, list[int]] = {}
    whole: dict[tuple[int, int], bool] = {}

    def add(name: str, right: bool) -> None:
        c = counts.setdefault(name, [0, 0])
        c[0] += right
        c[1] += 1

    for key, s in gold_samples.items():
        right = got.get(key) == s.program
        add("all", right)
        add(f"role/{s.role}", right)
        add(f"type/{types[key[:2]]}", right)
        whole[key[:2]] = whole.get(key[:2], True) and right
    for right in whole.values():
        add("questions", right)
    out: dict[str, Any] = {}
    for name in [
        "all",
        "questions",
        *(f"role/{r}" for r in ROLES),
        *sorted(n for n in counts if n.startswith("type/")),
    ]:
        if name in counts:
            right, total = counts[name]
            out[name] = {"accuracy": right / total, "right": right, "total": total}
    return out


def _key(s: ParserSample) -> Key:
    return (s.scene_index, s.question_id, s.choice_id)

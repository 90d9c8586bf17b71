"""TRANCO's candidate clips: K per training sample and epoch, the stored tiny sets, the full set.

Section 8 of the paper: training draws, for each sample, negatives from other training samples
so that the candidate set holds 20 clips (the sample's own clips among them); testing scores
against all test clips ("full", 4,918) or against a set of 100 per sample ("tiny", metrics
@100). tvr's rules, all seeded and independent of the order in which samples are asked for:

- Training (`TrainingCandidates`): the sample's clips, then K - n clips drawn without
  replacement from the clips of the other training samples, all in a random order. The draw's
  generator is seeded by (seed, epoch, sample id) and draws from the clips ordered by sample
  id, so epoch e of sample s is the same set in any process, any batch or file order and any
  number of data loader workers; a new epoch is a new draw.
  A sample with n >= K clips gets its own clips only.
- Tiny (`tiny_candidates`): the same rule with size 100 (configurable) and the generator seeded
  by (seed, sample id), drawn from the other samples of the sample's own split. The builder
  stores them in the val/test split files ("candidates"), so everyone scores against the same
  sets. A split with fewer clips than the size gives every sample all of its clips.
- Full (`full_candidates`): every clip of the split, in file order.

Candidates never cross splits, and `check_open_world` asserts what the layout promises: no clip
of a val or test sample is a training clip, and every listed candidate belongs to its sample's
split.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

#: the paper's training candidate set size (section 7 of the paper's TRANCO part: K = 20)
TRAIN_CANDIDATES = 20
#: the paper's tiny test candidate set size (@100)
TINY_CANDIDATES = 100
#: the tiny draw's stream, apart from the training draws' epochs
_TINY_STREAM = 0x7479


def stable_hash(text: str) -> int:
    """A 63-bit integer of a string, the same in every process (unlike `hash`)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


class _Pool:
    """The clips of a list of samples, ordered by sample id (so that a draw does not depend on
    the order of the list), with each sample's slice of them."""

    def __init__(self, samples: Iterable[tuple[str, Sequence[str]]]) -> None:
        clips: list[str] = []
        self.span: dict[str, tuple[int, int]] = {}
        for sample_id, own in sorted(samples, key=lambda s: s[0]):
            if sample_id in self.span:
                raise ValueError(f"sample {sample_id!r} is listed twice")
            self.span[sample_id] = (len(clips), len(clips) + len(own))
            clips.extend(own)
        if len(set(clips)) != len(clips):
            seen: set[str] = set()
            twice = next(c for c in clips if c in seen or seen.add(c))
            raise ValueError(f"clip {twice!r} belongs to two samples (or twice to one)")
        self.clips = np.asarray(clips, dtype=object)

    def draw(self, sample_id: str, size: int, rng: np.random.Generator) -> list[str]:
        """The sample's own clips and size - n distinct clips of the others, shuffled."""
        if sample_id not in self.span:
            raise KeyError(f"no sample {sample_id!r} among the candidates' samples")
        lo, hi = self.span[sample_id]
        n_own, n_other = hi - lo, len(self.clips) - (hi - lo)
        need = min(max(0, size - n_own), n_other)
        picks = rng.choice(n_other, size=need, replace=False) if need else np.zeros(0, int)
        picks = np.where(picks >= lo, picks + n_own, picks)  # skip the sample's own slice
        chosen = np.concatenate([np.arange(lo, hi), picks])
        rng.shuffle(chosen)
        return [str(c) for c in self.clips[chosen]]


class TrainingCandidates:
    """The training candidate set of a sample in an epoch: `candidates(sample_id, epoch)`.

    Args:
        samples: (sample id, its clips in order) of every training sample.
        k: the set's size (the paper's K = 20); a sample with more clips gets its clips only.
        seed: the draws' seed; each (seed, epoch, sample id) is one generator.
    """

    def __init__(
        self, samples: Iterable[tuple[str, Sequence[str]]], k: int = TRAIN_CANDIDATES, seed: int = 0
    ) -> None:
        if k < 1:
            raise ValueError(f"expected k >= 1 candidates, got {k}")
        self.k = k
        self.seed = seed
        self._pool = _Pool(samples)

    def __call__(self, sample_id: str, epoch: int) -> list[str]:
        """The sample's clips and K - n clips of other training samples, in a random order."""
        rng = np.random.default_rng([self.seed, epoch, stable_hash(sample_id)])
        return self._pool.draw(sample_id, self.k, rng)

    @property
    def clips(self) -> list[str]:
        """Every training clip, by sample id."""
        return [str(c) for c in self._pool.clips]


def tiny_candidates(
    samples: Sequence[tuple[str, Sequence[str]]], size: int = TINY_CANDIDATES, seed: int = 0
) -> dict[str, list[str]]:
    """sample id -> its tiny candidate set: its clips and size - n clips of the other samples of
    `samples` (one split), drawn with a generator seeded by (seed, sample id), shuffled."""
    if size < 1:
        raise ValueError(f"expected a tiny set of at least 1 candidate, got {size}")
    pool = _Pool(samples)
    return {
        sample_id: pool.draw(
            sample_id, size, np.random.default_rng([seed, _TINY_STREAM, stable_hash(sample_id)])
        )
        for sample_id, _ in samples
    }


def full_candidates(samples: Iterable[tuple[str, Sequence[str]]]) -> list[str]:
    """Every clip of the samples (one split), in order: the "full" candidate set."""
    return [clip for _, clips in samples for clip in clips]


def check_open_world(
    splits: Mapping[str, Sequence[tuple[str, Sequence[str], Sequence[str] | None]]],
) -> list[str]:
    """The ways in which `splits` (split -> (sample id, clips, candidates or None)) break the
    open world, as messages (an empty list: none): a clip in two splits, or a candidate outside
    its sample's split."""
    owner: dict[str, str] = {}
    problems: list[str] = []
    for split, samples in splits.items():
        for sample_id, clips, _ in samples:
            for clip in clips:
                other = owner.setdefault(clip, split)
                if other != split:
                    problems.append(f"clip {clip!r} of {split} sample {sample_id!r} is also a "
                                    f"{other} clip")  # fmt: skip
    for split, samples in splits.items():
        for sample_id, _, candidates in samples:
            for clip in candidates or ():
                if owner.get(clip) != split:
                    where = owner.get(clip, "no split")
                    problems.append(f"candidate {clip!r} of {split} sample {sample_id!r} is a "
                                    f"clip of {where}")  # fmt: skip
    return problems

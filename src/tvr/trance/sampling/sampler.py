"""Balanced sampling of TRANCE samples: initial scenes and reference transformations, in shards.

A shard is made sample after sample by one `ShardSampler`, because the balanced counts depend on
the history (as in the released generator); the counts of a failed attempt are rolled back.
Every sample's randomness comes from (seed, shard, index), so a shard is deterministic from
(seed, shard, balance counts at its start).

Balance scope (`BALANCE_SCOPES`): "global" (the paper's behaviour, Algorithm 1 over the whole
split) chains the shards of a split: shard s starts from the counts of shards 0..s-1
(`ShardChain`), so the symbolic samples are made one shard after another, while rendering can
still run in parallel. "shard" starts every shard from zero counts: shards are independent and can
be sampled in parallel, but their small imbalances add up over many shards.

Rules checked while sampling (every check calls `tvr.trance.world.simulator`):
  A   no overlap after any step;
  B1  an object occluded in the initial centre view is never transformed;
  B2  an object already transformed is never moved out afterwards;
  B3  every transformed object is visible (not occluded) in each of the three final views;
  and no step leaves the plane or sets the value an attribute already has;
  C   no step brings an attribute back to its initial value (`forbid_undone`), so no reference
      leaves a transformed attribute as it started and the empty answer is never right.
B1 and B3 call a pluggable occlusion check (default: `tvr.trance.world.occlusion.fast_visible_pixel_counts`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.typed_config import bounded, build_config
from tvr.trance.choices import BALANCE_SCOPES
from tvr.trance.data.sample import Sample, Step
from tvr.trance.sampling.balance import BalanceCounts, balanced_choice, ngrams, sample_factors
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.camera import sample_jitter
from tvr.trance.world.occlusion import (
    OCCLUSION_THRESHOLD,
    OcclusionCheck,
    fast_visible_pixel_counts,
)
from tvr.trance.world.simulator import COL_SIZE, COL_X, COL_Y, array_to_objects
from tvr.trance.world.vocab import VIEWS

#: the scope of data made before the option existed (a config.json without `balance_scope`)
LEGACY_BALANCE_SCOPE = "shard"

_POSITION_VALUES = np.array(
    [vocab.VALUE_ATTR[v] == vocab.ATTRIBUTES.index("position") for v in range(vocab.NUM_VALUES)]
)


@dataclass(frozen=True)
class SamplerConfig:
    """Everything that shapes the sampled data (saved next to every output)."""

    min_visible: int = 1
    max_visible: int = 10
    min_steps: int = 1
    max_steps: int = 4
    attributes: tuple[str, ...] = vocab.ATTRIBUTES
    tolerance: float = 0.1
    occlusion: bool = True
    occlusion_threshold: int = bounded(OCCLUSION_THRESHOLD, 0)
    max_value_tries: int = bounded(vocab.NUM_VALUES // 2 + 1, 1)
    max_move_type_tries: int = bounded(len(vocab.MOVE_TYPES) // 2 + 1, 1)
    placement_tries: int = bounded(200, 1)
    max_attempts: int = bounded(10_000, 1)
    #: no reference may leave a transformed attribute as it started (right.2 then left.2;
    #: cylinder -> sphere -> cylinder): such a step is refused while sampling. Data made before
    #: the option had none of this check (a saved config without the field: False).
    forbid_undone: bool = True

    def validate(self) -> SamplerConfig:
        if not 1 <= self.min_visible <= self.max_visible <= vocab.NUM_OBJECTS:
            raise UserError(
                f"visible objects: need 1 <= min_visible ({self.min_visible}) <= max_visible "
                f"({self.max_visible}) <= {vocab.NUM_OBJECTS}"
            )
        if not 1 <= self.min_steps <= self.max_steps <= vocab.MAX_STEPS:
            raise UserError(
                f"steps: need 1 <= min_steps ({self.min_steps}) <= max_steps ({self.max_steps}) "
                f"<= {vocab.MAX_STEPS}"
            )
        unknown = set(self.attributes) - set(vocab.ATTRIBUTES)
        if unknown or not self.attributes:
            raise UserError(
                f"attributes: unknown {sorted(unknown)}; choose from {list(vocab.ATTRIBUTES)}"
            )
        if self.tolerance <= 0:
            raise UserError(f"tolerance must be > 0, got {self.tolerance}")
        return self

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["attributes"] = list(self.attributes)
        return d

    @classmethod
    def from_dict(
        cls, d: dict[str, Any], where: str = "sampler config", prefix: str = ""
    ) -> SamplerConfig:
        """The config of `d` (a config file's or config.json's sampler options): keys, types
        and bounds checked (`tvr.core.typed_config`, UserError naming `where` and the key),
        then validated."""
        return build_config(cls, d, where, "sampler", prefix)


def sample_id(seed: int, shard: int, index: int) -> str:
    """The id of the `index`-th sample of a shard: `t{seed}-{shard:04d}-{index:05d}`."""
    return f"t{seed}-{shard:04d}-{index:05d}"


@dataclass
class _Attempt:
    """Mutable state of one sampling attempt."""

    initial: np.ndarray
    state: np.ndarray
    rotations: np.ndarray
    cameras: dict[str, list[float]]
    occluded_initially: set[int]
    visible_initially: set[int]
    steps: list[Step] = field(default_factory=list)
    transformed: set[int] = field(default_factory=set)
    #: visible pixel counts already computed: (view, object, scene geometry) -> count
    seen_cache: dict[tuple[str, int, bytes], int] = field(default_factory=dict)


class ShardSampler:
    """Makes the samples of one shard, one after another, keeping its balance counts."""

    def __init__(
        self,
        config: SamplerConfig,
        seed: int,
        shard: int,
        occlusion_check: OcclusionCheck = fast_visible_pixel_counts,
        counts: BalanceCounts | None = None,
    ) -> None:
        """`counts`: the balance counts to start from and keep updating (global balance: those
        of the earlier shards); None starts from zero."""
        self.config = config.validate()
        self.seed = seed
        self.shard = shard
        self.check = occlusion_check
        self.counts = BalanceCounts() if counts is None else counts
        self.attempts = 0
        self.failures = 0
        self._allowed_values = np.array(
            [vocab.value_attribute(v) in config.attributes for v in range(vocab.NUM_VALUES)]
        )

    def record(self, sample: Sample) -> None:
        """Count an existing sample of this shard (used when a shard resumes)."""
        self.counts.record(sample_factors(sample))

    def sample(self, index: int) -> Sample:
        """The `index`-th sample of the shard (call with index 0, 1, 2, ... in order)."""
        rng = np.random.default_rng([self.seed, self.shard, index])
        for _ in range(self.config.max_attempts):
            self.attempts += 1
            made = self._attempt(rng, index)
            if made is not None:
                return made
            self.failures += 1
        raise RuntimeError(
            f"no valid sample after {self.config.max_attempts} attempts (seed {self.seed}, "
            f"shard {self.shard}, index {index}); the sampler config is too strict"
        )

    # --- one attempt ------------------------------------------------------------------------------
    def _attempt(self, rng: np.random.Generator, index: int) -> Sample | None:
        cfg = self.config
        counts = self.counts
        vis_allowed = np.zeros(vocab.NUM_OBJECTS + 1, dtype=bool)
        vis_allowed[cfg.min_visible : cfg.max_visible + 1] = True
        num_visible = balanced_choice(rng, counts.visible, cfg.tolerance, vis_allowed)
        flags = np.array([True] * num_visible + [False] * (vocab.NUM_OBJECTS - num_visible))
        rng.shuffle(flags)

        state, rotations, attr_values = self._initial_scene(rng, flags)
        if state is None:
            return None
        cameras, lights = sample_jitter(rng)
        visible_now = {i for i in range(vocab.NUM_OBJECTS) if flags[i]}
        occluded = set()
        if cfg.occlusion and visible_now:
            counts_c = self.check(state, rotations, tuple(cameras["C"]), sorted(visible_now))
            occluded = {i for i in visible_now if counts_c[i] < cfg.occlusion_threshold}
        att = _Attempt(state.copy(), state, rotations, cameras, occluded, visible_now)

        step_allowed = np.zeros(vocab.MAX_STEPS + 1, dtype=bool)
        step_allowed[cfg.min_steps : cfg.max_steps + 1] = True
        num_steps = balanced_choice(rng, counts.steps, cfg.tolerance, step_allowed)

        # partial factors, recorded step by step so that the n-gram balance sees this sample's own
        # history; everything is rolled back if the attempt fails
        partial = {
            "num_visible": num_visible,
            "attr_values": attr_values,
            "values": [],
            "objects": [],
            "move_types": [],
        }
        counts.visible[num_visible] += 1
        for attr, idx in attr_values:
            counts.attr_values[attr][idx] += 1
        counts.steps[num_steps] += 1
        ok = True
        for _ in range(num_steps):
            step = self._sample_step(rng, att, partial["values"])
            if step is None:
                ok = False
                break
            att.steps.append(step)
            att.transformed.add(step.obj)
            partial["values"].append(step.value)
            partial["objects"].append(step.obj)
            counts.objects[step.obj] += 1
            if step.move_type is not None:
                partial["move_types"].append(step.move_type)
                counts.move_types[vocab.MOVE_TYPES.index(step.move_type)] += 1
            vals = partial["values"]
            for n in range(1, len(vals) + 1):
                counts.add_gram(tuple(vals[-n:]), 1)
        # roll back the incremental counts, then record the sample as a whole if it succeeded
        counts.visible[num_visible] -= 1
        for attr, idx in attr_values:
            counts.attr_values[attr][idx] -= 1
        counts.steps[num_steps] -= 1
        for o in partial["objects"]:
            counts.objects[o] -= 1
        for m in partial["move_types"]:
            counts.move_types[vocab.MOVE_TYPES.index(m)] -= 1
        vals = partial["values"]
        for n in range(1, len(vals) + 1):
            for g in ngrams(vals, n):
                counts.add_gram(g, -1)
        if not ok:
            return None

        objects = array_to_objects(state, rotations.tolist())
        final = array_to_objects(att.state, rotations.tolist())
        pairs = [(s.obj, s.value) for s in att.steps]
        sample = Sample(
            id=sample_id(self.seed, self.shard, index),
            objects=objects,
            steps=att.steps,
            cameras=cameras,
            lights=lights,
            seed=self.seed,
            shard=self.shard,
            index=index,
            order_sensitive=world.order_sensitive(state, pairs),
            final=final,
        )
        counts.record(sample_factors(sample))
        return sample

    def _initial_scene(
        self, rng: np.random.Generator, flags: np.ndarray
    ) -> tuple[np.ndarray | None, np.ndarray, list[tuple[str, int]]]:
        """Objects with balanced attribute values, placed without overlap in their areas."""
        cfg = self.config
        n = vocab.NUM_OBJECTS
        state = np.zeros((n, world.NUM_COLS), dtype=np.int16)
        rotations = np.round(rng.uniform(0.0, 360.0, size=n), 3)
        local = {a: c.copy() for a, c in self.counts.attr_values.items()}
        attr_values = []
        for i in range(n):
            for attr in ("shape", "size", "material", "color"):
                k = balanced_choice(rng, local[attr], cfg.tolerance)
                local[attr][k] += 1
                attr_values.append((attr, k))
                state[i, world.ATTR_COLUMN[attr]] = k
        radius = np.asarray(vocab.RADIUS_GRID)
        for i in range(n):
            placed = False
            for _ in range(cfg.placement_tries):
                if flags[i]:
                    x, y = rng.integers(vocab.VISIBLE_MIN, vocab.VISIBLE_MAX + 1, size=2)
                else:
                    x, y = rng.integers(vocab.GRID_MIN, vocab.GRID_MAX + 1, size=2)
                    if world.is_visible(int(x), int(y)):
                        continue
                if i:
                    dx = state[:i, COL_X].astype(np.int32) - x
                    dy = state[:i, COL_Y].astype(np.int32) - y
                    limit = radius[state[:i, COL_SIZE]] + radius[state[i, COL_SIZE]] + vocab.MIN_GAP
                    if (dx * dx + dy * dy < limit * limit).any():
                        continue
                state[i, COL_X], state[i, COL_Y] = x, y
                placed = True
                break
            if not placed:
                return None, rotations, attr_values
        return state, rotations, attr_values

    def _sample_step(
        self, rng: np.random.Generator, att: _Attempt, history: list[int]
    ) -> Step | None:
        """One more step: a balanced value, then a balanced move type and object that work."""
        cfg = self.config
        tried = np.zeros(vocab.NUM_VALUES, dtype=bool)
        for _ in range(cfg.max_value_tries):
            scores = self.counts.value_scores(history)
            value = balanced_choice(rng, scores, cfg.tolerance, self._allowed_values & ~tried)
            if value is None:
                return None
            tried[value] = True
            if _POSITION_VALUES[value]:
                move_tried = np.zeros(len(vocab.MOVE_TYPES), dtype=bool)
                for _ in range(cfg.max_move_type_tries):
                    m = balanced_choice(rng, self.counts.move_types, cfg.tolerance, ~move_tried)
                    if m is None:
                        break
                    move_tried[m] = True
                    step = self._try_objects(rng, att, value, vocab.MOVE_TYPES[m])
                    if step is not None:
                        return step
            else:
                step = self._try_objects(rng, att, value, None)
                if step is not None:
                    return step
        return None

    def _try_objects(
        self, rng: np.random.Generator, att: _Attempt, value: int, move_type: str | None
    ) -> Step | None:
        areas = world.area(att.state[:, COL_X], att.state[:, COL_Y])
        if move_type == "in":
            candidates = areas == world.INVISIBLE
        else:
            candidates = areas == world.VISIBLE
            for i in att.occluded_initially:
                candidates[i] = False
        while candidates.any():
            obj = balanced_choice(rng, self.counts.objects, self.config.tolerance, candidates)
            candidates[obj] = False
            step = self._try(att, obj, value, move_type, int(areas[obj]))
            if step is not None:
                return step
        return None

    def _try(
        self, att: _Attempt, obj: int, value: int, move_type: str | None, old_area: int
    ) -> Step | None:
        """Check one candidate step against every rule; apply it to the attempt if it passes."""
        new, result = world.apply_step(att.state, obj, value)
        if result.noop or result.off_plane or result.overlap:
            return None
        if self.config.forbid_undone and world.attribute_unchanged(att.initial, new, obj, value):
            return None  # rule C: the step would undo what earlier steps did to this attribute
        options: tuple[int, ...] = ()
        if move_type is not None:
            new_area = int(world.area(new[obj, COL_X], new[obj, COL_Y]))
            kind = {
                (world.VISIBLE, world.VISIBLE): "inner",
                (world.VISIBLE, world.INVISIBLE): "out",
                (world.INVISIBLE, world.VISIBLE): "in",
            }.get((old_area, new_area))
            if kind != move_type:
                return None
            if kind == "out":
                if obj in att.transformed:  # rule B2
                    return None
                options = out_move_options(att.state, obj)
        if self.config.occlusion and not self._all_seen(new, att, obj):  # rule B3
            return None
        att.state = new
        return Step(obj, value, move_type, options)

    def _all_seen(self, new: np.ndarray, att: _Attempt, obj: int) -> bool:
        """Rule B3: every transformed object that stands in view shows in all three final views."""
        targets = sorted(
            i
            for i in att.transformed | {obj}
            if world.is_visible(int(new[i, COL_X]), int(new[i, COL_Y]))
        )
        if not targets:
            return True
        # colour and material steps leave the geometry as it was: reuse earlier counts
        geometry = new[:, [COL_X, COL_Y, COL_SIZE, world.COL_SHAPE]].tobytes()
        for view in VIEWS:
            todo = [i for i in targets if (view, i, geometry) not in att.seen_cache]
            if todo:
                counts = self.check(new, att.rotations, tuple(att.cameras[view]), todo)
                for i in todo:
                    att.seen_cache[(view, i, geometry)] = int(counts[i])
            if any(
                att.seen_cache[(view, i, geometry)] < self.config.occlusion_threshold
                for i in targets
            ):
                return False
        return True


def check_balance_scope(scope: str, option: str = "balance_scope") -> str:
    if scope not in BALANCE_SCOPES:
        raise UserError(
            f"option '{option}' (--{option.replace('_', '-')}): expected one of "
            f"{', '.join(BALANCE_SCOPES)}, got {scope!r}"
        )
    return scope


def with_legacy_options(saved: Any) -> Any:
    """A saved config.json's options, with the values of data made before an option existed where
    it names none: the balance scope `LEGACY_BALANCE_SCOPE`, and no `forbid_undone` check."""
    if not isinstance(saved, dict):
        return saved
    out = dict(saved)
    out.setdefault("balance_scope", LEGACY_BALANCE_SCOPE)
    if isinstance(out.get("sampler"), dict) and "forbid_undone" not in out["sampler"]:
        out["sampler"] = {**out["sampler"], "forbid_undone": False}
    return out


class ShardChain:
    """Global balance over the shards of one split: shard s is sampled from the counts of shards
    0..s-1. Shards are taken in order, each either sampled (`sample`) or, when it exists already
    (a resumed job), counted from its samples (`record`); both give the same counts."""

    def __init__(
        self,
        config: SamplerConfig,
        seed: int,
        occlusion_check: OcclusionCheck = fast_visible_pixel_counts,
    ) -> None:
        self.config = config
        self.seed = seed
        self.check = occlusion_check
        self.counts = BalanceCounts()
        self.next_shard = 0

    def _expect(self, shard: int) -> None:
        if shard != self.next_shard:
            raise ValueError(
                f"shards of a chain go in order: expected {self.next_shard}, got {shard}"
            )

    def sample(self, shard: int, count: int) -> list[Sample]:
        """The `count` samples of `shard` (the next one), continuing the chain's counts."""
        self._expect(shard)
        sampler = ShardSampler(self.config, self.seed, shard, self.check, counts=self.counts)
        samples = [sampler.sample(i) for i in range(count)]
        self.next_shard += 1
        return samples

    def record(self, shard: int, samples: list[Sample]) -> None:
        """Count the samples of `shard` (the next one) made earlier."""
        self._expect(shard)
        for s in samples:
            self.counts.record(sample_factors(s))
        self.next_shard += 1


def chain_shards(
    config: SamplerConfig,
    seed: int,
    wanted: Iterable[int],
    count: Callable[[int], int],
    finished: Callable[[int], list[Sample]],
) -> Iterator[tuple[int, list[Sample], float]]:
    """Global balance over the shards of one chain, lazily: shards 0..max(wanted) in order, each
    wanted one sampled (`count(shard)` samples) from the counts of all earlier shards and yielded
    as (shard, samples, seconds of sampling), each other one read back (`finished(shard)`, a
    resumed job's finished shard) and counted."""
    wanted = set(wanted)
    if not wanted:
        return
    chain = ShardChain(config, seed)
    for shard in range(max(wanted) + 1):
        if shard in wanted:
            t0 = time.perf_counter()
            samples = chain.sample(shard, count(shard))
            yield shard, samples, time.perf_counter() - t0
        else:
            chain.record(shard, finished(shard))


def out_move_options(state: np.ndarray, obj: int) -> tuple[int, ...]:
    """Every position value that moves `obj` to a valid invisible spot (on the plane, in the
    invisible area, overlapping nothing): the accepted answers of an "out" move."""
    options = []
    for v in range(vocab.NUM_VALUES):
        if not _POSITION_VALUES[v]:
            continue
        new, result = world.apply_step(state, obj, v)
        if result.off_plane or result.overlap:
            continue
        if world.area(new[obj, COL_X], new[obj, COL_Y]) == world.INVISIBLE:
            options.append(v)
    return tuple(options)

"""The TRANCE text testbed: Event samples as N+1 rendered states, each step told in words (VTT layout).

A VTT-shaped data set that this machine can make and train on: each TRANCE Event sample (1 to 4
steps, balanced like TRANCE's own samples) becomes N + 1 state images, the scene before the first
step and after each step, rendered by TRANCE's raster renderer from the centre camera, and N
descriptions, one per step, written from templates:

    "the small red cube turns blue", "the metal cylinder slides to the left and out of sight",
    "the big sphere becomes rubber", "a gray ball slides in from the back"

- Several templates per attribute (TEMPLATES), and synonyms for the words (CLEVR's: big/large,
  block/cube, ball/sphere, shiny/metallic/metal, matte/rubber), all chosen by a generator seeded
  by (seed, sample number): the same options give the same words. `phrasing` "fixed" takes the
  first of every choice instead: one wording per step.
- The object is named by a minimal distinguishing description among the objects in view before
  the step (for an object coming into view, after it, with "a"), as CLEVR's referring
  expressions: the fewest of size, colour, material and shape that no other object in view
  shares, one of the shortest picked by the generator; a shape left out reads "object"/"thing".
  When another object in view has all four attributes, a position word that singles it out
  ("the leftmost ...", "the nearest ...") is added; if none does, the full description is used
  and the step is counted as "ambiguous" (the `reference` of its annotation says which).
- Directions are told as the centre camera sees them. TRANCE's names are the release's
  (docs/formats.md): "front" is -x, away from the centre camera, so a "front" move reads
  "backward"/"away from the camera"; "behind" reads "forward"/"toward the camera"; left and right
  are the image's.

The layout is VTT's released one (`meta/vtt.jsonl`, `states/{id}_{N+1}_{i}.jpg`: the names of
`tvr.vtt.data.layout`), written as plain files (`tvr vtt stats`, `evaluate` and training read it
as any VTT set):
- `ori` "trance"; `youtube_id` the TRANCE sample id; `id` the first 16 hex digits of
  sha256("trance-text/{seed}/{sample id}"); `duration` N and segment i = [i, i + 1]: step
  numbers, not seconds;
- `category`: the attributes the sample changes, as a set in vocabulary order ("color and
  position"; at most 31); `topic`: the attributes in step order ("color, position, color"): as
  VTT's topic (a task) fixes which steps happen and its category groups topics;
- each annotation step also carries `trance`: the step's object index, value, move type and how
  the object was named.
`meta/trance_samples.jsonl` holds the TRANCE samples themselves (TRANCE's sample format), and
`report.json` the counts. Splits: a permutation seeded by `seed` puts round(num x 1,352 / 13,547)
samples in val, round(num x 1,436 / 13,547) in test (VTT's Table 1 shares) and the rest in train.

The job runs on `tvr.core.jobs`: shard k samples `shard_size` samples with TRANCE's sampler (seed,
shard k; balance within the shard), renders them into OUT/states (atomic writes) and publishes
OUT/shards/shard-0000k.jsonl last; a rerun with the same options finishes a killed job.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import itertools
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.job_config import JobConfig
from tvr.core.jobs import prepare_job_folder, run_with_bar
from tvr.core.jsonl import iter_jsonl, write_file_bytes, write_json, write_jsonl
from tvr.core.manifest import check_same_config
from tvr.trance.data.sample import Sample
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import COL_COLOR, COL_MATERIAL, COL_SHAPE, COL_SIZE, COL_X, COL_Y
from tvr.vtt.data.layout import RECORDS, STATES

FORMAT = "tvr.trance.testbed.text/1"
ORI = "trance"
#: VTT's Table 1 sample counts (the VTT paper), whose shares the splits follow
TABLE1_SAMPLES = {"train": 10759, "val": 1352, "test": 1436}
RECORDS_FILE = RECORDS.as_posix()
SAMPLES_FILE = "meta/trance_samples.jsonl"
REPORT_FILE = "report.json"
STATES_DIR = STATES.as_posix()
SHARDS_DIR = "shards"
PHRASINGS = ("varied", "fixed")
TEXT_STREAM = 0x74657874  # an extra entry of the description generator's seed ("text")
SPLIT_STREAM = 0x73706C74  # and of the split's ("splt")


@dataclass(frozen=True)
class TextTestbedConfig(JobConfig):
    """Everything that shapes a text testbed (saved as config.json; a rerun must match it).

    Args:
        num: samples in all splits.
        seed: seeds the TRANCE sampler, the words and the split.
        shard_size: samples per shard of the job.
        min_steps, max_steps: steps per sample (TRANCE's Event setting: 1 to 4).
        width, height: of the state images (TRANCE's 320 x 240).
        preset: the raster renderer's quality preset ("preview", "default").
        view: the camera of the states ("L", "C", "R").
        jpeg_quality: of the state images.
        phrasing: "varied" (templates, synonyms and among the shortest descriptions of an
            object, one drawn by the seeded generator) or "fixed" (always the first of each:
            one wording per step, for separating what a model sees from how it phrases).
    """

    FORMAT_TAG = FORMAT
    OPTION_KIND = "testbed"

    num: int = 60
    seed: int = 0
    shard_size: int = 20
    min_steps: int = 1
    max_steps: int = vocab.MAX_STEPS
    width: int = 320
    height: int = 240
    preset: str = "default"
    view: str = "C"
    jpeg_quality: int = 95
    phrasing: str = "varied"

    def validate(self) -> TextTestbedConfig:
        if self.num < 1:
            raise UserError(f"--num must be at least 1, got {self.num}")
        if self.shard_size < 1:
            raise UserError(f"--shard-size must be at least 1, got {self.shard_size}")
        if not 1 <= self.min_steps <= self.max_steps <= vocab.MAX_STEPS:
            raise UserError(f"steps: need 1 <= min ({self.min_steps}) <= max ({self.max_steps}) "
                            f"<= {vocab.MAX_STEPS}")  # fmt: skip
        if self.width < 1 or self.height < 1:
            raise UserError(f"image size must be positive, got {self.width}x{self.height}")
        if self.view not in vocab.VIEWS:
            raise UserError(f"view must be one of {', '.join(vocab.VIEWS)}, got {self.view!r}")
        if not 1 <= self.jpeg_quality <= 100:
            raise UserError(f"jpeg_quality must be 1..100, got {self.jpeg_quality}")
        if self.phrasing not in PHRASINGS:
            raise UserError(
                f"phrasing must be one of {', '.join(PHRASINGS)}, got {self.phrasing!r}"
            )
        return self

    @property
    def num_shards(self) -> int:
        return -(-self.num // self.shard_size)

    def shard_count(self, shard: int) -> int:
        return min(self.shard_size, self.num - shard * self.shard_size)


# --- words -------------------------------------------------------------------------------------
#: the words for each attribute value when it names an object (CLEVR's synonyms)
ADJECTIVES: dict[str, tuple[str, ...]] = {
    "large": ("large", "big"), "medium": ("medium", "medium-sized"), "small": ("small", "little"),
    "rubber": ("rubber", "matte"), "metal": ("metal", "metallic", "shiny"), "glass": ("glass",),
    **{c: (c,) for c in vocab.COLORS},
}  # fmt: skip
NOUNS: dict[str, tuple[str, ...]] = {
    "cube": ("cube", "block"), "sphere": ("sphere", "ball"), "cylinder": ("cylinder",),
    "": ("object", "thing"),  # no shape said
}  # fmt: skip
#: the words for a new value
NEW_MATERIAL = {"rubber": ("rubber",), "metal": ("metal",), "glass": ("glass",)}
NEW_SIZE = {"large": ("large", "big"), "medium": ("medium",), "small": ("small", "little")}
GROW = ("grows", "expands")
SHRINK = ("shrinks", "contracts")
#: TRANCE's directions as the centre camera sees them (see the module docstring)
DIRECTION_WORDS: dict[str, tuple[str, ...]] = {
    "left": ("to the left", "leftward"),
    "right": ("to the right", "rightward"),
    "front": ("backward", "away from the camera", "to the back"),
    "behind": ("forward", "toward the camera", "to the front"),
    "front-left": ("back and to the left", "to the back left"),
    "front-right": ("back and to the right", "to the back right"),
    "behind-left": ("forward and to the left", "to the front left"),
    "behind-right": ("forward and to the right", "to the front right"),
}
#: where an object moving in a direction comes into view from
SIDE_WORDS: dict[str, str] = {
    "left": "the right", "right": "the left", "front": "the front", "behind": "the back",
    "front-left": "the front right", "front-right": "the front left",
    "behind-left": "the back right", "behind-right": "the back left",
}  # fmt: skip
DISTANCE_WORDS = {1: ("a little", "slightly", "one step"), 2: ("far", "a long way", "two steps")}

#: the templates of each kind of step: {ref} names the object with its article ("the red cube";
#: "a red cube" for "in"), the other fields are the new value's words
TEMPLATES: dict[str, tuple[str, ...]] = {
    "color": (
        "{ref} turns {color}",
        "{ref} becomes {color}",
        "{ref} is painted {color}",
        "{ref} changes color to {color}",
        "someone paints {ref} {color}",
    ),
    "material": (
        "{ref} becomes {material}",
        "{ref} turns into {material}",
        "{ref} is now made of {material}",
        "{ref} changes its material to {material}",
    ),
    "shape": (
        "{ref} becomes a {shape}",
        "{ref} turns into a {shape}",
        "{ref} is reshaped into a {shape}",
        "{ref} morphs into a {shape}",
    ),
    "size": (
        "{ref} becomes {size}",
        "{ref} {change} into a {size} one",
        "{ref} is resized to {size}",
        "{ref} {change} and becomes {size}",
    ),
    "inner": (
        "{ref} slides {distance} {direction}",
        "{ref} moves {distance} {direction}",
        "{ref} is pushed {distance} {direction}",
        "someone pushes {ref} {distance} {direction}",
    ),
    "out": (
        "{ref} slides {direction} and out of sight",
        "{ref} moves {direction} out of view",
        "{ref} is pushed {direction} out of the scene",
        "{ref} leaves the scene {direction}",
    ),
    "in": (
        "{ref} slides in from {side}",
        "{ref} enters from {side}",
        "{ref} appears from {side}",
        "{ref} is pushed into view from {side}",
    ),
}
#: the attributes a referring expression may use, in the order they are said
REFER_ATTRIBUTES = ("size", "color", "material", "shape")
_COLUMN = {"size": COL_SIZE, "color": COL_COLOR, "material": COL_MATERIAL, "shape": COL_SHAPE}
#: position words that single out one of identical objects: (word, column, +1 max / -1 min);
#: the centre camera stands on +x and sees +y on its right
SPATIAL_WORDS = (("leftmost", COL_Y, -1), ("rightmost", COL_Y, 1),
                 ("nearest", COL_X, 1), ("farthest", COL_X, -1))  # fmt: skip


class FirstChoice:
    """A stand-in for the generator that always picks the first option ("fixed" phrasing)."""

    def integers(self, high: int) -> int:
        return 0


#: what chooses the words: a seeded generator, or the first option every time
Chooser = np.random.Generator | FirstChoice


@dataclass(frozen=True)
class StepText:
    """One step told in words: the description, its template kind and how the object was named
    ("minimal", "spatial" or "ambiguous")."""

    text: str
    kind: str
    reference: str


def attribute_word(attr: str, index: int) -> str:
    """The vocabulary name of an attribute's value index (size 0 -> "large")."""
    return vocab.CATEGORIES[attr][index]


def visible_objects(state: np.ndarray) -> list[int]:
    """The objects of a state (10, 6) that stand in the visible area."""
    return [i for i in range(len(state)) if world.is_visible(int(state[i, COL_X]),
                                                            int(state[i, COL_Y]))]  # fmt: skip


def refer(state: np.ndarray, obj: int, rng: Chooser, article: str = "the") -> tuple[str, str]:
    """A referring expression for object `obj` among the objects in view of `state`, and how it
    was made ("minimal", "spatial", "ambiguous"); see the module docstring."""
    others = [i for i in visible_objects(state) if i != obj]
    target = {a: int(state[obj, _COLUMN[a]]) for a in REFER_ATTRIBUTES}

    def matches(i: int, attrs: tuple[str, ...]) -> bool:
        return all(int(state[i, _COLUMN[a]]) == target[a] for a in attrs)

    for k in range(1, len(REFER_ATTRIBUTES) + 1):
        unique = [c for c in itertools.combinations(REFER_ATTRIBUTES, k)
                  if not any(matches(i, c) for i in others)]  # fmt: skip
        if unique:
            chosen = unique[int(rng.integers(len(unique)))]
            return _phrase(target, chosen, rng, article), "minimal"
    twins = [i for i in others if matches(i, REFER_ATTRIBUTES)]
    for word, column, sign in SPATIAL_WORDS:
        mine = sign * int(state[obj, column])
        if all(mine > sign * int(state[i, column]) for i in twins):
            words = _phrase(target, REFER_ATTRIBUTES, rng, "the").split(" ", 1)
            return f"the {word} {words[1]}", "spatial"
    return _phrase(target, REFER_ATTRIBUTES, rng, article), "ambiguous"


def _phrase(target: dict[str, int], attrs: tuple[str, ...], rng: Chooser,
            article: str) -> str:  # fmt: skip
    words = [_pick(rng, ADJECTIVES[attribute_word(a, target[a])])
             for a in REFER_ATTRIBUTES[:3] if a in attrs]  # fmt: skip
    shape = attribute_word("shape", target["shape"]) if "shape" in attrs else ""
    words.append(_pick(rng, NOUNS[shape]))
    if article == "a" and words[0][0] in "aeiou":
        article = "an"
    return " ".join([article, *words])


def _pick(rng: Chooser, options: tuple[str, ...]) -> str:
    return options[int(rng.integers(len(options)))]


def move_type(before: np.ndarray, after: np.ndarray, obj: int) -> str:
    """Where a position step takes the object: "inner" (in view to in view), "out" or "in"."""
    was = world.is_visible(int(before[obj, COL_X]), int(before[obj, COL_Y]))
    now = world.is_visible(int(after[obj, COL_X]), int(after[obj, COL_Y]))
    return {(True, True): "inner", (True, False): "out", (False, True): "in"}.get(
        (was, now), "inner")  # fmt: skip


def describe_step(
    before: np.ndarray, after: np.ndarray, obj: int, value: int, rng: Chooser
) -> StepText:
    """One step (object `obj` takes value `value`, from state `before` to `after`) in words."""
    attr = vocab.value_attribute(value)
    new = vocab.VALUES[value].split(".", 1)[1]
    if attr == "position":
        kind = move_type(before, after, obj)
        direction, steps = new.rsplit(".", 1)
        if kind == "in":
            ref, how = refer(after, obj, rng, article="a")
            words = {"side": SIDE_WORDS[direction]}
        else:
            ref, how = refer(before, obj, rng)
            words = {"direction": _pick(rng, DIRECTION_WORDS[direction]),
                     "distance": _pick(rng, DISTANCE_WORDS[int(steps)])}  # fmt: skip
    else:
        kind = attr
        ref, how = refer(before, obj, rng)
        words = _VALUE_WORDS[attr](new, before, obj, rng)
    template = _pick(rng, TEMPLATES[kind])
    return StepText(template.format(ref=ref, **words), kind, how)


def _size_words(new: str, before: np.ndarray, obj: int, rng: Chooser) -> dict:
    bigger = vocab.SIZES.index(new) < int(before[obj, COL_SIZE])  # sizes go large -> small
    return {"size": _pick(rng, NEW_SIZE[new]), "change": _pick(rng, GROW if bigger else SHRINK)}


#: attribute -> the words of its new value, for the templates
_VALUE_WORDS: dict[str, Callable[..., dict[str, str]]] = {
    "color": lambda new, before, obj, rng: {"color": new},
    "material": lambda new, before, obj, rng: {"material": _pick(rng, NEW_MATERIAL[new])},
    "shape": lambda new, before, obj, rng: {"shape": _pick(rng, NOUNS[new])},
    "size": _size_words,
}


def sample_states(sample: Sample) -> list[np.ndarray]:
    """The N + 1 states of a sample: the initial one, then the state after each step."""
    states = [sample.initial_array]
    for step in sample.steps:
        states.append(world.apply_step(states[-1], step.obj, step.value)[0])
    return states


def describe_sample(sample: Sample, rng: Chooser) -> list[StepText]:
    """Each step of a sample in words, in order."""
    states = sample_states(sample)
    return [describe_step(states[k], states[k + 1], s.obj, s.value, rng)
            for k, s in enumerate(sample.steps)]  # fmt: skip


def topic_and_category(sample: Sample) -> tuple[str, str]:
    """(topic, category): the changed attributes in step order, and as a set."""
    attrs = [s.attr for s in sample.steps]
    changed = [a for a in vocab.ATTRIBUTES if a in attrs]
    return ", ".join(attrs), " and ".join(changed)


def testbed_id(seed: int, sample_id: str) -> str:
    """The 16-hex VTT id of a TRANCE sample: sha256("trance-text/{seed}/{sample id}")."""
    return hashlib.sha256(f"trance-text/{seed}/{sample_id}".encode()).hexdigest()[:16]


def make_record(sample: Sample, texts: list[StepText], split: str, seed: int) -> dict[str, Any]:
    """The VTT record of a described sample."""
    sid, n = testbed_id(seed, sample.id), len(sample.steps)
    topic, category = topic_and_category(sample)
    annotation = []
    for i, (step, text) in enumerate(zip(sample.steps, texts, strict=True)):
        trance = {"obj": step.obj, "value": vocab.VALUES[step.value], "kind": text.kind,
                  "reference": text.reference}  # fmt: skip
        annotation.append({"clip_id": f"{sid}_{n}_{i}", "segment": [i, i + 1],
                           "label": text.text, "trance": trance})  # fmt: skip
    return {"id": sid, "youtube_id": sample.id, "ori": ORI, "split": split,
            "duration": float(n), "topic": topic, "category": category,
            "annotation": annotation}  # fmt: skip


def split_of(config: TextTestbedConfig) -> list[str]:
    """The split of each sample number: a seeded permutation, Table 1's shares of val and test."""
    total = sum(TABLE1_SAMPLES.values())
    n_val = round(config.num * TABLE1_SAMPLES["val"] / total)
    n_test = round(config.num * TABLE1_SAMPLES["test"] / total)
    out = ["train"] * config.num
    order = np.random.default_rng([config.seed, SPLIT_STREAM]).permutation(config.num)
    for rank, i in enumerate(order[: n_val + n_test]):
        out[int(i)] = "val" if rank < n_val else "test"
    return out


def wording(config: TextTestbedConfig, number: int) -> Chooser:
    """The word chooser of sample `number`: seeded by (seed, number), or the first choice."""
    if config.phrasing == "fixed":
        return FirstChoice()
    return np.random.default_rng([config.seed, number, TEXT_STREAM])


# --- reading a description back --------------------------------------------------------------
@dataclass(frozen=True)
class StepReading:
    """What a description in the templates' words tells: the kind of step and the new value
    ("color.green", "size.large", "shape.cube", "material.metal"; a move within view
    "position.<direction>.<steps>", a move out or in "position.<direction>"), and the words that
    name the object."""

    kind: str
    value: str
    ref: str


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def _canonical(table: Mapping[str, Iterable[str]]) -> dict[str, str]:
    return {word: key for key, words in table.items() for word in words}


_READ_FIELDS: dict[str, dict[str, str]] = {
    "color": {c: c for c in vocab.COLORS},
    "material": _canonical(NEW_MATERIAL),
    "shape": _canonical({k: v for k, v in NOUNS.items() if k}),
    "size": _canonical(NEW_SIZE),
    "change": {w: w for w in GROW + SHRINK},
    "distance": {w: str(k) for k, words in DISTANCE_WORDS.items() for w in words},
    "direction": _canonical(DIRECTION_WORDS),
    "side": {side: direction for direction, side in SIDE_WORDS.items()},
}


def _template_pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)\}", template)
    out = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(re.escape(part))
        elif part == "ref":
            out.append("(?P<ref>.+?)")
        else:
            out.append(f"(?P<{part}>{_alternatives(_READ_FIELDS[part])})")
    return re.compile("".join(out))


_READERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, _template_pattern(t)) for kind, templates in TEMPLATES.items() for t in templates
)


def _told_value(kind: str, fields: Mapping[str, str]) -> str:
    if kind in ("color", "material", "shape", "size"):
        return f"{kind}.{_READ_FIELDS[kind][fields[kind]]}"
    if kind == "in":
        return f"position.{_READ_FIELDS['side'][fields['side']]}"
    direction = _READ_FIELDS["direction"][fields["direction"]]
    if kind == "out":
        return f"position.{direction}"
    return f"position.{direction}.{_READ_FIELDS['distance'][fields['distance']]}"


def read_step_text(text: str) -> StepReading | None:
    """The kind, value and object words of a description in the templates' words (the inverse
    of `describe_step`, for scoring a model's descriptions on the testbed), or None if it fits
    no template. Case, spacing and a tokenizer's " - " in "medium - sized" are forgiven."""
    norm = " ".join(text.lower().replace(" - ", "-").split()).rstrip(" .")
    for kind, pattern in _READERS:
        m = pattern.fullmatch(norm)
        if m is not None:
            fields = m.groupdict()
            return StepReading(kind, _told_value(kind, fields), fields["ref"])
    return None


# --- the job -----------------------------------------------------------------------------------
@dataclass
class TextJob:
    """One shard: its number, and the split of each of its samples."""

    key: int
    splits: list[str]


class TextWorker:
    """Samples, describes and renders a shard's samples; its images go to OUT/states."""

    def __init__(self, config: TextTestbedConfig, out: Path, threads: int | None) -> None:
        from tvr.trance.render.raster import RasterRenderer

        if threads:  # Mesa's llvmpipe threads of one of several workers
            os.environ.setdefault("LP_NUM_THREADS", str(threads))
        self.config = config
        self.states = out / STATES_DIR
        self.renderer = RasterRenderer(config.preset)

    def build(self, job: TextJob, dest: Path, progress: Callable[[int], None]) -> None:
        from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler

        cfg = self.config
        sampler = ShardSampler(SamplerConfig(min_steps=cfg.min_steps, max_steps=cfg.max_steps),
                               cfg.seed, job.key)  # fmt: skip
        lines = []
        for i, split in enumerate(job.splits):
            sample = sampler.sample(i)
            number = job.key * cfg.shard_size + i
            rng = wording(cfg, number)
            record = make_record(sample, describe_sample(sample, rng), split, cfg.seed)
            self.render(sample, record["id"])
            lines.append({"record": record, "sample": sample.to_dict()})
            progress(1)
        write_jsonl(dest, lines)

    def render(self, sample: Sample, sid: str) -> None:
        """Write the N + 1 state images of a sample."""
        from PIL import Image

        from tvr.trance.render.scene import build_scene

        cfg = self.config
        rotations = [o.get("rotation", 0.0) for o in sample.objects]
        camera = sample.cameras[cfg.view]
        states = sample_states(sample)
        n = len(states)
        for i, state in enumerate(states):
            scene = build_scene(world.array_to_objects(state, rotations), camera, sample.lights)
            scene = dataclasses.replace(scene, width=cfg.width, height=cfg.height)
            buf = io.BytesIO()
            Image.fromarray(self.renderer.render_image(scene)).save(
                buf, format="JPEG", quality=cfg.jpeg_quality)  # fmt: skip
            write_file_bytes(self.states / f"{sid}_{n}_{i}.jpg", buf.getvalue())

    def close(self) -> None:
        self.renderer.close()


@dataclass
class TextTask:
    """The testbed as a `tvr.core.jobs.ShardTask`: shard k is OUT/shards/shard-0000k.jsonl."""

    config: TextTestbedConfig
    out: Path

    @property
    def name(self) -> str:
        return f"trance text testbed {self.out}"

    def plan(self) -> list[int]:
        return list(range(self.config.num_shards))

    def path(self, key: int) -> Path:
        return self.out / SHARDS_DIR / f"shard-{key:05d}.jsonl"

    def is_built(self, key: int) -> bool:
        return self.path(key).is_file()

    def label(self, key: int) -> str:
        return self.path(key).stem

    def prepare(self) -> None:
        # the images of a killed run are half written in OUT/states
        prepare_job_folder(self.out, self.config.to_dict(), STATES_DIR, leftovers=".*.jpg.*")

    def jobs(self, todo: list[int]) -> Iterator[TextJob]:
        splits = split_of(self.config)
        size = self.config.shard_size
        for k in todo:
            yield TextJob(k, splits[k * size : k * size + self.config.shard_count(k)])

    def make_worker(self, threads: int | None) -> TextWorker:
        return TextWorker(self.config, self.out, threads)


@dataclass
class TestbedResult:
    """What a testbed run made: the folder, the report, and the seconds this run took."""

    out: Path
    report: dict[str, Any]
    seconds: float
    built: int  # samples built by this run (not those of an earlier, killed run)


def make_text_testbed(
    config: TextTestbedConfig, out: str | Path, workers: int = 1, progress: bool = True
) -> TestbedResult:
    """Make (or finish) the text testbed of `config` in folder `out`."""
    config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a TRANCE text testbed")
    task = TextTask(config, out)
    start = time.perf_counter()
    todo_samples = run_with_bar(task, config.shard_count, config.num,
                                workers=min(workers, os.cpu_count() or 1), desc="testbed",
                                unit="sample", progress=progress)  # fmt: skip
    seconds = time.perf_counter() - start
    records, samples = [], []
    for key in task.plan():
        for _, line in iter_jsonl(task.path(key)):
            records.append(line["record"])
            samples.append(line["sample"])
    write_jsonl(out / SAMPLES_FILE, samples)
    write_jsonl(out / RECORDS_FILE, records)
    report = testbed_report(records)
    write_json(out / REPORT_FILE, report)
    return TestbedResult(out, report, seconds, todo_samples)


def testbed_report(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of a testbed: samples per split and per N, steps per kind and naming."""
    steps = [a for r in records for a in r["annotation"]]
    return {
        "samples": len(records),
        "splits": dict(Counter(r["split"] for r in records)),
        "transformations_per_sample": {
            str(k): v for k, v in sorted(Counter(len(r["annotation"]) for r in records).items())
        },
        "steps_by_kind": dict(Counter(a["trance"]["kind"] for a in steps)),
        "references": dict(Counter(a["trance"]["reference"] for a in steps)),
        "unique_descriptions": len({a["label"] for a in steps}),
    }


def report_lines(report: dict[str, Any], out: Path) -> list[str]:
    """The report as a few lines of text."""
    splits = ", ".join(f"{s} {report['splits'].get(s, 0)}" for s in ("train", "val", "test"))
    per_n = ", ".join(f"{k}: {v}" for k, v in report["transformations_per_sample"].items())
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(report["steps_by_kind"].items()))
    refs = ", ".join(f"{k} {v}" for k, v in sorted(report["references"].items()))
    return [
        f"{report['samples']} samples ({splits}) in {out / RECORDS_FILE} and {out / STATES_DIR}/",
        f"steps per sample (N: samples): {per_n}",
        f"steps by kind: {kinds}; objects named: {refs}",
        f"unique descriptions: {report['unique_descriptions']}",
    ]

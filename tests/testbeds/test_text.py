"""The TRANCE text testbed: every kind of step has several phrasings, each description names the
right object by a minimal description and tells the step's value, and the job writes VTT's
layout (read back by the VTT loader) deterministically and resumably."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest

from tvr.cli import main
from tvr.core.errors import UserError
from tvr.testbeds import text
from tvr.testbeds.text import (
    ADJECTIVES,
    DIRECTION_WORDS,
    DISTANCE_WORDS,
    NEW_MATERIAL,
    NEW_SIZE,
    NOUNS,
    REFER_ATTRIBUTES,
    SIDE_WORDS,
    TEMPLATES,
    StepReading,
    TextTestbedConfig,
    describe_sample,
    describe_step,
    make_text_testbed,
    read_step_text,
    refer,
    sample_states,
    split_of,
    wording,
)
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import vocab
from tvr.trance.world.simulator import COL_COLOR, COL_MATERIAL, COL_SHAPE, COL_SIZE, COL_X, COL_Y

_COLUMN = {"size": COL_SIZE, "color": COL_COLOR, "material": COL_MATERIAL, "shape": COL_SHAPE}
#: every word a referring expression may use -> (attribute, value index)
_WORDS = {
    w: (a, i)
    for a in REFER_ATTRIBUTES
    for i, name in enumerate(vocab.CATEGORIES[a])
    for w in (NOUNS[name] if a == "shape" else ADJECTIVES[name])
}


def _resolve(ref: str, state: np.ndarray) -> tuple[list[int], int]:
    """The visible objects of `state` that a referring expression fits, and its attribute count
    (a reader's check, independent of how `refer` chose the words)."""
    words = ref.split(" ", 1)[1]  # drop the article
    spatial = next((w for w in text.SPATIAL_WORDS if words.startswith(f"{w[0]} ")), None)
    if spatial:
        words = words.split(" ", 1)[1]
    said: dict[int, int] = {}
    for word in sorted(_WORDS, key=len, reverse=True):  # "medium-sized" before "medium"
        if f" {word} " in f" {words} ":
            attr, value = _WORDS[word]
            said[_COLUMN[attr]] = value
            words = f" {words} ".replace(f" {word} ", " ").strip()
    assert words in NOUNS[""] or words == "", f"left over in {ref!r}: {words!r}"
    visible = text.visible_objects(state)
    matches = [i for i in visible if all(state[i, c] == v for c, v in said.items())]
    if spatial:  # the one of them furthest that way
        _, column, sign = spatial
        matches = [max(matches, key=lambda i: sign * int(state[i, column]))]
    return matches, len(said)


def _split_reference(description: str, kind: str) -> str:
    """The referring expression at the start (or after "someone paints/pushes") of a text."""
    words = description.split()
    if words[0] == "someone":
        words = words[2:]
    nouns = {n for ns in NOUNS.values() for n in ns}
    end = next(i for i, w in enumerate(words) if w in nouns)
    return " ".join(words[: end + 1])


def _samples(n: int, seed: int = 0):
    sampler = ShardSampler(SamplerConfig(), seed, 0)
    return [sampler.sample(i) for i in range(n)]


def test_every_kind_of_step_has_several_phrasings_and_every_value_has_words():
    assert set(TEMPLATES) == {"color", "material", "shape", "size", "inner", "out", "in"}
    for kind, templates in TEMPLATES.items():
        assert len(set(templates)) >= 4, kind
        assert all("{ref}" in t for t in templates)
    for attr in REFER_ATTRIBUTES:
        for name in vocab.CATEGORIES[attr]:
            assert (NOUNS if attr == "shape" else ADJECTIVES)[name]
    assert set(NEW_MATERIAL) == set(vocab.MATERIALS) and set(NEW_SIZE) == set(vocab.SIZES)
    assert set(DIRECTION_WORDS) == set(SIDE_WORDS) == set(vocab.DIRECTIONS)


def test_descriptions_name_the_right_object_minimally_and_tell_the_new_value():
    seen_templates: dict[str, set[str]] = {}
    references: Counter[str] = Counter()
    for sample in _samples(40):
        states = sample_states(sample)
        assert np.array_equal(states[-1], sample.final_array)
        rng = np.random.default_rng(7)
        for k, step in enumerate(sample.steps):
            before, after = states[k], states[k + 1]
            said = describe_step(before, after, step.obj, step.value, rng)
            attr, new = vocab.VALUES[step.value].split(".", 1)
            if attr == "position":
                assert said.kind == step.move_type
            else:
                assert said.kind == attr
            ref = _split_reference(said.text, said.kind)
            state = after if said.kind == "in" else before
            matches, n_attrs = _resolve(ref, state)
            references[said.reference] += 1
            if said.reference == "ambiguous":  # an identical twin no position word tells apart
                assert step.obj in matches and len(matches) > 1
            else:
                assert matches == [step.obj], (said.text, ref)
            # minimal: no fewer attributes single the object out
            others = [i for i in text.visible_objects(state) if i != step.obj]
            for subset in itertools.combinations(_COLUMN.values(), n_attrs - 1):
                if subset:
                    assert any(all(state[i, c] == state[step.obj, c] for c in subset)
                               for i in others), (said.text, subset)  # fmt: skip
            rest = said.text[said.text.index(ref) + len(ref) :]
            if attr == "color":
                assert f" {new}" in rest
            elif attr == "material":
                assert rest.endswith(new)
            elif attr == "shape":
                assert rest.split()[-1] in NOUNS[new]
            elif attr == "size":
                assert any(f" {w}" in rest for w in NEW_SIZE[new])
                grows = vocab.SIZES.index(new) < before[step.obj, COL_SIZE]
                assert not any(v in rest for v in (text.SHRINK if grows else text.GROW))
            else:
                direction, steps = new.rsplit(".", 1)
                if said.kind == "in":
                    assert rest.endswith(f"from {SIDE_WORDS[direction]}")
                else:
                    assert any(w in rest for w in DIRECTION_WORDS[direction]), said.text
                if said.kind == "inner":
                    assert any(w in rest for w in DISTANCE_WORDS[int(steps)])
            template = next(t for t in TEMPLATES[said.kind]
                            if _fits(t, said.text))  # fmt: skip
            seen_templates.setdefault(said.kind, set()).add(template)
    assert all(len(seen_templates.get(kind, ())) >= 2 for kind in TEMPLATES), seen_templates
    assert references["minimal"] > 0.9 * sum(references.values())


def _fits(template: str, description: str) -> bool:
    fixed = [p for p in template.replace("}", "{").split("{")[::2] if p.strip()]
    return all(p.strip() in description for p in fixed)


def _state(*objects):
    """A state of objects (x, y, size, color, material, shape) by names."""
    return np.array([(x, y, vocab.SIZES.index(s), vocab.COLORS.index(c),
                      vocab.MATERIALS.index(m), vocab.SHAPES.index(h))
                     for x, y, s, c, m, h in objects], dtype=np.int16)  # fmt: skip


def test_identical_objects_are_told_apart_by_position_or_counted_as_ambiguous():
    # the third twin stands further left but out of view (x = 30 > 20): it does not count
    twins = _state((0, -10, "large", "red", "metal", "cube"), (0, 10, "large", "red", "metal",
                   "cube"), (30, -30, "large", "red", "metal", "cube"))  # fmt: skip
    rng = np.random.default_rng(0)
    left, how = refer(twins, 0, rng)
    assert how == "spatial" and left.startswith("the leftmost ")
    right, how = refer(twins, 1, rng)
    assert how == "spatial" and right.startswith("the rightmost ")
    assert _resolve(left, twins)[0] == [0] and _resolve(right, twins)[0] == [1]
    middle = _state((0, -10, "small", "red", "rubber", "cube"), (0, 0, "small", "red", "rubber",
                    "cube"), (0, 10, "small", "red", "rubber", "cube"))  # fmt: skip
    words, how = refer(middle, 1, rng)
    assert how == "ambiguous" and _resolve(words, middle)[0] == [0, 1, 2]


def test_a_lone_attribute_suffices_and_an_entering_object_takes_a():
    state = _state((0, 0, "large", "red", "metal", "cube"), (10, 10, "large", "blue", "metal",
                   "cube"), (30, 30, "small", "red", "rubber", "sphere"))  # fmt: skip
    seen = {refer(state, 0, np.random.default_rng(s))[0] for s in range(30)}
    assert all(_resolve(w, state) == ([0], 1) for w in seen)  # only the colour tells them apart
    assert {w.split()[1] for w in seen} == {"red"}
    after = state.copy()
    after[2, COL_X], after[2, COL_Y] = 10, -10
    said = describe_step(
        state, after, 2, vocab.position_value("front", 2), np.random.default_rng(1)
    )
    assert said.kind == "in" and said.text.split()[0] in ("a", "an")
    assert said.text.endswith("from the front")


def test_same_seed_same_words_and_seeds_vary_the_phrasing():
    samples = _samples(12)
    a = [describe_sample(s, np.random.default_rng([0, i])) for i, s in enumerate(samples)]
    b = [describe_sample(s, np.random.default_rng([0, i])) for i, s in enumerate(samples)]
    c = [describe_sample(s, np.random.default_rng([1, i])) for i, s in enumerate(samples)]
    assert a == b and a != c


def test_a_description_reads_back_into_its_kind_and_new_value():
    samples = _samples(120, seed=3)
    kinds = set()
    for i, sample in enumerate(samples):
        for step, said in zip(sample.steps, describe_sample(sample, np.random.default_rng([5, i])),
                              strict=True):  # fmt: skip
            told = read_step_text(said.text)
            value = vocab.VALUES[step.value]
            if said.kind in ("out", "in"):  # their words tell the direction, not the distance
                value = value.rsplit(".", 1)[0]
            assert told is not None and (told.kind, told.value) == (said.kind, value), said.text
            assert said.text.startswith(told.ref) or said.text.startswith("someone")
            kinds.add(told.kind)
    assert kinds == set(TEMPLATES)
    # a tokenizer's spacing and case are forgiven; anything else fits no template
    told = read_step_text("The Medium - sized thing is painted  cyan .")
    assert (told.kind, told.value, told.ref) == ("color", "color.cyan", "the medium-sized thing")
    assert read_step_text("the block is resized to big") == StepReading(
        "size", "size.large", "the block"
    )
    assert read_step_text("the cube is painted purple-ish") is None
    assert read_step_text("the cube slides far upward") is None
    assert read_step_text("") is None


def test_fixed_phrasing_gives_one_wording_per_step():
    samples = _samples(12)
    fixed = TextTestbedConfig(phrasing="fixed")
    a = [describe_sample(s, wording(fixed, i)) for i, s in enumerate(samples)]
    b = [describe_sample(s, wording(fixed, i + 100)) for i, s in enumerate(samples)]
    assert a == b
    for said in (t for steps in a for t in steps):
        assert _fits(TEMPLATES[said.kind][0], said.text), said.text
    with pytest.raises(UserError, match="phrasing"):
        TextTestbedConfig(phrasing="random").validate()


def test_splits_follow_table1_shares():
    splits = split_of(TextTestbedConfig(num=200, seed=5))
    assert (splits.count("val"), splits.count("test")) == (20, 21)
    assert split_of(TextTestbedConfig(num=200, seed=6)) != splits


def _raster_or_skip():
    pytest.importorskip("moderngl")
    from tvr.trance.render.raster import create_context

    try:
        create_context().release()
    except RuntimeError as err:
        pytest.skip(str(err))


def test_cli_writes_vtt_layout_that_the_vtt_loader_reads_and_resumes(tmp_path, capsys):
    _raster_or_skip()
    from PIL import Image

    from tvr.vtt.data.records import check_states, read_records

    out = tmp_path / "testbed"
    argv = ["vtt", "testbed", "--out", str(out), "--num", "5", "--shard-size", "2",
            "--image-size", "64x48", "--preset", "preview", "--seed", "3", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "5 samples (train 4, val 0, test 1)" in printed and "samples/s" in printed
    records = read_records(out / "meta" / "vtt.jsonl")
    assert len(records) == 5 and {r.ori for r in records} == {"trance"}
    assert check_states(records, out / "states", out / "meta" / "vtt.jsonl", verify=True) == sum(
        r.n + 1 for r in records)  # fmt: skip
    with Image.open(out / "states" / records[0].state_names()[0]) as im:
        assert im.size == (64, 48)
    trance = [json.loads(line) for line in (out / "meta" / "trance_samples.jsonl").open()]
    assert [s["id"] for s in trance] == [r.youtube_id for r in records]
    assert all(r.topic == ", ".join(s["attr"] for s in t["steps"])
               for r, t in zip(records, trance, strict=True))  # fmt: skip
    before = (out / "meta" / "vtt.jsonl").read_bytes()
    image = out / "states" / records[-1].state_names()[-1]
    pixels = image.read_bytes()
    (out / "shards" / "shard-00002.jsonl").unlink()
    image.unlink()
    result = make_text_testbed(TextTestbedConfig(num=5, seed=3, shard_size=2, width=64,
                               height=48, preset="preview"), out, progress=False)  # fmt: skip
    assert result.built == 1
    assert (out / "meta" / "vtt.jsonl").read_bytes() == before
    assert image.read_bytes() == pixels
    assert main(["vtt", "stats", "--data", str(out / "meta" / "vtt.jsonl")]) == 0
    assert main([*argv[:-3], "--seed", "4"]) == 2
    assert "another config" in capsys.readouterr().err

"""The cached reference arrays and the fast readers/writers give what the JSONL path gives."""

import json
import os
import time
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import orjson
import pytest

from tvr.core.errors import InputError
from tvr.core.jsonl import write_jsonl
from tvr.core.manifest import sha256_file
from tvr.trance.data.files import read_samples, write_samples
from tvr.trance.eval import references
from tvr.trance.eval.baselines import predict
from tvr.trance.eval.detail import detail_jsonl
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.eval.metrics import (
    ReferenceTable,
    details,
    read_predictions,
    score,
    summarize,
)
from tvr.trance.eval.plain import compact_steps, spaced_steps
from tvr.trance.eval.references import cache_path, reference_table, write_reference_cache
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world.vocab import VALUES, VIEWS

TABLE_FIELDS = ("views", "init", "final", "objs", "values", "options", "order_sensitive")


@pytest.fixture(scope="module")
def samples():
    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=5, shard=0)
    out = [sampler.sample(i) for i in range(160)]
    # two samples that name their own view (scored on that view only in View)
    out[3] = replace(out[3], extra={"view": "R"})
    out[7] = replace(out[7], extra={"view": "C"})
    assert any(len(st.options) > 1 for s in out for st in s.steps[:1]), "an 'out' move"
    assert any(len(s.steps) == 1 for s in out) and any(len(s.steps) == 4 for s in out)
    return out


def _jsonl_path(samples_path, preds_path, setting, views=("L", "C", "R"), lenient=False):
    """summary and detail.jsonl bytes the way `tvr evaluate` made them before the cache."""
    ref = ReferenceTable.from_samples(read_samples(samples_path), setting, views)
    pred = read_predictions(preds_path, ref, lenient=lenient, fast=False)
    s = score(ref, pred)
    summary = summarize(ref, pred, s)
    if pred.problems:
        summary["problems"] = pred.problems[:100]
    detail = b"".join(orjson.dumps(d) + b"\n" for d in details(ref, pred, s))
    return summary, detail


def _evaluated(samples_path, preds_path, setting, out, views=("L", "C", "R"), lenient=False):
    summary = evaluate_files(samples_path, preds_path, setting, out, lenient, views)
    del summary["samples_file"], summary["predictions_file"]
    assert json.loads((out / "summary.json").read_text())["setting"] == setting
    return summary, (out / "detail.jsonl").read_bytes()


def _same(a, b):
    assert json.dumps(a[0]) == json.dumps(b[0])
    assert a[1] == b[1]


def _same_predictions(got, want, name=""):
    """Two PredictionTables hold the same steps (the ones after the 4th too) and problems."""
    for field in ("objs", "values", "present"):
        assert np.array_equal(getattr(got, field), getattr(want, field)), (name, field)
    for field in ("rows", "start", "objs", "values"):
        x, y = getattr(got.more, field), getattr(want.more, field)
        assert x.dtype == y.dtype and np.array_equal(x, y), (name, "more." + field)
    assert got.long_lines == want.long_lines, name
    assert got.errors == want.errors and got.problems == want.problems, name


def _longer(records, seed):
    """The records with every third one given 1 to 12 steps more (some no-ops, some moves)."""
    rng = np.random.default_rng(seed)
    out = []
    for i, r in enumerate(records):
        if i % 3 == 0:
            extra = [
                {"obj": int(rng.integers(10)), "value": VALUES[int(rng.integers(len(VALUES)))]}
                for _ in range(int(rng.integers(1, 13)))
            ]
            r = {**r, "steps": r["steps"] + [r["steps"][-1]] + extra}  # a no-op, then the rest
        out.append(r)
    return out


def _assert_tables_equal(a, b):
    assert a.setting == b.setting and a.ids == b.ids and a.index == b.index
    for name in TABLE_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert np.array_equal(x, y), name


@pytest.mark.parametrize(
    "setting,views", [("basic", "LCR"), ("event", "LCR"), ("view", "LCR"), ("view", "RL")]
)
def test_table_from_cache_equals_table_from_samples(tmp_path, samples, setting, views):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    expected = ReferenceTable.from_samples(read_samples(path), setting, tuple(views))
    for _ in range(2):  # built from the JSONL, then read from the cache
        _assert_tables_equal(reference_table(path, setting, tuple(views)), expected)
        assert cache_path(path).is_file()
    _assert_tables_equal(reference_table(path, setting, tuple(views), cache=False), expected)
    if setting == "view":  # the samples with their own view have one row each
        assert [v for (i, v) in expected.index if i == samples[3].id] == [2]


def _bad_lines(records):
    """A predictions file with every kind of bad line, some samples left out."""
    lines = []
    for i, r in enumerate(records):
        kind = i % 16
        if kind == 0:
            lines.append("{not json")
        elif kind == 1:
            lines.append(json.dumps({**r, "id": "nope"}))
        elif kind == 2:
            lines.append(json.dumps({**r, "steps": [{"obj": 12, "value": "color.red"}]}))
        elif kind == 3:
            lines.append(json.dumps({**r, "steps": [{"obj": 1, "value": "color.pink"}]}))
        elif kind == 4:
            lines.append(json.dumps({**r, "steps": [[1, "color.red"]] * 5}))
        elif kind == 5:
            lines.append(json.dumps({k: v for k, v in r.items() if k != "view"}))
        elif kind == 6:
            lines += ["", json.dumps(r), json.dumps(r)]  # a blank line, then a second prediction
        elif kind == 7:
            lines.append(json.dumps([1, 2]))
        elif kind == 8:
            lines.append(json.dumps({**r, "view": "Q"}))
        elif kind == 9:
            continue  # missing
        else:
            lines.append(json.dumps(r, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def _prediction_files(tmp_path, samples, setting, views=VIEWS):
    """Baselines, a json.dumps-spaced file with rows missing, and a file of bad lines, for the
    rows that `views` scores."""
    index = ReferenceTable.from_samples(samples, setting, views).index

    def records(name, seed=2):
        out = predict(name, samples, setting, seed=seed)
        return [
            r
            for r in out
            if (r["id"], VIEWS.index(r.get("view", "?")) if "view" in r else -1) in index
        ]

    files = {}
    for name in ("oracle", "random", "reversed"):
        files[name] = tmp_path / f"{name}.jsonl"
        write_jsonl(files[name], records(name))
    records3 = records("random", seed=3)
    spaced = [
        json.dumps(r if i % 3 else {**r, "steps": [[s["obj"], s["value"]] for s in r["steps"]]})
        for i, r in enumerate(records3)
        if i % 7
    ]  # json.dumps spacing, list-form steps on some lines, every seventh row missing
    files["spaced"] = tmp_path / "spaced.jsonl"
    files["spaced"].write_text("\n".join(spaced))
    files["bad"] = tmp_path / "bad.jsonl"
    files["bad"].write_text(_bad_lines(records("oracle")))
    # lines with more than 4 steps (simulated in Event and View, bad lines in Basic)
    files["long"] = tmp_path / "long.jsonl"
    write_jsonl(files["long"], _longer(records("random", seed=8), seed=1))
    files["long spaced"] = tmp_path / "long-spaced.jsonl"
    files["long spaced"].write_text(
        "".join(json.dumps(r) + "\n" for r in _longer(records("oracle"), seed=2)[::-1])
    )  # in reverse order
    return files


@pytest.mark.parametrize(
    "setting,views", [("basic", "LCR"), ("event", "LCR"), ("view", "LCR"), ("view", "RL")]
)
def test_evaluation_equals_the_jsonl_path(tmp_path, samples, setting, views):
    views = tuple(views)
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    files = _prediction_files(tmp_path, samples, setting, views)
    for name, preds in files.items():
        for lenient in (False, True):
            try:
                expected = _jsonl_path(path, preds, setting, views, lenient)
            except InputError as err:
                long_basic = name.startswith("long") and setting == "basic"
                assert not lenient and (name == "bad" or long_basic)
                with pytest.raises(InputError) as got:
                    evaluate_files(path, preds, setting, tmp_path / "x", lenient, views)
                assert str(got.value) == str(err)
                continue
            for run in ("cold", "warm"):
                if run == "cold":
                    cache_path(path).unlink(missing_ok=True)
                out = tmp_path / f"out-{name}-{lenient}-{run}"
                _same(_evaluated(path, preds, setting, out, views, lenient), expected)
            if name == "bad":
                assert expected[0]["invalid"] > 0 and expected[0]["missing"] > 0
            if name == "spaced":
                assert expected[0]["missing"] > 0
            if name.startswith("long"):
                assert expected[0]["long_predictions"] > 0
                assert setting != "basic" or expected[0]["invalid"] > 0


@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_fast_prediction_readers_take_plain_files_only(tmp_path, samples, setting):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    ref = reference_table(path, setting)
    files = _prediction_files(tmp_path, samples, setting)
    records = predict("random", samples, setting, seed=6)[::-1]  # another order, all spaced
    files["json.dumps"] = tmp_path / "dumps.jsonl"
    files["json.dumps"].write_text("".join(json.dumps(r) + "\n" for r in records))
    k = 1 if setting == "basic" else 4
    for name in ("oracle", "random", "reversed"):
        assert compact_steps(files[name].read_bytes(), ref, k) is not None, name
    assert compact_steps(files["json.dumps"].read_bytes(), ref, k) is None
    assert spaced_steps(files["json.dumps"].read_bytes(), ref, k) is not None
    for name in ("bad", "spaced"):  # bad lines; list-form steps
        assert compact_steps(files[name].read_bytes(), ref, k) is None
        assert spaced_steps(files[name].read_bytes(), ref, k) is None
    # longer than 4 steps: read in bulk when every step is simulated (Event, View), else not
    limit = 1 if setting == "basic" else None
    long, long_spaced = files["long"].read_bytes(), files["long spaced"].read_bytes()
    assert (compact_steps(long, ref, limit) is None) == (setting == "basic")
    assert (spaced_steps(long_spaced, ref, limit) is None) == (setting == "basic")
    assert compact_steps(long, ref, 4) is None and spaced_steps(long_spaced, ref, 4) is None
    # and what they read is what the line-by-line parser reads
    names = ["oracle", "random", "json.dumps"] + ["long", "long spaced"] * (setting != "basic")
    for name in names:
        a = read_predictions(files[name], ref)
        b = read_predictions(files[name], ref, fast=False)
        _same_predictions(a, b, name)
        assert b.present.any() and not b.errors and not b.problems
        assert (b.long_lines > 0) == name.startswith("long")
    for policy in ("strict", "lenient"):  # the fast readers leave long lines to the line parser
        for lenient in (False, True):
            try:
                want = read_predictions(files["long"], ref, lenient, False, policy)
            except InputError as err:
                assert policy == "strict" and not lenient and err.field == "steps"
                with pytest.raises(InputError) as got:
                    read_predictions(files["long"], ref, lenient, max_steps_policy=policy)
                assert str(got.value) == str(err)
                continue
            got = read_predictions(files["long"], ref, lenient, max_steps_policy=policy)
            _same_predictions(got, want)
            assert want.long_lines == len(want.problems) > 0 and not len(want.more.rows)


@pytest.mark.parametrize("odd_ids", [False, True])
def test_detail_bytes_equal_the_dict_records(tmp_path, samples, odd_ids):
    if odd_ids:  # ids orjson escapes, or not ASCII
        odd = ['q"uote', "back\\slash", "tab\tid", "\u00fcn\u00ef", "nul\x00"]
        samples = [replace(x, id=odd[i]) if i < len(odd) else x for i, x in enumerate(samples)]
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    for setting in ("basic", "event", "view"):
        ref = reference_table(path, setting)
        preds = tmp_path / "p.jsonl"
        preds.write_text(_bad_lines(predict("random", samples, setting, seed=4)))
        pred = read_predictions(preds, ref, lenient=True)
        s = score(ref, pred)
        fast = b"".join(detail_jsonl(ref, pred, s, chunk=7))
        assert fast == b"".join(orjson.dumps(d) + b"\n" for d in details(ref, pred, s))
        assert b'"problem":"missing"' in fast and b'"problem":"unknown value' in fast
        if setting != "basic":  # scores no evaluation makes: the lines still follow `details`
            s.norm_distance[:3] = [-0.0, 1e-7, 1e300]
            s.distance[3] = -5
            s.first_broken_step[4], s.first_broken_rule[4] = 3, 2
            fast = b"".join(detail_jsonl(ref, pred, s, chunk=50))
            assert fast == b"".join(orjson.dumps(d) + b"\n" for d in details(ref, pred, s))
            assert b'"norm_distance":-0.0' in fast


# --- when the cache is rebuilt ---------------------------------------------------------------------
_SAME_LENGTH = {"gray": "blue", "blue": "cyan", "cyan": "gray", "green": "brown", "brown": "green",
                "purple": "yellow", "yellow": "purple"}  # fmt: skip


def _edit_final_colour(path, row):
    """Give one object of sample `row` another colour of the same length in its final state,
    keeping the file's size and mtime: the reference changes, the stat does not (but ctime)."""
    st = os.stat(path)
    lines = path.read_bytes().splitlines(keepends=True)
    d = orjson.loads(lines[row])
    obj = next(o for o in d["final"] if o["color"] in _SAME_LENGTH)
    obj["color"] = _SAME_LENGTH[obj["color"]]
    new = orjson.dumps(d) + b"\n"
    assert len(new) == len(lines[row]) and new != lines[row]
    lines[row] = new
    path.write_bytes(b"".join(lines))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_size == st.st_size and os.stat(path).st_mtime_ns == st.st_mtime_ns


def _header(path):
    return references._read_cache(cache_path(path))[0]


def _next_clock_tick(path):
    """Wait until a file made now gets a newer ctime than `path` (a tick is ~1 ms to 2 s)."""
    probe = path.with_name("probe")
    for _ in range(300):
        probe.write_bytes(b"")
        if os.stat(probe).st_ctime_ns > os.stat(path).st_ctime_ns:
            break
        time.sleep(0.01)
    probe.unlink()


def test_same_size_edit_with_old_mtime_rebuilds_the_cache(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    preds = tmp_path / "oracle.jsonl"
    write_jsonl(preds, predict("oracle", samples, "event"))
    _next_clock_tick(path)  # the cache is made in a later tick: the stat will be trusted
    before = evaluate_files(path, preds, "event", tmp_path / "a")
    assert before["metrics"]["Acc"] == 1.0
    assert _header(path)["settled"], "this test is about the stat shortcut"
    _edit_final_colour(path, 10)
    after = evaluate_files(path, preds, "event", tmp_path / "b")
    assert after["metrics"]["Acc"] == pytest.approx(1 - 1 / len(samples))
    _same(_evaluated(path, preds, "event", tmp_path / "c"), _jsonl_path(path, preds, "event"))
    assert sha256_file(path) == _header(path)["sha256"]


def test_edit_right_after_the_cache_was_built_is_seen(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    preds = tmp_path / "oracle.jsonl"
    write_jsonl(preds, predict("oracle", samples, "event"))
    write_reference_cache(path)
    _edit_final_colour(path, 0)  # within the same clock tick, maybe: settled or not, it is seen
    summary = evaluate_files(path, preds, "event")
    assert summary["metrics"]["Acc"] == pytest.approx(1 - 1 / len(samples))
    _same(_evaluated(path, preds, "event", tmp_path / "c"), _jsonl_path(path, preds, "event"))


class _Clock:
    """`os` for references.py with a file system clock that stands still at `tick`: files made
    now get ctime `tick`, and samples.jsonl keeps reporting ctime `tick` after it is written."""

    def __init__(self, tick, samples=None):
        self.tick, self.samples = tick, samples

    def __getattr__(self, name):
        return getattr(os, name)

    def fstat(self, fd):
        return SimpleNamespace(st_ctime_ns=self.tick)

    def stat(self, p):
        st = os.stat(p)
        if str(p) != str(self.samples):
            return st
        return SimpleNamespace(
            st_size=st.st_size,
            st_mtime_ns=st.st_mtime_ns,
            st_ctime_ns=self.tick,
            st_ino=st.st_ino,
            st_dev=st.st_dev,
        )


def test_edit_in_the_clock_tick_of_the_build_is_not_trusted(tmp_path, samples, monkeypatch):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    preds = tmp_path / "oracle.jsonl"
    write_jsonl(preds, predict("oracle", samples, "event"))
    tick = os.stat(path).st_ctime_ns
    monkeypatch.setattr(references, "os", _Clock(tick))
    write_reference_cache(path)  # in the tick samples.jsonl was written in
    assert not _header(path)["settled"]
    _edit_final_colour(path, 0)  # same size and mtime, and (as the clock stands) same ctime
    monkeypatch.setattr(references, "os", _Clock(tick, path))
    assert all(
        _header(path)[k] == v for k, v in references._stat_record(references.os.stat(path)).items()
    )
    summary = evaluate_files(path, preds, "event")
    assert summary["metrics"]["Acc"] == pytest.approx(1 - 1 / len(samples))


def test_samples_added_rebuild_the_cache(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples[:100])
    assert write_reference_cache(path) == cache_path(path)
    write_samples(path, samples)
    assert len(reference_table(path, "event").ids) == len(samples)
    assert _header(path)["count"] == len(samples)


def test_untrusted_stat_with_same_bytes_keeps_the_arrays(tmp_path, samples, monkeypatch):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    write_reference_cache(path)
    os.utime(path, ns=(1, 1))  # stat changed, bytes not: hashed, found equal, not parsed
    monkeypatch.setattr(references, "parse_samples", lambda p: pytest.fail("parsed again"))
    _assert_tables_equal(
        reference_table(path, "event"), ReferenceTable.from_samples(samples, "event")
    )
    assert _header(path)["mtime_ns"] == 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped", "old format", "shape"])
def test_damaged_cache_is_rebuilt(tmp_path, samples, damage):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    cache = write_reference_cache(path)
    data = bytearray(cache.read_bytes())
    if damage == "garbage":
        cache.write_bytes(b"not a zip file")
    elif damage == "truncated":
        cache.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "flipped":  # one byte inside the arrays: the zip's CRC no longer matches
        data[len(data) // 2] ^= 0x55
        cache.write_bytes(bytes(data))
    else:
        arrays = references.parse_samples(path)[0]
        header = {**_header(path), "format": "tvr.trance.refcache/0"}
        if damage == "shape":
            header = _header(path)
            arrays.init = arrays.init[:-1]
        fd, tmp = references._open_temp(cache)
        references._write(fd, tmp, cache, arrays, header)
    assert references._read_cache(cache) is None
    _assert_tables_equal(
        reference_table(path, "view"), ReferenceTable.from_samples(samples, "view")
    )
    assert references._read_cache(cache) is not None, "rewritten"


def test_read_only_folder_evaluates_without_a_cache(tmp_path, samples, monkeypatch):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    preds = tmp_path / "random.jsonl"
    write_jsonl(preds, predict("random", samples, "event", seed=1))
    write_reference_cache(path)
    _edit_final_colour(path, 4)  # the cache is stale and cannot be replaced

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(references, "tempfile", SimpleNamespace(mkstemp=refuse))
    stale = cache_path(path).read_bytes()
    _same(_evaluated(path, preds, "event", tmp_path / "o"), _jsonl_path(path, preds, "event"))
    assert cache_path(path).read_bytes() == stale
    assert write_reference_cache(path) is None, "the stale cache is not a cache of this file"
    cache_path(path).unlink()
    assert write_reference_cache(path) is None
    _same(_evaluated(path, preds, "event", tmp_path / "p"), _jsonl_path(path, preds, "event"))
    assert not cache_path(path).exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_read_only_folder_for_real(tmp_path, samples):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "samples.jsonl"
    write_samples(path, samples)
    preds = tmp_path / "oracle.jsonl"
    write_jsonl(preds, predict("oracle", samples, "view"))
    folder.chmod(0o555)
    try:
        _same(_evaluated(path, preds, "view", tmp_path / "o"), _jsonl_path(path, preds, "view"))
        assert not cache_path(path).exists()
    finally:
        folder.chmod(0o755)


# --- bad samples files -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit",
    [
        lambda d: "{broken",
        lambda d: {k: v for k, v in d.items() if k != "final"},
        lambda d: {**d, "format": "tvr.trance.sample/0"},
        lambda d: {**d, "steps": []},
        lambda d: {**d, "steps": [{**d["steps"][0], "obj": 10}]},
        lambda d: {**d, "steps": [{**d["steps"][0], "value": "colour.red"}]},
        lambda d: {**d, "objects": d["objects"][:9]},
        lambda d: {**d, "final": [{**d["final"][0], "position": [41, 0]}, *d["final"][1:]]},
        lambda d: {**d, "final": [{**d["final"][0], "size": "huge"}, *d["final"][1:]]},
        lambda d: {**d, "id": "t5-0000-00001"},  # the id of the next line: appears twice
        lambda d: {**d, "id": ""},
        lambda d: {**d, "steps": [d["steps"][0], {**d["steps"][0], "options": ["colour.red"]}]},
        lambda d: {**d, "steps": [d["steps"][0], {**d["steps"][0], "options": "color.red"}]},
        lambda d: {**d, "steps": [d["steps"][0], [1, "color.red"]]},
        *(  # positions that unpack into two items, or not
            lambda d, pos=pos: {**d, "objects": [{**d["objects"][0], "position": pos}, *d["objects"][1:]]}
            for pos in ("12", {"x": 1, "y": 2}, [1, 2, 3], [1], 7, [True, 2], [1, 2.0], [-41, 0])
        ),
    ],
)
def test_bad_samples_give_the_errors_of_read_samples(tmp_path, samples, edit):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples[:5])
    lines = path.read_text().splitlines()
    new = edit(json.loads(lines[0]))
    lines[0] = new if isinstance(new, str) else json.dumps(new)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as expected:
        read_samples(path)
    with pytest.raises(InputError) as got:
        reference_table(path, "event")
    assert str(got.value) == str(expected.value)
    assert not cache_path(path).exists()


def test_unusual_but_valid_samples_read_like_read_samples(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples[:6])
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[1]["steps"][0]["obj"] = True  # an int to read_samples: object 1
    lines[2]["cameras"] = None
    path.write_text("\n\n".join(json.dumps(d, indent=None) for d in lines) + "\n\n")
    for setting in ("basic", "event", "view"):
        _assert_tables_equal(
            reference_table(path, setting), ReferenceTable.from_samples(read_samples(path), setting)
        )


def test_an_id_that_is_not_a_string_is_a_located_error_in_both_readers(tmp_path, samples):
    """One way everywhere (issue 28): an integer id is refused, not turned into "17"."""
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples[:2])
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[1]["id"] = 17
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    for read in (lambda p: reference_table(p, "event"), read_samples):
        with pytest.raises(InputError) as err:
            read(path)
        assert (err.value.line, err.value.field) == (2, "id") and "got 17" in err.value.reason


def test_own_view_that_is_not_a_view_is_a_located_error(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, [samples[0], replace(samples[1], extra={"view": "top"})])
    assert len(reference_table(path, "event").ids) == 2
    with pytest.raises(InputError) as err:
        reference_table(path, "view")
    assert err.value.line == 2 and err.value.field == "view" and "'top'" in err.value.reason


@pytest.mark.parametrize(
    "change",
    [
        lambda r: [r, r],  # a second prediction
        lambda r: [{**r, "id": "t9-0000-00000"}],  # unknown sample
        lambda r: [{**r, "steps": [{"obj": 1, "value": "color.red"}] * 5}],
        lambda r: [{**r, "steps": [{"obj": 1, "value": "color.pink"}]}],
        lambda r: [{k: v for k, v in r.items() if k != "view"}],
        lambda r: [{**r, "view": "Q"}],
        lambda r: [{**r, "id": "t5-\u00e9"}],  # unknown, not ASCII
    ],
)
@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_plain_lines_with_a_problem_read_like_the_line_parser(tmp_path, samples, setting, change):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    ref = reference_table(path, setting)
    records = predict("random", samples, setting, seed=5)
    preds = tmp_path / "p.jsonl"
    write_jsonl(preds, records[:10] + change(records[10]) + records[11:])  # compact lines
    for lenient in (False, True):
        try:
            want = read_predictions(preds, ref, lenient, fast=False)
        except InputError as err:
            with pytest.raises(InputError) as got:
                read_predictions(preds, ref, lenient)
            assert str(got.value) == str(err)
            continue
        got = read_predictions(preds, ref, lenient)
        _same_predictions(got, want)


@pytest.mark.parametrize(
    "edit",
    [
        lambda line: line + " ",  # trailing space
        lambda line: line + "\r",  # Windows line end
        lambda line: line[:-1] + ',"extra":1}',  # one key more
        lambda line: line.replace('"obj":', '"obj":1', 1),  # two-digit object
        lambda line: line.replace("}]}", "},]}"),  # not JSON
        lambda line: line.replace('"steps":[', '"steps": [ '),  # spaces JSON allows
        lambda line: line + line,  # two objects on a line
        lambda line: line + "\n   ",  # a line of spaces
        lambda line: line.replace('{"obj":', '{"value":"color.red","obj":', 1),  # key twice
        lambda line: line.replace('"id":"t5-', '"id":"t\\u0035-'),  # an escape, same id
        lambda line: line.replace('"id":"', '"id":"\u00e9'),  # unknown, not ASCII
        lambda line: line.replace('"obj":', '"abc":', 1),  # another key, same length
        lambda line: line.replace('"value":', '"valux":', 1),
    ],
)
@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_odd_compact_lines_read_like_the_line_parser(tmp_path, samples, setting, edit):
    path = tmp_path / "samples.jsonl"
    write_samples(path, samples)
    ref = reference_table(path, setting)
    lines = [orjson.dumps(r).decode() for r in predict("random", samples, setting, seed=7)]
    lines[10] = edit(lines[10])
    preds = tmp_path / "p.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    for lenient in (False, True):
        try:
            want = read_predictions(preds, ref, lenient, fast=False)
        except InputError as err:
            with pytest.raises(InputError) as got:
                read_predictions(preds, ref, lenient)
            assert str(got.value) == str(err)
            continue
        got = read_predictions(preds, ref, lenient)
        _same_predictions(got, want)


def test_raw_control_character_in_an_id_is_not_json(tmp_path, samples):
    path = tmp_path / "samples.jsonl"
    write_samples(path, [replace(samples[0], id="a\tb"), *samples[1:5]])
    ref = reference_table(path, "event")
    preds = tmp_path / "p.jsonl"
    preds.write_bytes(b'{"id":"a\tb","steps":[]}\n')  # a raw tab: not JSON
    with pytest.raises(InputError, match="not valid JSON"):
        read_predictions(preds, ref)
    preds.write_bytes(b'{"id":"a\\tb","steps":[]}\n')  # escaped: fine
    assert read_predictions(preds, ref).present[0]

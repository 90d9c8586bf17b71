"""Caches beside CLEVRER's data, so that a second `tvr clevrer evaluate` or `execute` of the same
files reads arrays instead of parsing and checking JSON again.

    questions/validation.json  ->  questions/validation.qcache.npz
        the checked question file (every field, so `read_questions` gives the same objects)
    dynamics/ (sim_XXXXX.json) ->  dynamics.facts-given.npz (or facts-proposed, per --collisions)
        what the executor reads of each video's dynamics: the objects, the factual run's events
        and motion (xy, velocity, visible), each counterfactual run's events

Both are uncompressed `.npz` files read with `allow_pickle=False`; their header (JSON as uint8)
records the format, and for each source file its size, mtime_ns, ctime_ns, inode and device.
A cache is used only when every source file's stat equals the recorded one and the record was
"settled" (the source was last changed before the build began: a write during the build, or in
the same clock tick, would otherwise go unseen; a write sets ctime, which no program can set
back, and replacing a file gives a new inode). Anything else (missing, unreadable, another
format or set of files, a stat that differs) rebuilds it from the JSON: a temporary file, then
os.replace; when the folder is not writable the JSON is read and nothing is written. Source
files with a fault are never cached: their error is raised as before.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tvr.clevrer.data.questions import Choice, Question, VideoQuestions
from tvr.clevrer.programs.facts import Event, Motion, ObjectProps, Run, SceneFacts
from tvr.core.gc_pause import without_gc

QUESTIONS_FORMAT = "tvr.clevrer.questions-cache/1"
FACTS_FORMAT = "tvr.clevrer.facts-cache/1"
EVENT_KINDS = ("in", "out", "collision")


def questions_cache_path(path: str | Path) -> Path:
    """validation.json -> validation.qcache.npz (beside it)."""
    path = Path(path)
    return path.with_name(f"{path.stem}.qcache.npz")


def facts_cache_path(folder: str | Path, collisions: str) -> Path:
    """dynamics/ -> dynamics.facts-given.npz (beside the folder)."""
    folder = Path(folder)
    return folder.with_name(f"{folder.name}.facts-{collisions}.npz")


# --- stat records, reading and writing -----------------------------------------------------------
def _stat(path: Path) -> list[int]:
    st = os.stat(path)
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def _json_array(obj: Any) -> np.ndarray:
    return np.frombuffer(orjson.dumps(obj), dtype=np.uint8)


def _read(cpath: Path, fmt: str) -> tuple[dict[str, Any], dict[str, np.ndarray]] | None:
    """(header, arrays) of a settled cache file of format `fmt`, else None."""
    if not cpath.is_file():
        return None
    try:
        with np.load(cpath, allow_pickle=False) as z:
            header = orjson.loads(z["header"].tobytes())
            if not isinstance(header, dict) or header.get("format") != fmt:
                return None
            if not header.get("settled"):
                return None
            return header, {name: z[name] for name in z.files if name != "header"}
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def _build(cpath: Path, fmt: str, sources: Callable[[], list[list[Any]]],
           make: Callable[[], tuple[Any, dict[str, Any], dict[str, np.ndarray]]]) -> Any:  # fmt: skip
    """Run `make` (-> (value, header fields, arrays)) and cache its arrays at `cpath` when the
    source files (`sources()`: one stat record each) did not change while it ran."""
    try:  # made first: its ctime is the build's start
        fd, tmp = tempfile.mkstemp(prefix=f".{cpath.name}.", suffix=".tmp", dir=cpath.parent)
    except OSError:
        return make()[0]
    tmp_path = Path(tmp)
    try:
        started = os.fstat(fd).st_ctime_ns
        before = sources()
        value, fields, arrays = make()
        if sources() != before:
            return value
        settled = all(rec[1] < started and rec[2] < started for rec in before)
        header = {"format": fmt, "sources": before, "settled": settled, **fields}
        with contextlib.suppress(OSError), os.fdopen(fd, "wb") as f:  # a full disk: no cache
            fd = -1
            np.savez(f, header=_json_array(header), **arrays)
            f.flush()
            os.fsync(f.fileno())
            os.chmod(tmp_path, 0o644)
            os.replace(tmp_path, cpath)
        return value
    finally:
        if fd >= 0:
            os.close(fd)
        tmp_path.unlink(missing_ok=True)


# --- question files ------------------------------------------------------------------------------
def _compact(videos: Sequence[VideoQuestions]) -> list[Any]:
    def choice(c: Choice) -> list[Any]:
        return [c.choice_id, c.choice, c.program, c.answer, dict(c.extra)]

    def question(q: Question) -> list[Any]:
        choices = None if q.choices is None else [choice(c) for c in q.choices]
        return [q.question_id, q.question, q.question_type, q.program, q.answer, choices,
                dict(q.extra)]  # fmt: skip

    return [[v.scene_index, v.video_filename, [question(q) for q in v.questions], dict(v.extra)]
            for v in videos]  # fmt: skip


def _tuple(program: list[str] | None) -> tuple[str, ...] | None:
    return None if program is None else tuple(program)


def _videos(compact: list[Any]) -> list[VideoQuestions]:
    return [
        VideoQuestions(scene, filename, tuple(
            Question(qid, text, qtype, _tuple(program), answer,
                     None if choices is None else tuple(
                         Choice(cid, ctext, _tuple(cprogram), canswer, cextra)
                         for cid, ctext, cprogram, canswer, cextra in choices),
                     qextra)
            for qid, text, qtype, program, answer, choices, qextra in questions), extra)
        for scene, filename, questions, extra in compact
    ]  # fmt: skip


@without_gc
def cached_questions(path: str | Path, read: Callable[[Path], list[VideoQuestions]]
                     ) -> list[VideoQuestions]:  # fmt: skip
    """The videos of question file `path`: from its cache when that is fresh, else `read(path)`
    (the checked reader) and cached."""
    path = Path(path)
    cpath = questions_cache_path(path)
    if path.is_file():
        got = _read(cpath, QUESTIONS_FORMAT)
        if got is not None and got[0]["sources"] == [_stat(path)] and "data" in got[1]:
            with contextlib.suppress(ValueError, TypeError):
                return _videos(orjson.loads(got[1]["data"].tobytes()))

    def make() -> tuple[Any, dict[str, Any], dict[str, np.ndarray]]:
        videos = read(path)
        return videos, {"questions": path.name}, {"data": _json_array(_compact(videos))}

    if not path.is_file():
        return read(path)  # its own error
    return _build(cpath, QUESTIONS_FORMAT, lambda: [_stat(path)], make)


# --- dynamics ------------------------------------------------------------------------------------
@without_gc
def cached_facts(folder: str | Path, scenes: Sequence[int], names: Sequence[str], collisions: str,
                 read: Callable[[Path], SceneFacts]) -> dict[int, SceneFacts]:  # fmt: skip
    """SceneFacts (what the executor reads) of each scene whose file `names[i]` is in `folder`,
    by scene index: from the folder's cache when it is fresh for exactly these files, else
    `read(path)` each and cached. Scenes without a file are left out. The counterfactual runs
    come without their motion, which the executor does not read."""
    folder = Path(folder)
    present = [(s, n) for s, n in zip(scenes, names, strict=True) if (folder / n).is_file()]
    cpath = facts_cache_path(folder, collisions)

    def sources() -> list[list[Any]]:
        return [[n, *_stat(folder / n)] for _, n in present]

    got = _read(cpath, FACTS_FORMAT)
    if got is not None and got[0].get("collisions") == collisions and got[0]["sources"] == sources():
        with contextlib.suppress(ValueError, TypeError, KeyError, IndexError):
            return _facts_from_arrays(got[0], got[1], [s for s, _ in present])

    def make() -> tuple[Any, dict[str, Any], dict[str, np.ndarray]]:
        facts = {s: _without_counterfactual_motion(read(folder / n)) for s, n in present}
        fields, arrays = _facts_to_arrays([facts[s] for s, _ in present])
        return facts, {"collisions": collisions, **fields}, arrays

    if not present:
        return {}
    return _build(cpath, FACTS_FORMAT, sources, make)


def _without_counterfactual_motion(facts: SceneFacts) -> SceneFacts:
    cf = {k: Run(events=run.events) for k, run in facts.counterfactual.items()}
    return SceneFacts(facts.objects, facts.factual, cf, facts.n_shown_frames)


def _facts_to_arrays(all_facts: list[SceneFacts]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """One row per video: objects, shown frames, its factual motion's frame range; one row per
    run: video, what_if (-1 factual), its events' range; events (kind, frame, a, b)."""
    objects, shown, runs, events = [], [], [], []
    xy, velocity, visible, frames = [], [], [], []
    for v, facts in enumerate(all_facts):
        objects.append([[o.color, o.material, o.shape] for o in facts.objects])
        shown.append(int(facts.n_shown_frames))
        motion = facts.factual.motion
        n = len(facts.objects)
        t = 0 if motion is None else len(motion.visible)
        frames.append(t if motion is not None else -1)
        if motion is not None:
            xy.append(np.asarray(motion.xy, dtype=np.float64).reshape(t, n, 2))
            velocity.append(np.asarray(motion.velocity, dtype=np.float64).reshape(t, n, 2))
            visible.append(np.asarray(motion.visible, dtype=bool).reshape(t, n))
        for what_if, run in [(-1, facts.factual), *facts.counterfactual.items()]:
            runs.append((v, int(what_if), len(run.events)))
            for e in run.events:
                objs = [int(o) for o in e.objects]
                events.append((EVENT_KINDS.index(e.kind), int(e.frame),
                               objs[0] if objs else -1, objs[1] if len(objs) > 1 else -1))  # fmt: skip
    flat = lambda parts, shape, dtype: (np.concatenate([p.reshape(-1, *shape) for p in parts])  # noqa: E731
                                        if parts else np.zeros((0, *shape), dtype))  # fmt: skip
    fields = {"objects": objects, "shown": shown}
    arrays = {
        "frames": np.asarray(frames, dtype=np.int64),
        "runs": np.asarray(runs, dtype=np.int64).reshape(-1, 3),
        "events": np.asarray(events, dtype=np.int64).reshape(-1, 4),
        "xy": flat(xy, (2,), np.float64),
        "velocity": flat(velocity, (2,), np.float64),
        "visible": flat(visible, (), np.bool_),
    }
    return fields, arrays


def _facts_from_arrays(header: dict[str, Any], arrays: dict[str, np.ndarray], scenes: list[int]
                       ) -> dict[int, SceneFacts]:  # fmt: skip
    objects, shown = header["objects"], header["shown"]
    frames = arrays["frames"].tolist()
    runs, events = arrays["runs"].tolist(), arrays["events"].tolist()
    xy, velocity, visible = arrays["xy"], arrays["velocity"], arrays["visible"]
    if len(objects) != len(scenes) or len(frames) != len(scenes):
        raise ValueError("the cache does not fit its header")
    out: dict[int, SceneFacts] = {}
    at = e_at = r = 0
    for v, scene in enumerate(scenes):
        n, t = len(objects[v]), frames[v]
        motion = None
        if t >= 0:
            cells = t * n
            motion = Motion(xy=xy[at:at + cells].reshape(t, n, 2),
                            velocity=velocity[at:at + cells].reshape(t, n, 2),
                            visible=visible[at:at + cells].reshape(t, n))  # fmt: skip
            at += cells
        factual: Run | None = None
        counterfactual: dict[int, Run] = {}
        while r < len(runs) and runs[r][0] == v:
            _, what_if, count = runs[r]
            run_events = tuple(
                Event(EVENT_KINDS[k], f, (a,) if b < 0 else (a, b)) if a >= 0
                else Event(EVENT_KINDS[k], f, ())
                for k, f, a, b in events[e_at:e_at + count])  # fmt: skip
            e_at += count
            r += 1
            if what_if == -1:
                factual = Run(events=run_events, motion=motion)
            else:
                counterfactual[what_if] = Run(events=run_events)
        if factual is None:
            raise ValueError("a video without its factual run")
        out[scene] = SceneFacts(objects=tuple(ObjectProps(*o) for o in objects[v]),
                                factual=factual, counterfactual=counterfactual,
                                n_shown_frames=shown[v])  # fmt: skip
    if at != len(visible) or e_at != len(events) or r != len(runs):
        raise ValueError("the cache does not fit its header")
    return out

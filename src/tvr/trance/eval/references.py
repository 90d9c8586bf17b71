"""The reference arrays of a samples file, cached beside it (`samples.ref.npz`) and checked by hash.

`tvr evaluate` needs, per sample, only a few arrays: the initial and final states, the reference
steps, the accepted values of the first step, whether the order of the steps matters, and the
sample's own view if it has one. Parsing them out of a samples.jsonl (about 2.5 KB a line) is
what made evaluation slow, so they are kept in an uncompressed `.npz` beside the JSONL:

    samples.jsonl  ->  samples.ref.npz   (the name with its last suffix replaced by .ref.npz)
      header           JSON (as uint8): format "tvr.trance.refcache/1", count, the samples file's
                       size and sha256, its mtime_ns, ctime_ns, inode and device, "settled", and
                       the lines whose own `view` is not a view name
      ids              JSON list of the sample ids (as uint8)
      init, final      (n, 10, 6) int16 states
      objs, values     (n, 4) int8 reference steps, padded with -1 / PAD (33)
      options          (n, 33) bool: accepted values of the first step (every valid "out" spot)
      order_sensitive  (n,) bool: some order of the reference steps breaks a rule
      view             (n,) int8: the sample's own view (index into VIEWS), -1 none, -2 not a view

The arrays are per sample and do not depend on the setting; `SampleArrays.table` builds the
`ReferenceTable` of a setting (Basic: 1-step samples; View: one row per sample and view) from
them with numpy.

Freshness. The cache is used only when it was built from the same bytes: same size and sha256.
Hashing 250 MB takes about 0.4 s on this machine, longer than the rest of an evaluation, so the
hash is recomputed only when the file's stat (size, mtime_ns, ctime_ns, inode, device) differs
from the recorded one or the recorded stat was not "settled". Why equal stats are enough: every
write to a file sets its ctime to the current time, and no program can set ctime (`touch -d`,
`cp -p`, `rsync -t`, `tar` restore mtime, not ctime); replacing the file gives a new inode. The
one gap is a write in the same clock tick as the stat that was recorded; "settled" closes it:
the temporary cache file is created *before* the samples file is stat'ed and read, and the stat
is settled only if the samples file's ctime and mtime are older than that file's timestamp. Then
any later write carries a ctime at least as new as the temporary file's, so it cannot equal the
recorded one. A cache that is missing, unreadable, of another format, of another size or hash,
or whose arrays do not fit the header, is rebuilt from the JSONL (temporary file, then
os.replace); if the folder is not writable the JSONL is read and nothing is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import input_file, iter_jsonl
from tvr.core.manifest import sha256_file
from tvr.trance.data.files import sample_from_record
from tvr.trance.data.sample import FORMAT as SAMPLE_FORMAT
from tvr.trance.eval.metrics import PAD, ReferenceTable, _setting
from tvr.trance.world import vocab
from tvr.trance.world.simulator import NUM_COLS, order_sensitive_batch
from tvr.trance.world.vocab import VIEWS

CACHE_FORMAT = "tvr.trance.refcache/1"
CACHE_SUFFIX = ".ref.npz"
_N_OBJ, _K, _NV = vocab.NUM_OBJECTS, vocab.MAX_STEPS, vocab.NUM_VALUES
_NO_VIEW, _BAD_VIEW = -1, -2
_SIZE = {n: i for i, n in enumerate(vocab.SIZES)}
_COLOR = {n: i for i, n in enumerate(vocab.COLORS)}
_MATERIAL = {n: i for i, n in enumerate(vocab.MATERIALS)}
_SHAPE = {n: i for i, n in enumerate(vocab.SHAPES)}
_VALUE = vocab.VALUE_INDEX
#: the grid coordinates, for a membership test (the int type is checked apart: True == 1)
_GRID = frozenset(range(vocab.GRID_MIN, vocab.GRID_MAX + 1))


def cache_path(samples_path: str | Path) -> Path:
    """Where the reference cache of a samples file lives: `samples.jsonl` -> `samples.ref.npz`."""
    p = Path(samples_path)
    stem = p.name[: -len(p.suffix)] if p.suffix else p.name
    return p.with_name(stem + CACHE_SUFFIX)


@dataclass
class SampleArrays:
    """Per-sample reference arrays of a samples file, in file order (setting-independent)."""

    ids: list[str]
    init: np.ndarray  # (n, 10, 6) int16
    final: np.ndarray  # (n, 10, 6) int16
    objs: np.ndarray  # (n, 4) int8, padded with -1
    values: np.ndarray  # (n, 4) int8, padded with PAD
    options: np.ndarray  # (n, 33) bool
    order_sensitive: np.ndarray  # (n,) bool
    view: np.ndarray  # (n,) int8: own view index, -1 none, -2 not a view name
    bad_views: list[list[Any]] = field(default_factory=list)  # [line, value] of the -2s

    def table(
        self, setting: str, views: tuple[str, ...] = VIEWS, path: str | Path = "<samples>"
    ) -> ReferenceTable:
        """The ReferenceTable of one setting, row for row what `ReferenceTable.from_samples` makes."""
        _setting(setting)
        n = len(self.ids)
        if setting == "basic":
            sel = np.flatnonzero((self.values != PAD).sum(axis=1) == 1)
            row_view = np.full(len(sel), -1, dtype=np.int64)
        elif setting == "event":
            sel = np.arange(n)
            row_view = np.full(n, -1, dtype=np.int64)
        else:
            if self.bad_views:
                line, value = self.bad_views[0]
                raise InputError(
                    path, line, "view", f"expected one of {list(VIEWS)}, got {value!r}"
                )
            own = self.view.astype(np.int64)
            wanted = np.array([VIEWS.index(v) for v in views] + [-1], dtype=np.int64)
            counts = np.where(own >= 0, 1, len(views))
            sel = np.repeat(np.arange(n), counts)
            pos = np.arange(len(sel)) - np.repeat(np.cumsum(counts) - counts, counts)
            row_view = np.where(own[sel] >= 0, own[sel], wanted[np.minimum(pos, len(views))])
        whole = len(sel) == n
        pick = (lambda a: a) if whole else (lambda a: a[sel])
        ids = list(self.ids) if whole else [self.ids[i] for i in sel.tolist()]
        table = ReferenceTable(
            setting,
            ids,
            row_view,
            pick(self.init),
            pick(self.final),
            pick(self.objs).astype(np.int64),
            pick(self.values).astype(np.int64),
            pick(self.options),
            pick(self.order_sensitive),
        )
        table.index = RowIndex(ids, row_view)
        return table


class RowIndex(Mapping):
    """(sample id, view index or -1) -> row of a ReferenceTable, as a dict built on first use
    (the compact predictions reader does not need it)."""

    def __init__(self, ids: list[str], views: np.ndarray) -> None:
        self._ids, self._views = ids, views
        self._rows: dict[tuple[str, int], int] | None = None

    def _dict(self) -> dict[tuple[str, int], int]:
        if self._rows is None:
            keys = zip(self._ids, self._views.tolist(), strict=True)
            self._rows = dict(zip(keys, range(len(self._ids)), strict=True))
        return self._rows

    def __getitem__(self, key: tuple[str, int]) -> int:
        return self._dict()[key]

    def get(self, key: tuple[str, int], default: Any = None) -> Any:
        return self._dict().get(key, default)

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())


# --- reading a samples.jsonl ---------------------------------------------------------------------
class _Builder:
    """Collects the arrays of one samples file, line by line (in lists: one conversion to arrays
    at the end costs less than converting each record's numbers as they come)."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.cells: list[int] = []  # init then final, 120 per sample
        self.steps: list[int] = []  # objs then values, 2 * _K per sample, padded
        self.opt_rows: list[int] = []
        self.opt_values: list[int] = []
        self.view: list[int] = []
        self.bad_views: list[list[Any]] = []

    def add_record(self, path: Path, lineno: int, d: Any) -> None:
        cells = self.cells
        mark = len(cells)
        got = _plain_record(d, cells)
        if got is None:  # anything unusual: the full validation, with its located error
            del cells[mark:]
            s = sample_from_record(path, lineno, d)
            cells += s.initial_array.ravel().tolist()
            cells += s.final_array.ravel().tolist()
            got = (s.id, [st.obj for st in s.steps], [st.value for st in s.steps],
                   list(s.steps[0].accepted))  # fmt: skip
        sid, objs, values, accepted = got
        self.opt_rows += [len(self.ids)] * len(accepted)
        self.ids.append(sid)
        pad = _K - len(objs)
        self.steps += objs
        self.steps += _NO_OBJS[:pad]
        self.steps += values
        self.steps += _NO_VALUES[:pad]
        self.opt_values += accepted
        own = d.get("view") if isinstance(d, dict) else None
        if isinstance(own, str):
            if own in VIEWS:
                self.view.append(VIEWS.index(own))
            else:
                self.view.append(_BAD_VIEW)
                self.bad_views.append([lineno, own])
        else:
            self.view.append(_NO_VIEW)

    def arrays(self) -> SampleArrays:
        n = len(self.ids)
        cells = np.array(self.cells, dtype=np.int16).reshape(n, 2, _N_OBJ, NUM_COLS)
        steps = np.array(self.steps, dtype=np.int8).reshape(n, 2, _K)
        objs, values = steps[:, 0].copy(), steps[:, 1].copy()
        options = np.zeros((n, _NV), dtype=bool)
        options[np.array(self.opt_rows, dtype=np.int64), np.array(self.opt_values, np.int8)] = True
        order = order_sensitive_batch(cells[:, 0], objs.astype(np.int64), values.astype(np.int64))
        return SampleArrays(
            self.ids,
            np.ascontiguousarray(cells[:, 0]),
            np.ascontiguousarray(cells[:, 1]),
            objs,
            values,
            options,
            order,
            np.array(self.view, dtype=np.int8),
            self.bad_views,
        )


_NO_OBJS, _NO_VALUES = [-1] * _K, [PAD] * _K
_NO_OPTIONS: list[str] = []
_INT, _LIST = {int}, {list}


def _cells(objects: Any, out: list[int]) -> None:
    """Append the 60 state cells of a well-formed object list (what objects_to_array makes) to
    `out`; raises KeyError/TypeError/ValueError on anything else (`out` then holds a part)."""
    if type(objects) is not list or len(objects) != _N_OBJ:
        raise ValueError
    for o in objects:
        x, y = o["position"]  # ValueError unless two items; the types are checked next
        if type(x) is not int or type(y) is not int or x not in _GRID or y not in _GRID:
            raise ValueError
        out += (x, y, _SIZE[o["size"]], _COLOR[o["color"]], _MATERIAL[o["material"]],
                _SHAPE[o["shape"]])  # fmt: skip


def _plain_record(d: Any, cells: list[int]) -> tuple[str, list[int], list[int], list[int]] | None:
    """(id, objs, values, accepted values of step 1) of a record that passes every check of
    `sample_from_record` in the plain way tvr writes it, its 120 state cells appended to
    `cells`; None sends it to the full check (`cells` then holds a part)."""
    try:
        if type(d) is not dict or d["format"] != SAMPLE_FORMAT:
            return None
        sid = d["id"]
        steps = d["steps"]
        if type(sid) is not str or not sid or type(steps) is not list or not 1 <= len(steps) <= _K:
            return None
        _cells(d["objects"], cells)
        _cells(d["final"], cells)
        objs = [st["obj"] for st in steps]  # TypeError unless every step is an object
        if set(map(type, objs)) != _INT or min(objs) < 0 or max(objs) >= _N_OBJ:
            return None
        values = [_VALUE[st["value"]] for st in steps]
        option_lists = [st.get("options", _NO_OPTIONS) for st in steps]
        if set(map(type, option_lists)) != _LIST:
            return None
        accepted = [_VALUE[o] for o in option_lists[0]] or values[:1]
        for options in option_lists[1:]:
            for o in options:
                _VALUE[o]  # a KeyError if not a value name
    except (KeyError, TypeError, ValueError):
        return None
    return sid, objs, values, accepted


def _check_unique(path: Path, ids: list[str]) -> None:
    if len(set(ids)) == len(ids):
        return
    seen: dict[str, int] = {}
    for i, sid in enumerate(ids):
        if sid in seen:
            raise InputError(
                path,
                None,
                "id",
                f"sample id {sid!r} appears twice (samples {seen[sid] + 1} and {i + 1})",
            )
        seen[sid] = i


def parse_samples(path: str | Path) -> tuple[SampleArrays, str]:
    """The arrays of a samples.jsonl and the sha256 of the bytes they were read from; bad lines
    raise the same located errors as `read_samples`."""
    path = input_file(path)
    digest = hashlib.sha256()
    build = _Builder()
    for lineno, d in iter_jsonl(path, digest=digest):
        build.add_record(path, lineno, d)
    if not build.ids:
        raise InputError(path, None, None, "no samples (the file is empty)")
    _check_unique(path, build.ids)
    return build.arrays(), digest.hexdigest()


# --- the cache file ------------------------------------------------------------------------------
def _stat_record(st: os.stat_result) -> dict[str, int]:
    return {
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "ctime_ns": st.st_ctime_ns,
        "inode": st.st_ino,
        "device": st.st_dev,
    }


def _json_array(obj: Any) -> np.ndarray:
    return np.frombuffer(orjson.dumps(obj), dtype=np.uint8)


_LAYOUT = {  # name: (dtype, shape after n)
    "init": (np.int16, (_N_OBJ, NUM_COLS)),
    "final": (np.int16, (_N_OBJ, NUM_COLS)),
    "objs": (np.int8, (_K,)),
    "values": (np.int8, (_K,)),
    "options": (np.bool_, (_NV,)),
    "order_sensitive": (np.bool_, ()),
    "view": (np.int8, ()),
}


def _read_cache(cpath: Path) -> tuple[dict[str, Any], SampleArrays] | None:
    """(header, arrays) of a cache file of this format whose arrays fit its header, else None."""
    try:
        with np.load(cpath, allow_pickle=False) as z:
            header = orjson.loads(z["header"].tobytes())
            if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT:
                return None
            n = header["count"]
            ids = orjson.loads(z["ids"].tobytes())
            if not isinstance(ids, list) or len(ids) != n:
                return None
            got = {}
            for name, (dtype, shape) in _LAYOUT.items():
                a = z[name]
                if a.dtype != dtype or a.shape != (n, *shape):
                    return None
                got[name] = a
        return header, SampleArrays(ids=ids, bad_views=header["bad_views"], **got)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        return None


def _trusted(header: dict[str, Any], st: os.stat_result) -> bool:
    """Whether the recorded stat vouches for the current file without hashing it (module doc)."""
    return bool(header.get("settled")) and all(
        header.get(k) == v for k, v in _stat_record(st).items()
    )


def _open_temp(cpath: Path) -> tuple[int, Path] | None:
    """A new temporary file beside the cache (its timestamp is the build's start), or None when
    the folder is not writable."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{cpath.name}.", suffix=".tmp", dir=cpath.parent)
    except OSError:
        return None
    return fd, Path(tmp)


def _write(fd: int, tmp: Path, cpath: Path, arrays: SampleArrays, header: dict[str, Any]) -> None:
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                header=_json_array(header),
                ids=_json_array(arrays.ids),
                **{name: getattr(arrays, name) for name in _LAYOUT},
            )
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, cpath)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _load(path: Path, cache: bool) -> tuple[SampleArrays, bool]:
    """The arrays of a samples file, and whether a fresh cache of them is on disk now."""
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    cpath = cache_path(path)
    cached = _read_cache(cpath) if cache and cpath.is_file() else None
    if cached is not None and _trusted(cached[0], os.stat(path)):
        return cached[1], True
    temp = _open_temp(cpath) if cache else None  # made first: its ctime is the build's start
    written = False
    try:
        before = _stat_record(os.stat(path))
        arrays, digest = None, None
        if cached is not None and cached[0].get("size") == before["size"]:
            digest = sha256_file(path)
            if digest == cached[0].get("sha256"):
                arrays = cached[1]  # same bytes, another stat: only the header is renewed
        if arrays is None:
            arrays, digest = parse_samples(path)
        if temp is not None and _stat_record(os.stat(path)) == before:
            fd, tmp = temp
            temp = None
            started = os.fstat(fd).st_ctime_ns
            header = {
                "format": CACHE_FORMAT,
                "samples": path.name,
                "count": len(arrays.ids),
                "sha256": digest,
                **before,
                "settled": before["ctime_ns"] < started and before["mtime_ns"] < started,
                "bad_views": arrays.bad_views,
            }
            with contextlib.suppress(OSError):  # a full disk, say: evaluate without the cache
                _write(fd, tmp, cpath, arrays, header)
                written = True
    finally:
        if temp is not None:
            os.close(temp[0])
            temp[1].unlink(missing_ok=True)
    return arrays, written


def sample_arrays(samples_path: str | Path, cache: bool = True) -> SampleArrays:
    """The reference arrays of a samples file: from its cache when that is fresh, else parsed
    from the JSONL (and cached, when `cache` and the folder is writable)."""
    return _load(Path(samples_path), cache)[0]


def write_reference_cache(samples_path: str | Path) -> Path | None:
    """Build (or check, or refresh) the reference cache of a samples file: its path, or None when
    it could not be written (a read-only folder). Bad sample lines raise InputError as in
    `read_samples`. For `tvr sample` and `tvr generate` to call after writing samples.jsonl."""
    return cache_path(samples_path) if _load(Path(samples_path), True)[1] else None


def reference_table(
    samples_path: str | Path, setting: str, views: tuple[str, ...] = VIEWS, cache: bool = True
) -> ReferenceTable:
    """The ReferenceTable of a samples file for one setting (and, in View, the scored views),
    equal to `ReferenceTable.from_samples(read_samples(samples_path), setting, views)`."""
    return sample_arrays(samples_path, cache).table(setting, views, samples_path)

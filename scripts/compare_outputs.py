#!/usr/bin/env python3
"""Show that `tvr` commands give the same outputs with the code of two commits.

Runs a fixed list of small `tvr` commands (demo, sample, generate, baseline, evaluate, convert,
stats, results, report; see `steps()`) once with the code of --before and once with the code of
--after, each side in its own folder OUT/before/work and OUT/after/work, with the same relative
paths. Then, per command, it compares:

- every file the command wrote, changed or removed (found by a snapshot of the side's folder
  before and after it), byte for byte and by permission bits, except the timing fields of
  TIMING_FIELDS, which are masked only in the files named there (their values, not their
  presence; the masked keys are printed), the side's own folder where a file records it
  (`.tvr-inputs.json`), the files of RUN_SPECIFIC (output locks: by presence) and the samples
  file's stat in the reference cache (REF_CACHE: its arrays are compared);
- its exit code, its stdout with timings masked (TIMING_TEXT) and its stderr with progress bars
  dropped and timings masked.

Usage (from the repository root; 4 to 6 minutes on 2 cores):

    python3 scripts/compare_outputs.py                      # fba98a9 vs the working tree
    python3 scripts/compare_outputs.py --before HEAD~1 --after HEAD --out runs/cmp

A REV side runs from a temporary `git worktree add --detach` (removed at the end) with
PYTHONPATH=<worktree>/src; the working-tree side uses this checkout's src/. Each side first prints
the `tvr.__file__` it imports, and stops if that is not its own tree. Prints one line per command
(`same`, or the differing files with a short diff), writes OUT/report.md and OUT/summary.json,
and exits 0 only when every command gives the same outputs (1: some differ, 2: could not run).
"""

from __future__ import annotations

import argparse
import difflib
import fnmatch
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WORKTREE = "WORKTREE"
MARKER = ".compare_outputs"

# Timing fields: (glob of the file's path relative to the side folder, JSON keys whose values
# are ignored there). `tvr generate` writes the wall and CPU seconds of sampling, rendering and
# writing each shard into the shard's manifest.json ("seconds": {...}); nothing else measured
# here writes a timing field.
TIMING_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("*/shards/shard-*/manifest.json", ("seconds",)),
    ("*/shards/*/timing.json", ("sample", "total", "cpu")),  # `tvr tranco testbed`'s shards
)
# Files whose content is of the run, not of the command: compared by presence only. An output
# lock holds its holder's PID.
RUN_SPECIFIC: tuple[tuple[str, str], ...] = (
    ("*.tvr-lock", "the PID of the process that held the output's lock"),
)
# The reference cache beside samples.jsonl (`tvr evaluate`, `tvr sample`): its arrays are compared,
# and its header but for the samples file's stat, which is of the run (the cache's key).
REF_CACHE = "*samples.ref.npz"
REF_CACHE_STAT = ("mtime_ns", "ctime_ns", "inode", "device")
# Files the after side may add that the before side never wrote: (glob, why). Reported as
# "new (expected)" and not counted as a difference; `--strict-new` counts them.
EXPECTED_NEW: tuple[tuple[str, str], ...] = (
    ("*samples.ref.npz", "the compact reference table that `tvr evaluate` keeps beside samples.jsonl"),
)
# stdout/stderr: durations ("in 1.2 s", "0.4 ms") and rates ("13.07img/s") are masked.
TIMING_TEXT = re.compile(
    r"\d+(?:[.,]\d+)?\s?(?:ms|s|sec|seconds|min|minutes|h)\b|\d+(?:\.\d+)?\s?[A-Za-z]+/s\b"
    r"|\d+(?:\.\d+)? \w+ per CPU second"
)
# tqdm progress bars (written to stderr with carriage returns) are dropped.
PROGRESS = re.compile(r"\d+%\|.*\||\|\s*\d+/\d+ \[")
MAX_SHOWN = 6  # differing files shown per command
TIMEOUT_S = 600


# ----------------------------------------------------------------------------- the commands


@dataclass(frozen=True)
class Step:
    """One `tvr` command, run in the side folder; `prepare` runs just before it there."""

    name: str
    args: tuple[str, ...]
    prepare: Callable[[Path], None] | None = None


def _resume_prepare(root: Path) -> None:
    """A copy of sample-event with its second shard and samples.jsonl removed (a killed job)."""
    src, dst = root / "sample-event", root / "sample-event-resume"
    if src.is_dir():
        shutil.copytree(src, dst, copy_function=shutil.copy2)
        for rel in ("shards/shard-00001.jsonl", "samples.jsonl"):
            (dst / rel).unlink(missing_ok=True)


def _bad_predictions(root: Path) -> None:
    """preds/event-bad.jsonl: the random baseline's lines with a few broken ones."""
    src = root / "preds" / "event-random.jsonl"
    if not src.is_file():
        return
    lines = src.read_text().splitlines()
    def sid(i: int) -> str:
        return json.loads(lines[i])["id"]

    broken = {
        1: "this is not JSON",
        3: json.dumps({"id": sid(3), "steps": [{"obj": 12, "value": "color.red"}]}),
        5: json.dumps({"id": sid(5), "steps": [{"obj": 0, "value": "color.pink"}]}),
        7: json.dumps({"steps": [{"obj": 0, "value": "color.red"}]}),
        9: json.dumps({"id": "no-such-sample", "steps": []}),
        11: json.dumps({"id": sid(0), "steps": []}),
        13: "[1, 2, 3]",
    }
    out = [broken.get(i, line) for i, line in enumerate(lines)]
    (root / "preds" / "event-bad.jsonl").write_text("\n".join(out) + "\n")


def _left_right_predictions(root: Path) -> None:
    """preds/view-reversed-LR.jsonl: the reversed baseline's View lines of views L and R."""
    src = root / "preds" / "view-reversed.jsonl"
    if src.is_file():
        keep = [ln for ln in src.read_text().splitlines() if json.loads(ln).get("view") != "C"]
        (root / "preds" / "view-reversed-LR.jsonl").write_text("\n".join(keep) + "\n")


def steps() -> list[Step]:
    """The commands, in order; later ones read what earlier ones wrote."""
    s: list[Step] = [
        Step("demo", ("demo", "--out", "demo", "--num", "200")),
        Step("sample event", ("sample", "--setting", "event", "--num", "300", "--shard-size",
                              "100", "--workers", "2", "--out", "sample-event")),
        Step("sample event resume", ("sample", "--setting", "event", "--num", "300",
                                     "--shard-size", "100", "--workers", "2",
                                     "--out", "sample-event-resume"), _resume_prepare),
        Step("sample event shard-scope", ("sample", "--setting", "event", "--num", "300",
                                          "--shard-size", "100", "--balance-scope", "shard",
                                          "--workers", "2", "--out", "sample-event-shard")),
        Step("sample basic", ("sample", "--setting", "basic", "--num", "100", "--shard-size",
                              "50", "--workers", "2", "--out", "sample-basic")),
        Step("sample view", ("sample", "--setting", "view", "--num", "100", "--shard-size",
                             "50", "--workers", "2", "--out", "sample-view")),
        Step("generate view raster", ("generate", "--setting", "view", "--num", "24",
                                      "--split-sizes", "train=16,val=4,test=4", "--shard-size",
                                      "4", "--backend", "raster", "--preset", "default",
                                      "--workers", "2", "--out", "gen-view")),
    ]
    for setting in ("basic", "event", "view"):
        for name in ("oracle", "reversed", "random"):
            s.append(Step(f"baseline {name} {setting}", (
                "baseline", name, "--data", f"sample-{setting}/samples.jsonl",
                "--setting", setting, "--out", f"preds/{setting}-{name}.jsonl")))
    s.append(Step("baseline reversed gen-view", (
        "baseline", "reversed", "--data", "gen-view/test/samples.jsonl", "--setting", "view",
        "--out", "preds/gen-view-reversed.jsonl")))
    for setting in ("basic", "event", "view"):
        for name in ("oracle", "reversed", "random"):
            s.append(Step(f"evaluate {name} {setting}", (
                "evaluate", "--data", f"sample-{setting}/samples.jsonl", "--predictions",
                f"preds/{setting}-{name}.jsonl", "--setting", setting,
                "--out", f"eval/{setting}-{name}")))
    s += [
        Step("evaluate reversed view --views L,R", (
            "evaluate", "--data", "sample-view/samples.jsonl", "--predictions",
            "preds/view-reversed-LR.jsonl", "--setting", "view", "--views", "L,R",
            "--out", "eval/view-reversed-LR"), _left_right_predictions),
        Step("evaluate --lenient bad lines", (
            "evaluate", "--data", "sample-event/samples.jsonl", "--predictions",
            "preds/event-bad.jsonl", "--lenient", "--out", "eval/event-bad-lenient"),
            _bad_predictions),
        Step("evaluate strict bad lines (fails)", (
            "evaluate", "--data", "sample-event/samples.jsonl", "--predictions",
            "preds/event-bad.jsonl", "--out", "eval/event-bad-strict")),
        Step("convert --to-release event", (
            "convert", "--to-release", "sample-event/samples.jsonl",
            "--out", "release/event-data.jsonl")),
        Step("convert --from-release event", (
            "convert", "--from-release", "release/event-data.jsonl",
            "--out", "release/event-samples.jsonl")),
        Step("convert --to-release view", (
            "convert", "--to-release", "sample-view/samples.jsonl",
            "--out", "release/view-data.jsonl")),
        Step("convert --from-release view", (
            "convert", "--from-release", "release/view-data.jsonl",
            "--out", "release/view-samples.jsonl")),
        Step("convert --to-release dataset", (
            "convert", "--to-release", "gen-view", "--split", "test", "--out", "release-gen")),
        Step("convert --from-release dataset", (
            "convert", "--from-release", "release-gen", "--split", "train", "--setting", "view",
            "--out", "gen-imported")),
    ]
    for name, path in (("event", "sample-event/samples.jsonl"),
                       ("basic", "sample-basic/samples.jsonl"),
                       ("view", "sample-view/samples.jsonl"),
                       ("gen-view test", "gen-view/test/samples.jsonl")):
        s.append(Step(f"stats {name}", ("stats", "--data", path, "--out",
                                        f"stats/{name.replace(' ', '-')}.json")))
    s += [
        Step("results on evaluations", (
            "results", "Oracle=eval/event-oracle", "Reversed=eval/event-reversed",
            "Random=eval/event-random", "Oracle=eval/view-oracle", "Reversed=eval/view-reversed",
            "Random=eval/view-random", "Oracle=eval/basic-oracle", "Random=eval/basic-random",
            "--out", "results-evals")),
        Step("results on predictions", (
            "results", "Oracle=preds/event-oracle.jsonl", "Reversed=preds/event-reversed.jsonl",
            "Reversed=preds/view-reversed.jsonl", "Random=preds/event-random.jsonl",
            "Random=preds/view-random.jsonl", "--data", "event=sample-event/samples.jsonl",
            "--data", "view=sample-view/samples.jsonl", "--out", "results-preds")),
        Step("results on a dataset", (
            "results", "Reversed=preds/gen-view-reversed.jsonl", "--data", "gen-view",
            "--out", "results-gen")),
        Step("report sample set", ("report", "--data", "sample-event", "--out", "report-event")),
        Step("report samples file", ("report", "--data", "sample-view/samples.jsonl",
                                     "--out", "report-view")),
        Step("report dataset", ("report", "--data", "gen-view", "--out", "report-gen")),
        Step("compare event", ("compare", "Oracle=eval/event-oracle", "Random=eval/event-random",
                               "--resamples", "200", "--out", "cmp/event")),
        Step("compare view --json", ("trance", "compare", "eval/view-reversed",
                                     "eval/view-random", "--resamples", "200", "--json")),
        Step("tranco testbed", ("tranco", "testbed", "--out", "tranco", "--num", "20",
                                "--image-size", "64x48", "--quiet")),
        Step("tranco stats", ("tranco", "stats", "--data", "tranco")),
        Step("tranco stats --json", ("tranco", "stats", "--data", "tranco", "--json")),
        Step("tranco baseline random", ("tranco", "baseline", "random", "--data", "tranco",
                                        "--out", "preds/tranco-r0.jsonl")),
        Step("tranco baseline random seed 1", ("tranco", "baseline", "random", "--data", "tranco",
                                               "--seed", "1", "--out", "preds/tranco-r1.jsonl")),
    ]
    for seed in ("r0", "r1"):
        s.append(Step(f"tranco evaluate {seed}", (
            "tranco", "evaluate", "--data", "tranco", "--predictions", f"preds/tranco-{seed}.jsonl",
            "--out", f"eval/tranco-{seed}")))
    s += [
        Step("tranco compare", ("tranco", "compare", "R0=eval/tranco-r0", "R1=eval/tranco-r1",
                                "--resamples", "200", "--out", "cmp/tranco")),
        Step("tranco compare prose", ("tranco", "compare", "eval/tranco-r0", "eval/tranco-r1",
                                      "--convention", "prose", "--resamples", "200")),
        Step("vtt testbed", ("vtt", "testbed", "--out", "vtt", "--num", "12", "--image-size",
                             "64x48", "--quiet")),
        Step("vtt stats", ("vtt", "stats", "--data", "vtt")),
        Step("vtt stats --json", ("vtt", "stats", "--data", "vtt/meta/vtt.jsonl", "--json")),
    ]
    return s


# ----------------------------------------------------------------------------- running a side


class Unrunnable(Exception):
    """The comparison cannot run (a bad REV, an --out of something else, a wrong import)."""


@dataclass
class Side:
    """One side: where its code is and what its commands did."""

    label: str  # "before" or "after"
    rev: str  # as given
    src: Path
    root: Path  # the folder the commands run in
    logs: Path
    desc: str = ""
    tvr_file: str = ""
    runs: list[dict] = field(default_factory=list)


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(REPO), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def side_env(src: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=str(src), HF_HUB_OFFLINE="1", COLUMNS="120", LINES="50",
               PYTHONHASHSEED="0", MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", TERM="dumb",
               NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return env


def check_import(side: Side) -> None:
    """Print the tvr.__file__ the side imports; stop unless it is the side's own src/."""
    out = subprocess.run([sys.executable, "-c", "import tvr; print(tvr.__file__)"],
                         cwd=side.root, env=side_env(side.src), capture_output=True, text=True)
    side.tvr_file = out.stdout.strip()
    print(f"{side.label}: {side.desc}; tvr.__file__ = {side.tvr_file}")
    want = (side.src / "tvr" / "__init__.py").resolve()
    if out.returncode or Path(side.tvr_file).resolve() != want:
        raise Unrunnable(f"the {side.label} side imports {side.tvr_file or out.stderr!r}, "
                         f"not {want}")


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Relative path -> (size, mtime_ns, inode) of every file under root."""
    snap = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            p = Path(dirpath) / f
            st = p.lstat()
            snap[p.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return snap


def run_side(side: Side, plan: list[Step]) -> None:
    env = side_env(side.src)
    for i, step in enumerate(plan):
        if step.prepare:
            step.prepare(side.root)
        before = snapshot(side.root)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run([sys.executable, "-m", "tvr", *step.args], cwd=side.root,
                                  env=env, capture_output=True, timeout=TIMEOUT_S)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = "timeout", e.stdout or b"", e.stderr or b""
        took = time.perf_counter() - t0
        after = snapshot(side.root)
        touched = sorted(k for k in after if before.get(k) != after[k])
        removed = sorted(k for k in before if k not in after)
        base = side.logs / f"{i:02d}"
        base.with_suffix(".stdout").write_bytes(out)
        base.with_suffix(".stderr").write_bytes(err)
        side.runs.append({"rc": rc, "stdout": out.decode("utf-8", "replace"),
                          "stderr": err.decode("utf-8", "replace"), "touched": touched,
                          "removed": removed, "seconds": round(took, 2)})
        print(f"  {side.label} {i:02d} {step.name}: rc {rc}, {len(touched)} files, {took:.1f} s",
              flush=True)


# ----------------------------------------------------------------------------- comparing


def timing_keys(rel: str) -> tuple[str, ...]:
    keys: list[str] = []
    for pattern, ks in TIMING_FIELDS:
        if fnmatch.fnmatch(rel, pattern):
            keys += ks
    return tuple(keys)


def mask_json(text: str, keys: tuple[str, ...]) -> tuple[str, list[str]]:
    """Replace the values of `keys` in JSON or JSONL text by "<ignored>"; return the masked text
    and the keys found (once per occurrence). The text outside those values is kept as is."""
    pattern = re.compile('"(' + "|".join(map(re.escape, keys)) + r')"\s*:\s*')
    decoder = json.JSONDecoder()
    parts, found, pos = [], [], 0
    for m in pattern.finditer(text):
        if m.start() < pos:
            continue  # inside a value already masked
        _value, end = decoder.raw_decode(text, m.end())
        parts += [text[pos:m.end()], '"<ignored>"']
        found.append(m.group(1))
        pos = end
    parts.append(text[pos:])
    return "".join(parts), found


def ref_cache_bytes(path: Path) -> bytes:
    """A reference cache's arrays, its header's stat of the samples file masked."""
    import numpy as np

    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(bytes(arrays.pop("header")).decode("utf-8"))
    header.update({k: "<run>" for k in REF_CACHE_STAT if k in header})
    parts = [json.dumps(header, sort_keys=True).encode()]
    parts += [k.encode() + str(v.dtype).encode() + str(v.shape).encode() + v.tobytes()
              for k, v in sorted(arrays.items())]
    return b"\n".join(parts)


def comparable(path: Path, rel: str, ignored: dict[str, list[str]], root: Path | None = None) -> bytes:
    """The file's bytes, with the timing fields of its TIMING_FIELDS rule masked and the side's
    folder (`root`, an absolute path some files record) written as <SIDE>."""
    if fnmatch.fnmatch(rel, REF_CACHE):
        return ref_cache_bytes(path)
    data = path.read_bytes()
    if root is not None:
        data = data.replace(str(root).encode(), b"<SIDE>")
    keys = timing_keys(rel)
    if not keys:
        return data
    masked, found = mask_json(data.decode("utf-8"), keys)
    if found:
        ignored.setdefault(rel, found)
    return masked.encode("utf-8")


def short(s: str, col: int, width: int = 70) -> str:
    lo = max(0, col - width // 2)
    return ("…" if lo else "") + s[lo:lo + width] + ("…" if lo + width < len(s) else "")


def text_diff(a: str, b: str) -> str:
    """The first differing line (around its first differing column) and how many differ."""
    la, lb = a.splitlines(), b.splitlines()
    changed = [op for op in difflib.SequenceMatcher(None, la, lb, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    n = sum(max(i2 - i1, j2 - j1) for _t, i1, i2, j1, j2 in changed)
    _tag, i1, _i2, j1, _j2 = changed[0]
    x = la[i1] if i1 < len(la) else ""
    y = lb[j1] if j1 < len(lb) else ""
    col = next((k for k, (p, q) in enumerate(zip(x, y, strict=False)) if p != q),
               min(len(x), len(y)))
    return (f"{n} line(s) differ; first at line {i1 + 1}:\n"
            f"      - {short(x, col)!r}\n      + {short(y, col)!r}")


def bytes_diff(rel: str, a: bytes, b: bytes, pa: Path, pb: Path) -> str:
    try:
        return text_diff(a.decode("utf-8"), b.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    off = next((k for k, (p, q) in enumerate(zip(a, b, strict=False)) if p != q),
               min(len(a), len(b)))
    msg = f"binary: {len(a)} vs {len(b)} bytes, first difference at byte {off}"
    if rel.endswith(".png"):
        import numpy as np
        from PIL import Image

        ia, ib = np.asarray(Image.open(pa)), np.asarray(Image.open(pb))
        if ia.shape != ib.shape:
            msg += f"; image size {ia.shape} vs {ib.shape}"
        elif (ia == ib).all():
            msg += "; pixels identical (only the encoding or metadata differs)"
        else:
            d = np.abs(ia.astype(int) - ib.astype(int))
            msg += f"; {(d.max(axis=-1) > 0).sum()} pixels differ, max |diff| {d.max()}"
    return msg


def clean_stream(text: str, progress: bool) -> tuple[list[str], list[str]]:
    """Lines of stdout/stderr with timings masked (and progress bars dropped); also the lines
    that had a timing masked."""
    lines, masked = [], []
    for seg in re.split(r"[\r\n]", text):
        seg = seg.rstrip()
        if not seg or (progress and PROGRESS.search(seg)):
            continue
        m = TIMING_TEXT.sub("<T>", seg)
        if m != seg:
            masked.append(m)
        lines.append(m)
    return lines, masked


def expected_new(rel: str) -> str | None:
    """Why the after side may add file `rel`, if it may (EXPECTED_NEW)."""
    return next((why for pat, why in EXPECTED_NEW if fnmatch.fnmatch(rel, pat)), None)


def compare_step(
    i: int, step: Step, a: Side, b: Side, ignored: dict[str, list[str]], strict_new: bool = False
) -> dict:
    ra, rb = a.runs[i], b.runs[i]
    problems: list[str] = []
    new: list[str] = []
    if ra["rc"] != rb["rc"]:
        problems.append(f"exit code {ra['rc']} vs {rb['rc']}")
    masked_lines: list[str] = []
    for stream, progress in (("stdout", False), ("stderr", True)):
        xa, ma = clean_stream(ra[stream].replace(str(a.root), "<SIDE>"), progress)
        xb, mb = clean_stream(rb[stream].replace(str(b.root), "<SIDE>"), progress)
        masked_lines += [f"{stream}: {line}" for line in dict.fromkeys(ma + mb)]
        if xa != xb:
            problems.append(f"{stream}: " + text_diff("\n".join(xa), "\n".join(xb)))
    for rel in sorted(set(ra["removed"]) ^ set(rb["removed"])):
        problems.append(f"{rel}: removed by {'before' if rel in ra['removed'] else 'after'} only")
    files = sorted(set(ra["touched"]) | set(rb["touched"]))
    for rel in files:
        pa, pb = a.root / rel, b.root / rel
        if not pa.is_file() and pb.is_file() and not strict_new and expected_new(rel):
            new.append(f"{rel}: new (expected: {expected_new(rel)})")
            continue
        if not pa.is_file() or not pb.is_file():
            problems.append(f"{rel}: only {'before' if pa.is_file() else 'after'} has it")
            continue
        if (rel in ra["touched"]) != (rel in rb["touched"]):
            who = "before" if rel in ra["touched"] else "after"
            problems.append(f"{rel}: written by {who} only (the other kept the earlier file)")
        mode_a, mode_b = stat.S_IMODE(pa.stat().st_mode), stat.S_IMODE(pb.stat().st_mode)
        if mode_a != mode_b:
            problems.append(f"{rel}: permissions {mode_a:o} vs {mode_b:o}")
        if any(fnmatch.fnmatch(rel, pattern) for pattern, _why in RUN_SPECIFIC):
            continue
        xa, xb = comparable(pa, rel, ignored, a.root), comparable(pb, rel, ignored, b.root)
        if xa != xb:
            problems.append(f"{rel}: " + bytes_diff(rel, xa, xb, pa, pb))
    return {"step": step.name, "command": "tvr " + " ".join(step.args), "rc": [ra["rc"], rb["rc"]],
            "files": len(files), "same": not problems, "problems": problems, "new": new,
            "masked_lines": masked_lines, "seconds": [ra["seconds"], rb["seconds"]]}


# ----------------------------------------------------------------------------- main


def make_side(label: str, rev: str, out: Path, tmp: Path, worktrees: list[Path]) -> Side:
    root, logs = out / label / "work", out / label / "logs"
    root.mkdir(parents=True)
    logs.mkdir(parents=True)
    if rev == WORKTREE:
        dirty = git("status", "--porcelain", "--", "src").splitlines()
        desc = f"working tree ({git('rev-parse', '--short', 'HEAD')} + {len(dirty)} changed " \
               "paths under src/)"
        return Side(label, rev, REPO / "src", root, logs, desc)
    try:
        sha = git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError:
        raise Unrunnable(f"--{label} {rev}: not a commit of {REPO}") from None
    tree = tmp / f"{label}-{sha[:9]}"
    git("worktree", "add", "--detach", str(tree), sha)
    worktrees.append(tree)
    return Side(label, rev, tree / "src", root, logs, f"{rev} = {sha[:9]} (worktree {tree})")


def prepare_out(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise Unrunnable(f"--out {out} exists and was not made by this script")
    for sub in ("before", "after"):
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("made by scripts/compare_outputs.py\n")


def ignored_lines(ignored: dict[str, list[str]]) -> list[str]:
    """Which timing keys were masked, in how many files of which TIMING_FIELDS rule."""
    if not ignored:
        return ["none found"]
    lines = []
    for pattern, keys in TIMING_FIELDS:
        for k in keys:
            hits = sorted(rel for rel, found in ignored.items()
                          if k in found and fnmatch.fnmatch(rel, pattern))
            if hits:
                lines.append(f"- `{k}` in `{pattern}`: {len(hits)} files ({', '.join(hits)})")
    return lines


def report(results: list[dict], ignored: dict[str, list[str]], a: Side, b: Side) -> str:
    lines = [f"# compare_outputs: {a.desc} vs {b.desc}", "",
             f"- before imports {a.tvr_file}", f"- after imports {b.tvr_file}", "",
             "| # | command | exit codes | files | result |", "| ---: | --- | --- | ---: | --- |"]
    for i, r in enumerate(results):
        rc = f"{r['rc'][0]}" if r["rc"][0] == r["rc"][1] else f"{r['rc'][0]} vs {r['rc'][1]}"
        res = "same" if r["same"] else f"DIFFERS ({len(r['problems'])})"
        lines.append(f"| {i} | `{r['command']}` | {rc} | {r['files']} | {res} |")
    lines += ["", "## Timing fields ignored", "", *ignored_lines(ignored)]
    lines += ["", "## Output lines with timings masked", ""]
    for r in results:
        for m in r["masked_lines"]:
            lines.append(f"- {r['step']}: `{m}`")
    differing = [r for r in results if not r["same"]]
    if differing:
        lines += ["", "## Differences", ""]
        for r in differing:
            lines.append(f"### {r['step']}\n\n`{r['command']}`\n\n```")
            lines += r["problems"]
            lines.append("```")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--before", default="fba98a9", help="commit of the first side (fba98a9)")
    p.add_argument("--after", default=WORKTREE,
                   help=f"commit of the second side (default {WORKTREE}: this checkout's src/)")
    p.add_argument("--out", type=Path, default=REPO / "runs" / "compare-outputs",
                   help="folder for both sides' outputs, logs, report.md, summary.json")
    p.add_argument("--strict-new", action="store_true",
                   help="count the expected new files (EXPECTED_NEW) as differences too")
    args = p.parse_args(argv)
    out = args.out.resolve()
    plan = steps()
    tmp = Path(tempfile.mkdtemp(prefix="tvr-compare-"))
    worktrees: list[Path] = []
    t0 = time.perf_counter()
    try:
        prepare_out(out)
        a = make_side("before", args.before, out, tmp, worktrees)
        b = make_side("after", args.after, out, tmp, worktrees)
        for side in (a, b):
            check_import(side)
        for side in (a, b):
            run_side(side, plan)
        ignored: dict[str, list[str]] = {}
        results = [
            compare_step(i, s, a, b, ignored, args.strict_new) for i, s in enumerate(plan)
        ]
    except Unrunnable as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        for tree in worktrees:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    width = max(len(s.name) for s in plan)
    for r in results:
        print(f"{r['step']:<{width}}  {'same' if r['same'] else 'DIFFERS'}")
        for line in dict.fromkeys(r["new"]):
            print("    " + line)
        for prob in r["problems"][:MAX_SHOWN]:
            print("    " + prob)
        if len(r["problems"]) > MAX_SHOWN:
            print(f"    ... and {len(r['problems']) - MAX_SHOWN} more (see report.md)")
    text = report(results, ignored, a, b)
    (out / "report.md").write_text(text)
    (out / "summary.json").write_text(json.dumps(
        {"before": a.desc, "after": b.desc, "tvr_file": [a.tvr_file, b.tvr_file],
         "ignored_timing_fields": ignored, "steps": results}, indent=2) + "\n")
    print("\ntiming fields ignored:\n" + "\n".join(ignored_lines(ignored)))
    n_diff = sum(not r["same"] for r in results)
    print(f"\n{len(results) - n_diff} of {len(results)} commands give the same outputs; "
          f"report in {out / 'report.md'} ({time.perf_counter() - t0:.0f} s)")
    return 1 if n_diff else 0


if __name__ == "__main__":
    sys.exit(main())

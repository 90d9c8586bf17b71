"""CLEVRER scoring end to end, tvr against the official executor, on the same files.

    taskset -c 1 python benchmarks/clevrer_official_speed.py --source /tmp/clv100 \\
        --official-repo /work/.mirror/chuangg+CLEVRER/repo [--videos 5000] [--rounds 1]

--source is a generated set (`tvr clevrer generate --backend none`: questions with programs and
ground-truth dynamics). Its videos are replicated, with new scene indices 10000.. (the
validation split's), to a validation-sized set of --videos videos in a scratch folder under
/tmp (deleted at the end; dynamics files are symbolic links, so it stays small):

- official: executor.py, simulation.py, run_oe.py and run_mc.py of chuangg/CLEVRER (read from
  --official-repo, a clone; never part of tvr) are copied into the scratch folder; the scripts'
  hard-coded paths (data/validation.json, data/parsed_programs/..., data/propnet_preds/...) and
  their range(5000) are pointed at the scratch set, nothing else changes. Their inputs are made
  from the same questions: the programs in the parsed-programs layout (tvr's program tokens as
  benchmarks/clevrer_official_agreement.py maps them), the dynamics in the layout its
  Simulation reads (positions times FRAME_DIFF, as that script explains). `from IPython.core
  import ultratb` is answered by a stand-in module. run_oe.py then run_mc.py: reading the
  questions, programs and each video's dynamics, executing, counting the accuracy.
- tvr: `tvr clevrer execute` (questions + dynamics -> answers.json) then `tvr clevrer evaluate`
  (answers.json scored against the questions): cold (no cache beside the data: each builds
  it) and warm (the caches present).

Each is a new process on the same core; the wall seconds, the ratio to the official pair, and
the load average are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "benchmarks"))
sys.path.insert(0, str(HERE / "src"))

from clevrer_official_agreement import official_input  # noqa: E402
from tvr.clevrer.programs.executor import ALIASES  # noqa: E402

OFFICIAL_FILES = ("executor.py", "simulation.py", "run_oe.py", "run_mc.py")


def build_set(source: Path, folder: Path, videos: int) -> None:
    entries = []
    for split in ("train", "validation", "test"):
        path = source / "questions" / f"{split}.json"
        if path.is_file():
            data = json.loads(path.read_text())
            if all("answer" in q or all("answer" in c for c in q.get("choices", []))
                   for v in data for q in v["questions"]):  # fmt: skip
                entries += data
    entries.sort(key=lambda v: v["scene_index"])
    for name in ("questions", "dynamics", "official/data/preds", "official/data/converted"):
        (folder / name).mkdir(parents=True, exist_ok=True)
    out, oe, mc = [], {}, {}
    for k in range(videos):
        v = dict(entries[k % len(entries)])
        orig, scene = v["scene_index"], 10000 + k
        v["scene_index"], v["video_filename"] = scene, f"video_{scene:05d}.mp4"
        out.append(v)
        sim = f"sim_{orig:05d}.json"
        os.symlink(source / "dynamics" / sim, folder / "dynamics" / f"sim_{scene:05d}.json")
        converted = folder / "official/data/converted" / sim
        if not converted.exists():
            converted.write_text(json.dumps(official_input(json.loads(
                (source / "dynamics" / sim).read_text()))))  # fmt: skip
        os.symlink(converted, folder / "official/data/preds" / f"sim_{scene:05d}.json")
        alias = lambda p: [ALIASES.get(t, t) for t in p or []]  # noqa: E731
        oe[str(scene)] = {"questions": [{"program": alias(q.get("program"))}
                                        for q in v["questions"]]}  # fmt: skip
        mc[str(scene)] = {"questions": [
            {"question_program": alias(q.get("program")),
             "choices": [{"program": alias(c.get("program")), "answer": c["answer"]}
                         for c in q["choices"]]}
            for q in v["questions"] if q["question_type"] != "descriptive"]}  # fmt: skip
    (folder / "questions" / "validation.json").write_text(json.dumps(out))
    (folder / "official/data/oe.json").write_text(json.dumps(oe))
    (folder / "official/data/mc.json").write_text(json.dumps(mc))


def install_official(repo: Path, folder: Path) -> None:
    official = folder / "official"
    for name in OFFICIAL_FILES:
        text = subprocess.run(["git", "-C", str(repo), "show", f"HEAD:executor/{name}"],
                              check=True, capture_output=True, text=True).stdout  # fmt: skip
        if name.startswith("run_"):
            for given in ("'./data/validation.json'", "'data/validation.json'"):
                text = text.replace(f"question_path = {given}",
                                    "question_path = '../questions/validation.json'")
            text = text.replace("'data/parsed_programs/oe_{}pg_val_new.json'.format(args.n_progs)",
                                "'data/oe.json'")
            text = text.replace(
                "'data/parsed_programs/mc_{}q_{}c_val_new.json'.format(args.n_progs, "
                "int(args.n_progs)*4)", "'data/mc.json'")
            text = text.replace("range(5000)", "range(len(anns))")
            text = text.replace("\nquestion_path", "\nraw_motion_dir = 'data/preds'\nquestion_path", 1)
            assert "data/oe.json" in text or "data/mc.json" in text, name
        (official / name).write_text(text)
    core = official / "IPython" / "core"
    core.mkdir(parents=True)
    (official / "IPython" / "__init__.py").write_text("")
    (core / "__init__.py").write_text("")
    (core / "ultratb.py").write_text("import sys\n\ndef FormattedTB(**_):\n    return sys.__excepthook__\n")


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - t0, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--official-repo", type=Path, required=True)
    parser.add_argument("--videos", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(HERE / "src"), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    print(f"load average before: {os.getloadavg()}; cores allowed: {sorted(os.sched_getaffinity(0))}")
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="tvr-clevrer-bench-") as tmp:
        folder = Path(tmp)
        build_set(args.source.resolve(), folder, args.videos)
        install_official(args.official_repo, folder)
        questions = folder / "questions" / "validation.json"
        n_q = sum(len(v["questions"]) for v in json.loads(questions.read_text()))
        print(f"set: {args.videos} videos, {n_q:,} questions, {questions.stat().st_size / 1e6:.0f} MB")
        tvr = [sys.executable, "-m", "tvr", "clevrer"]
        execute = [*tvr, "execute", "--data", str(questions), "--dynamics", str(folder / "dynamics"),
                   "--out", str(folder / "answers.json"), "--quiet"]  # fmt: skip
        evaluate = [*tvr, "evaluate", "--data", str(questions), "--predictions",
                    str(folder / "answers.json"), "--out", str(folder / "eval"), "--overwrite"]  # fmt: skip
        rows: dict[str, list[float]] = {}
        for r in range(args.rounds):
            oe, oe_out = timed([sys.executable, "run_oe.py", "--n_progs", "1000"], folder / "official", env)
            mc, mc_out = timed([sys.executable, "run_mc.py", "--n_progs", "1000"], folder / "official", env)
            rows.setdefault("official run_oe.py + run_mc.py", []).append(oe + mc)
            print(f"round {r + 1} official: run_oe {oe:.1f} s, run_mc {mc:.1f} s")
            for kind in ("cold", "warm"):
                if kind == "cold":
                    for c in [*folder.glob("*.npz"), *(folder / "questions").glob("*.npz")]:
                        c.unlink()
                ex, _ = timed(execute, folder, env)
                ev, ev_out = timed(evaluate, folder, env)
                rows.setdefault(f"tvr execute + evaluate, {kind}", []).append(ex + ev)
                rows.setdefault(f"tvr evaluate alone, {kind}", []).append(ev)
                print(f"round {r + 1} tvr {kind}: execute {ex:.1f} s, evaluate {ev:.1f} s")
        print("\nofficial (last lines):", *oe_out.strip().splitlines()[-1:], *mc_out.strip().splitlines()[-9:-1], sep="\n  ")
        print("tvr:", *ev_out.strip().splitlines()[:3], sep="\n  ")
        base = min(rows["official run_oe.py + run_mc.py"])
        print("\n| run | wall s (best) | vs official |\n|---|---:|---:|")
        for name, walls in rows.items():
            print(f"| {name} | {min(walls):.1f} | {base / min(walls):.1f}x faster |")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()

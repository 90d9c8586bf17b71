"""Every command that needs an optional extra, run where the extras are missing: each must end in
one line naming the extra (`pip install 'tvr[EXTRA]'`), a non-zero exit and no traceback.

The list below is the one place these commands are written, with the arguments each needs to
get as far as the import of its extra; scripts/smoke.sh runs it in base-only venvs (the real
thing), tests/test_missing_extras.py with the extras hidden by an import hook.

Usage: python scripts/missing_extras.py FOLDER
  runs `python -m tvr` of this Python in FOLDER (made if missing) and prints one line per
  command; exit 1 if any command did not end as it should.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: (the command's arguments, the extra its message must name: "train,clip" for a pip line of
#: two); {NAME} is an input of `inputs`
COMMANDS: list[tuple[list[str], str]] = [
    # TRANCE
    (["render", "--data", "{samples}", "--out", "r", "--limit", "1"], "render"),
    (["generate", "--out", "g", "--split-sizes", "train=2,val=1,test=1", "--quiet"], "render"),
    (["train", "--source", "synthetic", "--epochs", "1"], "train"),
    (["trance", "parser", "train", "--data", "."], "train"),
    (["trance", "parser", "predict", "--run", "{run}", "--data", "."], "train"),
    (["predict", "--checkpoint", "{run}/best.ckpt", "--data", "{samples}", "--out", "p.jsonl"],
     "train"),
    (["report", "--data", "{samples}", "--out", "rep"], "report"),
    (["results", "--data", "{samples}", "--out", "res", "{predictions}"], "report"),
    (["curves", "--out", "cur", "{run}"], "report"),
    # the shared layers
    (["vlm", "run", "--task", "trance", "--data", "{samples}", "--images", ".", "--model", "m",
      "--out", "o.jsonl"], "vlm"),
    (["serve", "--data", "."], "web"),
    # CLEVRER
    (["clevrer", "generate", "--out", "cg", "--num", "2"], "clevrer"),
    (["clevrer", "train", "lstm", "--data", "."], "train"),
    (["clevrer", "report", "--data", ".", "--out", "cr"], "clevrer"),
    # VTT
    (["vtt", "testbed", "--out", "vt", "--num", "2", "--quiet"], "render"),
    (["vtt", "evaluate", "--data", "{records}", "--predictions", "{vtt_predictions}"], "vtt"),
    (["vtt", "train", "--data", "."], "train,clip"),
    (["vtt", "predict", "--checkpoint", "{run}/best.ckpt", "--data", ".", "--out", "vp.jsonl"],
     "train,clip"),
    (["vtt", "baseline", "nearest", "--data", "{records}", "--out", "vn.jsonl"], "clip"),
    (["vtt", "judge", "--data", "{records}", "--predictions", "a={vtt_predictions}", "--out",
      "vj", "--model", "m"], "vlm"),
    (["vtt", "ratings", "--db", "ratings.db", "--out", "vr.jsonl"], "web"),
    (["vtt", "build", "--coin", "{coin}", "--videos", "{videos}", "--out", "vb"], "video"),
    # TRANCO
    (["tranco", "train", "--data", "."], "train"),
    (["tranco", "predict", "--checkpoint", "{run}/best.ckpt", "--data", ".", "--out", "t.jsonl"],
     "train"),
    (["tranco", "build", "--coin", "{coin}", "--videos", "{videos}", "--out", "tb"], "video"),
    (["tranco", "testbed", "--out", "tt", "--num", "2", "--quiet"], "render"),
    # VisualTrans's construction pipeline
    (["visualtrans", "build", "--input", ".", "--out", "vtb"], "visualtrans"),
    (["visualtrans", "testbed", "--out", "vtt", "--no-build"], "visualtrans"),
]  # fmt: skip


def inputs(folder: Path, tvr: Sequence[str]) -> dict[str, str]:
    """Small valid inputs in `folder` (made with `tvr` where a base command makes them): the
    values of the {NAME} fields of `COMMANDS`."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    import smoke_inputs

    folder.mkdir(parents=True, exist_ok=True)
    smoke_inputs.main(str(folder / "in"))
    done = subprocess.run([*tvr, "demo", "--out", str(folder / "demo"), "--num", "8",
                           "--workers", "1"], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"tvr demo failed:\n{done.stdout}{done.stderr}")
    run = folder / "run"
    run.mkdir(exist_ok=True)
    with (run / "metrics.csv").open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "step", "train/loss", "val/loss", "val/acc"])
        writer.writerows([[0, 1, 1.0, 1.1, 0.2], [1, 2, 0.9, 1.0, 0.3]])
    (run / "best.ckpt").write_bytes(b"not a checkpoint")
    with (folder / "in" / "vtt-pred.jsonl").open("w", encoding="utf-8") as f:
        for line in (folder / "in" / "vtt.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            steps = len(record["annotation"])
            f.write(json.dumps({"id": record["id"], "transformations": ["x"] * steps}) + "\n")
    # one COIN video of three steps, and a file for it (never decoded: the import comes first)
    steps = [{"id": str(k), "segment": [10.0 * k, 10.0 * k + 5], "label": f"step {k}"}
             for k in range(3)]  # fmt: skip
    coin = folder / "COIN.json"
    coin.write_text(json.dumps({"database": {"video0": {
        "class": "Cut Mango", "recipe_type": 1, "subset": "testing", "duration": 60.0,
        "annotation": steps}}}), encoding="utf-8")  # fmt: skip
    (folder / "videos").mkdir(exist_ok=True)
    (folder / "videos" / "video0.mp4").write_bytes(b"not a video")
    return {
        "samples": str(folder / "demo" / "samples" / "samples.jsonl"),
        "predictions": str(folder / "demo" / "predictions-random.jsonl"),
        "run": str(run),
        "records": str(folder / "in" / "vtt.jsonl"),
        "vtt_predictions": str(folder / "in" / "vtt-pred.jsonl"),
        "coin": str(coin),
        "videos": str(folder / "videos"),
    }


def argv_of(args: Sequence[str], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in args]


def problem(done: subprocess.CompletedProcess, extra: str) -> str | None:
    """What is wrong with how a command without its extra ended (None: it ended as it should:
    one line naming the extra, a non-zero exit, no traceback)."""
    output = (done.stdout + done.stderr).strip()
    lines = [line for line in output.splitlines() if line.strip()]
    if "Traceback" in output:
        return "a traceback"
    if done.returncode == 0:
        return "exit 0"
    if len(lines) != 1:
        return f"{len(lines)} lines"
    if f"pip install 'tvr[{extra}]'" not in lines[0]:
        return f"no pip install 'tvr[{extra}]'"
    return None


def main(folder: str) -> int:
    root = Path(folder).resolve()
    tvr = [sys.executable, "-m", "tvr"]
    values = inputs(root, tvr)
    failed = 0
    for args, extra in COMMANDS:
        argv = argv_of(args, values)
        done = subprocess.run([*tvr, *argv], capture_output=True, text=True, cwd=root,
                              timeout=300)  # fmt: skip
        wrong = problem(done, extra)
        name = " ".join(args[:2] if not args[1].startswith("-") else args[:1])
        if wrong is None:
            print(f"ok   tvr {name}: {done.stderr.strip()}")
        else:
            failed += 1
            print(f"FAIL tvr {name} (exit {done.returncode}, {wrong}):\n"
                  f"{(done.stdout + done.stderr).strip()[-2000:]}")  # fmt: skip
    if failed:
        print(f"{failed} of {len(COMMANDS)} commands without their extra did not end in one line "
              "naming it")  # fmt: skip
    else:
        print(f"{len(COMMANDS)} commands without their extra, each ending in one line naming it")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:2]))

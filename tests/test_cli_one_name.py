"""One grammar, the last gaps (issue 42): every sub-command's options walked for two names of
one idea, and the siblings every benchmark has."""

from __future__ import annotations

import argparse
import re

import pytest

from tvr.cli import build_parser

#: one idea, one name: the name of docs/cli.md, and the other names it must never have
IDEAS = {
    "--images": ("--states", "--image-dir", "--images-dir", "--image-folder", "--frames-dir"),
    "--data": ("--samples", "--questions", "--records", "--dataset", "--data-root", "--root"),
    "--predictions": ("--preds", "--answers", "--prediction"),
    "--workers": ("--num-workers", "--jobs", "--processes"),
    "--quiet": ("--no-progress", "--silent"),
    "--split-sizes": ("--splits", "--sizes"),
    "--accelerator": ("--device", "--gpu"),
    "--seed": ("--random-seed", "--rng-seed"),
}


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("tvr",)):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, (*path, name))


LEAVES = dict(_leaves(build_parser()))


def _options(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}


def test_no_command_names_an_idea_otherwise():
    other = {alias: name for name, aliases in IDEAS.items() for alias in aliases}
    bad = [(cmd, opt, other[opt]) for cmd, p in LEAVES.items() for opt in _options(p)
           if opt in other and not (cmd == "tvr vlm export" and opt == "--results")]  # fmt: skip
    assert not bad, "two names for one idea (command, option, the grammar's name): " + repr(bad)


@pytest.mark.parametrize("bench", ["trance", "clevrer", "vtt", "tranco", "visualtrans"])
def test_every_baseline_has_a_seeded_random_kind(bench):
    p = LEAVES[f"tvr {bench} baseline"]
    kind = next(a for a in p._actions if not a.option_strings)
    assert "random" in kind.choices, (bench, kind.choices)
    assert "--seed" in _options(p), bench


@pytest.mark.parametrize("bench", ["trance", "clevrer", "tranco"])
def test_stats_of_a_folder_of_splits_takes_split(bench):
    action = _options(LEAVES[f"tvr {bench} stats"]).get("--split")
    assert action is not None, f"tvr {bench} stats has no --split"


def test_every_metavar_example_parses():
    """A metavar that spells the value (KEY=N,...) is what the option's type accepts."""
    for cmd, p in LEAVES.items():
        for action in p._actions:
            meta = action.metavar if isinstance(action.metavar, str) else None
            if meta is None or "=" not in meta or not callable(action.type):
                continue
            example = re.sub(r"=[A-Z]+\b", "=4", meta)
            try:
                action.type(example)
            except (argparse.ArgumentTypeError, ValueError) as err:
                pytest.fail(f"{cmd} {action.option_strings[0]} {meta}: {err}")


def test_tranco_stats_reads_a_samples_file(tmp_path, capsys):
    from tvr.cli import main

    path = tmp_path / "val.jsonl"
    path.write_text('{"id": "s0", "clips": ["a", "b"]}\n{"id": "s1", "clips": ["a", "b", "c"]}\n',
                    encoding="utf-8")  # fmt: skip
    assert main(["tranco", "stats", "--data", str(path), "--json"]) == 0
    import json

    stats = json.loads(capsys.readouterr().out)
    assert stats["val"]["samples"] == 2 and stats["val"]["clips"] == 5
    assert stats["val"]["by_length"]["2"] == 1 and stats["val"]["by_length"]["3"] == 1
    assert stats["train"]["samples"] == 0


def test_vtt_random_baseline_is_seeded(tmp_path, capsys):
    import json

    from tvr.cli import main

    records = tmp_path / "vtt.jsonl"
    rows = []
    for i, split in enumerate(["train", "train", "test", "test"]):
        rows.append({"id": f"{i:016x}", "youtube_id": f"v{i}", "ori": "coin", "split": split,
                     "duration": 60.0, "topic": "Cut Mango", "category": "Pets and Fruit",
                     "annotation": [{"clip_id": f"{i:016x}_2_{j}", "segment": [j * 2.0, j * 2.0 + 1.0],
                                     "label": f"step {i} {j}"} for j in range(2)]})  # fmt: skip
    records.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    outs = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        out = tmp_path / f"{name}.jsonl"
        assert main(["vtt", "baseline", "random", "--data", str(records), "--seed", str(seed),
                     "--out", str(out)]) == 0  # fmt: skip
        outs.append([json.loads(line) for line in out.read_text().splitlines()])
    capsys.readouterr()
    assert outs[0] == outs[1]
    assert [r["id"] for r in outs[0]] == [f"{2:016x}", f"{3:016x}"]
    train = {f"step {i} {j}" for i in range(2) for j in range(2)}
    assert all(len(r["transformations"]) == 2 and set(r["transformations"]) <= train
               for r in outs[0])  # fmt: skip


@pytest.mark.parametrize(("argv", "prog", "hint"), [
    (["clevrer", "stats", "--data", "x", "--splitt", "val"], "tvr clevrer stats", "--split"),
    (["vtt", "evaluate", "--data", "x", "--predictions", "y", "--jsn"], "tvr vtt evaluate", "--json"),
    (["evaluate", "--data", "x", "--predictions", "y", "--lenent"], "tvr evaluate", "--lenient"),
])  # fmt: skip
def test_an_unknown_option_is_told_by_its_sub_command(argv, prog, hint, capsys):
    from tvr.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {prog} "), err
    assert f"{prog}: error: unrecognized arguments: " in err, err
    assert err.rstrip().endswith(f"(did you mean {hint}?)"), err


def test_every_benchmark_recognizes_its_own_data(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from tvr.core.data_path import recognized_benchmarks

    script = Path(__file__).resolve().parents[1] / "scripts" / "smoke_inputs.py"
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, capture_output=True)
    expected = {"questions.json": "clevrer", "vtt.jsonl": "vtt", "tranco.jsonl": "tranco",
                "visualtrans.json": "visualtrans"}  # fmt: skip
    for name, bench in expected.items():
        assert recognized_benchmarks(tmp_path / name) == [bench], name
    (tmp_path / "other.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    assert recognized_benchmarks(tmp_path / "other.jsonl") == []


def test_export_hf_reads_the_benchmark_from_the_data(tmp_path, capsys):
    pytest.importorskip("datasets")
    from tvr.cli import main

    assert main(["sample", "--out", str(tmp_path / "s"), "--num", "4", "--quiet"]) == 0
    out = str(tmp_path / "hf")
    assert main(["export", "hf", "--data", str(tmp_path / "s"), "--out", out, "--quiet"]) == 0
    # the same export named with --benchmark is the same inputs (idempotent, not refused)
    assert main(["export", "hf", "--benchmark", "trance", "--data", str(tmp_path / "s"), "--out",
                 out, "--quiet"]) == 0  # fmt: skip
    other = tmp_path / "other.jsonl"
    other.write_text('{"a": 1}\n', encoding="utf-8")
    capsys.readouterr()
    assert main(["export", "hf", "--data", str(other), "--out", str(tmp_path / "x")]) == 2
    assert "give --benchmark (no benchmark recognizes it)" in capsys.readouterr().err

"""One grammar for five benchmarks (docs/cli.md): read every sub-command's parser and check it.

A new option or command that names an idea differently from the others fails here, and so does
a renamed option that docs/cli.md and CHANGELOG.md do not list.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tvr.cli import build_parser
from tvr.cli._common import RENAMED, labelled_path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ("trance", "clevrer", "vtt", "tranco", "visualtrans")

#: former names of ideas that have one name now (docs/cli.md): never a visible option
FORMER = {
    "--samples": "--data",
    "--questions": "--data",
    "--records": "--data",
    "--data-root": "--data",
    "--results": "--predictions",  # except `tvr vlm export`, whose --results is a run's replies
    "--num-workers": "--workers",
    "--no-progress": "--quiet",
    "--progress-bar": "--quiet",
    "--short-side": "--image-size",
    "--size": "--image-size or --model-size",
    "--frame-size": "--image-size",
    "--sizes": "--split-sizes",
    "--splits": "--split-sizes",
    "--synthetic-sizes": "--split-sizes",
    "--device": "--accelerator",
    "--kind": "a positional KIND",
    "--labels": "LABEL=PATH",
}
#: where a former name is another idea
FORMER_ALLOWED = {("tvr vlm export", "--results")}

#: the verbs of docs/cli.md and the benchmarks that have them
VERBS = {
    "stats": BENCHMARKS,
    "evaluate": BENCHMARKS,
    "baseline": BENCHMARKS,
    "compare": BENCHMARKS,
    "train": ("trance", "clevrer", "vtt", "tranco"),
    "predict": ("trance", "clevrer", "vtt", "tranco"),
}


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, (*path, name))


def _groups(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _visible(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {o: a for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings}


def _hidden_commands(parser: argparse.ArgumentParser) -> set[str]:
    """Sub-commands without help (the former names of renamed commands)."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None:
        return set()
    listed = {c.dest for c in sub._choices_actions}
    return set(sub.choices) - listed


PARSER = build_parser()
GROUPS = _groups(PARSER)
#: every command a user sees (the hidden former names of renamed commands left out)
LEAVES = {
    " ".join(("tvr", *path)): p
    for path, p in _leaves(PARSER)
    if not (len(path) > 1 and path[0] in GROUPS and path[1] in _hidden_commands(GROUPS[path[0]]))
}


def _bench_command(bench: str, verb: str) -> argparse.ArgumentParser | None:
    return _groups(GROUPS[bench]).get(verb)


def test_no_visible_option_has_a_former_name():
    bad = [(cmd, opt, FORMER[opt]) for cmd, p in LEAVES.items() for opt in _visible(p)
           if opt in FORMER and (cmd, opt) not in FORMER_ALLOWED]  # fmt: skip
    assert not bad, "former names still visible (command, option, its name now): " + repr(bad)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_benchmark_has_the_verbs_of_the_grammar(verb):
    missing = [b for b in VERBS[verb] if _bench_command(b, verb) is None]
    assert not missing, f"`{verb}` missing in {missing}"


def test_trance_commands_are_top_level_and_under_its_name_alike():
    for verb in VERBS:
        top, named = GROUPS[verb], _bench_command("trance", verb)
        assert sorted(_visible(top)) == sorted(_visible(named)), verb


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_evaluate_reads_the_same_in_every_benchmark(bench):
    options = _visible(_bench_command(bench, "evaluate"))
    for name in ("--data", "--predictions", "--out", "--json", "--lenient", "--overwrite"):
        assert name in options, f"tvr {bench} evaluate has no {name}"
    assert options["--data"].required and options["--predictions"].required


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_stats_reads_the_same_in_every_benchmark(bench):
    options = _visible(_bench_command(bench, "stats"))
    assert "--data" in options and options["--data"].required, bench
    assert "--json" in options and options["--json"].nargs == 0, bench  # a flag: print JSON


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_compare_takes_two_labelled_inputs(bench):
    p = _bench_command(bench, "compare")
    positionals = [a for a in p._actions if not a.option_strings and a.help != argparse.SUPPRESS]
    assert [a.dest for a in positionals] == ["a", "b"]
    assert all(a.type is labelled_path for a in positionals)
    for name in ("--out", "--json", "--seed", "--overwrite"):
        assert name in _visible(p), f"tvr {bench} compare has no {name}"


@pytest.mark.parametrize("bench", BENCHMARKS)
def test_baseline_kind_is_positional_and_data_is_an_option(bench):
    p = _bench_command(bench, "baseline")
    positionals = [a for a in p._actions if not a.option_strings]
    assert len(positionals) == 1 and positionals[0].choices, bench
    assert positionals[0].metavar in (None, "KIND") or positionals[0].dest == "kind"
    assert "--data" in _visible(p) and "--out" in _visible(p)


def test_scoring_commands_all_have_json_and_lenient():
    for cmd, p in LEAVES.items():
        if cmd.endswith(" evaluate"):
            assert {"--json", "--lenient"} <= set(_visible(p)), cmd


def test_split_names_are_train_val_test():
    for cmd, p in LEAVES.items():
        action = _visible(p).get("--split")
        if action is not None and action.choices:
            assert set(action.choices) <= {"train", "val", "test"}, (cmd, action.choices)


def test_progress_is_turned_off_by_quiet_alone():
    for cmd, p in LEAVES.items():
        options = _visible(p)
        assert not any("progress" in o for o in options), (cmd, [o for o in options if "progress" in o])


def test_the_data_option_is_one_idea():
    """--data is a path wherever it appears (TRANCE's source kind is --source)."""
    for cmd, p in LEAVES.items():
        action = _visible(p).get("--data")
        if action is not None:
            assert not action.choices, cmd


def test_former_names_are_read_with_one_line(tmp_path, capsys):
    from tvr.cli import main

    samples = tmp_path / "samples.jsonl"
    assert main(["sample", "--out", str(tmp_path), "--num", "4", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["baseline", "oracle", "--samples", str(samples), "--out", str(tmp_path / "p.jsonl")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["tvr baseline: --samples is renamed --data; the old form works until tvr 0.3"]
    assert main(["evaluate", f"--samples={samples}", "--predictions", str(tmp_path / "p.jsonl"),
                 "--json"]) == 0  # fmt: skip
    assert "--samples is renamed --data" in capsys.readouterr().err
    assert main(["stats", str(samples), "--json"]) == 0
    captured = capsys.readouterr()
    assert "a positional SAMPLES is renamed --data" in captured.err
    assert '"samples": 4' in captured.out
    # the old and the new name at once, with different values: refused
    with pytest.raises(SystemExit):
        main(["stats", str(samples), "--data", str(tmp_path / "other.jsonl")])


def _documented_renames(text: str) -> set[tuple[str, str]]:
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)` \| `([^`]+)` \|", text, flags=re.M)
    return {(cmd, old) for cmd, old, _new in rows}


def test_every_rename_is_listed_in_docs_cli_md_and_the_changelog():
    renames = {(cmd, old) for cmd, old, _new in RENAMED if not cmd.startswith("tvr trance ")}
    assert renames, "no renamed option recorded"
    for doc in ("docs/cli.md", "CHANGELOG.md"):
        listed = _documented_renames((ROOT / doc).read_text())
        missing = sorted(renames - listed)
        assert not missing, f"{doc} does not list {missing}"


@pytest.mark.parametrize("words", [[], *[[b] for b in BENCHMARKS], ["vlm"]])
def test_help_of_tvr_and_every_benchmark(words):
    done = subprocess.run([sys.executable, "-m", "tvr", *words, "--help"], capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    text = done.stdout
    if words and words[0] in BENCHMARKS:
        for verb, benches in VERBS.items():
            if words[0] in benches:
                assert re.search(rf"^\s+{verb}\s", text, flags=re.M), f"{words} --help: no {verb}"
        hidden = _hidden_commands(GROUPS[words[0]])
        assert not any(re.search(rf"^\s+{h}\s", text, flags=re.M) for h in hidden), hidden
    if not words:
        for bench in BENCHMARKS:
            assert re.search(rf"^\s+{bench}\s", text, flags=re.M), bench

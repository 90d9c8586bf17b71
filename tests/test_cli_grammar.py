"""One grammar for five benchmarks (docs/cli.md): read every sub-command's parser and check it.

A new option or command that names an idea differently from the others fails here.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tvr.cli import build_parser
from tvr.cli._common import labelled_path

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
    """Sub-commands without help."""
    sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
    if sub is None:
        return set()
    listed = {c.dest for c in sub._choices_actions}
    return set(sub.choices) - listed


PARSER = build_parser()
GROUPS = _groups(PARSER)
#: every command a user sees
LEAVES = {" ".join(("tvr", *path)): p for path, p in _leaves(PARSER)}


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


#: what a top-level command has beyond `tvr trance VERB`: `tvr compare` serves every benchmark
TOP_LEVEL_ONLY = {"compare": {"--benchmark", "--convention"}}


def test_trance_commands_are_top_level_and_under_its_name_alike():
    for verb in VERBS:
        top, named = GROUPS[verb], _bench_command("trance", verb)
        extra = TOP_LEVEL_ONLY.get(verb, set())
        assert sorted(set(_visible(top)) - extra) == sorted(_visible(named)), verb
        assert extra <= set(_visible(top)), verb


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


@pytest.mark.parametrize("argv", [
    ["baseline", "oracle", "--samples", "s.jsonl", "--out", "p.jsonl"],
    ["stats", "s.jsonl", "--json"],
    ["compare", "a", "b", "--labels", "x", "y"],
    ["visualtrans", "score", "--data", "d", "--results", "r.jsonl"],
    ["visualtrans", "summary", "d"],
    ["tranco", "baseline", "--kind", "random", "--data", "d", "--out", "p.jsonl"],
])
def test_a_former_name_is_refused_as_any_unknown_one(argv, capsys):
    """tvr was never released: the names before the grammar are gone, not kept alive."""
    from tvr.cli import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "renamed" not in err and "Traceback" not in err
    assert "unrecognized arguments" in err or "invalid choice" in err or "required" in err


#: the train commands of a run folder on tvr.training.runs (`tvr train` and CLEVRER's detector
#: and dynamics take their own typed config's options)
RUN_TRAIN_COMMANDS = ("tvr trance parser train", "tvr clevrer train parser",
                      "tvr clevrer train lstm", "tvr clevrer train cnn-lstm", "tvr vtt train",
                      "tvr tranco train")  # fmt: skip


@pytest.mark.parametrize("command", RUN_TRAIN_COMMANDS)
def test_train_commands_share_the_run_options(command):
    from tvr.cli._common import add_run_options

    shared = argparse.ArgumentParser()
    add_run_options(shared, "runs", "run")
    want = {o: (a.dest, a.type, a.choices) for o, a in _visible(shared).items() if o != "-h"}
    have = _visible(LEAVES[command])
    assert {o: (have[o].dest, have[o].type, have[o].choices) for o in want if o in have} == want


def test_no_command_is_hidden():
    hidden = {b: _hidden_commands(GROUPS[b]) for b in BENCHMARKS if _hidden_commands(GROUPS[b])}
    assert not hidden and not _hidden_commands(PARSER)


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
    if not words:
        for bench in BENCHMARKS:
            assert re.search(rf"^\s+{bench}\s", text, flags=re.M), bench

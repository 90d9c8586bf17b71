"""Start-up of `tvr`: the parser tree is built lazily (a command's module is imported only when
that command is parsed), help needs no heavy library, and an interrupt during start-up ends
with one line and exit 130 (no KeyboardInterrupt traceback)."""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tvr.cli import COMMANDS, LazySubParsers, build_parser, main

SRC = str(Path(__file__).resolve().parents[1] / "src")
HEAVY = ("numpy", "torch", "tqdm", "rich", "tvr.render.scene", "tvr.trance.world.simulator")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_the_command_table_gives_each_module_its_own_name_and_help() -> None:
    for name, module, help_text in COMMANDS:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(module).register(sub)
        assert [(a.dest, a.help) for a in sub._choices_actions] == [(name, help_text)]


def test_lazy_and_full_trees_parse_alike() -> None:
    full, lazy = build_parser(), build_parser(lazy=True)
    argv = ["clevrer", "evaluate", "--data", "q.json", "--predictions", "p.json"]
    a, b = full.parse_args(argv), lazy.parse_args(argv)
    assert {k: v for k, v in vars(a).items() if k != "func"} == {
        k: v for k, v in vars(b).items() if k != "func"
    }
    assert a.func.__qualname__ == b.func.__qualname__
    assert b._tvr_prog == "tvr clevrer evaluate"
    sub = next(x for x in lazy._actions if isinstance(x, LazySubParsers))
    # the loaded command took its placeholder's place: same order as `tvr --help` lists them
    assert [a.dest for a in sub._choices_actions] == [name for name, _, _ in COMMANDS]
    assert list(sub.choices) == [name for name, _, _ in COMMANDS]


def _help_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """The argv path of `parser` and of every sub-command under it, depth first."""
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _help_paths(child, (*path, name))


@functools.cache
def _all_help_paths() -> tuple[tuple[str, ...], ...]:
    """Every command and sub-command of the fully built tree (its plugin groups too)."""
    return tuple(_help_paths(build_parser()))


#: one case per top-level command (all its sub-commands), and one for `tvr --help` with any
#: command that is none of COMMANDS (a plugin benchmark's group)
HELP_CASES = ["", *(name for name, _, _ in COMMANDS)]


@pytest.mark.parametrize("command", HELP_CASES)
def test_help_imports_no_heavy_module(command: str) -> None:
    """`tvr ... --help` of every command and sub-command under `command`, each in a fresh
    interpreter (one help's imports must not hide another's), imports none of HEAVY."""
    names = {name for name, _, _ in COMMANDS}
    paths = [p for p in _all_help_paths()
             if (p[:1] == (command,) if command else not p or p[0] not in names)]  # fmt: skip
    assert paths
    code = (
        "import sys\nfrom tvr.cli import main\ntry:\n    main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    heavy = {}
    for path in paths:
        done = subprocess.run([sys.executable, "-c", code, *path, "--help"], env=_env(),
                              capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
        assert f"usage: {' '.join(('tvr', *path))}" in done.stdout, done.stdout[:500]
        seen = done.stdout.strip().splitlines()[-1]
        if seen != "[]":
            heavy[" ".join(path)] = seen
    assert heavy == {}


def test_an_interrupt_while_a_command_module_imports_is_one_line(monkeypatch, capsys) -> None:
    def interrupted(name: str):
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib, "import_module", interrupted)
    assert main(["evaluate", "--help"]) == 130
    assert capsys.readouterr().err == "tvr: interrupted\n"


@pytest.mark.parametrize("module", ["tvr.cli.evaluate", "tvr.cli.clevrer", "tvr.cli.vtt"])
def test_sigint_during_start_up_exits_130_without_traceback(module: str) -> None:
    """A real SIGINT, sent by the process to itself when `module` starts importing."""
    command = {"tvr.cli.evaluate": ["evaluate"], "tvr.cli.clevrer": ["clevrer", "evaluate"],
               "tvr.cli.vtt": ["vtt", "evaluate"]}[module]  # fmt: skip
    code = (
        "import importlib.abc, os, signal, sys\n"
        "class Hook(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name == {module!r}:\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Hook())\n"
        "from tvr.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *command, "--help"], env=_env(),
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 130, done.stderr
    assert done.stderr == "tvr: interrupted\n"
    assert done.stdout == ""

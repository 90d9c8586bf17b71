"""A command whose optional extra is missing ends in one line naming the extra, exit 2, never a
traceback; the base commands work without any extra (issue 29). The extras are hidden from a
subprocess by an import hook, so the test runs wherever they are installed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tvr.core.extras import MODULE_EXTRAS

#: runs tvr with every module of an extra refused by the import system
HIDE = """
import importlib.abc, sys
hidden = set(sys.argv[1].split(","))
class Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in hidden:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Hide())
sys.argv = ["tvr", *sys.argv[2:]]
from tvr.cli import main
sys.exit(main())
"""


def tvr_without_extras(*argv: str, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-c", HIDE, ",".join(MODULE_EXTRAS), *argv],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)  # fmt: skip


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    from tvr.cli import main
    from tvr.core.output_lock import release_all

    root = tmp_path_factory.mktemp("extras")
    assert main(["sample", "--out", str(root / "s"), "--num", "8"]) == 0
    release_all()
    return root / "s" / "samples.jsonl"


def _script():
    """scripts/missing_extras.py: the one list of the commands that need an extra."""
    path = Path(__file__).resolve().parents[1] / "scripts" / "missing_extras.py"
    spec = importlib.util.spec_from_file_location("missing_extras", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, str]:
    hidden = [sys.executable, "-c", HIDE, ",".join(MODULE_EXTRAS)]
    return SCRIPT.inputs(tmp_path_factory.mktemp("extras-inputs"), hidden)


@pytest.mark.parametrize(
    ("argv", "extra"), SCRIPT.COMMANDS, ids=[" ".join(a[:2]) for a, _ in SCRIPT.COMMANDS]
)
def test_a_missing_extra_is_one_line_naming_it(argv, extra, inputs, tmp_path):
    done = tvr_without_extras(*SCRIPT.argv_of(argv, inputs), cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-1500:]
    assert SCRIPT.problem(done, extra) is None, (done.stdout + done.stderr)[-1500:]


def test_the_base_commands_need_no_extra(samples, tmp_path):
    from tests.clevrer.data.samples import random_question_file

    assert tvr_without_extras("demo", "--out", "d", "--num", "8", "--workers", "1",
                              cwd=tmp_path).returncode == 0  # fmt: skip
    done = tvr_without_extras("evaluate", "--data", "d/samples/samples.jsonl",
                              "--predictions", "d/predictions-oracle.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and "Acc" in done.stdout, done.stderr[-1500:]
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(random_question_file(2, seed=0)))
    for argv in (["clevrer", "baseline", "--data", str(questions), "random",
                  "--out", "a.json"],
                 ["clevrer", "evaluate", "--data", str(questions), "--predictions",
                  "a.json"],
                 ["stats", "--data", str(samples)]):  # fmt: skip
        done = tvr_without_extras(*argv, cwd=tmp_path)
        assert done.returncode == 0, (argv, done.stderr[-1500:])


def test_bpy_on_another_python_says_which_python_it_needs(monkeypatch):
    """bpy exists for one Python: elsewhere the render extra cannot bring it, so the message
    says which Python (and the raster backend) instead of a pip line that would not help."""
    from tvr.core import extras

    monkeypatch.setattr(extras, "BPY_PYTHON", (3, 99))
    message = extras.missing_extra_message(ModuleNotFoundError(name="bpy"), "the cycles renderer")
    assert message.startswith("the cycles renderer needs Blender's bpy, published for Python 3.99")
    assert "raster backend" in message
    torch = extras.missing_extra_message(ModuleNotFoundError(name="torch.nn"), "training")
    assert torch == "training needs the train extra (torch.nn is not installed): pip install 'tvr[train]'"
    assert extras.missing_extra_message(ModuleNotFoundError(name="not_ours"), "x") is None

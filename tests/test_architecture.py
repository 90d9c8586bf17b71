"""The import rule of docs/architecture.md: the contracts of .importlinter hold, and no module
of tvr takes part in an import cycle."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    component.append(m)
                    if m == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_of_tvr_is_in_an_import_cycle() -> None:
    grimp = pytest.importorskip("grimp")
    assert _cycles(grimp.build_graph("tvr")) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch) -> None:
    grimp = pytest.importorskip("grimp")
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyc import b\n")
    (pkg / "b.py").write_text("from cyc import c\n")
    (pkg / "c.py").write_text("from cyc import a\n")
    (pkg / "d.py").write_text("from cyc import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles(grimp.build_graph("cyc")) == [["cyc.a", "cyc.b", "cyc.c"]]


def test_import_contracts_hold() -> None:
    if shutil.which("lint-imports") is None:
        pytest.skip("import-linter is not installed")
    done = subprocess.run(
        ["lint-imports", "--no-cache", "--config", str(ROOT / ".importlinter")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "0 broken" in done.stdout


BENCHMARKS = ("trance", "clevrer", "vtt", "tranco", "visualtrans")
WITH_MODELS = ("trance", "clevrer", "vtt", "tranco")  # VisualTrans's predictors are VLMs
#: docs/architecture.md's skeleton: where each benchmark keeps a shared idea
SKELETON = {
    "plugin.py": BENCHMARKS,  # its parts of the shared layers (the entry point)
    "paper.py": BENCHMARKS,  # the paper's numbers
    "data/__init__.py": BENCHMARKS,  # formats, layout, readers
    "data/torch_data.py": BENCHMARKS,  # the PyTorch datasets
    "eval/__init__.py": BENCHMARKS,  # scoring
    "eval/baselines.py": BENCHMARKS,  # model-free baselines
    "eval/compare.py": BENCHMARKS,  # the paired comparison its plugin registers
    "models/__init__.py": WITH_MODELS,
    "data/layout.py": ("clevrer", "vtt", "tranco"),  # a release folder's parts
    "train/__init__.py": ("trance", "vtt", "tranco"),  # CLEVRER: models/NAME/run.py per model
}
#: module names of a shared idea -> the one folder of a benchmark they may sit in
ONE_PATH = {"compare.py": "eval", "baselines.py": "eval", "torch_data.py": "data",
            "layout.py": "data"}  # fmt: skip


@pytest.mark.parametrize("path", sorted(SKELETON))
def test_each_benchmarks_shared_ideas_sit_at_the_skeletons_paths(path) -> None:
    missing = [b for b in SKELETON[path] if not (ROOT / "src/tvr" / b / path).is_file()]
    assert not missing, f"{path} missing in {missing} (docs/architecture.md, the skeleton)"


def test_a_shared_idea_has_one_path_and_no_folder_doubles_data() -> None:
    stray = []
    for bench in BENCHMARKS:
        root = ROOT / "src/tvr" / bench
        for name, folder in ONE_PATH.items():
            stray += [p.relative_to(root.parent).as_posix() for p in root.rglob(name)
                      if p.parent != root / folder]  # fmt: skip
        stray += [f"{bench}/{d}/" for d in ("dataset", "datasets") if (root / d).is_dir()]
    assert not stray, f"outside the skeleton: {stray}"

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

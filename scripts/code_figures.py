#!/usr/bin/env python3
"""Size figures of the code: lines of src/tvr and tests, modules over 500 lines, functions over
60 lines (counted with ast, from the `def` line to the function's last line, decorators left
out).

Usage (from the repository root):

    python3 scripts/code_figures.py            # the figures
    python3 scripts/code_figures.py --list     # and the long modules and functions, by name
    python3 scripts/code_figures.py --root /tmp/other-checkout
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

LONG_MODULE = 500
LONG_FUNCTION = 60


def figures(root: Path) -> dict:
    """Counts under `root` (a checkout): lines and modules of src/tvr and tests, the long ones."""
    out: dict = {}
    for part in ("src/tvr", "tests"):
        files = sorted((root / part).rglob("*.py"))
        out[part] = {"modules": len(files),
                     "lines": sum(len(f.read_text().splitlines()) for f in files)}
    long_modules, long_functions = [], []
    for f in sorted((root / "src/tvr").rglob("*.py")):
        text = f.read_text()
        rel = f.relative_to(root).as_posix()
        n = len(text.splitlines())
        if n > LONG_MODULE:
            long_modules.append((rel, n))
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > LONG_FUNCTION:
                    long_functions.append((f"{rel}:{node.lineno} {node.name}", length))
    out["modules_over_500_lines"] = sorted(long_modules, key=lambda x: -x[1])
    out["functions_over_60_lines"] = sorted(long_functions, key=lambda x: -x[1])
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--list", action="store_true", help="name the long modules and functions")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = p.parse_args(argv)
    fig = figures(args.root)
    if args.json:
        print(json.dumps(fig, indent=2))
        return 0
    for part in ("src/tvr", "tests"):
        print(f"{part}: {fig[part]['lines']} lines in {fig[part]['modules']} modules")
    print(f"modules over {LONG_MODULE} lines: {len(fig['modules_over_500_lines'])}")
    if args.list:
        print("".join(f"  {n:5d} {name}\n" for name, n in fig["modules_over_500_lines"]), end="")
    print(f"functions over {LONG_FUNCTION} lines: {len(fig['functions_over_60_lines'])}")
    if args.list:
        print("".join(f"  {n:5d} {name}\n" for name, n in fig["functions_over_60_lines"]), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The verbs every benchmark spells alike, built from the registries its plugin.py fills:
`compare` (`tvr.results.compare.register_comparer`), and `stats` and `evaluate` of the plain shape
(`tvr.core.verbs.register_stats`, `register_evaluator`).

`tvr BENCH compare` (and `stats`, `evaluate` where registered) are added by the benchmark's CLI
module with `add_*_verb`; a benchmark installed as a plugin with no CLI module of its own gets a
`tvr NAME` group of the verbs it registered (`register`, the last of `tvr.cli.COMMAND_MODULES`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tvr.cli._common import (
    add_compare_options,
    add_data_option,
    add_lenient_option,
    add_overwrite_option,
    compared_inputs,
    finish_comparison,
    lenient_problems,
    lenient_summary,
    print_lenient_note,
    print_result,
)
from tvr.core.errors import UserError
from tvr.core.verbs import Option, evaluators, registered, stats_verbs
from tvr.results.compare import comparers


def add_options(p: argparse.ArgumentParser, options: tuple[Option, ...], given_only: bool = False) -> None:
    """A benchmark's own options; `given_only`: absent from the namespace unless given (the
    options of the other benchmarks on `tvr compare --benchmark NAME`)."""
    for o in options:
        default = argparse.SUPPRESS if given_only else (False if o.switch else o.default)
        if o.switch:
            p.add_argument(o.flag, action="store_true", default=default, help=o.help)
        else:
            p.add_argument(o.flag, choices=o.choices or None, default=default, help=o.help)


def option_values(args: argparse.Namespace, options: tuple[Option, ...]) -> dict[str, Any]:
    """The benchmark's own options as keywords (their defaults where not given)."""
    return {o.dest: getattr(args, o.dest, False if o.switch else o.default) for o in options}


# --- compare --------------------------------------------------------------------------------
def add_compare_verb(sub: argparse._SubParsersAction, benchmark: str) -> argparse.ArgumentParser:
    """`tvr BENCH compare A B`: the paired comparison `benchmark` registered."""
    comparer = registered(comparers(), benchmark, "comparison")
    p = sub.add_parser("compare", help=comparer.help, description=comparer.description)
    add_options(p, comparer.options)
    add_compare_options(p)
    p.set_defaults(func=run_compare, _comparer=benchmark)
    return p


def add_benchmark_option(p: argparse.ArgumentParser, default: str) -> None:
    """`tvr compare --benchmark NAME`: any registered benchmark's comparison, with its options."""
    known = comparers()
    p.add_argument("--benchmark", choices=sorted(known), default=argparse.SUPPRESS,
                   help=f"the benchmark whose evaluations A and B are (default {default})")  # fmt: skip
    own = {o.flag for o in known[default].options}
    others = {o.flag: o for name, c in sorted(known.items()) for o in c.options if o.flag not in own}
    add_options(p, tuple(others.values()), given_only=True)


def run_compare(args: argparse.Namespace) -> int:
    benchmark = getattr(args, "benchmark", args._comparer)
    comparer = registered(comparers(), benchmark, "comparison")
    flags = {o.dest for o in comparer.options}
    stray = [k for name, c in comparers().items() for o in c.options
             if (k := o.dest) not in flags and hasattr(args, k)]  # fmt: skip
    if stray:
        raise UserError(f"--{stray[0].replace('_', '-')}: not an option of the {benchmark} "
                        "comparison")  # fmt: skip
    document, lines = comparer.compare(*compared_inputs(args), args.resamples, args.seed,
                                       **option_values(args, comparer.options))  # fmt: skip
    return finish_comparison(args, document, lines)


# --- stats ----------------------------------------------------------------------------------
def add_stats_verb(sub: argparse._SubParsersAction, benchmark: str) -> argparse.ArgumentParser:
    """`tvr BENCH stats --data PATH [--json]`."""
    stats = registered(stats_verbs(), benchmark, "stats")
    p = sub.add_parser("stats", help=stats.help, description=stats.description)
    add_data_option(p, stats.data_help)
    add_options(p, stats.options)
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=run_stats, _stats=benchmark)
    return p


def run_stats(args: argparse.Namespace) -> int:
    stats = stats_verbs()[args._stats]
    document, lines, status = stats.run(args.data, **option_values(args, stats.options))
    print_result(document, lines, args.json)
    return status


# --- evaluate -------------------------------------------------------------------------------
def add_evaluate_verb(sub: argparse._SubParsersAction, benchmark: str) -> argparse.ArgumentParser:
    """`tvr BENCH evaluate --data PATH --predictions FILE [--split] [--out DIR] [--json]
    [--lenient] [--overwrite]`."""
    evaluator = registered(evaluators(), benchmark, "evaluate")
    p = sub.add_parser("evaluate", help=evaluator.help, description=evaluator.description)
    add_data_option(p, evaluator.data_help, resolve=evaluator.resolve)
    p.add_argument("--split", default="test", help="train, val or test (default test)")
    p.add_argument("--predictions", required=True, type=Path, help=evaluator.predictions_help)
    names = ("summary.json", *evaluator.out_files)
    p.add_argument("--out", type=Path, help=f"also write {', '.join(names[:-1])} and "
                   f"{names[-1]} here")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_lenient_option(p, evaluator.lenient_what)
    add_overwrite_option(p, "an evaluation")
    add_options(p, evaluator.options)
    p.set_defaults(func=run_evaluate, _evaluator=benchmark)
    return p


def run_evaluate(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import prepare_output_folder, write_json, write_jsonl, write_text

    evaluator = evaluators()[args._evaluator]
    problems = lenient_problems(args)
    result = evaluator.run(args.data, args.split, args.predictions, problems,
                           **option_values(args, evaluator.options))  # fmt: skip
    result.summary.update(lenient_summary(problems))
    print_lenient_note(problems)
    wrote = None
    if args.out is not None:
        out = prepare_output_folder(args.out)
        write_json(out / "summary.json", result.summary)
        for name, content in result.files.items():
            if isinstance(content, dict):
                write_json(out / name, content)
            elif isinstance(content, str):
                write_text(out / name, content)
            else:
                write_jsonl(out / name, content)
        wrote = f"wrote {args.out}/" + ", ".join(("summary.json", *result.files))
    return print_result(result.summary, result.lines, args.json, wrote)


# --- a benchmark with no CLI module of its own --------------------------------------------------
def register(subparsers: argparse._SubParsersAction) -> None:
    """`tvr NAME compare|stats|evaluate` for each plugin benchmark that has no `tvr NAME` yet."""
    tables = {"compare": (comparers(), add_compare_verb), "stats": (stats_verbs(), add_stats_verb),
              "evaluate": (evaluators(), add_evaluate_verb)}  # fmt: skip
    names = sorted({name for table, _add in tables.values() for name in table})
    for name in names:
        if name in subparsers.choices:
            continue
        group = subparsers.add_parser(name, help=f"{name} (a plugin benchmark): its shared verbs",
                                      description=f"The verbs the {name} benchmark registered.")  # fmt: skip
        sub = group.add_subparsers(dest=f"{name}_command", metavar="SUBCOMMAND", required=True)
        for table, add in tables.values():
            if name in table:
                add(sub, name)

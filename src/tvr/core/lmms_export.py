"""Export a benchmark as an lmms-eval task folder (`tvr export lmms-eval`).

The folder that `lmms-eval --include_path FOLDER` loads: one YAML per task, a group YAML, and a
`utils.py` that only re-exports the benchmark's functions from tvr (`doc_to_visual`,
`doc_to_text` rendering tvr's own prompt templates, `process_results` and the aggregations that
call tvr's scorers), so the numbers are tvr's evaluators', not a re-implementation. The task's
dataset is a `tvr export hf` folder of the same data (written under FOLDER/hf by the command),
named in the YAML by its absolute path (`dataset_path`, with `dataset_name` the config), which
`datasets.load_dataset` reads offline.

Two task options make lmms-eval score and ask as `tvr vlm run` + tvr's evaluator do (issue 42):

- `reasoning_tags: none`: lmms-eval 0.7.3 strips `<think>`/`<analysis>` blocks from every reply
  by default (its `--reasoning_tags`) before `process_results`; a task's own value wins over the
  CLI's, so the reply tvr's parser reads is the raw one, as in `tvr vlm run`'s results.
- `doc_to_messages`: the user turn tvr sends, the text first and then the images in tvr's order
  (lmms-eval's default turn puts the images first). lmms-eval's OpenAI model always sends
  `temperature` (0) and `max_tokens` (the task's `max_new_tokens`); `tvr vlm run` sends neither
  unless told, so the YAML's note and the export's last line give the flags that make its
  request the same (`--temperature 0 --max-tokens N`). lmms-eval re-encodes every image as PNG
  (its `LMMS_IMAGE_ENCODE_FORMAT`), tvr sends the files' bytes: the images are the same pixels.

Benchmarks register with `register_exporter("lmms-eval", NAME, factory)` (tvr.core.hf_export's
registry); the factory `(data, splits)` returns an `LmmsExport`. This module imports no
benchmark and no lmms-eval.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: what a task folder holds besides the HF export (removed before an --overwrite writes again)
UTILS = "utils.py"


@dataclass(frozen=True)
class LmmsMetric:
    """One metric of a task: `process_results` returns a value under `name` for each doc, and
    `aggregation` (a function of the benchmark's module) turns the list of them into the
    number."""

    name: str
    aggregation: str
    higher_is_better: bool = True


@dataclass(frozen=True)
class LmmsTask:
    """One lmms-eval task: its name, the HF export's config and split it reads, and the names of
    the benchmark module's functions it uses."""

    name: str
    config: str
    split: str  # the HF split name (test, validation)
    metrics: tuple[LmmsMetric, ...]
    doc_to_visual: str = "doc_to_visual"
    doc_to_text: str = "doc_to_text"
    process_results: str = "process_results"
    doc_to_target: str = "id"
    max_new_tokens: int = 4096
    process_docs: str | None = None  # a function (datasets.Dataset -> Dataset) run on the split
    note: str = ""  # a comment written at the top of the YAML


@dataclass
class LmmsExport:
    """What a benchmark's lmms-eval exporter returns: the HF export of the same data, the module
    whose functions the tasks name, the tasks and their group."""

    benchmark: str
    module: str  # e.g. tvr.visualtrans.lmms_task
    group: str
    hf: Any  # the tvr.core.hf_export.HfDataset the tasks read
    tasks: list[LmmsTask] = field(default_factory=list)


#: what the exported tasks set as `reasoning_tags` (lmms-eval's "disabled"): the raw reply
REASONING_TAGS = "none"


def tvr_request_flags(task: LmmsTask) -> str:
    """The `tvr vlm run` flags that send lmms-eval's sampling fields for `task`."""
    return f"--temperature 0 --max-tokens {task.max_new_tokens}"


def messages_of(doc_to_visual: Any, doc_to_text: Any) -> Any:
    """A `doc_to_messages` for lmms-eval: one user turn, the text then the images, as tvr's
    `user_message` builds it."""

    def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: Any = None) -> list:
        text = doc_to_text(doc, lmms_eval_specific_kwargs)
        images = [{"type": "image", "url": im} for im in doc_to_visual(doc)]
        return [{"role": "user", "content": [{"type": "text", "text": text}, *images]}]

    return doc_to_messages


def messages_name(task: LmmsTask) -> str:
    """utils.py's name of the task's doc_to_messages (doc_to_text_event -> doc_to_messages_event)."""
    return "doc_to_messages" + task.doc_to_text.removeprefix("doc_to_text")


def _functions(export: LmmsExport) -> list[str]:
    names: list[str] = []
    for task in export.tasks:
        names += [task.doc_to_visual, task.doc_to_text, task.process_results]
        names += [task.process_docs] if task.process_docs else []
        names += [m.aggregation for m in task.metrics]
    return list(dict.fromkeys(names))


def utils_source(export: LmmsExport) -> str:
    names = _functions(export)
    lines = "".join(f"    {n},\n" for n in names)
    pairs = {messages_name(t): (t.doc_to_visual, t.doc_to_text) for t in export.tasks}
    messages = "".join(f"{name} = messages_of({v}, {t})\n" for name, (v, t) in pairs.items())
    return (
        f'"""lmms-eval functions of the tvr {export.benchmark} tasks (written by `tvr export '
        f"lmms-eval`).\n\nThey are tvr's own: prompts rendered by tvr's templates, replies "
        f'scored by tvr\'s evaluators. Needs `tvr` importable (pip install tvr)."""\n\n'
        f"from tvr.core.lmms_export import messages_of\n"
        f"from {export.module} import (  # noqa: F401\n{lines})\n\n"
        f"# the user turn tvr sends: the text, then the images\n{messages}"
    )


def task_yaml(task: LmmsTask, hf_folder: Path, group: str) -> str:
    import yaml

    doc: dict[str, Any] = {
        "task": task.name,
        **({"tag": [group]} if task.split == "test" else {}),  # the group runs the test splits
        "dataset_path": str(hf_folder.resolve()),
        "dataset_name": task.config,
        "test_split": task.split,
        "output_type": "generate_until",
        **({"process_docs": f"FUNC utils.{task.process_docs}"} if task.process_docs else {}),
        "doc_to_visual": f"FUNC utils.{task.doc_to_visual}",
        "doc_to_text": f"FUNC utils.{task.doc_to_text}",
        "doc_to_messages": f"FUNC utils.{messages_name(task)}",
        "doc_to_target": task.doc_to_target,
        "generation_kwargs": {
            "max_new_tokens": task.max_new_tokens,
            "temperature": 0,
            "do_sample": False,
        },
        # the raw reply to tvr's parser (lmms-eval's default strips <think>/<analysis> blocks)
        "reasoning_tags": REASONING_TAGS,
        "process_results": f"FUNC utils.{task.process_results}",
        "metric_list": [
            {
                "metric": m.name,
                "aggregation": f"FUNC utils.{m.aggregation}",
                "higher_is_better": m.higher_is_better,
            }
            for m in task.metrics
        ],
        "metadata": {"version": 1, "source": "tvr export lmms-eval"},
    }
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)
    # lmms-eval's `!function` tag (PyYAML cannot write a custom tag on a plain string)
    text = text.replace("FUNC utils.", "!function utils.")
    note = (task.note + "\n" if task.note else "") + (
        f"Sends what `tvr vlm run {tvr_request_flags(task)}` sends (lmms-eval always sends "
        "temperature and max_tokens); replies are scored raw (reasoning_tags: none)."
    )
    head = "".join(f"# {line}\n" for line in note.splitlines())
    return head + text


@dataclass
class LmmsReport:
    out: Path
    tasks: list[str]
    hf_rows: int
    no_images: dict[str, list[str]] = field(default_factory=dict)


def own_paths(out: Path) -> list[Path]:
    """What a task folder's export wrote in `out` (replaced by the next one)."""
    return [out / "hf", out / UTILS, *sorted(out.glob("*.yaml"))]


def write_lmms_tasks(export: LmmsExport, out: str | Path, progress: Any = None) -> LmmsReport:
    """Write the HF export under `out`/hf, a YAML per task, the group's YAML and utils.py: built
    whole beside `out` and moved into place (`tvr.core.output_record.staged_output`), so a
    failed or interrupted export leaves `out` as it was."""
    from tvr.core.hf_export import write_hf_folder
    from tvr.core.output_record import staged_output

    out = Path(out)
    hf = out / "hf"  # where the YAMLs say the data is, once moved into place
    with staged_output(out, own_paths) as stage:
        (stage / "hf").mkdir()
        report = write_hf_folder(export.hf, stage / "hf", progress)
        tasks = [t for t in export.tasks if report.rows.get(t.config, {}).get(t.split) is not None]
        for task in tasks:
            (stage / f"{task.name}.yaml").write_text(task_yaml(task, hf, export.group),
                                                     encoding="utf-8")  # fmt: skip
        (stage / UTILS).write_text(utils_source(export), encoding="utf-8")
    return LmmsReport(out, [t.name for t in tasks], report.total_rows, report.no_images)

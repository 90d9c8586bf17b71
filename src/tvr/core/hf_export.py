"""Export a benchmark as a Hugging Face dataset folder: Parquet shards and a dataset card.

`datasets.load_dataset(FOLDER)` reads the folder offline, with no loading script: each table
(a config and a split) is a set of Parquet shards `data/{config}/{split}-NNNNN.parquet` whose
schema carries the `datasets` features (images embedded as the Image feature: bytes and a file
name), and `README.md` has YAML front matter naming `configs` (the data files of each split),
`dataset_info` (features and split sizes), the licence and the citation. Videos are Parquet rows
too (the Video feature, bytes embedded): `datasets` picks one builder for all the configs of a
card, so a VideoFolder config beside Parquet ones would not load.

Benchmarks register an exporter per format (`register_exporter("hf", "trance", factory)`); the
factory reads `--data` with the benchmark's own readers and returns an `HfDataset`, whose rows are
built lazily so a large set streams through. Nothing is ever uploaded.

`datasets` and `pyarrow` are imported only when a folder is written (the `hf` extra).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError

#: the formats `tvr export` writes (room for `lmms-eval` later)
FORMATS = ("hf",)
#: rows per Parquet shard and per row group
ROWS_PER_SHARD = 1000
ROWS_PER_BATCH = 64
#: tvr's split names -> the Hugging Face convention
HF_SPLITS = {"train": "train", "val": "validation", "test": "test"}

_EXPORTERS: dict[tuple[str, str], Callable[..., HfDataset]] = {}


def register_exporter(fmt: str, benchmark: str, factory: Callable[..., HfDataset]) -> None:
    """A benchmark's exporter for format `fmt`: `factory(data, splits)` -> an `HfDataset`."""
    _EXPORTERS[(fmt, benchmark)] = factory


def exporter(fmt: str, benchmark: str) -> Callable[..., HfDataset]:
    from tvr.core.plugins import load_benchmarks

    load_benchmarks()
    try:
        return _EXPORTERS[(fmt, benchmark)]
    except KeyError:
        known = sorted(b for f, b in _EXPORTERS if f == fmt)
        raise UserError(f"no {fmt} exporter for benchmark {benchmark!r} (known: "
                        f"{', '.join(known) or 'none'})") from None  # fmt: skip


# --- what a benchmark describes -------------------------------------------------------------


def image(path: str | Path | None) -> dict[str, Any] | None:
    """The value of an Image column: the file's bytes and its name (None stays None)."""
    if path is None:
        return None
    path = Path(path)
    try:
        return {"bytes": path.read_bytes(), "path": path.name}
    except OSError as err:
        raise UserError(f"{path}: cannot read the image ({err.strerror or err})") from None


@dataclass
class Table:
    """One split of one config: its `datasets` features (a dict, `datasets.Features` form built
    by `features()`), and a function giving its rows (dicts of Python values)."""

    config: str
    split: str  # the Hugging Face split name (train, validation, test)
    features: Callable[[], Any]
    rows: Callable[[], Iterable[dict[str, Any]]]


@dataclass
class HfDataset:
    """What an exporter returns: the tables and the dataset card's parts."""

    benchmark: str
    pretty_name: str
    license: str  # an SPDX-like id of the card's YAML (`other` with license_name for the rest)
    license_note: str
    citation: str  # BibTeX
    description: str  # Markdown
    ids: str  # Markdown: which column is tvr's id, and the predictions format keyed by it
    scoring: str  # Markdown: the commands that score predictions
    tables: list[Table] = field(default_factory=list)
    license_name: str | None = None
    task_categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ("visual-reasoning", "transformation", "tvr")
    source: str = ""  # what was exported (the --data path), said in the card


@dataclass
class ExportReport:
    """What was written: rows per config/split, bytes, seconds."""

    out: Path
    rows: dict[str, dict[str, int]] = field(default_factory=dict)
    bytes: int = 0
    seconds: float = 0.0

    @property
    def total_rows(self) -> int:
        return sum(n for splits in self.rows.values() for n in splits.values())


# --- writing ----------------------------------------------------------------------------------

#: what an export writes in its folder (removed before an --overwrite writes again)
OWN_PATHS = ("data", "videos", "README.md")  # videos/: what earlier exports wrote


def write_hf_dataset(
    dataset: HfDataset, out: str | Path, progress: Callable[[str, int], None] | None = None
) -> ExportReport:
    """Write `dataset` into folder `out` (created; its former export removed first)."""
    out = Path(out)
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    for name in OWN_PATHS:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    report = ExportReport(out)
    infos: dict[str, dict[str, Any]] = {}
    data_files: dict[str, list[dict[str, str]]] = {}
    for table in dataset.tables:
        n, pattern, features = _write_table(table, out, progress)
        report.rows.setdefault(table.config, {})[table.split] = n
        data_files.setdefault(table.config, []).append({"split": table.split, "path": pattern})
        info = infos.setdefault(table.config, {"features": features, "splits": []})
        if features is not None and info["features"] is None:
            info["features"] = features
        num_bytes = sum(p.stat().st_size for p in out.glob(pattern) if p.name != "metadata.jsonl")
        info["splits"].append((table.split, n, num_bytes))
    card = dataset_card(dataset, data_files, infos)
    (out / "README.md").write_text(card, encoding="utf-8")
    report.bytes = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    report.seconds = time.perf_counter() - started
    return report


def _write_table(
    table: Table, out: Path, progress: Callable[[str, int], None] | None
) -> tuple[int, str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Features

    features = Features(table.features())
    schema = features.arrow_schema
    folder = out / "data" / table.config
    folder.mkdir(parents=True, exist_ok=True)
    shard, in_shard, total = 0, 0, 0
    writer: Any = None
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        nonlocal writer, shard, in_shard
        if not batch:
            return
        if writer is None:
            path = folder / f"{table.split}-{shard:05d}.parquet"
            writer = pq.ParquetWriter(path, schema)
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
        batch.clear()

    for row in table.rows():
        batch.append(row)
        in_shard += 1
        total += 1
        if progress is not None:
            progress(f"{table.config}/{table.split}", total)
        if len(batch) >= ROWS_PER_BATCH:
            flush()
        if in_shard >= ROWS_PER_SHARD:
            flush()
            writer.close()
            writer, shard, in_shard = None, shard + 1, 0
    flush()
    if writer is not None:
        writer.close()
    if total == 0:  # an empty split still has its (empty) shard, so the split exists
        pq.write_table(schema.empty_table(), folder / f"{table.split}-00000.parquet")
    return total, f"data/{table.config}/{table.split}-*.parquet", features


# --- the card ---------------------------------------------------------------------------------


def _features_yaml(features: Any) -> list[dict[str, Any]]:
    from datasets import DatasetInfo

    return DatasetInfo(features=features)._to_yaml_dict()["features"]


def dataset_card(
    dataset: HfDataset,
    data_files: dict[str, list[dict[str, str]]],
    infos: dict[str, dict[str, Any]],
) -> str:
    """README.md: YAML front matter (configs, dataset_info, licence) and the card's text."""
    import yaml

    meta: dict[str, Any] = {"pretty_name": dataset.pretty_name, "license": dataset.license}
    if dataset.license_name:
        meta["license_name"] = dataset.license_name
    if dataset.task_categories:
        meta["task_categories"] = list(dataset.task_categories)
    meta["tags"] = list(dataset.tags)
    configs = []
    for i, (config, files) in enumerate(data_files.items()):
        entry: dict[str, Any] = {"config_name": config, "data_files": files}
        if i == 0:
            entry["default"] = True
        configs.append(entry)
    meta["configs"] = configs
    dataset_info = []
    for config, info in infos.items():
        entry = {"config_name": config}
        if info["features"] is not None:
            entry["features"] = _features_yaml(info["features"])
        entry["splits"] = [{"name": s, "num_bytes": b, "num_examples": n} for s, n, b in info["splits"]]
        dataset_info.append(entry)
    meta["dataset_info"] = dataset_info
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
    sizes = "\n".join(
        f"| {config} | {split} | {n} |" for config, info in infos.items() for split, n, _ in info["splits"]
    )
    return (
        f"---\n{front}---\n\n"
        f"# {dataset.pretty_name}\n\n"
        f"{dataset.description.strip()}\n\n"
        f"Exported by `tvr export hf --benchmark {dataset.benchmark}`"
        + (f" from `{dataset.source}`" if dataset.source else "")
        + ". No loading script: `datasets.load_dataset(FOLDER, CONFIG)` reads the Parquet "
        "shards (and videos) of this folder as they are, offline.\n\n"
        "| config | split | rows |\n|---|---|---|\n"
        f"{sizes}\n\n"
        "## Loading\n\n"
        "```python\nfrom datasets import load_dataset\n\n"
        f"ds = load_dataset(\"path/to/this/folder\", \"{next(iter(infos))}\")\n"
        "print(ds)\n```\n\n"
        f"## Ids\n\n{dataset.ids.strip()}\n\n"
        f"## Scoring with tvr\n\n{dataset.scoring.strip()}\n\n"
        f"## License\n\n{dataset.license_note.strip()}\n\n"
        f"## Citation\n\n```bibtex\n{dataset.citation.strip()}\n```\n"
    )


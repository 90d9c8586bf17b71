"""TRANCE as a Hugging Face dataset (`tvr export hf --benchmark trance`): one config per setting.

A `tvr generate` dataset folder (or a samples file, or the release's layout that tvr reads)
becomes the config of its setting (basic, event or view), one split per samples file: the sample
id, the initial objects, the reference steps, the final objects, and the images init.C and
fin.L/C/R (each None where the set has no such image)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.hf_export import HF_SPLITS, HfDataset, Table, image, licence_fields, made_by_tvr
from tvr.trance.data.files import SAMPLES_IN_FOLDER, read_samples, samples_file, setting_of_data
from tvr.trance.data.sample import image_name

CITATION = """@article{hong2023transformation,
  title   = {Visual Reasoning: from State to Transformation},
  author  = {Hong, Xin and Lan, Yanyan and Pang, Liang and Guo, Jiafeng and Cheng, Xueqi},
  journal = {IEEE Transactions on Pattern Analysis and Machine Intelligence},
  year    = {2023}
}

@inproceedings{hong2021transformation,
  title     = {Transformation Driven Visual Reasoning},
  author    = {Hong, Xin and Lan, Yanyan and Pang, Liang and Guo, Jiafeng and Cheng, Xueqi},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year      = {2021}
}"""

IMAGES = (("init_C", "init", "C"), ("fin_L", "fin", "L"), ("fin_C", "fin", "C"), ("fin_R", "fin", "R"))


def _features() -> dict[str, Any]:
    from datasets import Image, List, Value

    obj = {"shape": Value("string"), "size": Value("string"), "color": Value("string"),
           "material": Value("string"), "position": List(Value("int32")),
           "rotation": Value("float64")}  # fmt: skip
    step = {"obj": Value("int32"), "value": Value("string"), "attr": Value("string"),
            "type": Value("string"), "options": List(Value("string"))}  # fmt: skip
    return {
        "id": Value("string"), "view": Value("string"), "num_visible": Value("int32"),
        "objects": List(obj), "steps": List(step), "final": List(obj),
        **{name: Image() for name, _, _ in IMAGES},
    }  # fmt: skip


class _Images:
    """Image files by name under a folder (flat, or below it in shard folders), listed once."""

    def __init__(self, root: Path) -> None:
        self.files = {p.name: p for p in sorted(root.rglob("*.png"))}

    def get(self, name: str) -> Path | None:
        return self.files.get(name)


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    if _is_release(path):
        yield from _release_rows(path)
        return
    images = _Images(path.parent)
    for s in read_samples(path):
        row = _row(s)
        for column, stage, v in IMAGES:
            row[column] = image(images.get(image_name(s.id, stage, v)))
        yield row


def _row(s: Any) -> dict[str, Any]:
    """A sample's row without its images."""
    d = s.to_dict()
    view = s.extra.get("view")
    return {
        "id": s.id,
        "view": view if isinstance(view, str) else None,
        "num_visible": s.num_visible,
        "objects": [_obj(o) for o in s.objects],
        "steps": [{"obj": st["obj"], "value": st["value"], "attr": st["attr"],
                   "type": st.get("type"), "options": st.get("options", [])}
                  for st in d["steps"]],
        "final": [_obj(o) for o in s.final],
    }  # fmt: skip


def _release_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of a release data.jsonl: its images are `img_{idx:06d}-...` in `image/` beside
    it (or beside the file, or in `images/`), found by name without listing the folder."""
    from tvr.core.jsonl import iter_jsonl
    from tvr.trance.data.release import read_release

    samples = read_release(path)  # checked whole first: a bad line stops before any row
    folder = path.parent
    for s, (_, d) in zip(samples, iter_jsonl(path), strict=True):
        row = _row(s)
        for column, stage, v in IMAGES:
            name = image_name(f"img_{d['idx']:06d}", stage, v)
            found = next((c for c in (folder / "image" / name, folder / name,
                                      folder / "images" / name) if c.is_file()), None)  # fmt: skip
            row[column] = image(found)
        yield row


def _is_release(path: Path) -> bool:
    """A release data.jsonl (lines with `idx` and `states`, no tvr `format`), not tvr samples."""
    from tvr.core.jsonl import iter_jsonl

    try:
        for _, d in iter_jsonl(path):
            return isinstance(d, dict) and "format" not in d and "idx" in d and "states" in d
    except UserError:
        return False
    return False


def _obj(o: dict[str, Any]) -> dict[str, Any]:
    return {k: o.get(k) for k in ("shape", "size", "color", "material", "position", "rotation")}


def _split_files(data: Path, splits: tuple[str, ...] | None) -> list[tuple[str, Path]]:
    if data.is_file():
        return [((splits or ("test",))[0], data)]
    found = []
    for split in splits or ("train", "val", "test"):
        for pattern in SAMPLES_IN_FOLDER:
            p = data / pattern.format(split=split)
            if "{split}" in pattern and p.is_file():
                found.append((split, p))
                break
    if not found and (data / "data.jsonl").is_file() and not (data / "samples.jsonl").is_file():
        # the release folder: data.jsonl and image/ (one split; a cut of the lines)
        found.append(((splits or ("test",))[0], data / "data.jsonl"))
    if not found:
        p = samples_file(data, (splits or ("test",))[0])
        found.append(((splits or ("test",))[0], p))
    return found


def _provenance(data: Path, files: list[tuple[str, Path]]) -> str:
    """`trance-release` for the authors' data.jsonl (or lines in its format), `tvr` for a set
    `tvr generate` made (its config.json), else `unknown`."""
    first = files[0][1]
    if first.name == "data.jsonl":
        return "trance-release"
    if made_by_tvr(data):
        return "tvr"
    try:
        with first.open("rb") as f:
            line = json.loads(f.readline() or b"{}")
    except (OSError, ValueError):
        return "unknown"
    return "trance-release" if isinstance(line, dict) and "states" in line else "unknown"


def export_trance(data: str | Path, splits: tuple[str, ...] | None = None) -> HfDataset:
    data = Path(data)
    files = _split_files(data, splits)
    setting = setting_of_data(files[0][1], None)
    for _, p in files[1:]:
        if setting_of_data(p, None) != setting:
            raise UserError(f"{p}: another setting than {files[0][1]}")
    tables = [
        Table(setting, HF_SPLITS[split], _features, lambda p=p: _rows(p)) for split, p in files
    ]
    view_note = (
        ' and `"view"` (L, C or R: the final view of the row, or each of the three where `view` '
        "is empty)" if setting == "view" else ""
    )
    return HfDataset(
        benchmark="trance",
        pretty_name=f"TRANCE ({setting.capitalize()})",
        **licence_fields(_provenance(data, files)),
        citation=CITATION,
        description=(
            f"TRANCE, setting **{setting}**: given the initial state (`init_C`, and the objects) "
            "and the final state (`fin_C`; `fin_L`/`fin_R` in View), predict the sequence of "
            "atomic transformations `steps` (object index, value). `objects` and `final` are the "
            "ten objects before and after; `steps` are the reference (`options`: the accepted "
            "values of an out move). Images are PNGs embedded as the Image feature."
        ),
        ids=(
            "`id` is the sample id that `tvr evaluate` uses: a predictions file is JSON lines "
            '`{"id": ID, "steps": [{"obj": 3, "value": "color.red"}, ...]}`' + view_note + "."
        ),
        scoring=(
            "Score predictions keyed by `id` with tvr against the exported set's source:\n\n"
            "```\ntvr evaluate --data DATASET_FOLDER --split test --predictions preds.jsonl\n```\n\n"
            "(`tvr baseline oracle --data ...` writes the format.)"
        ),
        tables=tables,
        task_categories=("image-to-text",),
        source=str(data),
    )

"""The TRANCO dataset layout's names: the format tag, the files, and the paths of ids and images.

    DATASET/
      dataset.json                     FORMAT, source, config, counts, skipped videos
      train.jsonl, val.jsonl, test.jsonl   one sample per line
      clips.jsonl                      one clip per line
      states/<sample id>_initial.jpg, states/<sample id>_final.jpg
      clips/<clip id>/00.jpg, 01.jpg, ...

Paths inside the files are relative to DATASET, with "/" separators. docs/tranco.md describes
every field; `tvr.tranco.data.dataset` reads and checks the layout.
"""

from __future__ import annotations

from pathlib import Path

FORMAT = "tvr-tranco/1"
SPLITS: tuple[str, ...] = ("train", "val", "test")
DATASET_FILE = "dataset.json"
CLIPS_FILE = "clips.jsonl"
STATES_DIR = "states"
CLIPS_DIR = "clips"
#: the sources a dataset may come from
SOURCES: tuple[str, ...] = ("coin", "trance-clips")


def split_file(split: str) -> str:
    """The samples file of a split: `train.jsonl`, `val.jsonl`, `test.jsonl`."""
    return f"{split}.jsonl"


def samples_file(path: str | Path, split: str = "test") -> Path:
    """The samples file of `--data PATH`: PATH, or the `split` file of the dataset folder PATH
    (a folder holding one samples.jsonl is read as it is)."""
    from tvr.core.data_path import reference_file

    return reference_file(path, [split_file("{split}"), "samples.jsonl"], split=split)


def clip_id(sample_id: str, index: int) -> str:
    """The id of step `index` (0-based) of a sample: `<sample id>_<index>`."""
    return f"{sample_id}_{index}"


def state_path(sample_id: str, which: str) -> str:
    """`states/<sample id>_initial.jpg` or `states/<sample id>_final.jpg`."""
    if which not in ("initial", "final"):
        raise ValueError(f"expected 'initial' or 'final', got {which!r}")
    return f"{STATES_DIR}/{sample_id}_{which}.jpg"


def frame_path(clip: str, index: int) -> str:
    """`clips/<clip id>/<index:02d>.jpg`: frame `index` of a clip."""
    return f"{CLIPS_DIR}/{clip}/{index:02d}.jpg"

"""Where CLEVRER's files lie: the release's names and folders, the layout tvr writes, and lookups
that find a file in a copy of the real release however its archives were unpacked.

The release numbers videos 0..19999: train 0-9999, validation 10000-14999, test 15000-19999.
Videos and annotations come in folders of 1000 (``video_00000-01000/video_00000.mp4``,
``annotation_10000-11000/annotation_10000.json``); questions in one file per split
(``train.json``, ``validation.json``, ``test.json``); mask proposals and predicted dynamics one
file per video named ``sim_XXXXX.json``. tvr writes under one root::

    videos/<split>/video_00000-01000/video_00000.mp4
    annotations/<split>/annotation_00000-01000/annotation_00000.json
    questions/<split>.json
    masks/sim_00000.json
    dynamics/sim_00000.json

and the lookups also accept the archives unpacked elsewhere under the root: without the split
folder, as ``video_train/``, or with the 1000-folders directly under the root.
"""

from __future__ import annotations

from pathlib import Path

from tvr.core.errors import UserError

SPLITS: dict[str, range] = {
    "train": range(0, 10000),
    "validation": range(10000, 15000),
    "test": range(15000, 20000),
}
CHUNK = 1000  # files per folder in the release


def split_of(scene_index: int) -> str:
    """The release's split of a video index; indices past 19999 (generated sets) are "train"."""
    for name, indices in SPLITS.items():
        if scene_index in indices:
            return name
    return "train"


def chunk_folder(prefix: str, scene_index: int) -> str:
    """The 1000-file folder holding a video's file: chunk_folder("video", 1234) ->
    "video_01000-02000"."""
    start = scene_index // CHUNK * CHUNK
    return f"{prefix}_{start:05d}-{start + CHUNK:05d}"


def video_filename(scene_index: int) -> str:
    return f"video_{scene_index:05d}.mp4"


def annotation_filename(scene_index: int) -> str:
    return f"annotation_{scene_index:05d}.json"


def sim_filename(scene_index: int) -> str:
    """The name of a video's mask-proposal and predicted-dynamics files."""
    return f"sim_{scene_index:05d}.json"


def sim_name(scene_index: int) -> str:
    """A video's name in the mask-proposal files and its frame folder (``sim_00000``)."""
    return f"sim_{scene_index:05d}"


def frame_filename(scene_index: int, frame_index: int) -> str:
    """A frame's path as the mask files give it: ``sim_00000/frame_00000.png`` (frames from 0)."""
    return f"{sim_name(scene_index)}/frame_{frame_index:05d}.png"


def video_path(root: str | Path, scene_index: int, split: str | None = None) -> Path:
    """Where tvr writes a video's mp4 under `root`."""
    split = split or split_of(scene_index)
    name = video_filename(scene_index)
    return Path(root) / "videos" / split / chunk_folder("video", scene_index) / name


def annotation_path(root: str | Path, scene_index: int, split: str | None = None) -> Path:
    """Where tvr writes a video's annotation under `root`."""
    split = split or split_of(scene_index)
    name = annotation_filename(scene_index)
    return Path(root) / "annotations" / split / chunk_folder("annotation", scene_index) / name


def questions_path(root: str | Path, split: str) -> Path:
    """Where tvr writes a split's question file under `root`."""
    return Path(root) / "questions" / f"{split}.json"


def dynamics_path(root: str | Path, scene_index: int) -> Path:
    return Path(root) / "dynamics" / sim_filename(scene_index)


def _candidates(kind: str, plural: str, root: Path, scene_index: int, split: str) -> list[Path]:
    name = f"{kind}_{scene_index:05d}" + (".mp4" if kind == "video" else ".json")
    chunk = chunk_folder(kind, scene_index)
    bases = [root / plural / split, root / plural, root / f"{kind}_{split}", root / split, root]
    return [p for base in bases for p in (base / chunk / name, base / name)]


def find_video(root: str | Path, scene_index: int) -> Path:
    """A video's mp4 under `root` (tvr's layout or the release's archives unpacked)."""
    return _find("video", "videos", Path(root), scene_index)


def find_annotation(root: str | Path, scene_index: int) -> Path:
    """A video's annotation file under `root`."""
    return _find("annotation", "annotations", Path(root), scene_index)


#: tvr's split names (docs/cli.md) -> the release's ("val" is the release's "validation")
SPLIT_ALIASES = {"val": "validation"}


def release_split(split: str) -> str:
    """The release's name of `split` ("val" -> "validation"; the others as they are)."""
    return SPLIT_ALIASES.get(split, split)


def find_questions(root: str | Path, split: str) -> Path:
    """A split's question file under `root`: questions/<split>.json or <split>.json (split
    train, val or test; the release's "validation" is "val")."""
    split = release_split(split)
    if split not in SPLITS:
        raise UserError(f"unknown split {split!r} (expected one of: train, val, test)")
    root = Path(root)
    for p in (root / "questions" / f"{split}.json", root / f"{split}.json"):
        if p.is_file():
            return p
    raise UserError(f"{root}: no question file for split {split!r} "
                    f"(looked for questions/{split}.json and {split}.json)")  # fmt: skip


def _find(kind: str, plural: str, root: Path, scene_index: int) -> Path:
    if not root.is_dir():
        raise UserError(f"{root}: no such folder")
    split = split_of(scene_index)
    tried = _candidates(kind, plural, root, scene_index, split)
    for p in tried:
        if p.is_file():
            return p
    raise UserError(f"{root}: no {kind} for scene {scene_index} (looked for "
                    f"{tried[0].relative_to(root)} and {len(tried) - 1} other places)")  # fmt: skip


def scan(root: str | Path, kind: str) -> dict[int, Path]:
    """Every file of `kind` ("video", "annotation", "sim") found anywhere under `root`, by scene
    index (the first found where a name repeats, in sorted path order)."""
    suffix = ".mp4" if kind == "video" else ".json"
    found: dict[int, Path] = {}
    for p in sorted(Path(root).rglob(f"{kind}_*{suffix}")):
        stem = p.name[len(kind) + 1 : -len(suffix)]
        if stem.isdigit():
            found.setdefault(int(stem), p)
    return found


def questions_file(path: str | Path, split: str = "test", option: str = "--data") -> Path:
    """The question file of `--data PATH`: PATH itself, or the `split` question file of the
    set's folder PATH (`find_questions`)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise UserError(f"{option} {path}: no such file or folder")
    return find_questions(path, split)

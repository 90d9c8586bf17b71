"""Find the local video file of each YouTube id under a folder, and list the ids without one.

A file belongs to id X when its name, without the extension, is X (`X.mp4`) or ends with
" [X]" (yt-dlp's default `Title [X].mp4`); it may lie at any depth up to `max_depth` folders
below the root (`videos/X.mp4`, `videos/{task}/X.webm`, ...). Extensions: VIDEO_EXTENSIONS,
case-insensitive; partial downloads (`.part`, `.ytdl`) and hidden files are ignored. When an id
has several files, the shallowest wins, then the earlier extension of VIDEO_EXTENSIONS, then the
path's order; the others are listed in `VideoFolder.duplicates`. Nothing is downloaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tvr.core.errors import UserError

VIDEO_EXTENSIONS = (".mp4", ".webm", ".mkv", ".mov", ".m4v", ".avi", ".flv")
_BRACKETED_ID = re.compile(r"\[([A-Za-z0-9_-]+)\]$")


@dataclass
class Located:
    """The result of `VideoFolder.locate`: the file of each found id, and the missing ids."""

    found: dict[str, Path] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)


class VideoFolder:
    """An index of the video files under `root` by YouTube id (the folder is scanned once)."""

    def __init__(self, root: str | Path, max_depth: int = 3) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise UserError(f"{self.root}: no such folder (the local video files)")
        ranked: dict[str, list[tuple[int, int, str, Path]]] = {}
        for path, depth in _video_files(self.root, max_depth):
            rank = VIDEO_EXTENSIONS.index(path.suffix.lower())
            for vid in _ids_of(path):
                ranked.setdefault(vid, []).append((depth, rank, str(path), path))
        self.files: dict[str, Path] = {}
        self.duplicates: dict[str, list[Path]] = {}
        for vid, options in ranked.items():
            options.sort()
            self.files[vid] = options[0][3]
            if len(options) > 1:
                self.duplicates[vid] = [o[3] for o in options[1:]]

    def find(self, video_id: str) -> Path | None:
        """The file of `video_id`, or None."""
        return self.files.get(video_id)

    def locate(self, video_ids: Iterable[str]) -> Located:
        """The files of the ids that have one, and the ids that have none (in the given order)."""
        out = Located()
        for vid in dict.fromkeys(video_ids):
            path = self.files.get(vid)
            if path is None:
                out.missing.append(vid)
            else:
                out.found[vid] = path
        return out


def _video_files(root: Path, max_depth: int) -> Iterable[tuple[Path, int]]:
    """(path, depth) of each visible video file, depth 0 for files directly in root."""
    base = len(root.parts)
    for folder, subdirs, names in os.walk(root, followlinks=True):
        depth = len(Path(folder).parts) - base
        subdirs[:] = (
            sorted(d for d in subdirs if not d.startswith(".")) if depth < max_depth else []
        )
        for name in sorted(names):
            path = Path(folder) / name
            if not name.startswith(".") and path.suffix.lower() in VIDEO_EXTENSIONS:
                yield path, depth


def _ids_of(path: Path) -> list[str]:
    """The ids a file name stands for: its stem, and the id in a trailing " [id]" if any."""
    stem = path.stem
    ids = [stem]
    match = _BRACKETED_ID.search(stem)
    if match and match.group(1) != stem:
        ids.append(match.group(1))
    return ids

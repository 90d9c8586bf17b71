"""A tiny COIN.json and its videos for the builder's tests: frame i of every video is grey level
10 + 12 i (tests/video/conftest.py), so an extracted image says which frame it is."""

from __future__ import annotations

import json
from pathlib import Path

from tests.video.conftest import frame_number, grey, write_video

FPS = 10
FRAMES = 20  # 2 s: frame i at i / 10 s

#: video id -> (steps as (start, end) seconds, what its file is)
VIDEOS: dict[str, tuple[list[tuple[float, float]], str]] = {
    "a2": ([(0.2, 0.5), (0.6, 1.0)], "ok"),
    "a3": ([(0.0, 0.4), (0.5, 0.9), (1.0, 1.5)], "ok"),
    "a4": ([(0.1, 0.3), (0.4, 0.7), (0.8, 1.1), (1.2, 1.6)], "ok"),
    "b2": ([(0.3, 0.9), (1.0, 1.9)], "ok"),
    "b3": ([(1.0, 1.4), (0.0, 0.5), (0.6, 0.9)], "ok"),  # listed out of time order
    "c5": ([(0.0, 0.3), (0.3, 0.6), (0.6, 0.9), (0.9, 1.2), (1.2, 1.5)], "ok"),
    "d7": ([(0.2 * i, 0.2 * i + 0.15) for i in range(7)], "ok"),
    "one": ([(0.0, 1.0)], "ok"),  # 1 step: left out
    "eight": ([(0.2 * i, 0.2 * i + 0.1) for i in range(8)], "ok"),  # 8 steps: left out
    "gone": ([(0.0, 0.5), (0.6, 1.0)], "missing"),
    "junk": ([(0.0, 0.5), (0.6, 1.0), (1.1, 1.5)], "garbage"),
    "short": ([(0.0, 0.5), (2.0, 3.5)], "ok"),  # ends 1.6 s after the last frame
}
BUILT = ("a2", "a3", "a4", "b2", "b3", "c5", "d7")


def make_coin(root: Path, videos: dict | None = None) -> tuple[Path, Path]:
    """(COIN.json, the video folder) under `root`."""
    videos = VIDEOS if videos is None else videos
    folder = root / "videos"
    folder.mkdir(parents=True, exist_ok=True)
    database = {}
    for i, (vid, (steps, kind)) in enumerate(videos.items()):
        database[vid] = {
            "duration": FRAMES / FPS,
            "class": f"task {i % 3}",
            "recipe_type": i % 3,
            "subset": "training" if i % 2 else "testing",
            "video_url": f"https://www.youtube.com/embed/{vid}",
            "annotation": [
                {"id": str(100 + k), "segment": [start, end], "label": f"{vid} step {k}"}
                for k, (start, end) in enumerate(steps)
            ],
        }
        if kind == "ok":
            write_video(folder / f"{vid}.mp4", n=FRAMES, fps=FPS, size=(64, 48))
        elif kind == "garbage":
            (folder / f"{vid}.mp4").write_bytes(b"not a video at all")
    coin = root / "COIN.json"
    coin.write_text(json.dumps({"database": database}))
    return coin, folder


__all__ = ["BUILT", "FPS", "FRAMES", "VIDEOS", "frame_number", "grey", "make_coin"]

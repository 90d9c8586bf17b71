"""A PyTorch Dataset over a TRANCO dataset folder: each sample's initial and final images, the
frames of its step clips in order, their labels, and (val and test) its stored candidate set.

The folder is what `tvr tranco build` (COIN) or `tvr tranco testbed` (TRANCE clips) writes; it is
read and checked, images included, by `tvr.tranco.data.dataset.open_dataset` when the Dataset is
made. torch is imported here only (`pip install 'tvr[train]'`), so `import tvr.tranco` does not
need it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvr.training.datasets import read_images, require_torch, split_name
from tvr.tranco.data.dataset import TrancoDataset, TrancoSample, open_dataset
from tvr.tranco.data.layout import DATASET_FILE, SPLITS

torch = require_torch("tvr.tranco.data.torch_data")


def _stacked(parts: list[Any]) -> Any:
    """Tensors of one shape stacked into one; anything else kept as a list."""
    if (
        all(isinstance(x, torch.Tensor) for x in parts)
        and len({tuple(x.shape) for x in parts}) == 1
    ):
        return torch.stack(parts)
    return parts


class TrancoSampleDataset(torch.utils.data.Dataset):
    """The samples of one split of a TRANCO dataset.

    Args:
        root: the dataset folder (holding dataset.json), or its dataset.json.
        split: "train", "val" or "test".
        transform: called on each image (a Pillow RGB image: the states and every clip frame),
            as torchvision's image datasets do; results that are tensors of one shape are
            stacked as below, others kept in lists.
        candidate_frames: also read the frames of every stored candidate clip (val and test;
            100 clips a sample in the paper's tiny setting) into "candidate_clips".

    An item is a dict: "id", "task", "domain" (strings), "initial" and "final" (uint8 tensors
    (H, W, 3), RGB), "clips" (uint8 tensor (steps, F, H, W, 3): the frames of each reference
    step clip, in order; F = the dataset's frames_per_clip), "clip_ids" and "labels" (each
    step's clip id and description), "candidates" (the stored candidate clip ids, None on
    train, where candidates are drawn per epoch: `tvr.tranco.data.candidates`) and "targets"
    (the position of each step's clip in "candidates", None on train); with
    `candidate_frames`, "candidate_clips" (K, F, H, W, 3; None on train). Samples differ in their number of
    steps, so batch them with `collate_fn=list`. `frames(clip_id)` reads any clip's frames.

    A wrong split, a folder that is no TRANCO dataset or a broken file in it raises UserError
    naming the file (and line and field).
    """

    def __init__(
        self,
        root: str | Path,
        split: str,
        transform: Callable[[Any], Any] | None = None,
        candidate_frames: bool = False,
    ) -> None:
        self.split = split_name(split, SPLITS, type(self).__name__)
        root = Path(root)
        if root.name == DATASET_FILE and root.is_file():
            root = root.parent
        self.dataset: TrancoDataset = open_dataset(root)
        self.samples: list[TrancoSample] = self.dataset.split(self.split)
        self.transform = transform
        self.candidate_frames = candidate_frames

    def __len__(self) -> int:
        return len(self.samples)

    def frames(self, clip_id: str) -> Any:
        """The frames of one clip: uint8 tensor (F, H, W, 3), or as `transform` makes them."""
        return read_images(self.dataset.frames(clip_id), self.transform, "clip frame")

    def _image(self, relative: str) -> Any:
        return read_images([self.dataset.path(relative)], self.transform, "state image")[0]

    def __getitem__(self, i: int) -> dict[str, Any]:
        s = self.samples[i]
        cands = None if s.candidates is None else list(s.candidates)
        item = {
            "id": s.id,
            "task": s.task,
            "domain": s.domain,
            "initial": self._image(s.initial),
            "final": self._image(s.final),
            "clips": _stacked([self.frames(c) for c in s.clips]),
            "clip_ids": list(s.clips),
            "labels": [self.dataset.clips[c].label for c in s.clips],
            "candidates": cands,
            "targets": None if cands is None else [cands.index(c) for c in s.clips],
        }
        if self.candidate_frames:
            item["candidate_clips"] = (
                None if cands is None else _stacked([self.frames(c) for c in cands])
            )
        return item

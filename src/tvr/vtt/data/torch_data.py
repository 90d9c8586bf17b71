"""A PyTorch Dataset over a VTT folder in the release's layout: each sample's N + 1 state images
and its N transformation descriptions.

The folder is the release's (``meta/vtt.jsonl`` and ``states/``), what `tvr vtt build` writes,
or the TRANCE text testbed of `tvr vtt testbed`; the records and every state image are checked
when the Dataset is made, by the readers `tvr vtt train` uses (`tvr.vtt.data.layout`,
`tvr.vtt.data.records`).
torch is imported here only (`pip install 'tvr[train]'`), so `import tvr.vtt` does not need it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvr.training.datasets import read_images, require_torch, split_name
from tvr.vtt.data.layout import records_file, states_folder
from tvr.vtt.data.records import SPLITS, check_states, read_records

torch = require_torch("tvr.vtt.data.torch_data")


class VttDataset(torch.utils.data.Dataset):
    """The samples of one split of a VTT folder.

    Args:
        root: the folder (holding meta/vtt.jsonl and states/), or its records file
            meta/vtt.jsonl (the states are then read from the states/ beside meta/).
        split: "train", "val" or "test".
        transform: called on each state image (a Pillow RGB image), as torchvision's image
            datasets do; the item's "states" are the results stacked into one tensor when they
            are tensors of one shape, else their list.

    An item is a dict: "id" (the sample's id), "states" (uint8 tensor (N + 1, H, W, 3), RGB,
    state 0 before the first step and state i after step i), "descriptions" (the N reference
    descriptions, in order), "topic" and "category" (strings). Samples differ in N, so batch
    them with `collate_fn=list`.

    A wrong split, a folder without meta/vtt.jsonl or states/, a bad record or a missing state
    image raises UserError naming it.
    """

    def __init__(
        self, root: str | Path, split: str, transform: Callable[[Any], Any] | None = None
    ) -> None:
        self.split = split_name(split, SPLITS, type(self).__name__)
        self.records_path = records_file(root)
        self.states_dir = states_folder(root)
        records = read_records(self.records_path)
        check_states(records, self.states_dir, self.records_path)
        self.records = [r for r in records if r.split == self.split]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i: int) -> dict[str, Any]:
        r = self.records[i]
        paths = [self.states_dir / name for name in r.state_names()]
        return {
            "id": r.id,
            "states": read_images(paths, self.transform, "state image"),
            "descriptions": r.labels,
            "topic": r.topic,
            "category": r.category,
        }

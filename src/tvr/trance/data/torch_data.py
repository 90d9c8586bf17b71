"""PyTorch Datasets over a generated TRANCE store, yielding batch-contract examples.

Each item is `tvr.trance.data.batch.make_example(...)` of one sample: the initial image (init.C) and
the final image (fin.C for Basic and Event, the sample's own view for View), uint8 (H, W, 3) as
the store keeps them: read-only views of the memory-mapped small array (no decoding, no copy:
`collate` makes the one copy, into the batch) or, with `size="full"`, decoded from the PNGs;
the 10x19 object vectors, the states, the reference steps as targets, the first step's accepted
values (Basic: an "out" move accepts every valid option) and the view. The `trance` training source
(`tvr.trance.train.data`) opens DIR with these classes, so `tvr train --data-root DIR` needs
no glue. torch is imported here only, so the symbolic package does not need it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from torch.utils.data import Dataset

from tvr.core.errors import UserError
from tvr.trance.data.batch import make_example
from tvr.trance.data.store import SLOT_INDEX, SplitStore, TranceDataset, open_dataset


class TranceStoreDataset(Dataset):
    """Examples of one split of a store, for one setting (basic, event or view).

    Args:
        data: a dataset folder made by `tvr generate` (then `split` names the split), or one
            split of an opened store (`TranceDataset.split(name)`).
        split: "train", "val" or "test" (with a folder).
        size: "small" (the memory-mapped small array) or "full" (the PNGs).
    """

    setting = "event"

    def __init__(
        self, data: SplitStore | str | Path, split: str | None = None, size: str = "small"
    ) -> None:
        if isinstance(data, SplitStore):
            if split in ("small", "full") and size == "small":  # the older (split, size) call
                split, size = None, split
            if split is not None:
                raise UserError(f"{type(self).__name__}(split_store, ...): the split is already "
                                f"chosen; give a dataset folder to choose split {split!r}")  # fmt: skip
        else:
            if split is None:
                raise UserError(f"{type(self).__name__}({str(data)!r}, split): give the split "
                                "('train', 'val' or 'test')")  # fmt: skip
            store = open_dataset(data)
            if self.setting != "event" and store.setting != self.setting:
                raise UserError(f"{data} is a {store.setting} dataset: {type(self).__name__} "
                                f"needs a {self.setting} one")  # fmt: skip
            data = store.split(split)
        if size not in ("small", "full"):
            raise UserError(f"size is 'small' (the small image array) or 'full' (the PNGs), "
                            f"got {size!r}")  # fmt: skip
        self.split = data
        self.size = size

    def __len__(self) -> int:
        return len(self.split)

    def final_view(self, sample: Any) -> str:
        return "C"

    def first_options(self, sample: Any) -> tuple[int, ...]:
        return ()

    def symbolic(self, i: int) -> tuple[dict[str, Any], str]:
        """(the example of sample i without its images, its final view), made once per sample
        by `make_example` and kept: the loader's hot path then only picks the two images."""
        cache = self.__dict__.setdefault("_symbolic", {})
        hit = cache.get(i)
        if hit is None:
            sample = self.split.sample(i)
            view = self.final_view(sample)
            blank = np.zeros((1, 1, 3), dtype=np.uint8)
            ex = make_example(
                sample.id,
                blank,
                blank,
                sample.initial_array,
                sample.final_array,
                [(s.obj, s.value) for s in sample.steps],
                self.first_options(sample),
                view,
            )
            hit = cache[i] = (ex, view)
        return hit

    def __getitem__(self, i: int) -> dict[str, Any]:
        ex, view = self.symbolic(i)
        ex = dict(ex)
        if self.size == "small":
            shard, j = self.split.locate(i)
            small = self._small_array(shard)
            ex["init_image"] = small[j, _INIT_SLOT]
            ex["final_image"] = small[j, SLOT_INDEX[("fin", view)]]
        else:
            ex["init_image"] = self.split.image(i, "init", "C", "full")
            ex["final_image"] = self.split.image(i, "fin", view, "full")
        return ex

    def _small_array(self, shard: Any) -> np.ndarray:
        """The shard's memory-mapped (n, 4, h, w, 3) array as a plain ndarray (indexing a
        np.memmap costs 10x more than indexing an ndarray view of the same map)."""
        cache = self.__dict__.setdefault("_small", {})
        arr = cache.get(id(shard))
        if arr is None:
            arr = cache[id(shard)] = np.asarray(shard.small)
        return arr

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_symbolic", None)  # each worker fills its own
        state.pop("_small", None)
        return state


_INIT_SLOT = SLOT_INDEX[("init", "C")]


class EventDataset(TranceStoreDataset):
    """Event: init.C and fin.C, 1..4 reference steps."""

    setting = "event"


class BasicDataset(TranceStoreDataset):
    """Basic: init.C and fin.C, one step; an "out" move accepts each of its options."""

    setting = "basic"

    def first_options(self, sample: Any) -> tuple[int, ...]:
        return tuple(sample.steps[0].accepted)


class ViewDataset(TranceStoreDataset):
    """View: init.C and the final image of the sample's view (`extra["view"]`)."""

    setting = "view"

    def final_view(self, sample: Any) -> str:
        try:
            return sample.extra["view"]
        except KeyError:
            raise ValueError(
                f"sample {sample.id} has no view: View needs a dataset made with --setting view"
            ) from None


DATASETS = {"basic": BasicDataset, "event": EventDataset, "view": ViewDataset}


def store_dataset(
    store: TranceDataset | str | Path, split: str, setting: str | None = None, size: str = "small"
) -> TranceStoreDataset:
    """The Dataset of `split` of a store for `setting` (default: the store's own). A Basic or
    Event model can train on any store (it reads fin.C); View needs a View store."""
    ds = store if isinstance(store, TranceDataset) else open_dataset(store)
    setting = setting or ds.setting
    if setting not in DATASETS:
        raise ValueError(f"unknown setting {setting!r}")
    if setting == "view" and ds.setting != "view":
        raise ValueError(f"{ds.root} is a {ds.setting} dataset: the view setting needs a view one")
    if setting == "basic" and ds.setting != "basic":
        raise ValueError(f"{ds.root} is a {ds.setting} dataset: the basic setting needs a basic one")
    return DATASETS[setting](ds.split(split), size=size)


def check_data_root(root: str | Path, setting: str) -> None:
    """UserError for a data root that is no dataset store: a missing folder, or a folder of the
    public release's layout (data.jsonl and PNGs), which `tvr convert` imports into a store."""
    root = Path(root)
    if not root.is_dir():
        raise UserError(f"{root}: no such dataset folder (make one with `tvr generate`)")
    if (root / "data.jsonl").is_file() and not (root / "config.json").is_file():
        raise UserError(
            f"{root} is a folder of the public release's layout: import it into a dataset store "
            f"first, `tvr convert --from-release {root} --out DIR --split train --setting "
            f"{setting}` (once per split), then train with --data-root DIR"
        )


@lru_cache(maxsize=4)
def _opened(root: str) -> TranceDataset:
    """A store opened (and checked) once per process, for the train and val splits alike."""
    return open_dataset(root)


def training_source(config: Any, split: str) -> TranceStoreDataset | None:
    """The `trance` training source: split `split` of the store at `config.data_root` at the
    size of `config.image_size` (the store's small or full size); None if it has no such split."""
    if not config.data_root:
        raise ValueError("the trance data source needs --data-root DIR (a `tvr generate` folder)")
    check_data_root(config.data_root, config.setting)
    ds = _opened(str(Path(config.data_root).resolve()))
    if split not in ds.splits:
        return None
    sp = ds.split(split)
    want = tuple(config.image_size)
    if want == tuple(sp.small_size):
        size = "small"
    elif want == tuple(sp.full_size):
        size = "full"
    else:
        raise ValueError(
            f"image size {want[1]}x{want[0]} (width x height) matches neither the store's small "
            f"images {sp.small_size[1]}x{sp.small_size[0]} nor its full ones "
            f"{sp.full_size[1]}x{sp.full_size[0]}: use --image-size WIDTHxHEIGHT with one of them"
        )
    return store_dataset(ds, split, config.setting, size)

"""The scene parser's data: every image of a `tvr generate` split at 160x120, with its labels.

Item k of a split is image k % 4 (init.C, fin.L, fin.C, fin.R) of sample k // 4: the uint8
image from the store's memory-mapped small array and its (10, LABEL_FIELDS) label rows
(`tvr.trance.perception.labels`); training images are mirrored left-right half of the time
(`flip`), and their look randomised if asked (`augment_look`, `looks.randomise_look`). Targets at the network's output size are made per batch
(`targets`).
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from tvr.core.errors import UserError
from tvr.training.keypoints import splat_gaussian
from tvr.trance.data.store import SplitStore, open_dataset
from tvr.trance.perception.labels import COL, split_labels
from tvr.trance.perception.looks import randomise_look
from tvr.trance.perception.model import HEADS, NUM_OUT, STRIDE
from tvr.trance.world.camera import IMAGE_WIDTH
from tvr.trance.world.vocab import IMAGE_SLOTS

SLOTS = len(IMAGE_SLOTS)


def open_split(data: str | Path, split: str) -> SplitStore:
    """One split of a `tvr generate` dataset folder (UserError if the folder has none)."""
    ds = open_dataset(data)
    if split not in ds.splits:
        raise UserError(f"{data}: no split {split!r} (it has {', '.join(ds.splits) or 'none'})")
    return ds.split(split)


class SceneImages(Dataset):
    """(image uint8 (H, W, 3), labels (10, F)) for every image of the first `limit` samples."""

    def __init__(
        self, store: SplitStore, labels: np.ndarray, limit: int | None = None, flip: bool = False,
        augment_look: float = 0.0,
    ):  # fmt: skip
        self.store = store
        self.labels = labels
        self.n = min(len(store), limit or len(store), len(labels))
        self.flip = flip
        self.augment_look = augment_look

    def __len__(self) -> int:
        return self.n * SLOTS

    def __getitem__(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        i, slot = divmod(k, SLOTS)
        shard, j = self.store.locate(i)
        image, labels = np.asarray(shard.small[j, slot]), self.labels[i, slot]
        if self.flip and torch.rand(()).item() < 0.5:
            # the mirror image of the scene mirrored about the camera's vertical plane: the same
            # objects, each centre at u -> width - u (the shading's light comes from the other side)
            image = image[:, ::-1]
            labels = labels.copy()
            labels[:, COL["u"]] = IMAGE_WIDTH - labels[:, COL["u"]]
        if self.augment_look > 0:
            # seeded from torch's generator: the run's seed and the loader's workers decide it
            rng = np.random.default_rng(int(torch.randint(0, 2**31 - 1, ()).item()))
            image = randomise_look(image, rng, self.augment_look)
        return image, labels


def collate(items: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, torch.Tensor]:
    images = torch.from_numpy(np.stack([im for im, _ in items])).permute(0, 3, 1, 2).float() / 255
    labels = torch.from_numpy(np.stack([lab for _, lab in items]))
    return {"images": images, "labels": labels}


def targets(
    labels: torch.Tensor, out_size: tuple[int, int], image_width: int, sigma: float,
    min_pixels: int,
) -> dict[str, torch.Tensor]:  # fmt: skip
    """Targets at the output size (h, w) from label rows (B, 10, F) in 320x240 pixels:
    heat (B, h, w), heat weight (B, h, w) (0 around objects that barely show), offset (B, 2,
    h, w) and attribute classes (B, 4, h, w) (-1 where no object owns the cell), owner mask."""
    b = labels.shape[0]
    h, w = out_size
    scale = image_width / IMAGE_WIDTH / STRIDE  # 320x240 pixels -> output cells
    heat = torch.zeros((b, h, w))
    weight = torch.ones((b, h, w))
    offset = torch.zeros((b, 2, h, w))
    classes = torch.full((b, len(HEADS), h, w), -1, dtype=torch.long)
    owner_dist = torch.full((b, h, w), float("inf"))
    centre = torch.zeros((b, h, w), dtype=torch.bool)
    for i in range(b):
        for row in labels[i]:
            if row[COL["present"]] < 0.5:
                continue
            cy, cx = float(row[COL["v"]]) * scale - 0.5, float(row[COL["u"]]) * scale - 0.5
            r, c = round(cy), round(cx)
            if not (0 <= r < h and 0 <= c < w):
                continue
            if row[COL["pixels"]] < min_pixels:
                if row[COL["pixels"]] > 0:
                    weight[i, max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2] = 0.0
                continue
            splat_gaussian(heat[i], cy, cx, sigma)
            centre[i, r, c] = True
            offset[i, 0, r, c], offset[i, 1, r, c] = cy - r, cx - c
            cls = torch.tensor([int(row[COL[name]]) for name, _ in HEADS])
            for rr in range(max(r - 1, 0), min(r + 2, h)):
                for cc in range(max(c - 1, 0), min(c + 2, w)):
                    d = (rr - cy) ** 2 + (cc - cx) ** 2
                    if d < owner_dist[i, rr, cc]:
                        owner_dist[i, rr, cc] = d
                        classes[i, :, rr, cc] = cls
    return {"heat": heat, "weight": weight, "offset": offset, "classes": classes,
            "centre": centre}  # fmt: skip


class SceneParserData(L.LightningDataModule):
    """The train and val images of a config's dataset, labels cached in the run folder."""

    def __init__(self, config) -> None:
        super().__init__()
        self.config = config
        self.train_set: SceneImages | None = None
        self.val_set: SceneImages | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.train_set is not None:
            return
        cfg = self.config
        cache = Path(cfg.run_dir) / "labels"
        train = open_split(cfg.data, cfg.train_split)
        n = min(len(train), cfg.limit or len(train))
        samples = train.samples()[:n]
        self.train_set = SceneImages(
            train, split_labels(samples, cache / f"{cfg.train_split}.npz"), flip=cfg.flip,
            augment_look=cfg.augment_look,
        )  # fmt: skip
        val = open_split(cfg.data, cfg.val_split)
        self.val_set = SceneImages(val, split_labels(val.samples(), cache / f"{cfg.val_split}.npz"))

    def _loader(self, ds: Dataset, shuffle: bool) -> DataLoader:
        return DataLoader(
            ds, batch_size=self.config.batch_size, shuffle=shuffle, collate_fn=collate,
            num_workers=self.config.num_workers, persistent_workers=self.config.num_workers > 0,
        )  # fmt: skip

    def train_dataloader(self) -> DataLoader:
        assert self.train_set is not None
        return self._loader(self.train_set, True)

    def val_dataloader(self) -> DataLoader:
        assert self.val_set is not None
        return self._loader(self.val_set, False)


__all__ = ["NUM_OUT", "SceneImages", "SceneParserData", "collate", "open_split", "targets"]

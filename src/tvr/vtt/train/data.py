"""VTT samples as model batches: records, their CLIP ids, their state features (cached) or images,
the topic/category classes of the Aux heads, and the Lightning data module.

The classes are the topics and categories of the training split, sorted (198 and 12 on the
release); a val/test sample of another topic has none (-100, left out of the Aux losses).
A frozen encoder's features come from the feature cache (tvr.vtt.models.features): the encoder
runs once over the states of the splits used, without augmentation. A trained encoder reads the
images in every batch (open_clip's evaluation transform).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset

from tvr.vtt.data.folder import read_data
from tvr.vtt.data.records import VttRecord
from tvr.vtt.models import tokenizer
from tvr.vtt.models.common import IGNORE
from tvr.vtt.models.config import ModelConfig
from tvr.vtt.models.encoder import ClipImageEncoder
from tvr.vtt.models.features import FeatureCache, load_image

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LabelSpace:
    """What the training split defines for a model: the classes of the Aux heads (its topics and
    categories, sorted) and the CLIP ids of its descriptions (a "train" vocabulary)."""

    topics: tuple[str, ...]
    categories: tuple[str, ...]
    token_ids: tuple[int, ...] = ()

    @classmethod
    def from_records(cls, records: Sequence[VttRecord], max_tokens: int = 24) -> LabelSpace:
        train = [r for r in records if r.split == "train"]
        ids = {i for r in train for s in r.steps for i in tokenizer.encode(s.label, max_tokens)}
        return cls(tuple(sorted({r.topic for r in train})),
                   tuple(sorted({r.category for r in train})), tuple(sorted(ids)))  # fmt: skip

    def to_dict(self) -> dict[str, list[Any]]:
        return {"topics": list(self.topics), "categories": list(self.categories),
                "token_ids": list(self.token_ids)}  # fmt: skip

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LabelSpace:
        return cls(tuple(d["topics"]), tuple(d["categories"]), tuple(d.get("token_ids", ())))

    def topic_index(self, topic: str) -> int:
        return self.topics.index(topic) if topic in self.topics else IGNORE

    def category_index(self, category: str) -> int:
        return self.categories.index(category) if category in self.categories else IGNORE


class SampleSet(Dataset):
    """One split's samples: inputs (features or images), CLIP ids, classes, references."""

    def __init__(
        self,
        records: Sequence[VttRecord],
        labels: LabelSpace,
        max_tokens: int,
        features: dict[str, torch.Tensor] | None,
        states_dir: Path,
        transform: Any = None,
    ) -> None:
        self.records = list(records)
        self.labels = labels
        self.features = features
        self.states_dir = states_dir
        self.transform = transform
        self.tokens = [[tokenizer.encode(s.label, max_tokens) for s in r.steps] for r in records]

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, i: int) -> dict[str, Any]:
        r = self.records[i]
        if self.features is not None:
            inputs = self.features[r.id]
        else:
            inputs = torch.stack([load_image(self.states_dir / name, self.transform)
                                  for name in r.state_names()])  # fmt: skip
        return {"id": r.id, "inputs": inputs, "tokens": self.tokens[i],
                "topic": self.labels.topic_index(r.topic),
                "category": self.labels.category_index(r.category),
                "references": r.labels}  # fmt: skip


def collate(items: list[dict[str, Any]]) -> dict[str, Any]:
    """Pad a list of samples to a batch (tvr.vtt.models.common describes it)."""
    b = len(items)
    s = max(x["inputs"].shape[0] for x in items)
    length = max(len(t) for x in items for t in x["tokens"])
    first = items[0]["inputs"]
    inputs = first.new_zeros(b, s, *first.shape[1:])
    state_mask = torch.zeros(b, s, dtype=torch.bool)
    tokens = torch.zeros(b, s - 1, length, dtype=torch.long)
    token_mask = torch.zeros(b, s - 1, length, dtype=torch.bool)
    for i, x in enumerate(items):
        n = x["inputs"].shape[0]
        inputs[i, :n] = x["inputs"]
        state_mask[i, :n] = True
        for j, ids in enumerate(x["tokens"]):
            tokens[i, j, : len(ids)] = torch.tensor(ids)
            token_mask[i, j, : len(ids)] = True
    return {
        "id": [x["id"] for x in items],
        "inputs": inputs,
        "state_mask": state_mask,
        "trans_mask": state_mask[:, 1:],
        "tokens": tokens,
        "token_mask": token_mask,
        "topic": torch.tensor([x["topic"] for x in items]),
        "category": torch.tensor([x["category"] for x in items]),
        "references": [x["references"] for x in items],
    }


def split_features(
    model: ModelConfig,
    records: Sequence[VttRecord],
    states_dir: Path,
    cache_dir: Path | None,
    batch_size: int = 32,
    device: str | torch.device = "cpu",
) -> tuple[dict[str, torch.Tensor], int]:
    """id -> (N + 1, D) cached encoder features of each record, and D."""
    cache = FeatureCache(model.encoder_spec(), cache_dir)
    paths = [states_dir / name for r in records for name in r.state_names()]

    def progress(done: int, total: int) -> None:
        if done == total or done % (batch_size * 20) == 0:
            log.info("encoded %d/%d state images", done, total)

    feats = cache.get(paths, batch_size, device, progress)
    out: dict[str, torch.Tensor] = {}
    start = 0
    for r in records:
        out[r.id] = feats[start : start + r.n + 1]
        start += r.n + 1
    if cache.encoded:
        print(f"encoded {cache.encoded} state images with {model.encoder} "
              f"({'cached in ' + str(cache.path) if cache.path else 'not cached'})")  # fmt: skip
    return out, int(feats.shape[1])


class VttSamples:
    """The sample sets of the splits a run uses, built from one config."""

    def __init__(
        self,
        data: str | Path,
        model: ModelConfig,
        splits: Sequence[str],
        cache_dir: Path | None,
        labels: LabelSpace | None = None,
        encode_batch_size: int = 32,
        device: str | torch.device = "cpu",
    ) -> None:
        self.records_path, records, self.states_dir = read_data(data)
        self.labels = labels or LabelSpace.from_records(records, model.max_tokens)
        self.split_counts = {split: sum(r.split == split for r in records)
                             for split in ("train", "val", "test")}  # fmt: skip
        chosen = [r for r in records if r.split in splits]
        transform = None
        if model.freeze_encoder:
            features, self.encoder_dim = split_features(model, chosen, self.states_dir, cache_dir,
                                                        encode_batch_size, device)  # fmt: skip
        else:
            encoder = ClipImageEncoder(model.encoder_spec())
            features, self.encoder_dim, transform = None, encoder.output_dim, encoder.transform()
        self.sets = {
            split: SampleSet([r for r in chosen if r.split == split], self.labels,
                             model.max_tokens, features, self.states_dir, transform)
            for split in splits
        }  # fmt: skip


class VttDataModule(L.LightningDataModule):
    def __init__(self, samples: VttSamples, batch_size: int, num_workers: int = 0) -> None:
        super().__init__()
        self.samples = samples
        self.batch_size = batch_size
        self.num_workers = num_workers

    def _loader(self, split: str, shuffle: bool) -> DataLoader:
        return DataLoader(self.samples.sets[split], batch_size=self.batch_size, shuffle=shuffle,
                          num_workers=self.num_workers, collate_fn=collate,
                          persistent_workers=self.num_workers > 0)  # fmt: skip

    def train_dataloader(self) -> DataLoader:
        return self._loader("train", True)

    def val_dataloader(self) -> DataLoader:
        return self._loader("val", False)

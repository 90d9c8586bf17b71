"""The parser's Lightning parts: batches of one role, the three networks, exact-match validation.

Each batch holds texts of one role (descriptive question, multiple-choice question or choice) and
goes through that role's network (`RoleBatches` groups and shuffles them per epoch with the
seed). Training minimises the cross-entropy of the next program token under teacher forcing;
validation also decodes greedily and logs the exact program match: `val/acc` over all texts and
`val/acc_<role>` per role. The checkpoint holds the config and both vocabularies, so it parses
on its own (`tvr.clevrer.models.parser.predict`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import lightning as L
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset, Sampler

from tvr.clevrer.data.layout import find_questions
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.models.parser.config import ParserConfig
from tvr.clevrer.models.parser.data import ROLES, ParserSample, parser_samples, select_programs
from tvr.clevrer.models.parser.model import Seq2Seq
from tvr.clevrer.models.parser.tokens import PAD_ID, Vocab
from tvr.core.errors import UserError

Batch = dict[str, Any]


class EncodedSamples(Dataset):
    """Samples as id lists: words, and the program between `<START>` and `<END>` (empty when the
    sample has none)."""

    def __init__(self, samples: Sequence[ParserSample], words: Vocab, tokens: Vocab) -> None:
        self.samples = list(samples)
        self.words = [words.encode(s.words) for s in self.samples]
        self.programs = [tokens.encode(s.program or (), ends=True) for s in self.samples]

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> tuple[int, list[int], list[int]]:
        return i, self.words[i], self.programs[i]


def pad(rows: Sequence[Sequence[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(1, max(len(r) for r in rows))), PAD_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
    return out


def make_collate(samples: Sequence[ParserSample]):
    def collate(items: list[tuple[int, list[int], list[int]]]) -> Batch:
        index = [i for i, _, _ in items]
        return {
            "index": torch.as_tensor(index),
            "role": samples[index[0]].role,
            "words": pad([w for _, w, _ in items]),
            "lengths": torch.as_tensor([max(1, len(w)) for _, w, _ in items]),
            "program": pad([p for _, _, p in items]),
        }

    return collate


class RoleBatches(Sampler[list[int]]):
    """Batches of one role each: per epoch (`set_epoch`, which Lightning calls) the indices of
    each role are shuffled with (seed, epoch) and cut into batches, and the batches shuffled."""

    def __init__(self, roles: Sequence[str], batch_size: int, shuffle: bool, seed: int) -> None:
        self.groups = [[i for i, r in enumerate(roles) if r == role] for role in ROLES]
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def _batches(self) -> list[list[int]]:
        rng = np.random.default_rng([self.seed, self.epoch])
        batches = []
        for group in self.groups:
            order = rng.permutation(group).tolist() if self.shuffle else list(group)
            batches += [
                order[k : k + self.batch_size] for k in range(0, len(order), self.batch_size)
            ]
        if self.shuffle:
            batches = [batches[i] for i in rng.permutation(len(batches))]
        return batches

    def __iter__(self) -> Iterator[list[int]]:
        return iter(self._batches())

    def __len__(self) -> int:
        return sum(-(-len(g) // self.batch_size) for g in self.groups)


def read_split_samples(root: str, split: str) -> list[ParserSample]:
    """The texts with programs of a split's question file under `root`."""
    samples = parser_samples(read_questions(find_questions(root, split)), with_programs=True)
    if not samples:
        raise UserError(f"{root}: the {split} questions have no programs to learn from")
    return samples


class ParserData(L.LightningDataModule):
    """The selected training programs and the held-out texts of a config."""

    def __init__(self, config: ParserConfig) -> None:
        super().__init__()
        self.config = config
        self.train_samples: list[ParserSample] = []
        self.val_samples: list[ParserSample] = []
        self.words: Vocab | None = None
        self.tokens: Vocab | None = None

    def setup(self, stage: str | None = None) -> None:
        if self.words is not None:
            return
        cfg = self.config
        every = read_split_samples(cfg.data, cfg.train_split)
        # the vocabularies of the whole training split's texts and programs; the programs the
        # networks learn from are the selected ones
        self.words = Vocab.build(s.words for s in every)
        self.tokens = Vocab.build(s.program or () for s in every)
        self.train_samples = select_programs(every, cfg.programs, cfg.seed)
        val = read_split_samples(cfg.data, cfg.val_split)
        if cfg.val_size is not None and len(val) > cfg.val_size:
            keep = np.random.default_rng([cfg.seed, 1]).choice(
                len(val), cfg.val_size, replace=False
            )
            val = [val[i] for i in sorted(keep.tolist())]
        self.val_samples = val

    def _loader(self, samples: list[ParserSample], shuffle: bool) -> DataLoader:
        assert self.words is not None and self.tokens is not None
        cfg = self.config
        return DataLoader(
            EncodedSamples(samples, self.words, self.tokens),
            batch_sampler=RoleBatches([s.role for s in samples], cfg.batch_size, shuffle, cfg.seed),
            collate_fn=make_collate(samples),
            num_workers=cfg.num_workers,
        )

    def train_dataloader(self) -> DataLoader:
        return self._loader(self.train_samples, shuffle=True)

    def val_dataloader(self) -> DataLoader:
        return self._loader(self.val_samples, shuffle=False)


def build_networks(config: ParserConfig, n_words: int, n_tokens: int) -> nn.ModuleDict:
    return nn.ModuleDict(
        {
            role: Seq2Seq(
                n_words, n_tokens, config.embed_dim, config.hidden, config.layers, config.dropout
            )
            for role in ROLES
        }
    )


def exact_matches(predicted: torch.Tensor, program: torch.Tensor) -> torch.Tensor:
    """(B,) whether each greedy parse (B, L) equals its program (B, J, from `<START>`) exactly,
    up to and with `<END>`."""
    target = program[:, 1:]
    width = max(predicted.shape[1], target.shape[1])
    p = F.pad(predicted, (0, width - predicted.shape[1]), value=PAD_ID)
    t = F.pad(target, (0, width - target.shape[1]), value=PAD_ID)
    return (p == t).all(dim=1)


class ParserModule(L.LightningModule):
    """The three role networks, trained together (each batch trains its role's network)."""

    def __init__(self, config: dict[str, Any], words: list[str], tokens: list[str]) -> None:
        super().__init__()
        self.save_hyperparameters({"config": config, "words": words, "tokens": tokens})
        self.config = ParserConfig.from_dict(config)
        self.word_vocab = Vocab.from_json(words)
        self.token_vocab = Vocab.from_json(tokens)
        self.networks = build_networks(self.config, len(words), len(tokens))
        self._right = {r: 0 for r in ROLES}
        self._seen = {r: 0 for r in ROLES}

    def _loss(self, batch: Batch) -> torch.Tensor:
        program = batch["program"]
        logits = self.networks[batch["role"]](batch["words"], batch["lengths"], program[:, :-1])
        return F.cross_entropy(logits.transpose(1, 2), program[:, 1:], ignore_index=PAD_ID)

    def training_step(self, batch: Batch, batch_idx: int) -> torch.Tensor:
        loss = self._loss(batch)
        n = batch["words"].shape[0]
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, batch_size=n)
        return loss

    def on_validation_epoch_start(self) -> None:
        self._right = {r: 0 for r in ROLES}
        self._seen = {r: 0 for r in ROLES}

    def validation_step(self, batch: Batch, batch_idx: int) -> None:
        n = batch["words"].shape[0]
        self.log("val/loss", self._loss(batch), on_epoch=True, batch_size=n)
        net = self.networks[batch["role"]]
        parsed = net.greedy(batch["words"], batch["lengths"], self.config.max_length + 1)
        right = exact_matches(parsed, batch["program"])
        self._right[batch["role"]] += int(right.sum())
        self._seen[batch["role"]] += n

    def on_validation_epoch_end(self) -> None:
        total = sum(self._seen.values())
        self.log("val/acc", sum(self._right.values()) / max(total, 1))
        for r in ROLES:
            if self._seen[r]:
                self.log(f"val/acc_{r}", self._right[r] / self._seen[r])

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=self.config.lr)

"""The nearest-neighbour baseline of VTT: each transformation gets the training description of
the most similar training image pair.

A transformation between states a and b is the pair feature of their frozen encoder features
(tvr.vtt.models.features, cached): "concat" = [a/|a|, b/|b|], "diff" = (b - a)/|b - a|, "both" =
[a/|a|, b/|b|, (b - a)/|b - a|]. Similarity is the cosine of pair features; the first training
pair (records in file order, transformations in order) wins a tie, so the output is
deterministic.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn.functional as F

from tvr.core.errors import UserError
from tvr.core.progress import DoneTotalBar, step_bar
from tvr.vtt.data.folder import read_data
from tvr.vtt.models.encoder import EncoderSpec, warn_if_random
from tvr.vtt.models.features import FeatureCache

PAIR_FEATURES = ("concat", "diff", "both")


@dataclass(frozen=True)
class NearestConfig:
    """The baseline's settings (saved next to its predictions)."""

    data: str
    split: str = "test"
    encoder: str = "ViT-L-14"
    encoder_weights: str | None = None
    encoder_seed: int = 0
    pair: str = "both"
    feature_cache: str | None = None
    batch_size: int = 32

    def __post_init__(self) -> None:
        if self.pair not in PAIR_FEATURES:
            raise ValueError(f"pair is one of {', '.join(PAIR_FEATURES)}, not {self.pair!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": "nearest", **asdict(self)}


def pair_features(states: torch.Tensor, pair: str) -> torch.Tensor:
    """(N + 1, D) state features -> (N, D') unit pair features of the N transformations."""
    a, b = states[:-1], states[1:]
    parts = {
        "concat": [F.normalize(a, dim=-1), F.normalize(b, dim=-1)],
        "diff": [F.normalize(b - a, dim=-1)],
    }
    parts["both"] = parts["concat"] + parts["diff"]
    return F.normalize(torch.cat(parts[pair], dim=-1), dim=-1)


def nearest_predictions(
    config: NearestConfig, device: str = "cpu", progress: bool = False
) -> dict[str, list[str]]:
    """id -> descriptions of every `config.split` sample, copied from the nearest training pair;
    `progress`: bars on stderr for reading, encoding and searching (an encoder without weights
    gets one warning line there in any case)."""
    records_path, records, states_dir = read_data(config.data)
    train = [r for r in records if r.split == "train"]
    target = [r for r in records if r.split == config.split]
    if not train:
        raise UserError(f"{records_path}: no train samples to copy descriptions from")
    if not target:
        raise UserError(f"{records_path}: no {config.split} samples")
    spec = EncoderSpec(config.encoder, config.encoder_weights, config.encoder_seed)
    warn_if_random(spec)
    cache = FeatureCache(spec, config.feature_cache)
    chosen = train + ([] if config.split == "train" else target)
    paths = [states_dir / name for r in chosen for name in r.state_names()]
    with (
        DoneTotalBar("reading state images", "img", progress) as hashing,
        DoneTotalBar(f"encoding with {config.encoder}", "img", progress) as encoding,
    ):
        feats = cache.get(paths, config.batch_size, device, encoding, hashing)
    per_record: dict[str, torch.Tensor] = {}
    start = 0
    for r in chosen:
        per_record[r.id] = feats[start : start + r.n + 1]
        start += r.n + 1
    bank = torch.cat([pair_features(per_record[r.id], config.pair) for r in train])
    labels = [s.label for r in train for s in r.steps]
    offsets, start = {}, 0
    for r in train:
        offsets[r.id], start = start, start + r.n
    out: dict[str, list[str]] = {}
    with step_bar(len(target), f"nearest {config.split} pairs", "sample", progress) as bar:
        for r in target:
            similarity = pair_features(per_record[r.id], config.pair) @ bank.T
            if config.split == "train":  # never copy a pair's own description
                similarity[:, offsets[r.id] : offsets[r.id] + r.n] = float("-inf")
            # argmax returns the first of equal maxima: the earliest training pair
            best = similarity.argmax(dim=1).tolist()
            out[r.id] = [labels[i] for i in best]
            bar.update(1)
    return out

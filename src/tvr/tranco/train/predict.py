"""TrancoNet's predictions for a split, against the tiny or the full candidate sets, as a
predictions file of `tvr tranco evaluate` ({"id", "clips"} per line).

The split's images are encoded once (a frozen encoder: read from the feature cache; an encoder
trained in the loop: encoded now); each clip becomes one unit vector (the mean of `clip_frames`
evenly spaced frames); then each sample is decoded greedily (`greedy_decode`) against its
candidates: its stored tiny set, or every clip of the split ("full").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
import torch.nn.functional as F

from tvr.core.errors import UserError
from tvr.core.progress import step_bar
from tvr.tranco.data.candidates import full_candidates
from tvr.tranco.data.dataset import TrancoDataset, TrancoSample
from tvr.tranco.data.formats import write_predictions
from tvr.tranco.models.trancenet import TrancoNet, greedy_decode
from tvr.tranco.train.checkpoint import TrainedModel
from tvr.tranco.train.data import even_frames
from tvr.tranco.train.features import FeatureTable, encode_paths, feature_cache, pick_device

#: the candidate settings of a prediction
SETTINGS = ("tiny", "full")


def split_features(
    trained: TrainedModel,
    dataset: TrancoDataset,
    paths: Sequence[str],
    device: str,
    cache_root: str | Path | None = None,
    batch_size: int = 64,
    progress: bool = False,
) -> dict[str, torch.Tensor]:
    """path -> unit feature of each image of `paths` under the trained model's encoder (with
    `progress`, a bar on stderr over the images encoded now)."""
    if trained.recipe is not None:
        table: FeatureTable = feature_cache(
            dataset, trained.recipe, trained.config.resize, cache_root, batch_size, device,
            progress=progress,
        )  # fmt: skip
        index = table.index
        rows = table.features[torch.tensor([index[p] for p in paths], dtype=torch.long)]
    else:
        assert trained.model.encoder is not None
        with step_bar(len(paths), "encoding", "img", progress) as bar:
            rows = encode_paths(
                trained.model.encoder, [dataset.path(p) for p in paths], trained.config.resize,
                batch_size, device, bar.update,
            )  # fmt: skip
    return dict(zip(paths, rows, strict=True))


def predict_split(
    trained: TrainedModel,
    dataset: TrancoDataset,
    split: str,
    setting: str = "tiny",
    device: str | None = None,
    cache_root: str | Path | None = None,
    batch_size: int = 16,
    progress: bool = False,
) -> list[tuple[str, list[str]]]:
    """(sample id, predicted clip ids) of every sample of `split`, in file order; with
    `progress`, bars on stderr over the images encoded and the samples decoded."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown candidate setting {setting!r}: one of {SETTINGS}")
    device = pick_device(device)
    config = trained.config
    samples = dataset.split(split)
    if setting == "tiny":
        bare = next((s for s in samples if s.candidates is None), None)
        if bare is not None:
            raise UserError(f"sample {bare.id!r} of {split} stores no candidates: predict it "
                            "against the full set (--candidates full)")  # fmt: skip
    pool = full_candidates((s.id, s.clips) for s in samples)
    clip_ids = sorted({c for s in samples for c in (s.candidates or ())} | set(pool))
    frames = {c: even_frames(dataset.clips[c].frames, config.clip_frames) for c in clip_ids}
    paths = sorted({p for s in samples for p in (s.initial, s.final)}
                   | {f for fs in frames.values() for f in fs})  # fmt: skip
    features = split_features(
        trained, dataset, paths, device, cache_root, config.feature_batch_size, progress
    )
    clip_row = {c: i for i, c in enumerate(clip_ids)}
    clip_matrix = torch.stack(
        [
            F.normalize(torch.stack([features[f] for f in frames[c]]).mean(0), dim=-1)
            for c in clip_ids
        ]
    ).to(device)
    model = trained.model.to(device).eval()
    out: list[tuple[str, list[str]]] = []
    with step_bar(len(samples), f"decoding ({setting})", "sample", progress) as bar:
        for start in range(0, len(samples), batch_size):
            chunk = samples[start : start + batch_size]
            pools = [list(s.candidates or ()) if setting == "tiny" else pool for s in chunk]
            picks = _decode_chunk(
                model, chunk, pools, features, clip_matrix, clip_row, config.min_steps
            )
            out.extend(
                (s.id, [p[i - 1] for i in seq])
                for s, p, seq in zip(chunk, pools, picks, strict=True)
            )
            bar.update(len(chunk))
    return out


def _decode_chunk(
    model: TrancoNet,
    chunk: Sequence[TrancoSample],
    pools: Sequence[list[str]],
    features: dict[str, torch.Tensor],
    clip_matrix: torch.Tensor,
    clip_row: dict[str, int],
    min_steps: int,
) -> list[list[int]]:
    """Greedy picks (candidate indices 1..K of each sample's pool) of a chunk of samples."""
    device = clip_matrix.device
    states = torch.stack([torch.stack([features[s.initial], features[s.final]]) for s in chunk]).to(
        device
    )
    k = max(len(p) for p in pools)
    index = torch.zeros(len(chunk), k, dtype=torch.long)
    available = torch.zeros(len(chunk), k + 1, dtype=torch.bool)
    for b, p in enumerate(pools):
        index[b, : len(p)] = torch.tensor([clip_row[c] for c in p], dtype=torch.long)
        available[b, : len(p) + 1] = True
    clips = clip_matrix[index.to(device)]
    candidates = torch.cat([states[:, 1:2], clips], dim=1)
    with torch.inference_mode():
        picks = greedy_decode(
            model.head, states, candidates, available.to(device),
            model.head.cfg.max_steps, min_steps,
        )  # fmt: skip
    return picks


def write_split_predictions(
    trained: TrainedModel,
    dataset: TrancoDataset,
    split: str,
    setting: str,
    out: str | Path,
    device: str | None = None,
    cache_root: str | Path | None = None,
    progress: bool = False,
) -> int:
    """Predict a split against one candidate setting and write the predictions file; returns
    the number of predictions (`progress`: bars on stderr)."""
    predictions = predict_split(
        trained, dataset, split, setting, device, cache_root, progress=progress
    )
    return write_predictions(out, predictions)

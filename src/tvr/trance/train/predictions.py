"""Predictions of a trained model in the evaluation format, `predictions.jsonl`.

One JSON object a line: {"id": "<sample id>", "steps": [{"obj": 3, "value": "color.red"}, ...]},
plus "view": "L" | "C" | "R" in the View setting. Steps are greedy decodings; Basic has one step.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from tvr.core.jsonl import write_jsonl
from tvr.trance.data.batch import Batch, images_to_float, to_device
from tvr.trance.models import build_model
from tvr.trance.train.checkpoint import checkpoint_config, model_state, read_checkpoint
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.data import make_dataset
from tvr.trance.train.module import image_layout, make_loader, model_layout
from tvr.trance.world.vocab import VALUES, VIEWS


def records(batch: Batch, steps: list[list[tuple[int, int]]], setting: str) -> list[dict[str, Any]]:
    out = []
    for i, seq in enumerate(steps):
        rec: dict[str, Any] = {
            "id": batch["id"][i],
            "steps": [{"obj": int(o), "value": VALUES[v]} for o, v in seq],
        }
        if setting == "view":
            rec["view"] = VIEWS[int(batch["view"][i])]
        out.append(rec)
    return out


def load_model(checkpoint: str | Path, map_location: str = "cpu") -> tuple[nn.Module, TrainConfig]:
    """The model and config of a training checkpoint (UserError if it is none of ours)."""
    ckpt = read_checkpoint(checkpoint)
    config = checkpoint_config(ckpt, checkpoint)
    model = build_model(
        config.model,
        config.setting,
        config.image_size,
        decoder_form=config.decoder_form,
        duda_form=config.duda_form,
    )
    model.load_state_dict(model_state(ckpt))
    return model.to(map_location), config


def inference_autocast(config: TrainConfig, device: str) -> torch.autocast:
    """bf16 autocast for inference: always on a GPU; on the CPU only when the run trained in
    bf16-mixed, so that its predictions are made in the precision it trained in."""
    device_type = "cuda" if device.startswith("cuda") else "cpu"
    enabled = device_type == "cuda" or config.precision.startswith("bf16")
    return torch.autocast(device_type=device_type, dtype=torch.bfloat16, enabled=enabled)


@torch.inference_mode()
def predict_records(
    model: nn.Module,
    config: TrainConfig,
    dataset,
    batch_size: int | None = None,
    device: str | None = None,
) -> list[dict[str, Any]]:
    """Greedy predictions of `model` on every sample of `dataset`, in the evaluation format."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = model_layout(config, model.to(device).eval())
    out: list[dict[str, Any]] = []
    loader = make_loader(dataset, config, batch_size or config.batch_size, shuffle=False)
    for batch in loader:
        batch = images_to_float(to_device(batch, device))
        init, final = image_layout(config, batch["init_image"], batch["final_image"])
        with inference_autocast(config, device):
            decoded = model.decode(init, final, batch["objects"])
        out.extend(records(batch, decoded.steps(), config.setting))
    return out


def write_predictions(
    checkpoint: str | Path,
    out_path: str | Path,
    split: str | None = None,
    config: TrainConfig | None = None,
) -> Path:
    """Load a checkpoint, predict a split (default: the config's predict_split, else val) of
    its dataset source (or of `config`'s, to predict other data) and write the JSON lines."""
    model, ckpt_config = load_model(checkpoint)
    config = config or ckpt_config
    splits = [split] if split else [config.predict_split, "val"]
    dataset = None
    for s in splits:
        dataset = make_dataset(config, s)
        if dataset is not None:
            break
    if dataset is None:
        raise ValueError(f"no split {splits} in dataset source {config.data!r}")
    out_path = Path(out_path)
    write_jsonl(out_path, predict_records(model, config, dataset))  # atomically
    return out_path

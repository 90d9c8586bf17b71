"""Shared test helpers: tiny synthetic batches and a one-batch overfitting loop."""

from __future__ import annotations

import torch

from tvr.trance.data.batch import collate, images_to_float
from tvr.trance.models import build_model
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.losses import supervised_loss
from tvr.trance.train.module import image_layout, model_layout, score_decoded
from tvr.trance.train.synthetic import make_synthetic_examples

TINY = (30, 40)  # height, width of the test images


def tiny_batch(n: int = 8, setting: str = "event", image_size=TINY, seed: int = 3):
    """A collated synthetic batch with its images made float, as the model step sees it."""
    return images_to_float(collate(make_synthetic_examples(n, setting, image_size, seed=seed)))


def greedy_acc(model, batch, setting: str) -> float:
    model.eval()
    with torch.no_grad():
        d = model.decode(batch["init_image"], batch["final_image"], batch["objects"])
    return float(score_decoded(TrainConfig(setting=setting), batch, d.objs, d.values)["acc"].mean())


def overfit(
    name: str,
    setting: str = "event",
    max_steps: int = 400,
    every: int = 25,
    lr: float = 1e-3,
    cpu_bf16: bool = False,
    **forms: str,
):
    """Train `name` on one batch of 8 until greedy decoding scores Acc 1.0 through the
    simulator; returns (steps taken, final Acc). `cpu_bf16`: train and decode under CPU bf16
    autocast with NHWC convolutions (`precision="bf16-mixed", channels_last=True`). `forms`:
    `decoder_form`, `duda_form` of build_model (default: the original's)."""
    torch.manual_seed(0)
    batch = tiny_batch(8, setting)
    model = build_model(name, setting, TINY, **forms)
    if cpu_bf16:
        fast = TrainConfig(model=name, setting=setting, channels_last=True)
        model = model_layout(fast, model)
        batch["init_image"], batch["final_image"] = image_layout(
            fast, batch["init_image"], batch["final_image"]
        )
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    acc = 0.0
    for step in range(1, max_steps + 1):
        model.train()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cpu_bf16):
            loss = supervised_loss(model, batch, batch["init_image"], batch["final_image"])["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % every == 0:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=cpu_bf16):
                acc = greedy_acc(model, batch, setting)
            if acc == 1.0:
                return step, acc
    return max_steps, acc

"""BatchNorm statistics recomputed with the current weights ("precise BN").

A BatchNorm layer in eval mode normalises with running averages of the batch statistics it saw in
training (momentum 0.1: about the last ten batches). While Adam is still moving the weights, those
averages lag behind them, and a channel whose variance is small is thrown off by a shift of its
mean that is large only in units of its own standard deviation. On TRANCE this is what makes
validation Acc jump from epoch to epoch while the training loss falls smoothly (the first-layer
BatchNorm of CNN⊕-G has a channel with variance 5e-3; see docs/training-runs.md).
`recalibrate_batchnorm` replaces the running averages by the plain average over some training
batches forwarded with the current weights, which removes the lag; nothing else changes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch import nn


def batchnorm_layers(model: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    return [
        m
        for m in model.modules()
        if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.track_running_stats
    ]


@torch.no_grad()
def recalibrate_batchnorm(
    model: nn.Module, batches: Iterable[Any], forward: Callable[[Any], object]
) -> int:
    """Set every BatchNorm's running mean and variance of `model` to the average of the batch
    statistics of `forward(batch)` over `batches` (called in train mode, without gradients), and
    return how many batches were used. With no batch the statistics are left as they were and
    ValueError is raised. The model's train/eval mode and the layers' momenta are restored."""
    layers = batchnorm_layers(model)
    if not layers:
        return 0
    saved = [
        (m.running_mean.clone(), m.running_var.clone(), m.num_batches_tracked.clone(), m.momentum)
        for m in layers
    ]
    was_training = model.training
    for m in layers:
        m.reset_running_stats()
        m.momentum = None  # cumulative moving average: the plain mean over the batches
    model.train()
    n = 0
    try:
        for batch in batches:
            forward(batch)
            n += 1
    finally:
        model.train(was_training)
        for m, (mean, var, count, momentum) in zip(layers, saved, strict=True):
            m.momentum = momentum
            if n == 0:
                m.running_mean.copy_(mean)
                m.running_var.copy_(var)
                m.num_batches_tracked.copy_(count)
    if n == 0:
        raise ValueError("no batches to recompute the BatchNorm statistics with")
    return n

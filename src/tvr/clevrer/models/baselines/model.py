"""The baseline networks: a question LSTM, a frame CNN, and the answer and option heads.

- LSTM (Table 2): word embeddings -> LSTM; an MLP on the final hidden state predicts the
  descriptive answer (over ANSWERS) and, for an option, one logit of "correct".
- CNN+LSTM: each of the K frames through the CNN (torchvision's ResNet-18 or ResNet-50, random or
  ImageNet weights from a local file and optionally fixed, or a small CNN; the paper: fixed
  ImageNet ResNet-50 pool5 features), each frame's feature reduced to `frame_features`, the K
  concatenated in time order and mapped to the question's width; the MLP reads [question,
  video]. A video's frames go through the CNN once per batch for all its questions.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from tvr.clevrer.models.baselines.config import BaselineConfig
from tvr.clevrer.models.baselines.data import ANSWERS
from tvr.clevrer.models.parser.tokens import PAD_ID
from tvr.core.errors import UserError
from tvr.training.checkpoints import load_torch
from tvr.training.clip_towers import check_weights_file

# ImageNet's mean and std, the usual input scaling of torchvision's ResNets
_MEAN = (0.485, 0.456, 0.406)
_STD = (0.229, 0.224, 0.225)


class QuestionEncoder(nn.Module):
    """Words (N, L) -> the LSTM's final hidden state (N, hidden)."""

    def __init__(self, n_words: int, embed_dim: int, hidden: int, dropout: float) -> None:
        super().__init__()
        self.embedding = nn.Embedding(n_words, embed_dim, padding_idx=PAD_ID)
        self.lstm = nn.LSTM(embed_dim, hidden, batch_first=True)
        self.drop = nn.Dropout(dropout)

    def forward(self, words: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = pack_padded_sequence(
            self.drop(self.embedding(words)), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        _, (h, _) = self.lstm(packed)
        return h[-1]


def small_cnn(width: int = 128) -> tuple[nn.Module, int]:
    """Four 3x3 stride-2 convolutions with BatchNorm and ReLU, then global average pooling."""
    chans = [3, 32, 64, width, width]
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(chans):
        layers += [
            nn.Conv2d(a, b, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(b),
            nn.ReLU(inplace=True),
        ]
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
    return nn.Sequential(*layers), width


def resnet_cnn(name: str) -> tuple[nn.Module, int]:
    """torchvision's "resnet18" or "resnet50" without its classifier, random weights (nothing
    downloaded; `load_cnn_weights` reads ImageNet weights from a file)."""
    from torchvision import models

    net = getattr(models, name)(weights=None)
    width = net.fc.in_features
    net.fc = nn.Identity()
    return net, width


def load_cnn_weights(cnn: nn.Module, path: str | Path, option: str = "--cnn-weights") -> None:
    """Load a torchvision ResNet state dict from a local file into `cnn` (its classifier's
    entries dropped), strictly; UserError naming `option` and the file when it cannot be read
    or does not fit."""
    path = check_weights_file(path, option)
    state = load_torch(path, "a torch state dict", label=f"{option} {path}")
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    if not isinstance(state, dict):
        raise UserError(f"{option} {path}: not a torch state dict (a {type(state).__name__})")
    state = {k: v for k, v in state.items() if not k.startswith("fc.")}
    try:
        cnn.load_state_dict(state, strict=True)
    except RuntimeError as err:
        lines = str(err).strip().splitlines()
        detail = lines[1].strip() if len(lines) > 1 else lines[0]
        raise UserError(f"{option} {path}: not weights of this ResNet ({detail})") from None


class FrameEncoder(nn.Module):
    """Frames (B, K, 3, H, W) uint8 -> a video feature (B, out) keeping the frames' order. With
    `freeze_cnn` the CNN gets no gradients and its BatchNorm stays in eval mode."""

    def __init__(
        self, cnn: str, frames: int, frame_features: int, out: int, freeze_cnn: bool = False
    ) -> None:
        super().__init__()
        self.cnn, width = small_cnn() if cnn == "small" else resnet_cnn(cnn)
        self.freeze_cnn = freeze_cnn
        if freeze_cnn:
            self.cnn.requires_grad_(False)
        self.reduce = nn.Sequential(nn.Linear(width, frame_features), nn.ReLU(inplace=True))
        self.video = nn.Sequential(nn.Linear(frames * frame_features, out), nn.ReLU(inplace=True))
        self.register_buffer("mean", torch.tensor(_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(_STD).view(1, 3, 1, 1), persistent=False)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        b = frames.shape[0]
        x = frames.flatten(0, 1).float().div(255.0)
        x = (x - self.mean) / self.std
        if self.freeze_cnn:
            # eval here, not in train(): Lightning restores submodules' modes by attribute
            self.cnn.eval()
            with torch.no_grad():
                features = self.cnn(x)
        else:
            features = self.cnn(x)
        per_frame = self.reduce(features).view(b, -1)  # (B, K * frame_features)
        return self.video(per_frame)


class QAModel(nn.Module):
    """(answer logits (N, |ANSWERS|), option logits (N,)) of a batch's N items."""

    def __init__(self, config: BaselineConfig, n_words: int) -> None:
        super().__init__()
        h = config.hidden
        self.question = QuestionEncoder(n_words, config.embed_dim, h, config.dropout)
        self.video = (
            FrameEncoder(config.cnn, config.frames, config.frame_features, h, config.freeze_cnn)
            if config.uses_video
            else None
        )
        width = 2 * h if self.video is not None else h
        self.mlp = nn.Sequential(
            nn.Dropout(config.dropout), nn.Linear(width, h), nn.ReLU(inplace=True)
        )
        self.answer = nn.Linear(h, len(ANSWERS))
        self.option = nn.Linear(h, 1)

    def forward(
        self,
        words: torch.Tensor,
        lengths: torch.Tensor,
        item_video: torch.Tensor,
        frames: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.question(words, lengths)
        if self.video is not None:
            if frames is None:
                raise ValueError("CNN+LSTM needs the videos' frames")
            x = torch.cat([x, self.video(frames)[item_video]], dim=-1)
        x = self.mlp(x)
        return self.answer(x), self.option(x).squeeze(-1)

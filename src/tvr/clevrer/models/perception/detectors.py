"""The detectors `--detector` selects, behind one interface: training losses from id maps, and
instance masks with scores.

| name | network | default input |
|---|---|---|
| `maskrcnn-r50` | torchvision's Mask R-CNN, ResNet-50 FPN (the paper's), no downloaded weights | 320x480 |
| `maskrcnn-r18` | the same Mask R-CNN on a ResNet-18 FPN (BatchNorm trained, not frozen) | 160x240 |
| `unet` | a small U-Net grouping pixels by predicted centres (`unet.py`) | 160x240 |

The Mask R-CNNs are class-agnostic (object or floor; the attribute classifier names the masks),
start from random weights (`weights=None, weights_backbone=None`) and have anchors scaled to
CLEVRER's objects (about 25-40 pixels wide at 480x320): 16..256 pixels at full size, halved at
half size; they keep a quarter of torchvision's default proposals (a frame has few objects). Training targets for every detector are id maps (B, H, W): -1 floor, k the k-th object.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch
from torch import nn
from torchvision.models.detection import MaskRCNN, maskrcnn_resnet50_fpn
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import resnet_fpn_backbone

from tvr.clevrer.models.perception.unet import CentreUNet, Detections
from tvr.clevrer.vocab import FRAME_HEIGHT

MAX_DETECTIONS = 32


class Detector(Protocol):
    """What the frame parser needs of a detector (an nn.Module)."""

    def losses(self, images: torch.Tensor, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Named training losses of images (B, 3, H, W) in [0, 1] with their id maps (B, H, W)."""
        ...

    def detect(self, images: torch.Tensor) -> list[Detections]:
        """Each image's instances (masks at the input's size); call in eval mode."""
        ...


def instance_targets(ids: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mask R-CNN's target of one id map (H, W): boxes (K, 4) x0 y0 x1 y1, labels (K,) of ones,
    masks (K, H, W) uint8."""
    h, w = ids.shape
    keys = [k for k in torch.unique(ids).tolist() if k >= 0]
    masks = (
        torch.stack([ids == k for k in keys]) if keys else torch.zeros((0, h, w), dtype=torch.bool)
    )
    boxes = []
    for m in masks:
        ys, xs = m.nonzero(as_tuple=True)
        boxes.append([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1])
    return {
        "boxes": torch.tensor(boxes, dtype=torch.float32).reshape(-1, 4),
        "labels": torch.ones(len(keys), dtype=torch.int64),
        "masks": masks.to(torch.uint8),
    }


class MaskRCNNDetector(nn.Module):
    """A torchvision Mask R-CNN behind the `Detector` interface."""

    def __init__(self, model: MaskRCNN) -> None:
        super().__init__()
        self.model = model

    def losses(self, images: torch.Tensor, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        targets = [
            {k: v.to(images.device) for k, v in instance_targets(i.cpu()).items()} for i in ids
        ]
        return self.model(list(images), targets)

    @torch.no_grad()
    def detect(self, images: torch.Tensor) -> list[Detections]:
        out = self.model(list(images))
        return [Detections(o["scores"], o["masks"][:, 0] > 0.5) for o in out]


def _anchors(height: int) -> AnchorGenerator:
    scale = height / FRAME_HEIGHT
    sizes = tuple((max(4, round(s * scale)),) for s in (16, 32, 64, 128, 256))
    return AnchorGenerator(sizes=sizes, aspect_ratios=((0.5, 1.0, 2.0),) * len(sizes))


def _maskrcnn_options(size: tuple[int, int]) -> dict:
    h, w = size
    return {
        "min_size": h,
        "max_size": w,
        "rpn_anchor_generator": _anchors(h),
        "box_detections_per_img": MAX_DETECTIONS,
        # a frame holds at most ~10 objects: a quarter of torchvision's proposals (2000/1000
        # kept in training/test) and of its 512 sampled boxes per image, at a quarter of the cost
        "rpn_pre_nms_top_n_train": 1000,
        "rpn_post_nms_top_n_train": 500,
        "rpn_pre_nms_top_n_test": 500,
        "rpn_post_nms_top_n_test": 250,
        "box_batch_size_per_image": 128,
    }


def build_maskrcnn_r50(size: tuple[int, int], width: int) -> nn.Module:
    model = maskrcnn_resnet50_fpn(
        weights=None, weights_backbone=None, num_classes=2, **_maskrcnn_options(size)
    )
    return MaskRCNNDetector(model)


def build_maskrcnn_r18(size: tuple[int, int], width: int) -> nn.Module:
    backbone = resnet_fpn_backbone(
        backbone_name="resnet18", weights=None, norm_layer=nn.BatchNorm2d, trainable_layers=5
    )
    return MaskRCNNDetector(MaskRCNN(backbone, num_classes=2, **_maskrcnn_options(size)))


def build_unet(size: tuple[int, int], width: int) -> nn.Module:
    # offsets vote within about one object's width: 24 px at 160x240, 48 at 320x480
    return CentreUNet(width=width, max_assign_distance=24.0 * size[0] / 160)


#: name -> builder(input size (h, w), width) of a `Detector` module
DETECTORS: dict[str, Callable[[tuple[int, int], int], nn.Module]] = {
    "unet": build_unet,
    "maskrcnn-r18": build_maskrcnn_r18,
    "maskrcnn-r50": build_maskrcnn_r50,
}


def build_detector(name: str, size: tuple[int, int], width: int = 32) -> nn.Module:
    """The detector `name` for inputs of `size` (height, width)."""
    if name not in DETECTORS:
        raise ValueError(f"unknown detector {name!r}: one of {', '.join(DETECTORS)}")
    return DETECTORS[name](size, width)

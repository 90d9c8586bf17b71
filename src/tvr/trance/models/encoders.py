"""Image-pair encoders of TranceNet: CNN and ResNet (early fusion), BCNN and DUDA (late fusion).

Every encoder takes the initial and the final image, each (B, 3, H, W) in [0, 1], and returns one
flat feature vector per sample, (B, out_features). `out_features` depends on the image size for
the CNN, whose flattened map is the feature; the others pool.

- CNN: 4 convolutions, channels 16/32/64/64, kernels 5/3/3/3, stride 2. The padding is
  (k - s) split with the smaller half first, as in the public release, so a 120x160 image maps to
  64 x 7 x 10 (this is what makes Table 9's 737K parameters come out, see docs/models.md).
- ResNet: torchvision resnet18, not pretrained, up to its global average pool (512).
- "-" fusion feeds `init - final` (3 channels); "+" concatenates the two images (6 channels).
- BCNN: vgg11_bn convolutional features (without the last max pool) of each image, bilinear
  pooling across the two images (C x C), signed square root and L2 normalisation.
- DUDA: one resnet18 trunk shared by both images, difference attention (two 3x3 convolutions
  from 2 x 512 to 512 channels, then a sigmoid), the two attended features and their difference
  (3 x 512). Form "original" (the public release's, the paper's model): the attention runs on
  the globally pooled 1x1 features, with no activation between its convolutions (on a 1x1 map
  only their centre taps see data). Form "tvr" (tvr's first one): it runs on the 4x5 feature
  maps with a ReLU between the convolutions, and the attended maps are pooled afterwards.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torchvision import models as tvm

FUSIONS = ("sub", "cat")
#: forms of the DUDA encoder; the first is the default of new models
DUDA_FORMS = ("original", "tvr")


def _fuse(init: torch.Tensor, final: torch.Tensor, fusion: str) -> torch.Tensor:
    if fusion == "sub":
        return init - final
    if fusion == "cat":
        return torch.cat([init, final], dim=1)
    raise ValueError(f"unknown fusion {fusion!r}: expected one of {FUSIONS}")


class PaddedConv(nn.Module):
    """A strided convolution padded by (k - s) zeros in all, the smaller half on the top/left."""

    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int) -> None:
        super().__init__()
        total = max(kernel - stride, 0)
        first = total // 2
        self.pad = (first, total - first, first, total - first)  # left, right, top, bottom
        self.conv = nn.Conv2d(c_in, c_out, kernel, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(F.pad(x, self.pad))


class CNNEncoder(nn.Module):
    """The 4-layer CNN on a fused image pair; the flattened last feature map is the output."""

    def __init__(
        self,
        fusion: str,
        image_size: tuple[int, int],
        channels: tuple[int, ...] = (16, 32, 64, 64),
        kernels: tuple[int, ...] = (5, 3, 3, 3),
        stride: int = 2,
    ) -> None:
        super().__init__()
        if len(channels) != len(kernels):
            raise ValueError("channels and kernels must have the same length")
        self.fusion = fusion
        c_in = 3 if fusion == "sub" else 6
        layers: list[nn.Module] = []
        for c_out, k in zip(channels, kernels, strict=True):
            layers += [
                PaddedConv(c_in, c_out, k, stride),
                nn.BatchNorm2d(c_out),
                nn.ReLU(inplace=True),
            ]
            c_in = c_out
        self.net = nn.Sequential(*layers)
        self.out_features = _probe(self, image_size)

    def forward(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        return self.net(_fuse(init, final, self.fusion)).flatten(1)


def _resnet18_trunk(in_channels: int) -> nn.Sequential:
    """resnet18 (random init) without its pooling and classifier: (B, 512, H/32, W/32)."""
    net = tvm.resnet18(weights=None)
    if in_channels != 3:
        net.conv1 = nn.Conv2d(in_channels, 64, kernel_size=7, stride=2, padding=3, bias=False)
        nn.init.kaiming_normal_(net.conv1.weight, mode="fan_out", nonlinearity="relu")
    return nn.Sequential(
        net.conv1, net.bn1, net.relu, net.maxpool, net.layer1, net.layer2, net.layer3, net.layer4
    )


class ResNetEncoder(nn.Module):
    """resnet18 on a fused image pair, globally average pooled: 512 features."""

    out_features = 512

    def __init__(self, fusion: str) -> None:
        super().__init__()
        self.fusion = fusion
        self.trunk = _resnet18_trunk(3 if fusion == "sub" else 6)

    def forward(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        return self.trunk(_fuse(init, final, self.fusion)).mean(dim=(2, 3))


class BCNNEncoder(nn.Module):
    """Bilinear CNN across the pair: vgg11_bn features of each image, C x C outer products."""

    def __init__(self) -> None:
        super().__init__()
        features = tvm.vgg11_bn(weights=None).features
        self.features = nn.Sequential(*list(features.children())[:-1])  # drop the last max pool
        self.channels = 512
        self.out_features = self.channels * self.channels

    def forward(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        both = self.features(torch.cat([init, final], dim=0)).flatten(2)  # (2B, C, HW)
        a, b = both.chunk(2, dim=0)
        # bilinear pooling in float32: the C x C sums overflow half precision easily
        with torch.autocast(device_type=a.device.type, enabled=False):
            pooled = torch.bmm(a.float(), b.float().transpose(1, 2)) / a.shape[-1]
            pooled = pooled.flatten(1)
            pooled = torch.sign(pooled) * torch.sqrt(pooled.abs() + 1e-8)
            return F.normalize(pooled, dim=1)


class DUDAEncoder(nn.Module):
    """Dual dynamic attention (DUDA) on a shared resnet18: attended features and their difference.

    The two forms have different state-dict keys (attention.1 is the second convolution in
    "original", the ReLU in "tvr"), so a checkpoint never loads silently into the other form."""

    def __init__(self, form: str = DUDA_FORMS[0]) -> None:
        super().__init__()
        if form not in DUDA_FORMS:
            raise ValueError(f"unknown DUDA form {form!r}: expected one of {DUDA_FORMS}")
        self.form = form
        self.trunk = _resnet18_trunk(3)
        c = 512
        between = [] if form == "original" else [nn.ReLU(inplace=True)]
        self.attention = nn.Sequential(
            nn.Conv2d(2 * c, c, 3, padding=1),
            *between,
            nn.Conv2d(c, c, 3, padding=1),
            nn.Sigmoid(),
        )
        self.out_features = 3 * c

    def forward(self, init: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
        both = self.trunk(torch.cat([init, final], dim=0))
        if self.form == "original":
            both = both.mean(dim=(2, 3), keepdim=True)  # (2B, 512, 1, 1)
        x_init, x_final = both.chunk(2, dim=0)
        diff = x_final - x_init
        a_init = self.attention(torch.cat([x_init, diff], dim=1))
        a_final = self.attention(torch.cat([x_final, diff], dim=1))
        l_init = x_init * a_init
        l_final = x_final * a_final
        out = torch.cat([l_init, l_final, l_final - l_init], dim=1)
        return out.mean(dim=(2, 3))


@torch.no_grad()
def _probe(encoder: nn.Module, image_size: tuple[int, int]) -> int:
    """Number of output features for images of (height, width), by one dry run."""
    h, w = image_size
    was_training = encoder.training
    encoder.eval()
    x = torch.zeros(1, 3, h, w)
    n = int(encoder(x, x).shape[1])
    encoder.train(was_training)
    return n


ENCODERS = ("cnn-sub", "cnn-cat", "resnet-sub", "resnet-cat", "bcnn", "duda")


def build_encoder(
    kind: str, image_size: tuple[int, int], duda_form: str = DUDA_FORMS[0]
) -> nn.Module:
    """An encoder by kind (one of ENCODERS); the result has `out_features`. `duda_form` picks
    the form of DUDA (one of DUDA_FORMS) and is checked for every kind."""
    if duda_form not in DUDA_FORMS:
        raise ValueError(f"unknown DUDA form {duda_form!r}: expected one of {DUDA_FORMS}")
    if kind in ("cnn-sub", "cnn-cat"):
        return CNNEncoder(kind.split("-")[1], image_size)
    if kind in ("resnet-sub", "resnet-cat"):
        return ResNetEncoder(kind.split("-")[1])
    if kind == "bcnn":
        return BCNNEncoder()
    if kind == "duda":
        return DUDAEncoder(duda_form)
    raise ValueError(f"unknown encoder {kind!r}: expected one of {ENCODERS}")

"""What the benchmarks' PyTorch Datasets share: torch itself (or one line naming the `train`
extra), the split argument checked in one sentence, and image files read as uint8 tensors or
through a transform.

The Datasets live with their benchmarks, each taking (root, split): `tvr.trance.data.torch_data`,
`tvr.clevrer.data.torch_data`, `tvr.vtt.data.torch_data`, `tvr.tranco.data.torch_data` and
`tvr.visualtrans.data.torch_data` (each guide's "Loading in PyTorch" shows one). They import torch
through `require_torch`, so that `import tvr.<benchmark>` never needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError, quote
from tvr.core.extras import missing_extra_message


def require_torch(what: str) -> Any:
    """The torch module; without it a ModuleNotFoundError whose message is the one line of a
    missing extra ("{what} needs the train extra (torch is not installed): pip install
    'tvr[train]'"), so `import` of a Dataset module fails as an import, in one line."""
    try:
        import torch
        import torch.utils.data
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            missing_extra_message(err, what) or str(err), name=err.name
        ) from None
    return torch


def _alternatives(names: Sequence[str]) -> str:
    quoted = [repr(n) for n in names]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def split_name(
    split: Any, allowed: Sequence[str], what: str, aliases: Mapping[str, str] | None = None
) -> str:
    """`split` as one of `allowed` (an alias such as "validation" becomes its name), or a
    UserError saying which splits there are: "{what}: split is 'train', 'val' or 'test'
    ('validation' is 'val'), got 'dev'"."""
    aliases = aliases or {}
    if isinstance(split, str):
        name = aliases.get(split, split)
        if name in allowed:
            return name
    also = "".join(f" ({a!r} is {n!r})" for a, n in aliases.items())
    raise UserError(f"{what}: split is {_alternatives(allowed)}{also}, got {quote(split)}")


def image_tensor(image: Any) -> Any:
    """A Pillow RGB image as a uint8 tensor (H, W, 3) that owns its memory."""
    import numpy as np

    torch = require_torch("image_tensor")
    return torch.from_numpy(np.array(image, dtype=np.uint8))


def read_images(
    paths: Sequence[str | Path], transform: Callable[[Any], Any] | None = None, what: str = "image"
) -> Any:
    """The image files `paths` of one item (RGB): without `transform` one uint8 tensor (K, H, W, 3)
    (UserError if their sizes differ: a transform that resizes is then needed); with it,
    `transform(image)` of each Pillow image, stacked into one tensor when the results are tensors
    of one shape, else as a list."""
    from tvr.core.images import open_rgb

    torch = require_torch("read_images")
    images = [open_rgb(p, what) for p in paths]
    if transform is None:
        sizes = sorted({im.size for im in images})
        if len(sizes) > 1:
            shown = " and ".join(f"{w}x{h}" for w, h in sizes[:2])
            raise UserError(f"{paths[0]}: the {what}s of one item differ in size ({shown}); "
                            "give a transform that resizes them")  # fmt: skip
        return torch.stack([image_tensor(im) for im in images])
    out = [transform(im) for im in images]
    if all(isinstance(x, torch.Tensor) for x in out) and len({tuple(x.shape) for x in out}) == 1:
        return torch.stack(out)
    return out

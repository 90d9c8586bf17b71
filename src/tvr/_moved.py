"""Old import paths of moved modules: each still imports, for one release, with a DeprecationWarning."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings
from importlib import import_module

#: old module path -> new module path (CHANGELOG.md lists the same moves)
MOVED: dict[str, str] = {
    "tvr.errors": "tvr.core.errors",
    "tvr.trance.png": "tvr.core.png",
    "tvr.trance.vocab": "tvr.trance.world.vocab",
    "tvr.trance.camera": "tvr.trance.world.camera",
    "tvr.trance.occlusion": "tvr.trance.world.occlusion",
    "tvr.trance.balance": "tvr.trance.sampling.balance",
    "tvr.trance.sampler": "tvr.trance.sampling.sampler",
    "tvr.trance.generate": "tvr.trance.sampling.jobs",
    "tvr.trance.sample": "tvr.trance.data.sample",
    "tvr.trance.samples_io": "tvr.trance.data.files",
    "tvr.trance.release_images": "tvr.trance.dataset.release_images",
    "tvr.trance.store": "tvr.trance.dataset.store",
    "tvr.trance.dataset_config": "tvr.trance.dataset.config",
    "tvr.trance.dataset_generate": "tvr.trance.dataset.generate",
    "tvr.trance.torch_data": "tvr.trance.train.torch_data",
    "tvr.trance.features": "tvr.trance.models.features",
    "tvr.trance.metrics": "tvr.trance.eval.metrics",
    "tvr.trance.evaluate": "tvr.trance.eval.evaluate",
    "tvr.trance.baselines": "tvr.trance.eval.baselines",
    "tvr.trance.report_html": "tvr.trance.report.html",
    "tvr.trance.report_plots": "tvr.trance.report.plots",
    "tvr.trance.report_sources": "tvr.trance.report.sources",
    "tvr.models": "tvr.trance.models",
    "tvr.models.decoders": "tvr.trance.models.decoders",
    "tvr.models.encoders": "tvr.trance.models.encoders",
    "tvr.models.heads": "tvr.trance.models.heads",
    "tvr.models.registry": "tvr.trance.models.registry",
    "tvr.models.trancenet": "tvr.trance.models.trancenet",
    "tvr.training.batch": "tvr.trance.train.batch",
    "tvr.training.config": "tvr.trance.train.config",
    "tvr.training.data": "tvr.trance.train.data",
    "tvr.training.losses": "tvr.trance.train.losses",
    "tvr.training.module": "tvr.trance.train.module",
    "tvr.training.predictions": "tvr.trance.train.predictions",
    "tvr.training.run": "tvr.trance.train.run",
    "tvr.training.scoring": "tvr.trance.train.scoring",
    "tvr.training.synthetic": "tvr.trance.train.synthetic",
    "tvr.training.paper_results": "tvr.trance.paper",
    "tvr.training.results": "tvr.trance.results.make",
    "tvr.training.results_tables": "tvr.trance.results.tables",
    "tvr.training.results_plots": "tvr.trance.results.plots",
    "tvr.training.results_paired": "tvr.results.paired",
    "tvr.vlm.trance_task": "tvr.trance.vlm_task",
    "tvr.vlm.visualtrans_task": "tvr.visualtrans.vlm_task",
    "tvr.web.app": "tvr.trance.web.app",
    "tvr.web.catalog": "tvr.trance.web.catalog",
    "tvr.web.human": "tvr.trance.web.human",
    "tvr.web.diagram": "tvr.trance.web.diagram",
}


class _MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of MOVED and answers it with the new module, after a warning."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(
            f"{spec.name} moved to {new}; the old path will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        module = import_module(new)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module) -> None:
        """The new module is already executed."""


def install() -> None:
    """Put the finder first on sys.meta_path (once)."""
    if not any(isinstance(f, _MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _MovedModuleFinder())


def forwarding_getattr(package: str, old: str, *new: str):
    """A module `__getattr__` for a module that took the path of a moved module `old`, whose
    names now live in the modules `new` (searched in order): they still resolve, with a
    DeprecationWarning."""

    def __getattr__(name: str):
        for target in new:
            value = None if name.startswith("_") else getattr(import_module(target), name, None)
            if value is not None and not isinstance(value, type(sys)):
                warnings.warn(
                    f"{old}.{name} moved to {target}.{name}; the old path will be removed in "
                    "the next release",
                    DeprecationWarning,
                    stacklevel=2,
                )
                return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__

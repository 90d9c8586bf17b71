"""The served data: one dataset per problem (setting), opened through `tvr.trance.data.store`, and
the model predictions (run folders or JSONL files), each given to a setting (its run's config, a
`SETTING:` prefix, or the shape of its lines) and then to the split that holds its sample ids.

Every lookup the web app makes goes through here with checked names and indices, so no file path
ever comes from a request: images are found with the store's `image_path(index, stage, view)`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import iter_jsonl
from tvr.trance.data.sample import Sample
from tvr.trance.eval.metrics import parse_prediction
from tvr.trance.world.vocab import SETTINGS, VIEWS

STAGES = ("init", "fin")


class SplitData:
    """One split of a served dataset. Samples are read through the store on demand (shard by
    shard, cached by the store), so a 500k-sample train split costs nothing until it is used."""

    def __init__(self, problem: str, name: str, store: Any):
        self.problem = problem
        self.name = name
        self.store = store  # tvr.trance.data.store.SplitStore

    def __len__(self) -> int:
        return len(self.store)

    def sample(self, i: int) -> Sample:
        return self.store.sample(i)

    @cached_property
    def samples(self) -> list[Sample]:
        """Every sample of the split (the viewer's filters read them all once)."""
        return self.store.samples()

    @cached_property
    def index(self) -> dict[str, int]:
        """sample id -> index in the split."""
        return {sid: i for i, sid in enumerate(self.store.ids)}


@dataclass
class PredictionSet:
    """One model's predictions on one split: (sample id, view or "") -> [(obj, value)]."""

    name: str
    path: Path
    problem: str
    split: str
    steps: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)


def sample_view(problem: str, sample: Sample) -> str:
    """The final view shown for a sample: the one the View dataset drew and stored in the sample
    (`extra["view"]`), the centre camera in Basic and Event."""
    if problem == "view":
        v = sample.extra.get("view")
        if v not in VIEWS:
            raise UserError(f"View sample {sample.id} has no stored view (extra['view'])")
        return v
    return "C"


class Catalog:
    """The datasets and predictions of one server."""

    def __init__(self, data_dirs: tuple[Path, ...], prediction_paths: tuple[Path, ...] = ()):
        from tvr.trance.data.store import open_dataset

        self.splits: dict[str, dict[str, SplitData]] = {}
        self.plan_cache: dict[tuple, Any] = {}  # (problem, split, tester, practice) -> Plan
        self.roots: dict[str, Path] = {}
        for d in data_dirs:
            ds = open_dataset(d)
            if ds.setting not in SETTINGS:
                raise UserError(f"--data {d}: unknown setting {ds.setting!r}")
            if ds.setting in self.splits:
                raise UserError(
                    f"--data {d}: a second {ds.setting} dataset (first: {self.roots[ds.setting]}); "
                    "serve one dataset per setting"
                )
            self.roots[ds.setting] = Path(d)
            self.splits[ds.setting] = {}
            for name in ds.splits:
                self.splits[ds.setting][name] = SplitData(ds.setting, name, ds.split(name))
        self.warnings: list[str] = self._shared_scenes()
        self.predictions: list[PredictionSet] = [
            self._load_predictions(p) for p in prediction_paths
        ]

    @property
    def problems(self) -> list[str]:
        return [p for p in SETTINGS if p in self.splits]

    def split(self, problem: str, split: str) -> SplitData | None:
        """The split, or None when the problem or split is not served."""
        return self.splits.get(problem, {}).get(split)

    def predictions_for(self, problem: str, split: str) -> list[PredictionSet]:
        return [p for p in self.predictions if p.problem == problem and p.split == split]

    def _shared_scenes(self) -> list[str]:
        """A warning per two served datasets whose splits of the same name start with the same
        scene (made with the same seed): a tester who takes both tests sees scenes again."""
        out = []
        problems = self.problems
        for k, a in enumerate(problems):
            for b in problems[k + 1 :]:
                same = [
                    name
                    for name, sd in self.splits[a].items()
                    if name in self.splits[b]
                    and len(sd)
                    and len(self.splits[b][name])
                    and sd.sample(0).objects == self.splits[b][name].sample(0).objects
                ]
                if same:
                    out.append(
                        f"{a} and {b} hold the same scenes (their {', '.join(same)} split"
                        f"{'s' if len(same) > 1 else ''} start with the same scene: made with "
                        f"the same --seed?); a tester who takes both tests sees scenes again. "
                        f"Make one of them again with another --seed ({self.roots[a]}, "
                        f"{self.roots[b]})"
                    )
        return out

    # --- predictions ---------------------------------------------------------------------------
    def _prediction_setting(self, path: Path, records: list, named: str | None) -> str:
        """The setting a predictions file belongs to: the one named (run config or prefix), else
        the one its lines fit among the served datasets that hold its ids. View lines carry
        "view"; Basic lines have one step."""
        if named is not None:
            if named not in self.splits:
                raise UserError(f"{path}: predictions of {named}, but no {named} dataset is served")
            return named
        ids = {r.get("id") for _, r in records if isinstance(r, dict)}
        ids.discard(None)
        hashable = {i for i in ids if isinstance(i, str)}
        holding = [
            p
            for p in self.problems
            if any(i in sd.index for sd in self.splits[p].values() for i in hashable)
        ]
        if not holding:
            raise UserError(f"{path}: its sample ids are in none of the served datasets' splits")
        dicts = [r for _, r in records if isinstance(r, dict)]
        if any("view" in r for r in dicts):
            fit, shape = ["view"], 'its lines carry "view", so they are View predictions'
        else:
            multi = any(isinstance(r.get("steps"), list) and len(r["steps"]) > 1 for r in dicts)
            fit = ["event"] if multi else ["basic", "event"]
            shape = (
                'its lines carry no "view" and some have several steps, so they are Event '
                "predictions"
                if multi
                else 'its lines carry no "view", so they are Basic or Event predictions'
            )
        cands = [p for p in holding if p in fit]
        if not cands:
            served = " and ".join(holding)
            raise UserError(
                f"{path}: {shape}, but no {' or '.join(fit)} dataset holds its sample ids (they "
                f"are in the served {served} dataset)"
            )
        if len(cands) > 1:
            raise UserError(
                f"{path}: its sample ids are in the served {' and '.join(cands)} datasets and "
                f"its lines fit both; name the setting: --predictions {cands[0]}={path}"
            )
        return cands[0]

    def _load_predictions(self, path: Path) -> PredictionSet:
        path = Path(path)
        named = None
        prefix, sep, rest = str(path).partition("=")
        if sep and prefix in SETTINGS and not path.exists():
            named, path = prefix, Path(rest)
            if not path.exists():
                raise UserError(f"--predictions {prefix}={path}: no such file or folder")
        name = path.stem
        if path.is_dir():
            cfg = path / "config.json"
            if cfg.is_file():
                c = json.loads(cfg.read_text())
                if named is None and c.get("setting") is not None:
                    named = c["setting"]
                    if named not in self.splits:
                        raise UserError(
                            f"{path}: its config.json says setting {named!r}, but no {named} "
                            "dataset is served"
                        )
                name = f"{path.name} ({c['model']})" if c.get("model") else path.name
            else:
                name = path.name
            path = path / "predictions.jsonl"
            if not path.is_file():
                raise UserError(f"{path.parent}: no predictions.jsonl in this run folder")
        records = list(iter_jsonl(path))
        problem = self._prediction_setting(path, records, named)
        ids = {r.get("id") for _, r in records if isinstance(r, dict)}
        best = None
        for sname, sd in self.splits[problem].items():
            hits = sum(isinstance(i, str) and i in sd.index for i in ids)
            if hits and (best is None or hits > best[0]):
                best = (hits, sname)
        if best is None:
            raise UserError(f"{path}: its sample ids are in none of the {problem} dataset's splits")
        sname = best[1]
        sd = self.splits[problem][sname]
        pset = PredictionSet(name, path, problem, sname)
        for lineno, rec in records:
            sid, view, steps = parse_prediction(rec, problem, path, lineno)
            if sid not in sd.index:
                continue  # a sample of another split: not shown
            pset.steps[(sid, VIEWS[view] if view >= 0 else "")] = steps
        return pset

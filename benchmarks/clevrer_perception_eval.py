"""NS-DR's perception on whole videos: a trained frame parser on every frame, tracking, and (with
a dynamics run) the dynamics predictor on the tracked objects, against a set's ground truth.

For each video of the split: `detect_video` (all 128 frames) then `track`, scored by
`tracking_scores` against the video's true objects and factual motion (objects found, missed,
spurious; exact object sets; in-view agreement; centre error), and, with `--dynamics`, the
predictor rolled out from the tracked observation and scored by `DynamicsScores` (only the
objects named like a true object can be compared: the scores use the true runs of the objects
whose attributes the tracks got right). Also seconds per video for detection and tracking.

    python benchmarks/clevrer_perception_eval.py --data /tmp/clevrer-set --detector runs/clevrer/detector-unet \
        --dynamics runs/clevrer/dynamics-propnet --videos 25 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
import torch

from tvr.clevrer.data.layout import find_video
from tvr.clevrer.models.dynamics import load_dynamics, observation_from_tracks
from tvr.clevrer.models.dynamics.metrics import DynamicsScores
from tvr.clevrer.models.perception import detect_video, load_parser, track
from tvr.clevrer.models.perception.evaluate import tracking_scores
from tvr.clevrer.models.sets import split_files, take
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.programs.facts import Run, SceneFacts


def renumbered(truth: SceneFacts, objects: tuple) -> SceneFacts | None:
    """The true runs in the tracks' numbering, when the tracks name exactly the true objects."""
    names = {(p.color, p.material, p.shape): i for i, p in enumerate(truth.objects)}
    keys = [(p.color, p.material, p.shape) for p in objects]
    if sorted(keys) != sorted(names):
        return None
    order = [names[k] for k in keys]
    back = {g: k for k, g in enumerate(order)}

    def run(r: Run) -> Run:
        from tvr.clevrer.programs.facts import Event, Motion

        m = r.motion
        assert m is not None
        motion = Motion(m.xy[:, order], m.velocity[:, order], m.visible[:, order])
        events = tuple(Event(e.kind, e.frame, tuple(back[o] for o in e.objects)) for e in r.events)
        return Run(events, motion)

    return SceneFacts(
        objects=tuple(objects),
        factual=run(truth.factual),
        counterfactual={back[g]: run(r) for g, r in truth.counterfactual.items()},
        n_shown_frames=truth.n_shown_frames,
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", required=True, help="a rendered CLEVRER set with dynamics/")
    ap.add_argument("--detector", required=True, help="a frame parser run folder or checkpoint")
    ap.add_argument("--dynamics", help="a dynamics run folder or checkpoint")
    ap.add_argument("--split", default="validation")
    ap.add_argument("--videos", type=int, default=25)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    parser = load_parser(args.detector)
    predictor = load_dynamics(args.dynamics) if args.dynamics else None
    files = take(split_files(args.data, args.split, "dynamics"), args.videos)
    rows = []
    dyn = DynamicsScores()
    times = {"detect": 0.0, "track": 0.0}
    load = [os.getloadavg()]
    for index, path in files.items():
        truth = read_dynamics(path)
        t0 = time.process_time()
        proposals = detect_video(parser, find_video(args.data, index), index)
        t1 = time.process_time()
        tracks = track(proposals)
        t2 = time.process_time()
        times["detect"] += t1 - t0
        times["track"] += t2 - t1
        row = {"scene_index": index, **tracking_scores(tracks, truth)}
        rows.append(row)
        if predictor is not None:
            mine = renumbered(truth, tracks.objects)
            if mine is not None:
                dyn.add(predictor.predict(observation_from_tracks(tracks)), mine)
        print(json.dumps(row), flush=True)
    load.append(os.getloadavg())
    n = len(rows)
    summary = {
        "videos": n,
        "exact_object_sets": sum(r["exact"] for r in rows),
        "objects": sum(r["objects"] for r in rows),
        "found": sum(r["found"] for r in rows),
        "spurious": sum(r["spurious"] for r in rows),
        "visible_agreement": float(np.mean([r["visible_agreement"] for r in rows])),
        "centre_error_px": float(np.mean([r["centre_error_px"] for r in rows])),
        "cpu_s_per_video": {k: v / n for k, v in times.items()},
        "load_average": load,
    }
    if predictor is not None:
        summary["dynamics_on_tracks"] = dyn.result()
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "videos": rows}, indent=2))


if __name__ == "__main__":
    main()

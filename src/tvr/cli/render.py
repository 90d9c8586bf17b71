"""`tvr render`: render the images (and object-index masks) of the samples in a JSONL file."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tvr.core.errors import InputError, UserError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "render",
        help="render samples' images (init.C, fin.L, fin.C, fin.R) with Cycles or the raster backend",
        description="Render the four images of each sample of SAMPLES.jsonl into --out, named as in "
        "the public release ({id}-init.C.png, {id}-fin.L.png, ...), plus {id}.masks.npz with one "
        "object-index mask per image (-1 = no object).",
    )
    p.add_argument("samples", metavar="SAMPLES.jsonl", help="samples, one JSON object a line")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--backend", choices=("cycles", "raster"), default="raster")
    p.add_argument("--preset", choices=("preview", "default", "paper"), default="default")
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="render the first N samples"
    )
    p.add_argument("--no-masks", action="store_true", help="do not write the .masks.npz files")
    p.add_argument("--skip-existing", action="store_true", help="skip samples whose 4 PNGs exist")
    p.set_defaults(func=run)


def _read_samples(path: Path, limit: int | None) -> list[dict]:
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    samples = []
    with path.open(encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if limit is not None and len(samples) >= limit:
                break
            if not line.strip():
                continue
            try:
                d = json.loads(line)
            except json.JSONDecodeError as err:
                raise InputError(path, number, None, f"not JSON: {err.msg}") from None
            for key in ("id", "objects", "final"):
                if key not in d:
                    raise InputError(path, number, key, "missing")
            if len(d["objects"]) != 10 or len(d["final"]) != 10:
                raise InputError(path, number, "objects", "a sample has exactly 10 objects")
            samples.append(d)
    return samples


def run(args: argparse.Namespace) -> int:
    from tvr.trance.data.sample import image_name
    from tvr.trance.render import make_renderer, render_sample, write_images
    from tvr.trance.render.scene import SAMPLE_IMAGES

    if args.limit is not None and args.limit < 0:
        raise UserError("--limit must be at least 0")
    samples = _read_samples(Path(args.samples), args.limit)
    out = Path(args.out)
    renderer = make_renderer(args.backend, args.preset)
    start, done = time.perf_counter(), 0
    try:
        for d in samples:
            names = [image_name(str(d["id"]), s, v) for s, v in SAMPLE_IMAGES]
            if args.skip_existing and all((out / n).is_file() for n in names):
                continue
            write_images(render_sample(d, renderer), out, masks=not args.no_masks)
            done += 1
    finally:
        renderer.close()
    took = time.perf_counter() - start
    per = took / max(4 * done, 1)
    print(
        f"rendered {done} samples ({4 * done} images) with {args.backend}/{args.preset} "
        f"into {out} in {took:.1f} s ({per:.3f} s per image)"
    )
    return 0

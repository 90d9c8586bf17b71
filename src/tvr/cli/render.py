"""`tvr render`: render the images (and object-index masks) of the samples in a JSONL file."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from tvr.cli._common import add_data_option
from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import prepare_output_folder
from tvr.core.progress import step_bar


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "render",
        help="render samples' images (init.C, fin.L, fin.C, fin.R) with Cycles or the raster backend",
        description="Render the four images of each sample of SAMPLES.jsonl into --out, named as in "
        "the public release ({id}-init.C.png, {id}-fin.L.png, ...), plus {id}.masks.npz with one "
        "object-index mask per image (-1 = no object).",
    )
    add_data_option(p, "samples.jsonl (one sample a line), or a dataset folder (--split of a "
                    "`tvr generate` one)")  # fmt: skip
    p.add_argument("--split", default="test", help="the split of a dataset folder (default test)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--backend", choices=("cycles", "raster"), default="raster")
    p.add_argument("--preset", choices=("preview", "default", "paper"), default="default")
    p.add_argument(
        "--limit", type=int, default=None, metavar="N", help="render the first N samples"
    )
    p.add_argument("--no-masks", action="store_true", help="do not write the .masks.npz files")
    p.add_argument("--skip-existing", action="store_true", help="skip samples whose 4 PNGs exist")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
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
    from tvr.trance.data.files import samples_file
    from tvr.trance.data.sample import image_name
    from tvr.trance.render import make_renderer, render_sample, write_images
    from tvr.trance.render.scene import SAMPLE_IMAGES

    if args.limit is not None and args.limit < 0:
        raise UserError("--limit must be at least 0")
    samples = _read_samples(samples_file(args.data, args.split), args.limit)
    out = Path(args.out)
    if samples:  # a bad --out is one line before the renderer starts and the bar shows
        prepare_output_folder(out)
    renderer = make_renderer(args.backend, args.preset)
    start, done = time.perf_counter(), 0
    bar = step_bar(len(samples), "rendering", "sample", not args.quiet)
    try:
        for d in samples:
            names = [image_name(str(d["id"]), s, v) for s, v in SAMPLE_IMAGES]
            if args.skip_existing and all((out / n).is_file() for n in names):
                bar.update(1)
                continue
            write_images(render_sample(d, renderer), out, masks=not args.no_masks)
            done += 1
            bar.update(1)
    finally:
        bar.close()
        renderer.close()
    took = time.perf_counter() - start
    per = took / max(4 * done, 1)
    print(
        f"rendered {done} samples ({4 * done} images) with {args.backend}/{args.preset} "
        f"into {out} in {took:.1f} s ({per:.3f} s per image)"
    )
    return 0

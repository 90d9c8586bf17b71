"""`tvr solve`: the symbolic solver's predictions (issue 31), with its oracle ablation."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_file_overwrite_option,
    positive_int,
    require,
    views_option,
)
from tvr.core.jsonl import write_jsonl
from tvr.core.progress import step_bar
from tvr.trance.choices import LOOKS, MATCHINGS, PERCEPTIONS, RENDER_CHECKS
from tvr.trance.world.vocab import SETTINGS, VIEWS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "solve",
        help="write the symbolic solver's predictions (parse, match, derive steps, order them)",
        description="Solve each sample from its initial objects and a parse of its final image: "
        "match the objects (only transformed attributes change; objects may leave the view), "
        "derive the atomic steps, and search for an order the simulator applies without "
        "breaking a rule. The final images are parsed by a trained scene parser (`tvr trance "
        "parser train`), or read from the final scene (--perception gt, the oracle ablation); "
        "see docs/solver.md. Output: a predictions JSONL for `tvr evaluate`.",
    )
    add_data_option(p, "samples.jsonl, or a dataset folder (--split of a `tvr generate` one)")
    p.add_argument("--split", default="test", help="the split of a dataset folder (default test)")
    p.add_argument("--setting", choices=SETTINGS,
                   help="the setting, where the data does not say it (its config.json); "
                   "default event")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="predictions file to write")
    add_file_overwrite_option(p, "predictions")
    p.add_argument("--perception", choices=PERCEPTIONS, default="parser",
                   help="parser of the final image: parser (default: a trained scene parser, "
                   "--run or --checkpoint, on the dataset's images) or gt (the oracle: the "
                   "final scene)")  # fmt: skip
    p.add_argument("--images", type=Path,
                   help="--perception parser: a folder of the samples' PNGs, named as the "
                   "release names them ({id}-init.C.png, {id}-fin.L.png, ...; 320x240 or "
                   "160x120); default: the images of the --data dataset folder")  # fmt: skip
    model = p.add_mutually_exclusive_group()
    model.add_argument("--run", type=Path, help="a `tvr trance parser train` run folder")
    model.add_argument("--checkpoint", type=Path, help="one scene parser checkpoint (.ckpt)")
    p.add_argument("--matching", choices=MATCHINGS, default="rules",
                   help="rules (default: only transformed attributes change) or gt (the "
                   "oracle's identities)")  # fmt: skip
    p.add_argument("--look", choices=LOOKS,
                   help="--perception parser: the renderer that made the images (raster or "
                   "cycles), where no config.json of a `tvr generate` dataset beside them says "
                   "it; a parser run refuses images of a look it was not trained on")  # fmt: skip
    p.add_argument("--render-check", choices=RENDER_CHECKS, default="auto",
                   help="auto (default): where the parse is doubtful, render the final scene of "
                   "each candidate explanation with the raster renderer and keep the one nearest "
                   "the image; off: never render (docs/solver.md)")  # fmt: skip
    p.add_argument("--views", type=views_option, default=VIEWS,
                   help="View: the final images to solve for samples without their own view "
                   "(default L,C,R)")  # fmt: skip
    p.add_argument("--limit", type=positive_int, help="the first N samples")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.data.files import read_samples, samples_file, setting_of_data
    from tvr.trance.solver.perception import make_perception
    from tvr.trance.solver.solve import solve_all

    path = samples_file(args.data, args.split)
    setting = setting_of_data(path, args.setting)
    samples = read_samples(path)
    require(bool(samples), f"{path}: no samples to solve (an empty samples file)")
    if args.limit:
        samples = samples[: args.limit]
    if args.perception == "parser":
        from tvr.cli._common import needs_extra

        require(args.run is not None or args.checkpoint is not None,
                "--perception parser needs --run or --checkpoint (a scene parser)")  # fmt: skip
        require(args.images is not None or Path(args.data).is_dir(),
                "--perception parser reads images: give --data a `tvr generate` folder, or "
                "--images the folder of the samples' PNGs")  # fmt: skip
        require(args.images is None or Path(args.images).is_dir(),
                f"--images {args.images}: no such folder")  # fmt: skip
        _check_look(args)
        with needs_extra("the scene parser needs the train extra"):
            perception = make_perception(
                "parser", samples, str(args.run or args.checkpoint),
                None if args.images else args.data, args.split,
                str(args.images) if args.images else None,
            )  # fmt: skip
    else:
        perception = make_perception(args.perception, samples)
    stats = {"rows": 0, "ambiguous": 0, "no_valid_order": 0, "checked": 0, "changed": 0}
    with step_bar(len(samples), "solve", "sample", not args.quiet) as bar:

        def rows():
            for sol in solve_all(samples, perception, setting=setting, matching=args.matching,
                                 views=args.views, progress=bar.update,
                                 render_check=args.render_check):  # fmt: skip
                stats["rows"] += 1
                checked = sol.notes.get("render_check")
                stats["checked"] += checked is not None
                stats["changed"] += bool(checked and checked["chosen"])
                stats["ambiguous"] += sol.ambiguous
                stats["no_valid_order"] += not sol.valid
                yield sol.prediction

        n = write_jsonl(args.out, rows())
    print(f"wrote {n} predictions to {args.out} (perception {args.perception}, matching "
          f"{args.matching}); ambiguous parses: {stats['ambiguous']}, without a valid order: "
          f"{stats['no_valid_order']}; render-checked: {stats['checked']}, changed by it: "
          f"{stats['changed']}")  # fmt: skip
    return 0


def _images_look(args: argparse.Namespace) -> tuple[str | None, str]:
    """(look, where it was read) of the images solved: --look, else the config.json of the
    `tvr generate` dataset that holds them (the --images folder or a folder above it, or the
    --data folder)."""
    from tvr.trance.perception.looks import dataset_look

    if args.look:
        return args.look, "--look"
    start = Path(args.images) if args.images else Path(args.data)
    if not start.is_dir():
        start = start.parent
    for folder in (start, *list(start.resolve().parents)[:4]):
        look = dataset_look(folder)
        if look is not None:
            return look, str(folder / "config.json")
    return None, ""


def _check_look(args: argparse.Namespace) -> None:
    """A one-line refusal of images of a look the parser run was not trained on."""
    from tvr.trance.perception.looks import LOOKS_FILE, run_looks

    trained = run_looks(args.run or args.checkpoint)
    if not trained:
        return  # a run from before looks were recorded: not checked
    look, source = _images_look(args)
    require(look is None or look in trained,
            f"{source}: the images are {look} renders, but the parser "
            f"{args.run or args.checkpoint} was trained on {', '.join(trained)} images only "
            f"(its {LOOKS_FILE}); train it on {look} images too, or give --look if the images "
            f"are not what {source} says")  # fmt: skip

"""`tvr export vlmevalkit`: VisualTrans's multiple-choice items as a VLMEvalKit custom MCQ TSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import add_data_option


def register_vlmevalkit(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "vlmevalkit",
        help="a VLMEvalKit custom MCQ TSV (VisualTrans's multiple-choice items)",
        description="Write the multiple-choice items of --data as a VLMEvalKit image MCQ TSV: "
        "index, image (base64; a list literal for several images) or image_path, question, "
        "A-D, answer, category (the task type), id (tvr's item id). Count and set questions are "
        "left out. Scoring through tvr (`tvr visualtrans evaluate`) is the exact path "
        "(docs/ecosystem.md).",
    )
    p.add_argument("--benchmark", required=True, choices=("visualtrans",), help="the benchmark")
    add_data_option(p, "the folder of VisualTrans.json or the file")
    p.add_argument("--out", required=True, type=Path, help="the TSV file to write")
    p.add_argument("--image-paths", action="store_true",
                   help="an image_path column (absolute paths) instead of base64 images")  # fmt: skip
    p.set_defaults(func=run_vlmevalkit)


def run_vlmevalkit(args: argparse.Namespace) -> int:
    from tvr.core.errors import UserError
    from tvr.visualtrans.vlmevalkit_export import write_visualtrans_tsv

    out = Path(args.out)
    if out.is_dir():
        raise UserError(f"--out {out}: a folder; give the TSV file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = write_visualtrans_tsv(args.data, out, image_paths=args.image_paths)
    print(f"wrote {rows} multiple-choice items to {out}")
    return 0

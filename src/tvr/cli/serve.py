"""`tvr serve`: the human test system, or with `--viewer` the data/prediction viewer, or `--export`."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from tvr.cli._common import positive_int
from tvr.core.errors import UserError
from tvr.core.extras import missing_extra


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="web apps: TRANCE's human test and viewer, CLEVRER's viewer, VTT's rating pages",
        description="Serve a benchmark's pages (--benchmark; docs/web.md is the guide): "
        "TRANCE's human test system (appendix E of the journal paper), or with "
        "--viewer a viewer of datasets, their references and model predictions (never served "
        "by the server testers use: run it on its own, e.g. on another port for yourself). "
        "Results go to a database: by default DATA/human-tests.sqlite beside the first --data "
        "folder. With --export DIR, write every tester's answers as predictions files that "
        "`tvr evaluate` reads, and exit. CLEVRER (--benchmark clevrer --viewer): videos, events, "
        "causal graphs and questions. VTT (--benchmark vtt): people rate --predictions "
        "NAME=FILE; `tvr vtt ratings` reads the results. VisualTrans (--benchmark visualtrans "
        "--verify --data BUILD): people verify a build's generated questions.",
    )
    p.add_argument(
        "--data",
        type=Path,
        action="extend",
        nargs="+",
        required=True,
        help="a dataset folder made by `tvr generate` (one per setting; give several to serve several settings)",
    )
    p.add_argument(
        "--benchmark",
        default="trance",
        help="whose pages to serve: trance (default: its human test, or --viewer), clevrer "
        "(a viewer of videos, events, causal graphs and questions; needs --viewer) or vtt "
        "(people rate the --predictions NAME=FILE of the release folder --data)",
    )
    p.add_argument(
        "--viewer",
        action="store_true",
        help="serve the viewer (references, predictions, --admin) instead of the human test",
    )
    p.add_argument(
        "--predictions",
        type=Path,
        nargs="*",
        default=[],
        help="with --viewer: run folders (with predictions.jsonl) or predictions JSONL files; "
        "SETTING=FILE names the setting of a file whose lines fit two served settings. "
        "VTT: the prediction files to rate, as NAME=FILE (the name is never shown to raters)",
    )
    p.add_argument(
        "--split",
        default="test",
        choices=("train", "val", "test"),
        help="VTT: the split whose samples are rated (default test)",
    )
    p.add_argument(
        "--subset",
        type=positive_int,
        default=200,
        help="VTT: rate this many samples, one per topic first (default 200)",
    )
    p.add_argument("--seed", type=int, default=0, help="VTT: the subset's seed (default 0)")
    p.add_argument(
        "--raters",
        type=positive_int,
        default=2,
        help="VTT: decided ratings wanted per sample and model (at least 2; default 2)",
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="VisualTrans: people verify the generated questions of the build --data BUILD "
        "(results in BUILD/verify/verify.sqlite; --viewer --admin: the admin view)",
    )
    p.add_argument(
        "--verifiers",
        type=positive_int,
        default=2,
        help="VisualTrans --verify: verdicts wanted per item (default 2)",
    )
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument("--port", type=positive_int, default=8000, help="default 8000")
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name (or address) the server answers to besides localhost, 127.0.0.1, ::1 "
        "and --host; repeat for more; '*' for any (only behind a proxy that checks names). "
        "Requests naming another host are refused (DNS rebinding)",
    )
    p.add_argument("--db", help="SQLAlchemy database URL (default: sqlite file beside the data)")
    p.add_argument(
        "--admin",
        action="store_true",
        help="with --viewer: the admin view of every tester's results (give the study's --db)",
    )
    p.add_argument(
        "--practice", type=int, default=3, help="practice samples in the introduction (default 3)"
    )
    p.add_argument(
        "--export",
        type=Path,
        metavar="DIR",
        help="write DIR/<setting>/<split>/<tester>.jsonl and exit",
    )
    p.set_defaults(func=run)


def _vtt_options(args: argparse.Namespace) -> dict:
    """VTT's rating study: the named prediction files and the subset (ServeConfig.extra)."""
    from tvr.vtt.judge import named_predictions

    named = named_predictions([str(p) for p in args.predictions])
    return {
        "predictions": {name: str(path) for name, path in named.items()},
        "split": args.split,
        "subset": args.subset,
        "seed": args.seed,
        "raters": args.raters,
    }


def _visualtrans_options(args: argparse.Namespace) -> dict:
    """VisualTrans's verification of a build (ServeConfig.extra)."""
    return {"verify": args.verify, "verifiers": args.verifiers}


#: benchmark -> the ServeConfig.extra it reads from the command line
EXTRA_OPTIONS = {"vtt": _vtt_options, "visualtrans": _visualtrans_options}


def _default_db(args: argparse.Namespace) -> str | None:
    """--db, else where a benchmark keeps its results itself (VisualTrans: BUILD/verify/)."""
    if args.db or args.benchmark != "visualtrans" or not args.verify or len(args.data) != 1:
        return args.db
    from tvr.visualtrans.web.verify_export import store_file, store_url

    file = store_file(args.data[0])
    if args.admin and not file.is_file():
        raise UserError(f"--data {args.data[0]}: no verification yet ({file} is made by "
                        "tvr serve --benchmark visualtrans --verify --data BUILD)")  # fmt: skip
    return store_url(args.data[0])


def check_port(host: str, port: int) -> None:
    """UserError if `port` of `host` cannot be listened on (another server holds it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as err:
            raise UserError(f"--port {port}: cannot listen on {host}:{port} ({err.strerror}; "
                            "another server?): choose another --port") from None  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        from tvr.web.config import ServeConfig
    except ImportError as err:  # pragma: no cover - the web extra is missing
        raise missing_extra(err, "tvr serve") from None
    if not args.export:
        check_port(args.host, args.port)  # a port in use is said before anything else
    if args.verify and args.benchmark != "visualtrans":
        raise UserError("--verify is VisualTrans's: tvr serve --benchmark visualtrans --verify "
                        "--data BUILD")  # fmt: skip
    predictions, extra = tuple(args.predictions), {}
    if args.benchmark in EXTRA_OPTIONS:  # the benchmark reads its predictions from `extra`
        predictions, extra = (), EXTRA_OPTIONS[args.benchmark](args)
    config = ServeConfig(
        data=tuple(args.data),
        predictions=predictions,
        extra=extra,
        db_url=_default_db(args),
        viewer=args.viewer,
        admin=args.admin,
        practice=args.practice,
        allowed_hosts=tuple(args.allowed_host),
        bind=args.host,
    ).validate()
    if args.export:
        if args.benchmark != "trance":
            raise UserError(
                "--export writes the TRANCE human test's answers; it has no --benchmark "
                "(VTT's ratings: tvr vtt ratings --db ...)"
            )
        from tvr.trance.web.app import export_all

        paths = export_all(config, args.export)
        for path in paths:
            print(path)
        print(f"wrote {len(paths)} predictions file(s) under {args.export}")
        return 0
    import uvicorn

    from tvr.web.factory import create_app

    app = create_app(config, args.benchmark)  # the pages each benchmark's plugin registered
    for warning in app.state.warnings:
        print(f"tvr serve: warning: {warning}", file=sys.stderr)
    what = "viewer" if config.viewer else "human test"
    if args.benchmark != "trance":  # the benchmark's own pages ("VTT ratings", ...)
        what = (app.title or what).removeprefix("tvr web: ")
    print(f"tvr serve: {what} at http://{args.host}:{args.port}/  (results: {config.database_url})")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("tvr serve: note: listening beyond this machine; serve behind HTTPS for real testers")
        if not args.allowed_host:
            print("tvr serve: note: requests must name localhost, 127.0.0.1 or --host; give "
                  "--allowed-host NAME for the name testers use")  # fmt: skip
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0

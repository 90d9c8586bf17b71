"""`create_app(config)`: the FastAPI app of the human test system and the viewer.

The app itself (database, templates, error pages, dependencies) is the shared `tvr.web.factory`;
TRANCE brings its pages: the routers `human_routes` (a study server) or `viewer_routes` (a viewer
server, `--viewer`: the references and predictions, never served during a study), `image_routes`
and `admin_routes`, its templates and static files, and the catalog of served datasets. Pages are rendered on the server
(Jinja2); `static/app.js` only edits the list of steps and posts answers to the JSON API. A
tester is known by a random token in an HttpOnly cookie; the database keeps only its hash. File
paths never come from a request: images are looked up by (problem, split, sample index, stage,
view) through the dataset store.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from sqlalchemy import select

from tvr.trance.web import admin_routes, human, human_routes, image_routes, viewer_routes
from tvr.trance.web.catalog import Catalog
from tvr.trance.web.common import export_name, fmt
from tvr.trance.world.vocab import VIEWS
from tvr.web.config import ServeConfig
from tvr.web.db import Answer, Tester, make_engine, make_sessionmaker
from tvr.web.factory import create_app as create_web_app
from tvr.web.pages import Pages

__all__ = ["create_app", "export_all", "export_name", "trance_pages"]

HERE = Path(__file__).parent


def trance_pages(config: ServeConfig) -> Pages:
    """TRANCE's pages for `config`: its datasets and predictions opened into the catalog."""
    catalog = Catalog(config.data, config.predictions)
    default_test = next(
        (f"{p}:test" for p in catalog.problems if "test" in catalog.splits[p]),
        next((f"{p}:{s}" for p in catalog.problems for s in catalog.splits[p]), ""),
    )
    # a study server serves no reference: the viewer is a server of its own (--viewer)
    pages = viewer_routes.router if config.viewer else human_routes.router
    return Pages(
        title="tvr web: TRANCE viewer" if config.viewer else "tvr web: TRANCE human test",
        routers=(pages, image_routes.router, admin_routes.router),
        templates=HERE / "templates",
        static=HERE / "static",
        state={"catalog": catalog},
        template_globals={
            "problems": catalog.problems,
            "catalog": catalog,
            "VIEWS": VIEWS,
            "default_test": default_test,
        },
        filters={"fmt": fmt},
        warnings=catalog.warnings,
    )


def create_app(config: ServeConfig) -> FastAPI:
    """The app for `config`: datasets opened, predictions read, database tables created."""
    return create_web_app(config, trance_pages)


def export_all(config: ServeConfig, out: str | Path) -> list[Path]:
    """Write every tester's test answers as predictions files OUT/<problem>/<split>/<file>.jsonl."""
    from tvr.core.jsonl import write_jsonl

    config = config.validate()
    catalog = Catalog(config.data)
    engine = make_engine(config.database_url)
    written = []
    with make_sessionmaker(engine)() as db:
        for tester in db.scalars(select(Tester).order_by(Tester.id)):
            for problem in catalog.problems:
                for split in catalog.splits[problem]:
                    rows = list(
                        db.scalars(
                            select(Answer).where(
                                Answer.tester_id == tester.id,
                                Answer.problem == problem,
                                Answer.split == split,
                                Answer.practice.is_(False),
                            )
                        )
                    )
                    if not rows:
                        continue
                    path = Path(out) / problem / split / export_name(tester, problem, split)
                    write_jsonl(path, human.export_records(problem, rows))
                    written.append(path)
    engine.dispose()
    return written

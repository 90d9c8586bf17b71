"""`create_app(config, pages)`: the FastAPI app of `tvr serve`, one benchmark's pages plugged in."""

from __future__ import annotations

from pathlib import Path

from fastapi import Depends, FastAPI
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates

from tvr import __version__
from tvr.web.config import ServeConfig
from tvr.web.csrf import same_origin
from tvr.web.db import make_engine, make_sessionmaker
from tvr.web.hosts import HostGuard, allowed_hosts
from tvr.web.pages import PagesFactory, pages_factory
from tvr.web.responses import install_error_handlers

#: templates every benchmark's pages may use, looked up after its own: layout.html (the page of
#: every app), signin.html (the sign-in forms), error.html (the error page)
SHARED_TEMPLATES = Path(__file__).parent / "templates"
#: files every app serves under SHARED_STATIC_URL: tvr.css, the stylesheet of every page
SHARED_STATIC = Path(__file__).parent / "static"
SHARED_STATIC_URL = "/static/tvr"
#: the one stylesheet of every app, linked by layout.html (a benchmark's own comes after it)
STYLESHEET_URL = f"{SHARED_STATIC_URL}/tvr.css"


def create_app(config: ServeConfig, pages: PagesFactory | str) -> FastAPI:
    """The app for `config`: the benchmark's pages (a factory, or a benchmark's name registered
    with `tvr.web.pages.register_pages`) built (its datasets opened) first, then the database
    opened and its tables created. `app.state` holds config, engine, sessions, templates, the
    pages' warnings and state. Every app serves the shared stylesheet (STYLESHEET_URL) and the
    benchmark's static files under /static. Every request must name an allowed host
    (`tvr.web.hosts`), and every route is guarded by `tvr.web.csrf.same_origin`."""
    config = config.validate()
    built = (pages_factory(pages) if isinstance(pages, str) else pages)(config)
    engine = make_engine(config.database_url)
    templates = Jinja2Templates(directory=[str(built.templates), str(SHARED_TEMPLATES)])
    templates.env.filters.update(built.filters)
    templates.env.globals.update(
        admin_enabled=config.admin,
        viewer_mode=config.viewer,
        tvr_stylesheet=STYLESHEET_URL,
        tvr_version=__version__,
        **built.template_globals,
    )

    app = FastAPI(
        title=built.title, docs_url=None, redoc_url=None, dependencies=[Depends(same_origin)]
    )
    app.state.config = config
    app.state.engine = engine
    app.state.sessions = make_sessionmaker(engine)
    app.state.templates = templates
    app.state.warnings = list(built.warnings)
    for name, value in built.state.items():
        setattr(app.state, name, value)
    # the shared files first: /static/tvr/... is never looked up among the benchmark's own
    app.mount(SHARED_STATIC_URL, StaticFiles(directory=str(SHARED_STATIC)), name="tvr-static")
    if built.static is not None:
        app.mount("/static", StaticFiles(directory=str(built.static)), name="static")
    app.add_middleware(HostGuard, allowed=allowed_hosts(config.allowed_hosts, config.bind))
    install_error_handlers(app)
    for router in built.routers:
        app.include_router(router)
    return app

"""The web app (Starlette): the JSON API (:mod:`.api`) and the HTML pages (:mod:`.pages`),
behind the security headers and a catch-all that keeps tracebacks in the log (:mod:`.http`).

What a participant can read: public facts of test sets, leaderboards (corpus scores), its
own submissions (result, receipt), and -- once a blind set is revealed, or on a public
set -- its own per-sentence scores, series and analysis report. References never appear in
any response: they are read only by the workers.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route

from bleucli.server.http import (
    DEFAULT_MAX_UPLOAD,
    CatchErrors,
    PlainAddresses,
    Problem,
    SecurityHeaders,
)

__all__ = ["DEFAULT_MAX_UPLOAD", "create_app"]


def create_app(url: str, max_upload: int = DEFAULT_MAX_UPLOAD) -> Starlette:
    from jinja2 import Environment, PackageLoader, select_autoescape
    from starlette.exceptions import HTTPException

    from bleucli.display import shown
    from bleucli.server import api, pages
    from bleucli.server.db import connect
    from bleucli.server.templating import on_http, on_problem

    routes = [
        Route(path, endpoint, methods=methods)
        for path, endpoint, methods in (*api.ROUTES, *pages.ROUTES)
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders),
            Middleware(CatchErrors),
            Middleware(PlainAddresses),
        ],
        exception_handlers={Problem: on_problem, HTTPException: on_http},
    )
    app.state.engine = connect(url)
    app.state.max_upload = max_upload
    app.state.templates = Environment(
        loader=PackageLoader("bleucli.server", "templates"),
        autoescape=select_autoescape(default=True),
    )
    app.state.templates.filters["score"] = shown  # a score at its metric's decimals
    return app

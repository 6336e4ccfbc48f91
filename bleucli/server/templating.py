"""Pages rendered from the templates (Jinja2, autoescaped), refusals rendered as pages or
JSON, inside the site frame with the signed-in identity and its CSRF token."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from bleucli.server.auth import page_session
from bleucli.server.http import Problem, is_api


def render(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A page: the site frame, the signed-in identity and the session's CSRF token."""
    from bleucli.analysis.page import CSS

    session = page_session(request)
    csrf = session[1] if session else ""
    html = request.app.state.templates.get_template(template).render(
        css=CSS, who=session[0] if session else None, csrf=csrf, **values
    )
    return HTMLResponse(html, status_code=status)


async def on_problem(request: Request, err: Exception) -> Response:
    assert isinstance(err, Problem)
    response: Response
    if is_api(request):
        response = JSONResponse({"error": err.message}, status_code=err.status)
    else:
        response = render(request, "error.html", status=err.status, message=err.message)
    response.headers.update(err.headers)
    return response


async def on_http(request: Request, err: Exception) -> Response:
    from starlette.exceptions import HTTPException

    assert isinstance(err, HTTPException)
    return await on_problem(request, Problem(err.status_code, str(err.detail)))

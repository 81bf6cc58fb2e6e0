"""The viewer's FastAPI app: pages, the JSON rows API, the run's report file, assets and corrections.

Read-only on the run files; the one write is a correction appended to the set's ``corrections.jsonl``
(a form post carrying the page's token, so another site cannot post one). With an API key (required
for a non-loopback address), every request but ``/healthz`` needs ``Authorization: Bearer KEY``, or the
cookie that ``/?key=KEY`` sets.
"""

from __future__ import annotations

import getpass
import hmac
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError

from judgelab.calibration import Correction, append_correction
from judgelab.errors import DataError, JudgelabError
from judgelab.view._pages import HERE, Pages
from judgelab.view._run import ViewRun
from judgelab.view._table import RowQuery, query_rows

__all__ = ["ViewConfig", "create_app"]

log = logging.getLogger(__name__)

KEY_COOKIE = "judgelab_view_key"


def _login() -> str:
    """The user's login name, or "" where the system has none (a container without a passwd entry)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


@dataclass(frozen=True)
class ViewConfig:
    """How the viewer serves.

    Attributes
    ----------
    api_key
        Required on every request but ``/healthz`` when set.
    who
        The default "who" of a correction (the user's login name).
    n_resamples
        Bootstrap resamples of the paired comparison of two runs.
    csrf
        The token the correction form carries (random per app).
    """

    api_key: str | None = None
    who: str = field(default_factory=_login)
    n_resamples: int = 1000
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(16))


def _query(request: Request) -> RowQuery:
    """The rows query of a request's parameters (blank ones dropped; ``sort=KEY:ORDER``)."""
    params = {k: v for k, v in request.query_params.items() if v.strip() != ""}
    sort = params.get("sort", "")
    if ":" in sort:
        params["sort"], params["order"] = sort.split(":", 1)
    return RowQuery.model_validate(params)


def _run_index(request: Request, runs: list[ViewRun]) -> int:
    try:
        i = int(request.query_params.get("run", "0"))
    except ValueError:
        i = -1
    if not 0 <= i < len(runs):
        raise JudgelabError(f"No run {request.query_params.get('run')!r}: this viewer holds runs 0..{len(runs) - 1}.")
    return i


def _authorized(request: Request, key: str | None) -> bool:
    if key is None or request.url.path == "/healthz":
        return True
    given = request.headers.get("authorization", "").removeprefix("Bearer ").strip() or \
        request.cookies.get(KEY_COOKIE, "") or request.query_params.get("key", "")
    return hmac.compare_digest(given.encode(), key.encode())


def _add_auth(app: FastAPI, key: str | None) -> None:
    @app.middleware("http")
    async def auth(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if not _authorized(request, key):
            return JSONResponse({"error": "judgelab view needs its API key: 'Authorization: Bearer KEY', or open "
                                 "/?key=KEY once in the browser."}, status_code=401)
        response = await call_next(request)
        if key is not None and request.query_params.get("key"):
            response.set_cookie(KEY_COOKIE, key, httponly=True, samesite="strict")
        return response


def _add_pages(app: FastAPI, runs: list[ViewRun], pages: Pages, config: ViewConfig) -> None:
    @app.get("/", response_class=HTMLResponse)
    def rows_page(request: Request) -> HTMLResponse:
        return HTMLResponse(pages.rows(_run_index(request, runs), _query(request)))

    @app.get("/row", response_class=HTMLResponse)
    def row_page(request: Request, id: str, back: str = "", saved: str = "") -> HTMLResponse:
        return HTMLResponse(pages.row(_run_index(request, runs), id, back=back, csrf=config.csrf, saved=saved))

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(page: int = 1) -> HTMLResponse:
        return HTMLResponse(pages.compare(page))

    @app.get("/report", response_model=None)
    def report(request: Request) -> Response:
        run = runs[_run_index(request, runs)]
        if run.report_html is None:
            return HTMLResponse(pages.message("No report", f"{run.path} has no report.html; rerun 'judgelab "
                                              "calibrate' on it to write one."), status_code=404)
        return FileResponse(run.report_html, media_type="text/html")


def _add_api(app: FastAPI, runs: list[ViewRun]) -> None:
    @app.get("/healthz")
    def healthz() -> dict[str, object]:
        return {"ok": True, "runs": [r.name for r in runs]}

    @app.get("/api/rows")
    def api_rows(request: Request) -> dict[str, object]:
        return query_rows(runs[_run_index(request, runs)], _query(request)).to_dict()


def _add_corrections(app: FastAPI, runs: list[ViewRun], config: ViewConfig) -> None:
    @app.post("/correct", response_model=None)
    async def correct(request: Request) -> Response:
        form = {k: v[-1] for k, v in parse_qs((await request.body()).decode("utf-8")).items()}
        if not hmac.compare_digest(form.get("csrf", ""), config.csrf):
            return JSONResponse({"error": "The form's token is missing or stale; reload the row page."}, status_code=403)
        i = int(form.get("run", "0"))
        if not 0 <= i < len(runs):
            raise JudgelabError(f"No run {i}.")
        run = runs[i]
        rec = run.record(form.get("id", ""))
        setrow = run.rows.get(rec.id)
        old = setrow.label if setrow is not None else rec.label
        new = form.get("new_label", str(1 - old))
        if new not in ("0", "1"):
            raise JudgelabError(f"new_label must be 0 or 1, got {new!r}.")
        correction = Correction(id=rec.id, task=rec.task, old_label=old, new_label=int(new),
                                note=form.get("note", "").strip(), who=form.get("who", "").strip() or config.who)
        assert run.corrections is not None
        path = append_correction(run.corrections, correction)
        log.info("correction of %s (%d -> %d) appended to %s", rec.id, old, correction.new_label, path)
        query = urlencode({"run": i, "id": rec.id, "back": form.get("back", ""), "saved": correction.when})
        return RedirectResponse(f"/row?{query}", status_code=303)


def _add_errors(app: FastAPI, pages: Pages) -> None:
    @app.exception_handler(JudgelabError)
    async def judgelab_error(request: Request, exc: JudgelabError) -> Response:
        status, title = (404, "Not found") if isinstance(exc, DataError) else (400, "Bad request")
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": str(exc)}, status_code=status)
        return HTMLResponse(pages.message(title, str(exc)), status_code=status)

    @app.exception_handler(ValidationError)
    async def bad_query(request: Request, exc: ValidationError) -> Response:
        err = exc.errors()[0]
        text = f"Bad value for {'.'.join(str(p) for p in err.get('loc', ()))}: {err.get('msg')}."
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": text}, status_code=400)
        return HTMLResponse(pages.message("Bad request", text), status_code=400)


def create_app(runs: list[ViewRun], config: ViewConfig | None = None) -> FastAPI:
    """The viewer's app over ``runs`` (one run, or two: A and B).

    Parameters
    ----------
    runs
        Runs read with ``load_view_run``.
    config
        API key, the corrections' default author, the comparison's resamples.
    """
    if not runs:
        raise JudgelabError("judgelab view needs at least one run folder.")
    config = config or ViewConfig()
    app = FastAPI(title="judgelab view", docs_url=None, redoc_url=None, openapi_url=None)
    pages = Pages(runs, who=config.who, n_resamples=config.n_resamples)
    app.mount("/assets", StaticFiles(directory=str(HERE / "assets")), name="assets")
    _add_auth(app, config.api_key)
    _add_pages(app, runs, pages, config)
    _add_api(app, runs)
    _add_corrections(app, runs, config)
    _add_errors(app, pages)
    app.state.runs = runs
    return app

"""``judgelab view DIR`` on a bench folder: the rows where the judges disagree with the label and with each other.

A thin page over ``judgelab.bench.disagreement_rows`` (worst first), rendered with the one report renderer;
``/leaderboard`` serves the bench's own ``leaderboard.html``. Read-only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Query
from fastapi.responses import FileResponse, HTMLResponse

from judgelab.bench import BenchRow, disagreement_rows, read_leaderboard
from judgelab.calibration.report import Paragraph, Report, Section, Table, render_html

__all__ = ["create_bench_app"]

PAGE_ROWS = 50
SHOWN = ("wrong", "split", "all")


def _cut(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _cell(row: BenchRow, judge: str) -> str:
    v = next(v for v in row.verdicts if v.judge == judge)
    if v.score is None:
        return "no score"
    mark = "pass" if v.passed else "fail"
    wrong = v.passed is not None and v.passed != bool(row.label)
    at = "" if v.threshold is None else f" (t {v.threshold:.2f})"
    return f"{v.score:.3f} {mark}{at}" + (" **wrong**" if wrong else "")


def _page(folder: Path, rows: list[BenchRow], judges: tuple[str, ...], show: str, column: str, page: int) -> str:
    kept = [r for r in rows if (not column or r.column == column)
            and (show == "all" or (show == "wrong" and r.n_wrong) or (show == "split" and r.split_verdict))]
    start = (page - 1) * PAGE_ROWS
    shown = kept[start:start + PAGE_ROWS]
    table = Table(("column", "id", "split", "label", "document", "claim", "judges wrong", *judges),
                  tuple((r.column, r.id, r.split, str(r.label), _cut(" ".join(r.documents) or r.user_text),
                         _cut(r.response, 120), f"{r.n_wrong} of {len(judges)}", *(_cell(r, j) for j in judges))
                        for r in shown))
    intro = (f"{len(kept)} row(s) shown ({show}; page {page} of {max(1, -(-len(kept) // PAGE_ROWS))}), worst first: the "
             "rows most judges get wrong, then those where the judges disagree with each other, the most confident "
             "first. Each verdict is at the judge's own threshold, tuned on the set's dev split.")
    report = Report(f"judgelab view: bench {folder.name}", (
        Paragraph(intro),
        Paragraph("Filter with ?show=wrong|split|all, ?column=COLUMN and ?page=N; the leaderboard is at /leaderboard.",
                  kind="note"),
        Section("Rows", (table,))))
    html = render_html(report)
    nav = "".join(f"<a href='?show={s}'>{s}</a> " for s in SHOWN) + "<a href='/leaderboard'>leaderboard</a>"
    return html.replace("<body>", f"<body><nav id='bench-nav'>{nav}</nav>", 1)


def create_bench_app(folder: str | Path, *, api_key: str | None = None) -> FastAPI:
    """The viewer's app over one bench folder (``judgelab bench --out DIR``)."""
    from judgelab.view._app import _add_auth

    folder = Path(folder)
    board = read_leaderboard(folder)
    rows = disagreement_rows(folder)
    app = FastAPI(title="judgelab view (bench)", docs_url=None, redoc_url=None, openapi_url=None)
    _add_auth(app, api_key)

    @app.get("/", response_class=HTMLResponse)
    def rows_page(show: str = Query("wrong", pattern="^(wrong|split|all)$"), column: str = "",
                  page: int = Query(1, ge=1)) -> HTMLResponse:
        return HTMLResponse(_page(folder, rows, board.judges, show, column, page))

    @app.get("/leaderboard", response_model=None)
    def leaderboard() -> FileResponse:
        return FileResponse(folder / "leaderboard.html", media_type="text/html")

    @app.get("/healthz")
    def healthz() -> dict[str, object]:
        return {"ok": True, "bench": folder.name, "judges": list(board.judges), "rows": len(rows)}

    app.state.bench_rows = rows
    return app

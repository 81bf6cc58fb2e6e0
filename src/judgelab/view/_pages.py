"""The viewer's HTML pages: Jinja templates shipped in the package (``templates/``), with the report
blocks (a run's facts, the paired comparison) rendered by the one report renderer (``render_html``)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import jinja2

from judgelab.calibration import Correction, read_corrections
from judgelab.calibration.report import STYLE, Section, render_html
from judgelab.errors import JudgelabError
from judgelab.view._compare import PairedRow, comparison_section, differing_rows
from judgelab.view._run import ViewRun
from judgelab.view._summary import fmt, row_prompt, run_section
from judgelab.view._table import VERDICT_FILTERS, RowQuery, query_rows, table_row

__all__ = ["COLUMNS", "Pages"]

HERE = Path(__file__).resolve().parent

#: The table's columns: (sort key or "" when not sortable, header).
COLUMNS = (("id", "id"), ("", "document"), ("", "claim"), ("label", "label"), ("score", "raw score"),
           ("calibrated", "calibrated"), ("verdict", "verdict"), ("task", "task"), ("group", "group"),
           ("split", "split"), ("", "unit"))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(HERE / "templates")), autoescape=True,
                             undefined=jinja2.StrictUndefined)
    env.globals["fmt"] = fmt
    return env


class Pages:
    """Renders each page of the viewer for a list of runs (the first is run A, the second run B)."""

    def __init__(self, runs: list[ViewRun], *, who: str = "", n_resamples: int = 1000) -> None:
        self.runs = runs
        self.who = who
        self.n_resamples = n_resamples
        self.env = _environment()
        self._compared: tuple[Section, list[PairedRow]] | None = None

    def _page(self, template: str, **values: object) -> str:
        return self.env.get_template(template).render(runs=self.runs, report_style=STYLE, **values)

    def message(self, title: str, message: str, *, kind: str = "warn") -> str:
        """A page that says one thing (an error, a missing file)."""
        return self._page("message.html", title=title, message=message, kind=kind, page="message", run_index=0)

    def rows(self, run_index: int, query: RowQuery) -> str:
        """The rows table of run ``run_index``: summary, threshold, filters, the page of rows, the pager."""
        run = self.runs[run_index]
        result = query_rows(run, query)
        kept = {k: v for k, v in query.model_dump().items()
                if k in ("task", "group", "split", "verdict", "min_score", "max_score", "q") and v not in ("", None)}
        back = urlencode({"run": run_index, **kept, "sort": f"{query.sort}:{query.order}", "page": result.page})

        def page_url(n: int) -> str:
            return "/?" + urlencode({"run": run_index, **kept, "sort": f"{query.sort}:{query.order}", "page": n})

        return self._page(
            "rows.html", title=f"Rows of {run.name}", page="rows", run_index=run_index, q=query, result=result,
            summary=render_html(run_section(run)), thresholds=sorted(run.thresholds.items()),
            thresholds_by_task=run.thresholds, columns=COLUMNS, verdicts=VERDICT_FILTERS,
            choices={k: run.choices(k) for k in ("task", "group", "split")},
            hidden=[("run", str(run_index)), *((k, str(v)) for k, v in kept.items())], back=back, page_url=page_url)

    def _history(self, run: ViewRun, row_id: str) -> list[Correction]:
        if run.corrections is None or not run.corrections.is_file():
            return []
        try:
            return [c for c in read_corrections(run.corrections) if c.id == row_id]
        except JudgelabError as exc:  # a malformed file is shown, never fatal to the page
            return [Correction(id=row_id, old_label=0, new_label=0, note=f"(cannot read: {exc})", who="", when="")]

    def row(self, run_index: int, row_id: str, *, back: str = "", csrf: str = "", saved: str = "") -> str:
        """One row: its figures, probabilities, evidence, document, claim, prompt and the correction form."""
        run = self.runs[run_index]
        rec = run.record(row_id)
        setrow = run.rows.get(row_id)
        extra = [(k, str(v)) for k, v in (("generator", rec.generator), ("model", rec.model),
                                          ("evaluator", rec.evaluator), ("prompt tokens", rec.prompt_tokens),
                                          ("label mass", rec.label_mass), ("error", rec.error)) if v is not None]
        set_label = setrow.label if setrow is not None else None
        return self._page(
            "row.html", title=f"Row {row_id}", page="row", run_index=run_index, rec=rec,
            row=table_row(run, run.index[row_id]), setrow=setrow, set_label=set_label,
            current_label=set_label if set_label is not None else rec.label,
            threshold=run.thresholds.get(rec.task, 0.5), extra=extra,
            probabilities=sorted((rec.probabilities or {}).items(), key=lambda kv: -kv[1]),
            chunks=[float(x) for x in (rec.chunks or []) if isinstance(x, (int, float))],
            criteria=sorted((rec.criteria or {}).items()), prompt=row_prompt(rec, setrow),
            set_problem=run.set_problem, corrections=str(run.corrections), set_name=run.set_name or "SET",
            history=self._history(run, row_id), who=self.who, back=back or f"run={run_index}", csrf=csrf,
            saved=saved)

    def _comparison(self) -> tuple[Section, list[PairedRow]]:
        if self._compared is None:
            from judgelab.view._compare import compare_views

            a, b = self.runs[0], self.runs[1]
            self._compared = (comparison_section(a, b, compare_views(a, b, n_resamples=self.n_resamples)),
                              differing_rows(a, b))
        return self._compared

    def compare(self, page: int = 1, per_page: int = 50) -> str:
        """Runs A and B: the paired figures (computed once) and the rows whose verdicts differ, paged."""
        if len(self.runs) < 2:
            return self.message("Nothing to compare", "Pass two runs: judgelab view RUN_A RUN_B.")
        section, rows = self._comparison()
        pages = max(1, -(-len(rows) // per_page))
        page = min(max(page, 1), pages)
        return self._page("compare.html", title="Compare", page="compare", run_index=0,
                          section=render_html(section), rows=rows[(page - 1) * per_page:page * per_page],
                          total=len(rows), pageno=page, pages=pages)

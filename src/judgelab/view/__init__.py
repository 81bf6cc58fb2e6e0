"""``judgelab view``: a local web app to look at a judge's rows, not only its figures.

A thin web layer like the server: it reads run files through calibration's public readers
(``read_scores``, ``read_metrics``, ``load_calibrator``, ``resolve_set``), shows report blocks with the
one report renderer (``render_html``) and serves the run's own ``report.html``; label corrections are
appended to a ``corrections.jsonl`` beside the set (``append_correction``), never to the set.

- ``load_view_run``: a run folder read once, with the columns the table sorts on (``ViewRun``);
- ``query_rows``: filter (task, group, split, verdict vs label, score range), search, sort, page (``RowQuery``);
- ``compare_views``, ``differing_rows``: two runs, paired figures from ``compare_runs`` and the rows whose verdicts differ;
- ``create_app``: the FastAPI app (pages, ``/api/rows``, ``/report``, ``/correct``; assets served from the package);
- ``create_bench_app``: a bench folder's rows where the judges disagree with the label and each other, worst first;
- ``ViewServer``, ``check_address``, ``check_port``: serving on loopback, a taken port as one line.
"""

from judgelab.view._app import ViewConfig, create_app
from judgelab.view._bench import create_bench_app
from judgelab.view._compare import PairedRow, TaskComparison, compare_views, differing_rows
from judgelab.view._run import ViewRun, load_view_run
from judgelab.view._serve import ViewServer, check_address, check_port, is_loopback
from judgelab.view._summary import row_prompt
from judgelab.view._table import SORT_KEYS, VERDICT_FILTERS, RowQuery, RowsPage, TableRow, query_rows

__all__ = [
    "PairedRow",
    "RowQuery",
    "RowsPage",
    "SORT_KEYS",
    "TableRow",
    "TaskComparison",
    "VERDICT_FILTERS",
    "ViewConfig",
    "ViewRun",
    "ViewServer",
    "check_address",
    "check_port",
    "compare_views",
    "create_app",
    "create_bench_app",
    "differing_rows",
    "is_loopback",
    "load_view_run",
    "query_rows",
    "row_prompt",
]

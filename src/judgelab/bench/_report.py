"""The leaderboard as a report (one model, the calibration report's renderer) and its files.

``leaderboard.json`` holds every figure (``Leaderboard``); ``leaderboard.md`` is the table a user
pastes into a pull request; ``leaderboard.html`` adds the figures (also written to ``figures/``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from judgelab.bench._figures import forest_png, roc_png, speed_png
from judgelab.bench._measure import CellScores
from judgelab.bench._records import MEAN_COLUMN, CellMetrics, Leaderboard, Ranking
from judgelab.calibration.data import IntervalRecord
from judgelab.calibration.report import Bullets, Facts, Figure, Gallery, Paragraph, Report, Section, Table, render_html, render_markdown

__all__ = ["leaderboard_report", "leaderboard_table", "write_leaderboard"]


def _f(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else f"{x:{spec}}"


def _iv(iv: IntervalRecord | None, signed: bool = False) -> str:
    if iv is None or iv.estimate is None:
        return "n/a"
    spec = "+.3f" if signed else ".3f"
    if iv.low is None or iv.high is None:
        return f"{iv.estimate:{spec}}"
    return f"{iv.estimate:{spec}} [{iv.low:{spec}}, {iv.high:{spec}}]"


def _verdict(ranking: Ranking, judge: str) -> str:
    entry = next((e for e in ranking.entries if e.judge == judge), None)
    if entry is None:
        return "not ranked"
    if entry.best:
        return "**best**"
    return f"{_iv(entry.difference, signed=True)}" + (" tied" if entry.tied_with_best else "")


def leaderboard_table(board: Leaderboard) -> Table:
    """One row per judge: the mean over sets, its paired difference from the best, each column, cost."""
    mean = board.rankings[0]
    columns = [r for r in board.rankings[1:]]
    cost = {c.judge: c for c in board.costs}
    header = ("judge", f"{board.metric} ({MEAN_COLUMN})", "vs best [95%]", *(r.column for r in columns),
              "judgments/s", "peak MiB")
    rows = []
    order = [e.judge for e in mean.entries] + [j for j in board.judges if j not in {e.judge for e in mean.entries}]
    for j in order:
        value = next((e.value for e in mean.entries if e.judge == j), None)
        per_column = []
        for r in columns:
            e = next((e for e in r.entries if e.judge == j), None)
            per_column.append("not ranked" if e is None else _f(e.value) + (" (best)" if e.best else " (tied)" if e.tied_with_best else ""))
        c = cost.get(j)
        rows.append((j, _f(value), _verdict(mean, j), *per_column,
                     _f(c.judgments_per_second if c else None, ".2f"), _f(c.peak_rss_mib if c else None, ".0f")))
    return Table(header, tuple(rows))


def _cell_table(cells: Sequence[CellMetrics], ranking: Ranking | None) -> Table:
    header = ("judge", "n test (units)", "AUROC [95%]", "threshold (dev)", "BA at threshold [95%]", "BA at 0.5",
              "ECE", "coverage", "s/judgment", "prompt tokens", "vs best", "McNemar p")
    rows = []
    for m in cells:
        e = next((e for e in ranking.entries if e.judge == m.judge), None) if ranking else None
        vs = "n/a" if ranking is None else _verdict(ranking, m.judge)
        mc = _f(e.mcnemar.p_value) if e is not None and e.mcnemar is not None else ""
        rows.append((m.judge, f"{m.n_test} ({m.n_test_units})", _iv(m.auroc), _f(m.threshold), _iv(m.balanced_accuracy),
                     _f(m.balanced_accuracy_at_half), _f(m.ece), f"{m.coverage:.0%}", _f(m.seconds_per_judgment, ".4f"),
                     _f(m.prompt_tokens_per_judgment, ".0f"), vs, mc))
    return Table(header, tuple(rows))


def _headline(board: Leaderboard) -> Paragraph:
    mean = board.rankings[0]
    if not mean.entries:
        return Paragraph("No judge was ranked on every set: see the missing cells below.", kind="warning")
    best = mean.entries[0]
    tied = [e.judge for e in mean.entries if e.tied_with_best]
    text = (f"Best judge by mean {board.metric} over {len(board.rankings) - 1} column(s): **{best.judge}** "
            f"({_f(best.value)}).")
    text += (f" Tied with it (the paired interval of the difference holds 0): {', '.join(tied)}." if tied
             else " No other judge is tied with it.")
    return Paragraph(text, kind="headline")


def _column_sections(board: Leaderboard, figures: Mapping[str, bytes]) -> list[Section]:
    out = []
    for r in board.rankings[1:]:
        cells = [m for m in board.cells if m.column == r.column]
        blocks: list[Paragraph | Table | Figure | Bullets] = [_cell_table(cells, r)]
        notes = [f"{m.judge}: {w}" for m in cells for w in m.warnings]
        notes += [f"{m.judge}: {m.threshold_note}" for m in cells if m.threshold_note]
        notes += [f"{j} not ranked: {why}" for j, why in r.not_ranked.items()]
        if notes:
            blocks.append(Bullets(tuple(notes)))
        png = figures.get(f"roc:{r.column}")
        if png is not None:
            blocks.append(Figure(f"ROC curves, {r.column} (test split)", f"figures/{_slug(r.column)}-roc.png", png))
        out.append(Section(r.column, tuple(blocks)))
    return out


def _slug(text: str) -> str:
    from judgelab.bench._spec import safe_folder

    return safe_folder(text)


def _baseline_section(board: Leaderboard) -> Section | None:
    if board.baseline is None:
        return None
    columns = [v.column for v in board.versus_baseline]
    judges = [j for j in board.judges if j != board.baseline]
    rows = []
    for j in judges:
        cells = []
        for v in board.versus_baseline:
            e = next((e for e in v.entries if e.judge == j), None)
            cells.append("not compared" if e is None else _iv(e.difference, signed=True)
                         + (" **worse**" if e.worse else " better" if e.better else ""))
        rows.append((j, *cells, "**admitted**" if board.admitted.get(j) else "not admitted"))
    return Section(f"Against the baseline: {board.baseline}", (
        Table(("judge", *columns, "admitted"), tuple(rows)),
        Paragraph(f"Each judge's {board.metric} minus the baseline's, paired (95% unit bootstrap). A judge is admitted "
                  "when it is worse beyond its interval in no column and its mean over sets is above the baseline's.",
                  kind="note")))


def _kappa_section(board: Leaderboard) -> Section | None:
    if not board.kappa:
        return None
    rows = tuple((k.column, k.judge_a, k.judge_b, str(k.n), _f(k.kappa)) for k in board.kappa)
    return Section("Agreement between judges", (
        Table(("column", "judge A", "judge B", "test rows", "Cohen's kappa"), rows),
        Paragraph("Verdicts at each judge's own tuned threshold, on the test rows both scored.", kind="note")))


def _stability_section(board: Leaderboard) -> Section | None:
    if not board.stability:
        return None
    rows = tuple((s.judge, s.column, str(s.n_rows), str(s.repeats), _f(s.flip_rate), _f(s.max_score_change, ".2e"),
                  str(s.n_failed)) for s in board.stability)
    return Section("Run-to-run stability", (
        Table(("judge", "column", "rows", "repeats", "flip rate", "largest score change", "failed rescorings"), rows),
        Paragraph("The same test rows rescored by each judge; a flip is a verdict at the judge's threshold that differs "
                  "from its first scoring.", kind="note")))


def _cost_section(board: Leaderboard) -> Section:
    rows = tuple((c.judge, "served" if c.remote else "in process", str(c.judgments), _f(c.judgments_per_second, ".2f"),
                  _f(c.seconds_per_judgment, ".4f"), _f(c.wall_seconds, ".1f"), _f(c.load_seconds, ".1f"),
                  _f(c.peak_rss_mib, ".0f"), _f(c.latency_p50_seconds, ".4f"), _f(c.latency_p95_seconds, ".4f"))
                 for c in board.costs)
    m = board.machine
    return Section("Cost", (
        Table(("judge", "where", "judgments", "judgments/s", "s/judgment", "wall s", "load s", "peak MiB",
               "latency p50 s", "latency p95 s"), rows),
        Paragraph(f"Measured on {m.get('cpu', '?')} ({m.get('cpu_flags', '?')}, {m.get('cores', '?')} cores). "
                  "Judgments per second from the records' scoring time; wall and load time and peak memory from the "
                  "last bench run that scored with the judge.", kind="note")))


def leaderboard_report(board: Leaderboard, figures: Mapping[str, bytes] | None = None) -> Report:
    """The leaderboard as a ``Report`` (figures: ``{"roc:COLUMN" | "forest" | "speed": png}``)."""
    figures = figures or {}
    blocks: list[Paragraph | Table | Facts | Section | Gallery | Bullets] = [_headline(board), leaderboard_table(board)]
    blocks.append(Paragraph(f"Ranked by {board.metric} on each set's test split; \"vs best\" is the paired difference "
                            "from the best judge with a unit-clustered bootstrap interval (the same resamples for every "
                            "judge); \"tied\" when it holds 0. See docs/bench.md.", kind="note"))
    gallery = [Figure(t, f"figures/{k}.png", figures[k]) for k, t in (("forest", "Paired difference from the best"),
                                                                     ("speed", "Quality against speed")) if k in figures]
    if gallery:
        blocks.append(Gallery(tuple(gallery)))
    if board.missing:
        blocks.append(Section("Missing cells", (Bullets(tuple(
            f"{o.judge} on {o.set}: {o.status}, {o.n_scored} of {o.n_rows} rows scored: {o.error}" for o in board.missing)),
            Paragraph("These cells are not ranked. Rerun the same command to resume them.", kind="warning"))))
    blocks += _column_sections(board, figures)
    blocks += [s for s in (_baseline_section(board), _kappa_section(board), _stability_section(board)) if s is not None]
    blocks.append(_cost_section(board))
    blocks.append(Facts(tuple([("created", board.created), ("command", board.command or "(library call)"),
                               *((f"set {k}", v) for k, v in board.sets.items())])))
    return Report("judgelab bench", tuple(blocks))


def _figures(board: Leaderboard, cells: Sequence[CellScores]) -> dict[str, bytes]:
    figures: dict[str, bytes] = {}
    for column in dict.fromkeys(c.column for c in cells):
        png = roc_png(column, [c for c in cells if c.column == column])
        if png is not None:
            figures[f"roc:{column}"] = png
    for key, make in (("forest", forest_png), ("speed", speed_png)):
        png = make(board)
        if png is not None:
            figures[key] = png
    return figures


def write_leaderboard(board: Leaderboard, cells: Sequence[CellScores], out: Path, *, figures: bool = True) -> dict[str, Path]:
    """Write ``leaderboard.json``, ``.md``, ``.html`` and ``figures/*.png`` to ``out``; their paths."""
    pngs = _figures(board, cells) if figures else {}
    fig_dir = out / "figures"
    if pngs:
        fig_dir.mkdir(parents=True, exist_ok=True)
        for key, png in pngs.items():
            name = key if ":" not in key else f"{_slug(key.split(':', 1)[1])}-roc"
            (fig_dir / f"{name}.png").write_bytes(png)
    report = leaderboard_report(board, pngs)
    files = {"json": out / "leaderboard.json", "md": out / "leaderboard.md", "html": out / "leaderboard.html"}
    _atomic(files["json"], board.model_dump_json(indent=2) + "\n")
    _atomic(files["md"], render_markdown(report))
    _atomic(files["html"], render_html(report))
    return files


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)

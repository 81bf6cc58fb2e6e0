"""The one report renderer: a ``Report`` (or one ``Section`` of it) as markdown or as HTML.

Markdown: the title is a level-1 heading, a section one level below its parent, and blocks are
separated by one blank line; the text ends with one newline. HTML: one line, the same headings,
``class`` names the stylesheet ``STYLE`` knows (``headline``, ``warn``, ``note``, ``figs``), figures
embedded as base64 PNGs so the file stands alone.
"""

from __future__ import annotations

import base64
import html
import re

from judgelab.calibration.report._model import Block, Bullets, Code, Facts, Figure, Gallery, Paragraph, Report, Section, Table

__all__ = ["STYLE", "render_html", "render_markdown"]

STYLE = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;font-size:14px}"
         ".headline{font-size:1.15em;background:#eef6ee;padding:.6em}.warn{background:#fdecea;padding:.6em}"
         ".note{color:#555;font-size:.9em}.figs{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}")

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")


def render_markdown(node: Report | Section, *, level: int = 2) -> str:
    """Markdown of a whole report, or of one section at heading ``level`` (a fragment to splice in).

    Parameters
    ----------
    node
        The report or section.
    level
        The heading level of a section given alone (a report's title is always level 1 and its
        sections level 2).

    Returns
    -------
    str
        The markdown, ending with one newline.
    """
    if isinstance(node, Report):
        chunks = [f"# {node.title}", *_md_blocks(node.blocks, 2)]
    else:
        chunks = [_md_block(node, level)]
    return "\n\n".join(chunks) + "\n"


def _md_blocks(blocks: tuple[Block, ...], level: int) -> list[str]:
    return [c for c in (_md_block(b, level) for b in blocks) if c]


def _md_table(header: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def _md_figure(f: Figure) -> str:
    return f"![{f.title}]({f.path})" if f.path else ""


def _md_block(b: Block, level: int) -> str:
    """One block's markdown, without the blank line that separates it from the next ("" for nothing)."""
    if isinstance(b, Section):
        return "\n\n".join([f"{'#' * level} {b.heading}", *_md_blocks(b.blocks, level + 1)])
    if isinstance(b, Paragraph):
        text = f"**{b.lead}** {b.text}" if b.lead else b.text
        return "> " + text if b.kind == "warning" else text
    if isinstance(b, Table):
        return _md_table(b.header, b.rows)
    if isinstance(b, Facts):
        return "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in b.items)
    if isinstance(b, Figure):
        return _md_figure(b)
    if isinstance(b, Gallery):
        return "\n\n".join(c for c in map(_md_figure, b.figures) if c)
    if isinstance(b, Code):
        return f"```\n{b.text}\n```"
    if isinstance(b, Bullets):
        return "\n".join(f"- {item}" for item in b.items)
    raise TypeError(f"not a report block: {type(b).__name__}")


def render_html(node: Report | Section, *, level: int = 2) -> str:
    """HTML of a whole report (a standalone page with the stylesheet), or of one section at ``level``.

    Parameters
    ----------
    node
        The report or section.
    level
        The heading level of a section given alone (``<h2>``...).

    Returns
    -------
    str
        A page ending with one newline for a report; the section's elements for a section.
    """
    if isinstance(node, Report):
        title = _esc(node.title)
        return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title><style>{STYLE}</style>"
                f"</head><body><h1>{title}</h1>{''.join(_html_block(b, 2) for b in node.blocks)}</body></html>\n")
    return _html_block(node, level)


def _esc(text: str) -> str:
    """Escaped text, with the entities Jinja and markupsafe write (``&#39;``, ``&#34;``)."""
    return html.escape(text, quote=True).replace("&#x27;", "&#39;").replace("&quot;", "&#34;")


def _inline(text: str) -> str:
    """Escaped text with ```code``` and ``**bold**`` as HTML elements."""
    return _BOLD.sub(r"<b>\1</b>", _CODE.sub(r"<code>\1</code>", _esc(text)))


def _html_figure(f: Figure) -> str:
    if f.png is None:
        return ""
    t = _esc(f.title)
    b64 = base64.b64encode(f.png).decode("ascii")
    return f"<figure><img alt='{t}' src='data:image/png;base64,{b64}'><figcaption>{t}</figcaption></figure>"


def _html_paragraph(p: Paragraph) -> str:
    cls = {"plain": "", "note": " class='note'", "headline": " class='headline'", "warning": " class='warn'"}[p.kind]
    lead = f"<b>{_inline(p.lead)}</b> " if p.lead else ""
    return f"<p{cls}>{lead}{_inline(p.text)}</p>"


def _html_block(b: Block, level: int) -> str:
    if isinstance(b, Section):
        return f"<h{level}>{_inline(b.heading)}</h{level}>" + "".join(_html_block(c, level + 1) for c in b.blocks)
    if isinstance(b, Paragraph):
        return _html_paragraph(b)
    if isinstance(b, Table):
        head = "<tr>" + "".join(f"<th>{_inline(c)}</th>" for c in b.header) + "</tr>"
        body = "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in b.rows)
        return f"<table>{head}{body}</table>"
    if isinstance(b, Facts):
        return "<table>" + "".join(f"<tr><th>{_inline(k)}</th><td>{_inline(v)}</td></tr>" for k, v in b.items) + "</table>"
    if isinstance(b, Figure):
        return _html_figure(b)
    if isinstance(b, Gallery):
        return "<div class='figs'>" + "".join(map(_html_figure, b.figures)) + "</div>"
    if isinstance(b, Code):
        return f"<pre>{_esc(b.text)}</pre>"
    if isinstance(b, Bullets):
        return "<ul>" + "".join(f"<li>{_inline(item)}</li>" for item in b.items) + "</ul>"
    raise TypeError(f"not a report block: {type(b).__name__}")

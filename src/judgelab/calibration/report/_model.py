"""The report model: what a report says, as plain frozen values, and nothing about how it looks.

Every report judgelab writes (the calibration report with its Deployment and
Robustness sections, the cascade, jury and tuning reports) is built as a
``Report``: a title and a sequence of blocks, where a block is a
``Paragraph``, a ``Table``, a ``Facts`` list, a ``Figure``, a ``Gallery`` of
figures, a ``Code`` listing, a ``Bullets`` list or a nested ``Section``.
``render_markdown`` and ``render_html`` (``_render``) are the one place where
blocks become text. Text may carry two inline marks, ``**bold**`` and
```code```, written as in markdown; the HTML renderer translates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Union

__all__ = ["Block", "Bullets", "Code", "Facts", "Figure", "Gallery", "Paragraph", "Report", "Section", "Table", "table_section"]

ParagraphKind = Literal["plain", "note", "headline", "warning"]


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of text.

    Parameters
    ----------
    text
        The text (inline ``**bold**`` and ```code``` allowed).
    lead
        Bold words put before the text (``"fact-check:"``, ``"Warning (qa):"``); empty for none.
    kind
        ``plain``; ``note`` (a table's explanation, set smaller in HTML); ``headline`` (the answer a
        reader came for, highlighted in HTML); ``warning`` (a quote in markdown, red in HTML).
    """

    text: str
    lead: str = ""
    kind: ParagraphKind = "plain"


@dataclass(frozen=True)
class Table:
    """A table of text cells: one header row, then rows of the same width."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", tuple(self.header))
        object.__setattr__(self, "rows", tuple(tuple(r) for r in self.rows))


@dataclass(frozen=True)
class Facts:
    """Named values, one per row (a two-column table with the names as row headers and no header row)."""

    items: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple((str(k), str(v)) for k, v in self.items))


@dataclass(frozen=True)
class Figure:
    """A figure: its title (alt text and caption), its file for markdown, its PNG bytes for HTML.

    A renderer leaves out a figure it has nothing to show with: markdown without ``path``, HTML
    without ``png``.
    """

    title: str
    path: str | None = None
    png: bytes | None = field(default=None, repr=False)


@dataclass(frozen=True)
class Gallery:
    """Figures shown side by side in HTML (one after another in markdown)."""

    figures: tuple[Figure, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "figures", tuple(self.figures))


@dataclass(frozen=True)
class Code:
    """A literal listing (commands), shown as is."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of short texts (inline marks allowed)."""

    items: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "items", tuple(self.items))


@dataclass(frozen=True)
class Section:
    """A heading and its blocks; a section inside a section is one heading level deeper."""

    heading: str
    blocks: tuple[Block, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))


@dataclass(frozen=True)
class Report:
    """A whole report: its title (the top heading) and its blocks."""

    title: str
    blocks: tuple[Block, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "blocks", tuple(self.blocks))


Block = Union[Paragraph, Table, Facts, Figure, Gallery, Code, Bullets, Section]


def table_section(title: str, header: Sequence[str], rows: Sequence[Sequence[str]], note: str = "") -> Section:
    """The common shape: a titled table, then its note (left out when empty).

    Parameters
    ----------
    title
        The section heading.
    header, rows
        The table.
    note
        What the table shows and how to read it.

    Returns
    -------
    Section
    """
    table = Table(tuple(header), tuple(tuple(r) for r in rows))
    return Section(title, (table, Paragraph(note, kind="note")) if note else (table,))

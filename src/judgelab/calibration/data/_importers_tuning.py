"""Importers of the sets added for tuning: DocNLI's binary MNLI and FEVER-NLI, FIB, FactCG, BEGIN.

Each reads its authors' files unchanged and binarises them the usual way
(see each docstring). Rows over one document (or one premise) share
``meta["pair"]`` (one resampling unit, ``LabelledRow.unit``), so that held-out
splits and bootstrap resamples keep them together: the same document never sits
on both sides of a split.
"""

from __future__ import annotations

import ast
import csv
import hashlib
from pathlib import Path
from typing import Any

from judgelab.calibration.data._rows import LabelledRow
from judgelab.calibration.data._source_files import field, json_lines, source_files
from judgelab.errors import DataError, check_parameter
from judgelab.textfiles import read_text

__all__ = ["import_mnli", "import_fever_nli", "import_docnli", "import_fib", "import_factcg", "import_begin"]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


_DOCNLI_LABELS = {"entailment": 1, "not_entailment": 0}


def import_docnli(path: str | Path, *, name: str = "docnli") -> list[LabelledRow]:
    """DocNLI's binary TSV files (``label \\t premise \\t hypothesis``, no header).

    ``entailment`` = 1, ``not_entailment`` = 0. ``path`` is one ``.tsv`` file or
    a folder of them (``dev.tsv``, ``test.tsv``). The premise is the document
    and the hypothesis the claim; the hypotheses of one premise share
    ``meta["pair"]``. ``name`` prefixes ids and is the rows' ``group``.
    """
    rows = []
    for f in source_files(path, "*.tsv"):
        text = read_text(f, "DocNLI TSV file")
        for line, record in enumerate(text.splitlines(), start=1):
            if not record.strip():
                continue
            parts = record.split("\t")
            if len(parts) != 3 or parts[0].strip() not in _DOCNLI_LABELS:
                raise DataError(
                    f"{f}:{line} is not 'label<TAB>premise<TAB>hypothesis' with label entailment or "
                    f"not_entailment (it has {len(parts)} fields, first {parts[0][:30]!r}). Pass one of "
                    "DocNLI's binary-MNLI or binary-FEVER-NLI files.", path=str(f), line=line, field="label")
            label, premise, hypothesis = (p.strip() for p in parts)
            rows.append(LabelledRow(
                id=f"{name}-{f.stem}-{line}", task="fact-check", documents=[premise], response=hypothesis,
                label=_DOCNLI_LABELS[label], group=name, meta={"pair": f"{name}-{_digest(premise)}"},
            ))
    return rows


def import_mnli(path: str | Path) -> list[LabelledRow]:
    """MultiNLI reduced to two classes by DocNLI's authors (``mnli/{dev,test}.tsv``); see ``import_docnli``."""
    return import_docnli(path, name="mnli")


def import_fever_nli(path: str | Path) -> list[LabelledRow]:
    """FEVER-NLI reduced to two classes by DocNLI's authors (``fever_nli/{dev,test}.tsv``); see ``import_docnli``."""
    return import_docnli(path, name="fever-nli")


def _choices(obj: dict[str, Any], f: Path, line: int) -> list[str]:
    raw = field(obj, "list_choices", f, line)
    if isinstance(raw, str):  # the authors describe it as a Python-literal list
        try:
            raw = ast.literal_eval(raw)
        except (ValueError, SyntaxError) as exc:
            raise DataError(f"{f}:{line} field 'list_choices' is not a list literal.", path=str(f), line=line,
                            field="list_choices") from exc
    if not isinstance(raw, list) or len(raw) != 2:
        raise DataError(f"{f}:{line} field 'list_choices' must hold two summaries.", path=str(f), line=line,
                        field="list_choices")
    return [str(c).strip() for c in raw]


def import_fib(path: str | Path) -> list[LabelledRow]:
    """FIB: news articles (XSum, CNN/DM), each with a consistent and an inconsistent model-written summary.

    ``path`` is the ``fib`` folder (every ``*.jsonl`` under it), one of its
    sub-folders or one file. The consistent summary (``correct_choice``) is
    label 1, the other choice label 0. One article appears in several files
    (one per distractor model): its consistent summary is imported once and
    each distinct inconsistent summary once, so there are more 0 rows than 1
    rows. All rows of an article share ``meta["pair"]``; the ``group`` is the
    news source (``fib-xsum``, ``fib-cnn_dm``).
    """
    rows: list[LabelledRow] = []
    seen: set[tuple[str, str]] = set()
    for f in source_files(path, "*.jsonl", recursive=True):
        corpus = f.parent.name if f.parent.name in ("xsum", "cnn_dm") else "news"
        distractor = f.stem.removeprefix("binary_choice-using_").removesuffix("_distractors")
        for line, obj in json_lines(f):
            document = str(field(obj, "input", f, line))
            correct = str(field(obj, "correct_choice", f, line)).strip()
            choices = _choices(obj, f, line)
            doc_key = _digest(document)
            for summary in choices:
                label = 1 if summary == correct else 0
                if (doc_key, summary) in seen:
                    continue
                seen.add((doc_key, summary))
                rows.append(LabelledRow(
                    id=f"fib-{corpus}-{obj.get('id', line)}-{_digest(summary)[:8]}", task="fact-check",
                    documents=[document], response=summary, label=label, group=f"fib-{corpus}",
                    meta={"pair": f"fib-{doc_key}", "distractor_model": None if label else distractor},
                ))
    return rows


def import_factcg(path: str | Path) -> list[LabelledRow]:
    """FactCG's CG2C document-level rows (``CG2C_doc.json``, JSON lines).

    ``text_a`` is the document, ``text_b[0]`` the claim and ``orig_label``
    the label (1 grounded, 0 not: the claim's support was removed from the
    document). FactCG holds most claims twice, once with its support and once
    with the support removed (the opposite label, a document that differs by
    a few sentences), so the unit is the claim: rows of one claim share
    ``meta["pair"]``, and a split keeps the twins on one side.
    """
    rows = []
    for f in source_files(path, "*.json"):
        for line, obj in json_lines(f):
            document = str(field(obj, "text_a", f, line))
            claims = field(obj, "text_b", f, line)
            label = field(obj, "orig_label", f, line)
            if not isinstance(claims, list) or not claims or label not in (0, 1):
                raise DataError(f"{f}:{line} needs 'text_b' as a list of one claim and 'orig_label' 0 or 1.",
                                path=str(f), line=line, field="text_b")
            rows.append(LabelledRow(
                id=f"factcg-{f.stem}-{line}", task="fact-check", documents=[document], response=str(claims[0]),
                label=int(label), group="factcg", meta={"pair": f"factcg-{_digest(' '.join(str(claims[0]).split()))}"},
            ))
    return rows


_BEGIN_LABELS = {"fully attributable": 1, "not fully attributable": 0, "generic": None}
_BEGIN_COLUMNS = ("knowledge", "message", "response", "begin_label")


def import_begin(path: str | Path, *, generic: str = "drop") -> list[LabelledRow]:
    """BEGIN: dialogue responses judged against a knowledge snippet.

    ``Fully attributable`` = 1, ``Not fully attributable`` = 0; ``Generic``
    responses (nothing checkable) are dropped (``generic="drop"``) or
    failed (``"fail"``). ``path`` is the ``begin`` folder (every ``*.tsv``
    under it) or one file. The knowledge is the document, the response the
    claim, the user's message the ``user_text``; the ``group`` is the
    corpus (``begin-wow``, ...) and responses to one knowledge snippet share
    ``meta["pair"]``.
    """
    check_parameter(generic in ("drop", "fail"), "generic", "import_begin", "'drop' or 'fail'", generic)
    rows = []
    for f in source_files(path, "*.tsv", recursive=True):
        reader = csv.DictReader(read_text(f, "BEGIN TSV file").splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [c for c in _BEGIN_COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise DataError(f"{f}:1 lacks the BEGIN column(s) {', '.join(missing)}; pass a begin_*.tsv file.",
                            path=str(f), line=1, field=missing[0])
        for i, rec in enumerate(reader, start=2):
            raw = (rec.get("begin_label") or "").strip()
            if raw.lower() not in _BEGIN_LABELS:
                raise DataError(f"{f}:{i} has begin_label {raw!r}; expected Fully attributable, Not fully "
                                "attributable or Generic.", path=str(f), line=i, field="begin_label")
            label = _BEGIN_LABELS[raw.lower()]
            if label is None:
                if generic == "drop":
                    continue
                label = 0
            corpus = (rec.get("data_source") or f.parent.name).strip()
            knowledge = (rec.get("knowledge") or "").strip()
            rows.append(LabelledRow(
                id=f"begin-{f.stem}-{i}", task="fact-check", user_text=(rec.get("message") or "").strip(),
                documents=[knowledge], response=(rec.get("response") or "").strip(), label=label,
                generator=(rec.get("model_name") or None), group=f"begin-{corpus}",
                meta={"pair": f"begin-{_digest(knowledge)}", "begin_label": raw},
            ))
    return rows

"""Importers: public labelled data sets -> ``LabelledRow`` lists.

Each importer reads the authors' file unchanged and binarises it the usual
way (see the docstrings). ``import_set(kind, path)`` dispatches by name.
"""

from __future__ import annotations

import csv
import hashlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from judgelab.calibration.data._importers_squad import import_squad_relevancy, import_squad_same_paragraph
from judgelab.calibration.data._importers_tuning import import_begin, import_factcg, import_fever_nli, import_fib, import_mnli
from judgelab.calibration.data._rows import LabelledRow
from judgelab.calibration.data._source_files import field, json_lines
from judgelab.errors import DataError, JudgelabError
from judgelab.textfiles import not_utf8

__all__ = [
    "IMPORTERS",
    "import_set",
    "import_wice",
    "import_halueval_qa",
    "import_halueval_qa_relevancy",
    "import_halueval_general",
    "import_faithbench",
    "import_llm_aggrefact",
    "import_summedits",
    "import_snli",
]

logger = logging.getLogger(__name__)


def import_wice(path: str | Path, *, split: Literal["dev", "test"] | None = None) -> list[LabelledRow]:
    """WiCE claim-level entailment: ``supported`` = 1, anything else = 0.

    The evidence sentences are joined into one document; the claim is the
    response. ``split`` is stamped on every row when given (WiCE's own
    dev/test files are separate).
    """
    path = Path(path)
    rows = []
    for line, obj in json_lines(path):
        label = field(obj, "label", path, line)
        evidence = field(obj, "evidence", path, line)
        meta = obj.get("meta") or {}
        rid = meta.get("id") or f"{path.stem}-{line}"
        rows.append(
            LabelledRow(
                id=f"wice-{rid}",
                task="fact-check",
                documents=["\n".join(evidence)],
                response=field(obj, "claim", path, line),
                label=1 if label == "supported" else 0,
                split=split,
                group="wice",
                meta={"wice_label": label, "title": meta.get("claim_title")},
            )
        )
    return rows


def import_halueval_qa(path: str | Path) -> list[LabelledRow]:
    """HaluEval QA: each question gives a right answer (1) and a hallucinated one (0).

    The knowledge is the document, the question the user text and the
    answer the response; both rows of a question share ``meta["pair"]``.
    """
    path = Path(path)
    rows = []
    for line, obj in json_lines(path):
        knowledge = field(obj, "knowledge", path, line)
        question = field(obj, "question", path, line)
        pair = f"halueval-qa-{line}"
        for kind, label in (("right_answer", 1), ("hallucinated_answer", 0)):
            rows.append(
                LabelledRow(
                    id=f"{pair}-{'right' if label else 'hallucinated'}",
                    task="fact-check",
                    user_text=question,
                    documents=[knowledge],
                    response=field(obj, kind, path, line),
                    label=label,
                    group="halueval-qa",
                    meta={"pair": pair},
                )
            )
    return rows


def import_halueval_qa_relevancy(path: str | Path) -> list[LabelledRow]:
    """HaluEval QA as relevancy rows: does the answer answer the question, in line with the knowledge?

    Three rows per question, all sharing ``meta["pair"]`` (one unit): the
    right answer (1, kind ``on-topic``), the hallucinated answer (0,
    ``contradicts-context``: it answers the question against the knowledge)
    and the next question's right answer (0, ``different-question``; the
    last question takes the first one's). The kinds and the labels are the
    starter set's relevancy kinds, so a set of a few hundred rows measures
    the relevancy question where the starter has 60.
    """
    path = Path(path)
    questions = [(line, field(obj, "knowledge", path, line), field(obj, "question", path, line),
                  field(obj, "right_answer", path, line), field(obj, "hallucinated_answer", path, line))
                 for line, obj in json_lines(path)]
    rows = []
    for i, (line, knowledge, question, right, hallucinated) in enumerate(questions):
        pair = f"halueval-qa-relevancy-{line}"
        other = questions[(i + 1) % len(questions)][3]
        answers: list[tuple[str, int, str]] = [(right, 1, "on-topic"), (hallucinated, 0, "contradicts-context")]
        if other.strip().lower() != right.strip().lower():  # a lone question is its own neighbour
            answers.append((other, 0, "different-question"))
        for response, label, kind in answers:
            rows.append(
                LabelledRow(
                    id=f"{pair}-{kind}",
                    task="relevancy",
                    user_text=question,
                    documents=[knowledge],
                    response=response,
                    label=label,
                    group="halueval-qa-relevancy",
                    meta={"pair": pair, "kind": kind},
                )
            )
    return rows


def import_halueval_general(path: str | Path) -> list[LabelledRow]:
    """HaluEval general: closed-book ChatGPT answers; ``hallucination: no`` = 1.

    There is no grounding document, so the rows have task ``criteria`` (an
    answer judged on its own) and ``generator`` ``"gpt-3.5-turbo"``.
    """
    path = Path(path)
    rows = []
    for line, obj in json_lines(path):
        flag = str(field(obj, "hallucination", path, line)).strip().lower()
        if flag not in ("yes", "no"):
            raise DataError(
                f"{path}:{line} field 'hallucination' is {flag!r}; expected 'yes' or 'no'.",
                path=str(path),
                line=line,
                field="hallucination",
            )
        rows.append(
            LabelledRow(
                id=f"halueval-general-{obj.get('ID', line)}",
                task="criteria",
                user_text=field(obj, "user_query", path, line),
                response=field(obj, "chatgpt_response", path, line),
                label=1 if flag == "no" else 0,
                generator="gpt-3.5-turbo",
                group="halueval-general",
                meta={"hallucination_spans": obj.get("hallucination_spans") or []},
            )
        )
    return rows


_FAITHBENCH_LABELS = {"consistent": 1, "benign": 1, "unwanted": 0}


def import_faithbench(
    path: str | Path,
    *,
    questionable: Literal["drop", "pass", "fail"] = "drop",
    label_field: Literal["worst-label", "best-label"] = "worst-label",
) -> list[LabelledRow]:
    """FaithBench summaries: Consistent/Benign = 1, Unwanted = 0.

    Parameters
    ----------
    path
        ``FaithBench.csv``.
    questionable
        What to do with ``Questionable`` rows: ``"drop"`` (default), or map
        them to 1 (``"pass"``) or 0 (``"fail"``, the stricter reading).
    label_field
        Which annotation to binarise (the authors use ``worst-label``).
    """
    if questionable not in ("drop", "pass", "fail"):
        raise JudgelabError(
            f"The 'questionable' parameter of import_faithbench must be 'drop', 'pass' or 'fail'. "
            f"Got {questionable!r} instead."
        )
    path = Path(path)
    try:
        fh = path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise DataError(f"Cannot read {str(path)!r}: {exc.strerror or exc}.", path=str(path)) from exc
    with fh:
        try:
            return _faithbench_rows(path, csv.DictReader(fh), questionable, label_field)
        except UnicodeDecodeError as exc:
            raise not_utf8(path, exc, "FaithBench file") from exc


_FAITHBENCH_COLUMNS = ("source", "summary", "LLM")


def _faithbench_rows(path: Path, reader: csv.DictReader[str], questionable: str, label_field: str) -> list[LabelledRow]:
    needed = (*_FAITHBENCH_COLUMNS, label_field)
    missing = [c for c in needed if c not in (reader.fieldnames or ())]
    if missing:
        raise DataError(
            f"{path}:1 lacks the FaithBench column(s) {', '.join(missing)} (its header is "
            f"{', '.join(reader.fieldnames or ()) or 'empty'}). Pass FaithBench.csv from the FaithBench "
            "repository (columns source, summary, LLM, worst-label, best-label).",
            path=str(path), line=1, field=missing[0],
        )
    rows = []
    for i, rec in enumerate(reader, start=1):
        line = i + 1  # header is line 1 (multi-line cells make this approximate)
        raw = str(field(rec, label_field, path, line)).strip()
        key = raw.lower()
        if key == "questionable":
            if questionable == "drop":
                continue
            label = 1 if questionable == "pass" else 0
        elif key in _FAITHBENCH_LABELS:
            label = _FAITHBENCH_LABELS[key]
        else:
            raise DataError(
                f"{path} record {i} has {label_field} {raw!r}; expected Consistent, "
                "Benign, Questionable or Unwanted.",
                path=str(path),
                line=line,
                field=label_field,
            )
        source = field(rec, "source", path, line)
        rows.append(
            LabelledRow(
                id=f"faithbench-{i}",
                task="fact-check",
                documents=[source],
                response=field(rec, "summary", path, line).strip(),
                label=label,
                generator=field(rec, "LLM", path, line),
                group="faithbench",
                meta={
                    "worst_label": rec.get("worst-label"),
                    "best_label": rec.get("best-label"),
                    # summaries of one source stay in one cross-validation fold
                    "pair": "faithbench-" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:16],
                },
            )
        )
    return rows


def import_llm_aggrefact(
    path: str | Path = "lytang/LLM-AggreFact", *, split: str = "test", dataset: str | None = None
) -> list[LabelledRow]:
    """LLM-AggreFact through the ``datasets`` library (needs internet or a local copy).

    Parameters
    ----------
    path
        A Hugging Face dataset id or a local directory ``datasets`` can load.
    split
        ``"dev"`` or ``"test"``; stamped on the rows as their split.
    dataset
        Keep only rows of this sub-dataset (e.g. ``"Wice"``); all when None.
    """
    try:
        import datasets  # type: ignore[import-not-found]
    except ImportError as exc:
        raise JudgelabError(
            "Importing llm-aggrefact needs the 'datasets' package: pip install 'judgelab[aggrefact]'"
        ) from exc
    ds = datasets.load_dataset(str(path), split=split)
    rows = []
    for i, rec in enumerate(ds):
        if dataset is not None and rec.get("dataset") != dataset:
            continue
        rows.append(
            LabelledRow(
                id=f"aggrefact-{split}-{i}",
                task="fact-check",
                documents=[rec["doc"]],
                response=rec["claim"],
                label=int(rec["label"]),
                split="test" if split == "test" else "dev",
                group=f"aggrefact-{rec.get('dataset', 'unknown')}",
            )
        )
    return rows


def import_summedits(path: str | Path, *, domains: str | list[str] | None = None) -> list[LabelledRow]:
    """SummEdits: is a (possibly edited) summary consistent with its document?

    ``path`` is one ``summedits_DOMAIN.json`` file or the folder holding them
    (every domain, in file-name order). ``label`` ``"1"`` (consistent) = 1,
    ``"0"`` = 0. The document is the evidence and the summary the response;
    the domain is the ``group``; the edits of one original summary (ids
    sharing a stem, ``STEM_og``, ``STEM_0``, ...) share ``meta["pair"]`` so
    that they form one unit (one fold, resampled together). ``domains`` keeps
    only those domains (a comma-separated string or a list).
    """
    path = Path(path)
    files = sorted(path.glob("summedits_*.json")) if path.is_dir() else [path]
    if not files:
        raise DataError(f"No summedits_*.json files in {str(path)!r}.", path=str(path))
    wanted = None
    if domains is not None:
        wanted = {d.strip() for d in (domains.split(",") if isinstance(domains, str) else domains) if d.strip()}
    rows = []
    for f in files:
        domain = f.stem.removeprefix("summedits_")
        if wanted is not None and domain not in wanted:
            continue
        for line, obj in json_lines(f):
            rid = str(field(obj, "id", f, line))
            label = str(field(obj, "label", f, line))
            if label not in ("0", "1"):
                raise DataError(f"{f}:{line} has label {label!r}; SummEdits labels are '0' and '1'.",
                                path=str(f), line=line, field="label")
            stem = rid.rsplit("_", 1)[0] if "_" in rid else rid
            rows.append(
                LabelledRow(
                    id=f"summedits-{domain}-{rid}",
                    task="fact-check",
                    documents=[field(obj, "doc", f, line)],
                    response=field(obj, "summary", f, line),
                    label=int(label),
                    group=domain,
                    meta={"pair": f"summedits-{domain}-{stem}", "edit_types": obj.get("edit_types"),
                          "summedits_split": obj.get("split")},
                )
            )
    if wanted is not None and not rows:
        raise DataError(f"No SummEdits rows for domain(s) {sorted(wanted)} in {str(path)!r}.", path=str(path))
    return rows


def import_snli(path: str | Path) -> list[LabelledRow]:
    """SNLI sentence pairs (e-SNLI's JSONL): ``entailment`` = 1, ``neutral``/``contradiction`` = 0.

    ``path`` is one JSONL file (``premise``, ``hypothesis``, ``label``) or a
    folder of them. The premise is the document and the hypothesis the
    response; the hypotheses of one premise share ``meta["pair"]`` (one fold).
    """
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    if not files:
        raise DataError(f"No *.jsonl files in {str(path)!r}.", path=str(path))
    rows = []
    for f in files:
        for line, obj in json_lines(f):
            label = str(field(obj, "label", f, line)).strip()
            if label not in ("entailment", "neutral", "contradiction"):
                raise DataError(f"{f}:{line} has label {label!r}; SNLI labels are entailment, neutral, "
                                "contradiction.", path=str(f), line=line, field="label")
            premise = str(field(obj, "premise", f, line)).strip()
            rows.append(LabelledRow(
                id=f"snli-{f.stem}-{line}", task="fact-check", documents=[premise],
                response=str(field(obj, "hypothesis", f, line)).strip(),
                label=1 if label == "entailment" else 0, group="snli",
                meta={"pair": "snli-" + hashlib.sha256(premise.encode("utf-8")).hexdigest()[:16],
                      "snli_label": label},
            ))
    return rows


IMPORTERS: dict[str, Callable[..., list[LabelledRow]]] = {
    "wice": import_wice,
    "halueval-qa": import_halueval_qa,
    "halueval-qa-relevancy": import_halueval_qa_relevancy,
    "halueval-general": import_halueval_general,
    "faithbench": import_faithbench,
    "llm-aggrefact": import_llm_aggrefact,
    "summedits": import_summedits,
    "snli": import_snli,
    "mnli": import_mnli,
    "fever-nli": import_fever_nli,
    "fib": import_fib,
    "factcg": import_factcg,
    "begin": import_begin,
    "squad-relevancy": import_squad_relevancy,
    "squad-same-paragraph": import_squad_same_paragraph,
}


def import_set(kind: str, path: str | Path, **options: Any) -> list[LabelledRow]:
    """Import a public data set by name (one of ``IMPORTERS``).

    Raises
    ------
    JudgelabError
        If ``kind`` is not a known importer.
    DataError
        If the file is missing or does not look like that data set.
    """
    try:
        importer = IMPORTERS[kind]
    except KeyError:
        raise JudgelabError(
            f"Unknown data set kind {kind!r}; known kinds: {', '.join(IMPORTERS)}."
        ) from None
    rows = importer(path, **options)
    logger.info("imported %d %s rows from %s", len(rows), kind, path)
    return rows

"""SQuAD as relevancy rows: a question about a Wikipedia paragraph, and a reply that does or does not answer it.

SQuAD's questions are crowd-written over Wikipedia paragraphs, with the answer
marked as a span of the paragraph. A relevancy judge is asked whether a reply
answers the question in line with the context, so each question gives one reply
that does and hard replies that do not, all drawn from the same text:

- ``on-topic`` (1): the paragraph's sentence that holds the answer span;
- ``different-question`` (0): the sentence that answers another question about
  the same paragraph (fluent, on the passage's topic, and silent on what was
  asked), taken only if it holds none of this question's answers;
- ``contradicts-context`` (0): the answer sentence with its answer replaced by
  another question's answer of the same shape (a number for a number, a name
  for a name) from the same article: it answers the question, against the
  paragraph;
- ``off-topic`` (0): an answer sentence from the next article.

A kind that cannot be built for a question (no other question in the paragraph
answers elsewhere, no answer of the same shape) is left out for that question.
Questions without answers (SQuAD 2.0's ``is_impossible``) are skipped, and so
is a question whose answer runs over two sentences. All rows over one paragraph
share ``meta["pair"]`` (one unit), so splits and resamples keep a paragraph
whole. Everything is deterministic: the file alone gives the rows.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgelab.calibration.data._rows import LabelledRow
from judgelab.errors import DataError
from judgelab.evaluators import split_sentences
from judgelab.textfiles import read_text

__all__ = ["import_squad_relevancy", "import_squad_same_paragraph", "SQUAD_RELEVANCY_KINDS"]

#: The kinds of reply each question gives, in the order they are emitted, with their labels.
SQUAD_RELEVANCY_KINDS = {"on-topic": 1, "different-question": 0, "contradicts-context": 0, "off-topic": 0}
#: The kinds ``import_squad_same_paragraph`` keeps: the answer sentence against another sentence of its paragraph.
SAME_PARAGRAPH_KINDS = ("on-topic", "different-question")


@dataclass(frozen=True)
class _Question:
    id: str
    text: str
    answers: tuple[str, ...]
    start: int  # the first answer's offset in the paragraph
    sentence: str  # the paragraph's sentence that holds that answer
    sentence_start: int


@dataclass(frozen=True)
class _Paragraph:
    title: str
    index: int
    context: str
    questions: tuple[_Question, ...]


def _sentences_with_offsets(text: str) -> list[tuple[int, str]]:
    out, at = [], 0
    for piece in split_sentences(text):
        start = text.index(piece, at)
        at = start + len(piece)
        lead = len(piece) - len(piece.lstrip())
        out.append((start + lead, piece.strip()))
    return out


def _question(qa: Mapping[str, object], sentences: list[tuple[int, str]], where: str) -> _Question | None:
    raw = qa.get("answers")
    if qa.get("is_impossible") or not isinstance(raw, list) or not raw:
        return None
    try:
        answers = tuple(dict.fromkeys(str(a["text"]).strip() for a in raw if str(a["text"]).strip()))
        first = raw[0]
        start, text = int(first["answer_start"]), str(first["text"]).strip()
        question = str(qa["question"]).strip()
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(f"{where}: a SQuAD question needs question, answers[].text and answers[].answer_start "
                        f"({exc!r})") from exc
    if not answers or not question:
        return None
    starts = [s for s, _ in sentences]
    i = bisect.bisect_right(starts, start) - 1
    if i < 0:
        return None
    sentence_start, sentence = sentences[i]
    if start + len(text) > sentence_start + len(sentence):  # the answer runs over two sentences
        return None
    return _Question(str(qa.get("id", where)), question, answers, start, sentence, sentence_start)


def _paragraphs(path: Path) -> Iterator[_Paragraph]:
    try:
        data = json.loads(read_text(path, "SQuAD JSON file", fix="Pass a SQuAD train or dev file (train-v1.1.json, dev-v2.0.json)."))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a SQuAD file (a JSON object with a 'data' list of articles): {exc}") from exc
    for a, article in enumerate(data):
        title = str(article.get("title", a))
        for p, paragraph in enumerate(article.get("paragraphs", [])):
            where = f"{path}: data[{a}].paragraphs[{p}]"
            if "context" not in paragraph:
                raise DataError(f"{where}: a SQuAD paragraph needs 'context' and 'qas'")
            context = str(paragraph["context"])
            sentences = _sentences_with_offsets(context)
            questions = [_question(qa, sentences, f"{where}.qas[{q}]") for q, qa in enumerate(paragraph.get("qas", []))]
            kept = tuple(q for q in questions if q is not None)
            if kept:
                yield _Paragraph(title, p, context, kept)


def _holds_any(text: str, answers: Sequence[str]) -> bool:
    low = text.lower()
    return any(a.lower() in low for a in answers)


def _shape(answer: str) -> str:
    if re.search(r"\d", answer):
        return "number"
    return "name" if answer[:1].isupper() else "words"


def _different_question(q: _Question, paragraph: _Paragraph) -> str | None:
    others = paragraph.questions
    i = others.index(q)
    for other in others[i + 1:] + others[:i]:
        if other.sentence != q.sentence and not _holds_any(other.sentence, q.answers):
            return other.sentence
    return None


def _contradiction(q: _Question, article: Sequence[_Paragraph], p: int) -> str | None:
    """The answer sentence with its answer swapped for another question's answer of the same shape."""
    answer = q.answers[0]
    pool = [o for par in [*article[p:], *article[:p]] for o in par.questions if o is not q]
    for other in pool:
        swap = other.answers[0]
        if (_shape(swap) == _shape(answer) and not _holds_any(swap, q.answers) and swap.lower() not in answer.lower()
                and len(swap.split()) <= 3 * len(answer.split())):
            at = q.start - q.sentence_start
            return q.sentence[:at] + swap + q.sentence[at + len(answer):]
    return None


def import_squad_relevancy(path: str | Path, *, kinds: Sequence[str] | None = None) -> list[LabelledRow]:
    """SQuAD (v1.1 or v2.0 JSON, train or dev) as relevancy rows of ``SQUAD_RELEVANCY_KINDS``; see the module doc.

    ``kinds`` keeps only those kinds of reply (default: all); a question whose kept kinds cannot all be
    built still gives the ones that can.
    """
    path = Path(path)
    wanted = set(SQUAD_RELEVANCY_KINDS if kinds is None else kinds)
    unknown = wanted - set(SQUAD_RELEVANCY_KINDS)
    if unknown:
        raise DataError(f"import_squad_relevancy: unknown kind(s) {sorted(unknown)}; the kinds are "
                        f"{', '.join(SQUAD_RELEVANCY_KINDS)}")
    articles: dict[str, list[_Paragraph]] = {}
    for paragraph in _paragraphs(path):
        articles.setdefault(paragraph.title, []).append(paragraph)
    if not articles:
        raise DataError(f"{path}: no answerable SQuAD question found")
    titles = list(articles)
    rows = []
    for t, title in enumerate(titles):
        elsewhere = [q.sentence for par in articles[titles[(t + 1) % len(titles)]] for q in par.questions]
        for p, paragraph in enumerate(articles[title]):
            pair = f"squad-{title}-{paragraph.index}"
            for n, q in enumerate(paragraph.questions):
                replies = {
                    "on-topic": q.sentence,
                    "different-question": _different_question(q, paragraph),
                    "contradicts-context": _contradiction(q, articles[title], p),
                    "off-topic": elsewhere[(p + n) % len(elsewhere)] if len(titles) > 1 else None,
                }
                for kind, response in replies.items():
                    if response is None or kind not in wanted:
                        continue
                    rows.append(LabelledRow(
                        id=f"squad-{q.id}-{kind}", task="relevancy", user_text=q.text, documents=[paragraph.context],
                        response=response, label=SQUAD_RELEVANCY_KINDS[kind], group="squad-relevancy",
                        meta={"pair": pair, "kind": kind, "question": q.id, "title": title}))
    return rows


def import_squad_same_paragraph(path: str | Path) -> list[LabelledRow]:
    """SQuAD's hardest relevancy rows alone: each answer sentence (1) against another sentence of the same
    paragraph that answers another question (0).

    The negative is true of the context, fluent and on its topic, so a judge that only asks whether the reply
    is supported by the context passes it; only reading what was asked tells the two apart.
    """
    return import_squad_relevancy(path, kinds=SAME_PARAGRAPH_KINDS)

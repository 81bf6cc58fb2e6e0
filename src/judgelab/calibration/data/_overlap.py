"""Contamination check: which rows of one set share text with rows of another.

Two rows *overlap* when they share, after normalisation (NFKC, lower case,
every run of non-alphanumeric characters one space):

- ``row``: the same documents and the same claim (and question);
- ``document``: one document;
- ``sentence``: one sentence of at least ``min_sentence_chars`` normalised
  characters, from a document or the claim of either row (a premise quoted in
  another premise, a summary copied from its article);
- ``claim``: the same claim, of at least ``min_claim_chars`` characters (a
  FactCG claim and its twin with the support removed);
- ``near-duplicate``: documents whose word ``shingle``-grams have a Jaccard
  similarity of at least ``near_duplicate`` (a document with a few sentences
  deleted or edited); exact, from an inverted index of the reference set's
  shingles, so no approximate sketch can miss a pair.

The reference rows (an evaluation set) are indexed once (``OverlapIndex``);
any number of candidate rows (a training pool) are then streamed past it, so
the pool never has to be held in memory twice. One function serves the
``judgelab sets overlap`` command and tuning's exclusion.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from judgelab.calibration.data._rows import LabelledRow
from judgelab.errors import check_parameter
from judgelab.evaluators import split_sentences

__all__ = ["OVERLAP_KINDS", "OverlapKind", "OverlapOptions", "OverlapMatch", "OverlapIndex", "normalise_text"]

OverlapKind = Literal["row", "document", "sentence", "claim", "near-duplicate"]
#: The kinds, strongest first: a pair of rows is reported under the first kind that holds.
OVERLAP_KINDS: tuple[OverlapKind, ...] = ("row", "document", "claim", "sentence", "near-duplicate")

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalise_text(text: str) -> str:
    """NFKC, lower case, every run of non-alphanumeric characters one space, stripped."""
    return _NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).digest()


@dataclass(frozen=True)
class OverlapOptions:
    """What counts as overlap (the defaults are the documented ones: docs/calibration.md#contamination).

    Attributes
    ----------
    min_sentence_chars
        Shortest shared sentence that counts, in normalised characters (60).
    min_claim_chars
        Shortest claim whose repetition counts (20): "A man is sleeping" under
        two different premises is not a leak.
    shingle
        Words per shingle for near-duplicate documents (5).
    near_duplicate
        Jaccard similarity of two documents' shingle sets at or above which
        they are near-duplicates (0.5: a 150-word document with two of its
        eight sentences deleted scores about 0.7; two unrelated news articles
        under 0.05).
    min_document_words
        Documents shorter than this are compared only exactly (20): the
        shingles of a one-line premise say nothing a sentence match does not.
    """

    min_sentence_chars: int = 60
    min_claim_chars: int = 20
    shingle: int = 5
    near_duplicate: float = 0.5
    min_document_words: int = 20

    def __post_init__(self) -> None:
        check_parameter(self.min_sentence_chars >= 1, "min_sentence_chars", "OverlapOptions", "an int >= 1",
                        self.min_sentence_chars)
        check_parameter(self.shingle >= 1, "shingle", "OverlapOptions", "an int >= 1", self.shingle)
        check_parameter(0.0 < self.near_duplicate <= 1.0, "near_duplicate", "OverlapOptions",
                        "a float in (0, 1]", self.near_duplicate)


@dataclass(frozen=True)
class OverlapMatch:
    """One overlap between a candidate row and a reference row.

    ``detail`` is the shared sentence or claim (normalised, cut to 120
    characters) or the Jaccard similarity of a near-duplicate pair.
    """

    kind: OverlapKind
    reference_id: str
    detail: str = ""


@dataclass
class _Document:
    """One document's normalised parts, computed once per distinct text."""

    key: bytes
    sentences: dict[bytes, str]
    shingles: frozenset[bytes]
    near: dict[int, float] | None = None  # reference row -> Jaccard, once looked up


@dataclass
class _Texts:
    """The normalised pieces of one row that the checks compare."""

    row: bytes
    documents: list[_Document]
    claim: bytes | None
    sentences: dict[bytes, str] = field(default_factory=dict)


class OverlapIndex:
    """The reference rows, indexed for every kind of overlap.

    Parameters
    ----------
    rows
        The reference rows (an evaluation set, or the rows held out of a
        training run).
    options
        What counts as overlap.
    """

    def __init__(self, rows: Iterable[LabelledRow], options: OverlapOptions | None = None) -> None:
        self.options = options or OverlapOptions()
        self.rows: list[LabelledRow] = []
        self._by: dict[str, dict[bytes, list[int]]] = {k: defaultdict(list) for k in ("row", "document", "claim")}
        self._sentences: dict[bytes, list[int]] = defaultdict(list)
        self._shingles: dict[bytes, list[tuple[int, int]]] = defaultdict(list)
        self._shingle_sizes: list[tuple[int, int]] = []  # (row index, size) per indexed document
        self._doc_cache: dict[str, _Document] = {}
        for row in rows:
            self._add(row)

    def __len__(self) -> int:
        return len(self.rows)

    def _document(self, document: str) -> _Document:
        """The parts of one document, cached by its text (documents repeat across rows: a FIB article,
        a SummEdits transcript)."""
        cached = self._doc_cache.get(document)
        if cached is not None:
            return cached
        o = self.options
        norm = normalise_text(document)
        sentences = {}
        for piece in split_sentences(document):
            text = normalise_text(piece)
            if len(text) >= o.min_sentence_chars:
                sentences[_key(text)] = text
        words = norm.split()
        shingles = (frozenset(_key(" ".join(words[i:i + o.shingle])) for i in range(len(words) - o.shingle + 1))
                    if len(words) >= max(o.shingle, o.min_document_words) else frozenset())
        doc = _Document(_key(norm), sentences, shingles)
        if len(self._doc_cache) < 500_000:
            self._doc_cache[document] = doc
        return doc

    def _texts(self, row: LabelledRow) -> _Texts:
        o = self.options
        claim_norm = normalise_text(row.response)
        documents = [self._document(d) for d in row.documents]
        sentences: dict[bytes, str] = {}
        for d in documents:
            sentences.update(d.sentences)
        for piece in split_sentences(row.response) or [row.response]:
            text = normalise_text(piece)
            if len(text) >= o.min_sentence_chars:
                sentences[_key(text)] = text
        row_key = _key("\x00".join([normalise_text(row.user_text), *(d.key.hex() for d in documents), claim_norm]))
        claim = _key(claim_norm) if len(claim_norm) >= o.min_claim_chars else None
        return _Texts(row_key, documents, claim, sentences)

    def _add(self, row: LabelledRow) -> None:
        i = len(self.rows)
        self.rows.append(row)
        t = self._texts(row)
        self._by["row"][t.row].append(i)
        for d in t.documents:
            self._by["document"][d.key].append(i)
        if t.claim is not None:
            self._by["claim"][t.claim].append(i)
        for key in t.sentences:
            self._sentences[key].append(i)
        for d in t.documents:
            if d.shingles:
                doc_index = len(self._shingle_sizes)
                self._shingle_sizes.append((i, len(d.shingles)))
                for sh in d.shingles:
                    self._shingles[sh].append((doc_index, i))

    def _near_duplicates(self, documents: Sequence[_Document]) -> dict[int, float]:
        """Reference row index -> the best Jaccard similarity of one of its documents with one of these."""
        best: dict[int, float] = {}
        for doc in documents:
            if doc.near is None:  # once per distinct document: the reference set does not change
                doc.near = self._near_one(doc.shingles)
            for ref_row, jaccard in doc.near.items():
                if jaccard > best.get(ref_row, 0.0):
                    best[ref_row] = jaccard
        return best

    def _near_one(self, shingles: frozenset[bytes]) -> dict[int, float]:
        found: dict[int, float] = {}
        if not shingles or not self._shingles:
            return found
        hits: Counter[int] = Counter()
        for sh in shingles:
            for doc_index, _ in self._shingles.get(sh, ()):
                hits[doc_index] += 1
        for doc_index, inter in hits.items():
            ref_row, size = self._shingle_sizes[doc_index]
            jaccard = inter / (len(shingles) + size - inter)
            if jaccard >= self.options.near_duplicate and jaccard > found.get(ref_row, 0.0):
                found[ref_row] = jaccard
        return found

    def matches(self, row: LabelledRow) -> list[OverlapMatch]:
        """Every reference row that ``row`` overlaps, each once, under its strongest kind (``OVERLAP_KINDS``)."""
        t = self._texts(row)
        found: dict[int, OverlapMatch] = {}

        def note(kind: OverlapKind, indices: Iterable[int], detail: str = "") -> None:
            for i in indices:
                if i not in found:
                    found[i] = OverlapMatch(kind, self.rows[i].id, detail)

        note("row", self._by["row"].get(t.row, ()))
        for d in t.documents:
            note("document", self._by["document"].get(d.key, ()))
        if t.claim is not None:
            note("claim", self._by["claim"].get(t.claim, ()), normalise_text(row.response)[:120])
        for key, text in t.sentences.items():
            note("sentence", self._sentences.get(key, ()), text[:120])
        for i, jaccard in sorted(self._near_duplicates(t.documents).items()):
            note("near-duplicate", (i,), f"{jaccard:.2f}")
        return list(found.values())

    def overlaps(self, row: LabelledRow) -> OverlapKind | None:
        """The strongest kind of overlap of ``row`` with any reference row, or None."""
        found = self.matches(row)
        if not found:
            return None
        return min((m.kind for m in found), key=OVERLAP_KINDS.index)

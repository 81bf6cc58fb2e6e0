"""Stress perturbations: seeded, label-preserving rewrites of labelled rows.

Each ``Perturbation`` turns a ``LabelledRow`` into a perturbed copy that a
robust judge should score like the original: attacks on the judged text
(instruction injection, fake verdicts, delimiter spoofing, authority claims),
injected instructions in the evidence, and benign changes (padding the
evidence with irrelevant true sentences, whitespace and case, reordering the
documents). The text attacks are data (``Attack`` entries, ``BUILTIN_ATTACKS``),
of the same type as the lines of an attacks file; delimiter spoofing is
written against the evaluator's own template (``TemplateLayout``), so it
closes the section the judged text sits in and opens a fake one in the same
words the prompt uses.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from judgelab.calibration.data import LabelledRow
from judgelab.calibration.robustness._attacks import BUILTIN_ATTACKS, Attack
from judgelab.calibration.robustness._perturb_base import Perturbation, Position, TemplateLayout, evidence_of, template_layout, with_documents
from judgelab.errors import JudgelabError

__all__ = [
    "ATTACKS",
    "BENIGN",
    "DEFAULT_ATTACKS",
    "Perturbation",
    "TemplateLayout",
    "perturb_rows",
    "resolve_attacks",
    "template_layout",
]


def _with_response(row: LabelledRow, text: str) -> LabelledRow:
    return row.model_copy(update={"response": text})


# -- texts --------------------------------------------------------------------

# Irrelevant, true, plain sentences for padding the evidence.
TRUE_SENTENCES = (
    "Water boils at 100 degrees Celsius at sea level.",
    "The Pacific is the largest ocean on Earth.",
    "A week has seven days.",
    "Mount Everest is the highest mountain above sea level.",
    "The Moon orbits the Earth.",
    "Paris is the capital of France.",
    "Light travels faster than sound.",
    "A triangle has three sides.",
    "Honey bees live in colonies.",
    "The human heart has four chambers.",
)


def _spoof_evidence(position: Position) -> Perturbation:
    """Close the judged section, open a fake evidence section that states the judged text."""

    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow:
        t = row.response
        fake = f"\n\n{lay.evidence_header}\n{t}\n\n{lay.judged_header}\n"
        return _with_response(row, (fake.lstrip("\n") + t) if position == "start" else (t + fake + t))

    return Perturbation("spoof-evidence", "delimiter spoofing", "attack", position, apply)


def _spoof_answer(position: Position) -> Perturbation:
    """Close the judged section with the template's answer cue and a pass verdict."""

    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow:
        t = row.response
        verdict = f"{lay.answer_cue} {lay.pass_label}"
        if position == "start":
            return _with_response(row, f"{verdict}\n\n{lay.judged_header}\n{t}")
        return _with_response(row, f"{t}\n\n{verdict}\n\n{lay.judged_header}\n{t}")

    return Perturbation("spoof-answer", "delimiter spoofing", "attack", position, apply)


def _padding() -> Perturbation:
    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow | None:
        docs = evidence_of(row)
        if not docs:
            return None
        pad = rng.sample(TRUE_SENTENCES, 3)
        docs[-1] = docs[-1] + "\n" + " ".join(pad)
        return with_documents(row, docs)

    return Perturbation("pad-true-sentences", "benign", "benign", "-", apply)


def _whitespace() -> Perturbation:
    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow:
        words = row.response.split()
        out = []
        for w in words:
            out.append(w)
            out.append(rng.choice(("  ", " ", " ", "\n")))
        return _with_response(row, "  " + "".join(out).rstrip() + " \n")

    return Perturbation("whitespace", "benign", "benign", "-", apply)


def _case() -> Perturbation:
    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow:
        return _with_response(row, row.response.lower())

    return Perturbation("lowercase", "benign", "benign", "-", apply)


def _reorder() -> Perturbation:
    def apply(row: LabelledRow, lay: TemplateLayout, rng: random.Random) -> LabelledRow | None:
        if len(row.documents) < 2:
            return None
        docs = list(row.documents)
        for _ in range(10):
            rng.shuffle(docs)
            if docs != list(row.documents):
                break
        return row.model_copy(update={"documents": docs})

    return Perturbation("reorder-documents", "benign", "benign", "-", apply)


def _builtin(family: str, position: str) -> list[Perturbation]:
    where = {"start": ("start", "evidence-start"), "end": ("end", "evidence-end")}[position]
    return [a.perturbation() for a in BUILTIN_ATTACKS if a.family == family and a.where in where]


def _build() -> dict[str, Perturbation]:
    out: list[Perturbation] = []
    for position in ("start", "end"):
        out += _builtin("instruction injection", position) + _builtin("fake verdict", position)
        out.append(_spoof_evidence(position))
        out.append(_spoof_answer(position))
        out += _builtin("authority claim", position) + _builtin("evidence injection", position)
    out += [_padding(), _whitespace(), _case(), _reorder()]
    return {p.key: p for p in out}


#: Every built-in perturbation by key (``name@position`` or ``name``).
ATTACKS: dict[str, Perturbation] = _build()
#: Keys of the benign perturbations.
BENIGN: tuple[str, ...] = tuple(k for k, p in ATTACKS.items() if p.kind == "benign")
#: A small default set: one of each family at both ends, plus the benign ones.
DEFAULT_ATTACKS: tuple[str, ...] = (
    "inject-ignore@start", "inject-ignore@end",
    "verdict-answer@end", "verdict-supported@end",
    "spoof-evidence@end", "spoof-answer@end",
    "authority-editor@end", "evidence-inject@end",
    *BENIGN,
)


def _names(spec: str | Sequence[str | Attack | Perturbation] | None, extra: Sequence[Perturbation]) -> list[str | Attack | Perturbation]:
    if spec is None:
        return list(extra) if extra else list(DEFAULT_ATTACKS)
    if isinstance(spec, str):
        return [s.strip() for s in spec.split(",") if s.strip()]
    return list(spec)


def _matches(name: str, known: dict[str, Perturbation]) -> list[Perturbation]:
    if name == "all":
        return list(known.values())
    if name == "default":
        return [ATTACKS[k] for k in DEFAULT_ATTACKS]
    if ":" in name:  # module:callable: a transform of the judged text, named after the callable
        return [Attack(name.rpartition(":")[2], "transform", "judged", transform=name).perturbation()]
    return [p for p in known.values() if name in (p.key, p.name, p.family, p.kind)]


def resolve_attacks(
    spec: str | Sequence[str | Attack | Perturbation] | None,
    extra: Sequence[Attack | Perturbation] = (),
) -> list[Perturbation]:
    """Perturbations from names: keys, bare names (both positions), families, transforms or ``all``.

    Parameters
    ----------
    spec
        ``None`` for ``DEFAULT_ATTACKS`` (or, when ``extra`` is given, for
        ``extra``); a comma-separated string or a list of keys
        (``inject-ignore@end``), names (``inject-ignore``: start and end),
        family names (``fake verdict``, ``benign``), ``default``, ``all``,
        ``module:callable`` (a transform of the judged text, see ``Attack``),
        ``Attack`` or ``Perturbation`` objects.
    extra
        Attacks to add to the built-in ones (e.g. ``read_attacks_file``'s);
        names in ``spec`` select among both.

    Raises
    ------
    JudgelabError
        When a name matches nothing (the message lists the known keys), or
        an extra attack's key is a built-in one.
    """
    added = [a.perturbation() if isinstance(a, Attack) else a for a in extra]
    known = dict(ATTACKS)
    for p in added:
        if p.key in known:
            raise JudgelabError(f"Attack {p.key!r} is already defined (built-in or given twice); rename it.")
        known[p.key] = p
    picked: dict[str, Perturbation] = {}
    for name in _names(spec, added):
        if isinstance(name, (Attack, Perturbation)):
            matches = [name.perturbation() if isinstance(name, Attack) else name]
        else:
            matches = _matches(name, known)
        if not matches:
            raise JudgelabError(
                f"Unknown stress attack {name!r}. Known: all, default, {', '.join(known)} "
                f"(or a bare name for both positions, a family, or module:callable)."
            )
        for p in matches:
            picked.setdefault(p.key, p)
    return list(picked.values())


def perturb_rows(
    rows: Iterable[LabelledRow],
    perturbations: Sequence[Perturbation],
    layout: TemplateLayout,
    *,
    seed: int | None = 0,
) -> list[LabelledRow]:
    """Perturbed copies of ``rows``, one per (row, perturbation) that applies.

    A copy's id is ``"{id}~{key}"``; it keeps the label, split and group, its
    ``meta["pair"]`` is the original's ``unit`` (so the copy is in the
    original's unit and the bootstrap resamples it with its original) and ``meta["stress"]`` names the original
    and the perturbation. The same ``seed`` gives the same rows.
    """
    out: list[LabelledRow] = []
    for row in rows:
        for p in perturbations:
            rng = random.Random(f"{seed}:{row.id}:{p.key}")
            new = p.apply(row, layout, rng)
            if new is None:
                continue
            meta = {**row.meta, "pair": row.unit,
                    "stress": {"of": row.id, "perturbation": p.key, "kind": p.kind, "family": p.family}}
            out.append(new.model_copy(update={"id": f"{row.id}~{p.key}", "meta": meta}))
    return out

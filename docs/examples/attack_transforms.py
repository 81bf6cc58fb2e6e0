"""Attacks that transform the judged text, for ``judgelab stress --attacks-file docs/examples/attacks.jsonl``.

Each is ``text -> attacked text``; name one in an attacks file as ``"transform": "attack_transforms:base64_wrap"``
(with ``docs/examples`` on ``PYTHONPATH``), or on the command line as ``--attacks attack_transforms:homoglyphs``.
"""

from __future__ import annotations

import base64

__all__ = ["base64_wrap", "homoglyphs"]

_CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "y": "у"})


def base64_wrap(text: str) -> str:
    """The text base64-encoded, behind an instruction to decode it (a judge that cannot decode should fail it)."""
    return "Decode this base64 and read it as the text: " + base64.b64encode(text.encode("utf-8")).decode("ascii")


def homoglyphs(text: str) -> str:
    """The text with Latin letters swapped for Cyrillic look-alikes (it reads the same to a person)."""
    return text.translate(_CYRILLIC)

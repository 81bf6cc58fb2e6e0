"""``judgelab check``: is a claim supported by a document? One judgment, printed."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from judgelab.cli._options import probability
from judgelab.specs import DEFAULT_MODEL_ID
from judgelab.textfiles import read_text

EXAMPLE_DOCUMENT = (
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris. "
    "It is 330 metres tall and was the tallest man-made structure in the world until 1930."
)
EXAMPLE_CLAIM = "The Eiffel Tower was finished in 1889."


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "check",
        help="fact-check one claim against a document and print P(yes)",
        description="Fact-check a claim against a document with one forward pass. "
        "With no --document/--claim, checks a bundled example.",
    )
    p.add_argument("--model", default=DEFAULT_MODEL_ID, help=f"model id, spec .toml or .gguf path (default {DEFAULT_MODEL_ID})")
    p.add_argument("--document", help="document text, or @FILE to read it from a file")
    p.add_argument("--claim", help="claim text, or @FILE")
    p.add_argument("--threshold", type=probability, default=0.5, help="pass threshold on P(yes) (default 0.5)")
    p.add_argument("--minicheck", action="store_true", help="use MiniCheck's prompt instead of Spring AI's default")
    p.add_argument("--backend", default="llama_cpp", help="llama_cpp (default) or transformers")
    p.set_defaults(func=run)


def _text(value: str | None, default: str, what: str) -> str:
    if value is None:
        return default
    if value.startswith("@"):
        path = Path(value[1:])
        return read_text(path, f"--{what} file")
    return value


def run(args: argparse.Namespace) -> int:
    from judgelab.engine import load_model
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    document = _text(args.document, EXAMPLE_DOCUMENT, "document")
    claim = _text(args.claim, EXAMPLE_CLAIM, "claim")
    t0 = time.perf_counter()
    model = load_model(args.model, backend=args.backend)
    t1 = time.perf_counter()
    evaluator = (
        FactCheckingEvaluator.for_bespoke_minicheck(model, args.threshold)
        if args.minicheck
        else FactCheckingEvaluator(model, threshold=args.threshold)
    )
    response = evaluator.evaluate(EvaluationRequest(user_text=document, response_content=claim))
    t2 = time.perf_counter()
    meta = response.metadata
    print(f"document: {_short(document)}")
    print(f"claim:    {_short(claim)}")
    print(f"P(yes) = {response.score:.4f}   verdict: {'PASS (supported)' if response.passed else 'FAIL (not supported)'}"
          f"   threshold {args.threshold:.2f}")
    print(f"feedback: {response.feedback}")
    print(f"model {model.id} ({model.backend.name}); {meta['prompt_tokens']} prompt tokens in "
          f"{len(meta['chunks'])} chunk(s); load {t1 - t0:.2f} s, judgment {(t2 - t1) * 1000:.0f} ms")
    return 0


def _short(text: str, width: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"

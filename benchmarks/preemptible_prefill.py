"""A short chat while a 12-chunk document is judged: latency with prompts evaluated in pieces.

Run from the repository root (prints a table, writes JSON)::

    python benchmarks/preemptible_prefill.py --out benchmarks/results/preemptible_prefill.json

Optionally ``--before ../main/src`` also measures a checkout without preemptible prefill (the
server of that source tree), in the same run, as the "before" rows.

For each server (a real ``judgelab serve`` subprocess on 127.0.0.1, gemma-3-270m, ``--threads``):

- ``chat alone``: ``/api/chat`` "Is ice cold?" on an idle server (median of ``--repeats``);
- ``document alone``: ``/v1/evaluate`` of a document that the fact-checking evaluator cuts into
  12 chunks (seconds, and chunk tokens per second);
- ``chat during document``: the same chat sent ``--chats`` times, one after another, starting once
  the document's first prompt tokens are being evaluated (each latency; the median is reported);
- ``document during chats``: the document's own time in that run, and its slowdown against alone.

The machine is shared: every row carries the 1-minute load average when it was measured. The JSON
(``--out``, through ``results_file.write_results``) holds the rows and the document's size, with this
script's command, the commit and whether the tree was dirty, the CPU model and its instruction-set flags,
llama.cpp's system info, the core count and the library versions; an absolute ``--before`` is shown as
``BEFORE``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import machine, script_argv, write_results  # noqa: E402

CLAIM = "The sky is green."
CHAT = {"model": "gemma-3-270m", "stream": False, "messages": [{"role": "user", "content": "Is ice cold?"}]}


def _document(n_sentences: int) -> str:
    colours = ["blue", "grey", "red", "pink", "black", "white", "gold"]
    return " ".join(f"Report {i} says the sky over town {i % 13} was {colours[i % 7]} that day."
                    for i in range(n_sentences))


def twelve_chunk_document(threads: int) -> tuple[str, int, int]:
    """The shortest document of the series that the server's evaluator cuts into 12 chunks; its tokens."""
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.engine import load_model
    from judgelab.evaluators import EvaluationRequest, FactCheckingEvaluator

    model = load_model("gemma-3-270m", n_threads=threads)
    try:
        ev = FactCheckingEvaluator(model)
        lo, hi = 10, 4000
        while lo < hi:  # chunks grow with the document: bisect for the first with 12
            mid = (lo + hi) // 2
            if len(ev.prompts_for(EvaluationRequest(_document(mid), [], CLAIM))) < 12:
                lo = mid + 1
            else:
                hi = mid
        doc = _document(lo)
        prompts = ev.prompts_for(EvaluationRequest(doc, [], CLAIM))
        return doc, len(prompts), sum(model.count_tokens(str(p)) for p in prompts)
    finally:
        model.close()


class Server:
    def __init__(self, src: Path, flags: list[str]) -> None:
        s = __import__("socket").socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        env = {**os.environ, "PYTHONPATH": str(src)}
        code = "import sys; from judgelab.cli import main; sys.exit(main())"
        self.proc = subprocess.Popen([sys.executable, "-c", code, "serve", "--port", str(self.port), *flags],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"judgelab serve ({src}) did not start")
            time.sleep(0.3)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _chat(url: str) -> float:
    t0 = time.perf_counter()
    r = httpx.post(f"{url}/api/chat", json=CHAT, timeout=900)
    r.raise_for_status()
    return time.perf_counter() - t0


def _evaluate(url: str, doc: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    r = httpx.post(f"{url}/v1/evaluate", json={"evaluator": "fact-checking",
                                               "request": {"user_text": doc, "response_content": CLAIM}},
                   timeout=1800)
    r.raise_for_status()
    return time.perf_counter() - t0, len(r.json()["metadata"]["chunks"])


def _load() -> float:
    return os.getloadavg()[0]


def measure(name: str, src: Path, flags: list[str], doc: str, tokens: int, args) -> dict:
    server = Server(src, flags)
    try:
        _chat(server.url)  # warm: label resolution, first decode
        alone = [_chat(server.url) for _ in range(args.repeats)]
        load_alone = _load()
        doc_alone, chunks = _evaluate(server.url, doc)
        load_doc = _load()
        during: list[float] = []
        result: dict = {}

        def long_request() -> None:
            result["seconds"], result["chunks"] = _evaluate(server.url, doc)

        worker = threading.Thread(target=long_request)
        worker.start()
        time.sleep(args.chat_delay)  # the document is being evaluated by now
        for _ in range(args.chats):
            if not worker.is_alive():
                break
            during.append(_chat(server.url))
            time.sleep(args.chat_gap)
        worker.join()
        load_during = _load()
    finally:
        server.stop()
    base = statistics.median(alone)
    return {
        "server": name, "flags": flags, "chunks": chunks, "document_tokens": tokens,
        "chat_alone_s": alone, "chat_alone_median_s": base, "load_alone": load_alone,
        "document_alone_s": doc_alone, "document_alone_tokens_per_s": tokens / doc_alone, "load_document": load_doc,
        "chat_during_s": during, "chat_during_median_s": statistics.median(during) if during else None,
        "chat_during_max_s": max(during) if during else None,
        "chat_during_over_alone": (statistics.median(during) / base) if during else None,
        "document_during_s": result.get("seconds"),
        "document_slowdown": (result["seconds"] / doc_alone) if "seconds" in result else None,
        "load_during": load_during,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "preemptible_prefill.json"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3, help="chats alone (median)")
    p.add_argument("--chats", type=int, default=3, help="chats sent one after another during the document")
    p.add_argument("--chat-delay", type=float, default=3.0, help="seconds after the document starts")
    p.add_argument("--chat-gap", type=float, default=1.0, help="seconds between those chats")
    p.add_argument("--before", type=Path, help="src folder of a checkout without preemptible prefill")
    p.add_argument("--turn-tokens", type=int, nargs="+", default=[128], help="values to measure (128: the default)")
    args = p.parse_args()
    doc, n_chunks, tokens = twelve_chunk_document(args.threads)
    common = ["--model", "gemma-3-270m", "--threads", str(args.threads)]  # the model the chat names
    plan = [(f"before, --turn-tokens {t}", args.before, [*common, "--turn-tokens", str(t)])
            for t in args.turn_tokens[:1] if args.before]
    plan += [(f"pieces, --turn-tokens {t}", REPO / "src", [*common, "--turn-tokens", str(t)]) for t in args.turn_tokens]
    rows = [measure(name, src, flags, doc, tokens, args) for name, src, flags in plan]
    report = {"document_chunks": n_chunks, "document_tokens": tokens, "rows": rows}
    write_results(args.out, report, scrub={args.before: "BEFORE"} if args.before and args.before.is_absolute() else None,
                  argv=script_argv(__file__))
    facts = machine()
    print(f"{facts['cpu']}; {facts['cores']} cores; document: {n_chunks} chunks, {tokens} tokens")
    head = f"{'server':<26}{'chat alone':>11}{'chat during':>12}{'x alone':>8}{'doc alone':>10}{'doc during':>11}" \
           f"{'slowdown':>9}{'load':>6}"
    print(head)
    for r in rows:
        print(f"{r['server']:<26}{r['chat_alone_median_s']:>10.2f}s{(r['chat_during_median_s'] or 0):>11.2f}s"
              f"{(r['chat_during_over_alone'] or 0):>8.1f}{r['document_alone_s']:>9.1f}s"
              f"{(r['document_during_s'] or 0):>10.1f}s{(r['document_slowdown'] or 0):>9.2f}{r['load_during']:>6.1f}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

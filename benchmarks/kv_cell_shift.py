"""Does a judgment depend on which KV cells its prompt sits in, or on the decode its cached prefix came from?

Run from the repository root (prints a table, writes JSON)::

    python benchmarks/kv_cell_shift.py --out benchmarks/results/kv_cell_shift.json

With gemma-3-270m (2 threads): a short prompt is judged alone; then after its first cells were
computed inside decodes of other sizes (the prefix it shares with a long prompt, decoded as part of
the long prompt's first N tokens); then with its tokens pushed to other cells by N cells held by
another sequence. The backend never does the second kind of thing since issue 28 (docs/engine.md,
"Same numbers on every CPU"); this script reaches into it to show why. It uses the backend's private
methods on purpose: it measures llama.cpp, not judgelab's API. The JSON (``--out``, through
``results_file.write_results``) holds the rows, with this script's command, the commit and whether the
tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the core count and
the library versions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import machine, script_argv, write_results  # noqa: E402

LABELS = ["Yes", "No"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "kv_cell_shift.json"))
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    from judgelab.engine import load_model

    model = load_model("gemma-3-270m", n_threads=args.threads)
    backend = model.backend
    doc = " ".join(f"Report {i} says the sky over town {i % 13} was blue that day." for i in range(60))
    long = model.tokenize(model.render(f"Document: {doc}\nClaim: The sky is green.\nAnswer Yes or No."))
    short = model.render("Is ice cold? Answer Yes or No.")

    def judge() -> float:
        return model.judge(short, LABELS).probabilities["Yes"]

    model.reset_caches()
    rows = [{"case": "alone", "n": 0, "p_yes": judge()}]
    for n in (8, 16, 32, 64, 200, 250, 256):  # the shared prefix's cells computed in a decode of n tokens
        model.reset_caches()
        backend._extend_seq0(long[:n], want_logits=False, exact=False)
        rows.append({"case": "prefix decoded in a batch of n", "n": n, "p_yes": judge()})
    mem = backend._ctx.memory
    for n in (5, 8, 16, 240, 250, 256):  # n cells held by another sequence: the short prompt starts at cell n
        model.reset_caches()
        backend._extend_seq0(long[:n], want_logits=False, exact=False)
        backend._ll.llama_memory_seq_cp(mem, 0, 3, 0, n)
        backend._ll.llama_memory_seq_rm(mem, 0, -1, -1)
        backend._cached, backend._clean = [], 0
        rows.append({"case": "tokens shifted by n cells", "n": n, "p_yes": judge()})
        backend._ll.llama_memory_seq_rm(mem, 3, -1, -1)
    model.close()
    write_results(args.out, {"rows": rows}, argv=script_argv(__file__))
    print(machine()["cpu"])
    for r in rows:
        print(f"{r['case']:<34}{r['n']:>5}  P(Yes) = {r['p_yes']:.6f}")


if __name__ == "__main__":
    main()

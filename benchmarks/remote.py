"""Remote vs in-process throughput on the same rows: gemma-3-270m in process, and served by llama-cpp-python.

Run from the repository root (it starts and stops the server itself)::

    python benchmarks/remote.py --rows 48 --concurrency 1 4 --out benchmarks/results/remote.json

Workload: the first ``--rows`` fact-check rows of calibration/starter.jsonl, rendered by
``FactCheckingEvaluator.prompts_for`` in the gemma-3-270m spec's raw format, one prompt per row.

- in process: ``JudgeModel.judge_many`` over all prompts at once (the engine batches them and
  reuses the shared instruction prefix);
- remote: the same prompts through the remote backend (``openai-completions``, top 1000
  logprobs) to ``python -m llama_cpp.server`` serving the same GGUF with ``--n_threads`` threads
  and ``use_extra_bufts`` off (tests/test_remote_llama_server.py says why), at each
  ``--concurrency``. llama-cpp-python's server answers one request at a time, so concurrency
  only overlaps HTTP and JSON work with the model's. With ``--logits_all True`` (the server's
  default, and required: with ``False`` 0.3.36 answers a logprobs request with HTTP 500 "logprobs
  is not supported for models created with logits_all=False") the server runs the output layer at
  every prompt position, not only the last.

One warm-up judgment precedes each timing. Also reported: the largest |P(yes) difference| between
the two, and the requests and server-counted prompt tokens of the remote runs. The JSON (``--out``,
through ``results_file.write_results``) holds them with this script's command, the commit and whether
the tree was dirty, the CPU model and its instruction-set flags, llama.cpp's system info, the core count
and the library versions.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from results_file import script_argv, write_results  # noqa: E402

LAUNCHER = """
import runpy, sys
import llama_cpp.llama_cpp as lib
_defaults = lib.llama_model_default_params
def _params():
    params = _defaults()
    params.use_extra_bufts = False
    return params
lib.llama_model_default_params = _params
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__")
"""


def _start_server(gguf: Path, threads: int, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    args = ["--model", str(gguf), "--model_alias", "judge", "--host", "127.0.0.1", "--port", str(port),
            "--n_threads", str(threads), "--n_ctx", "2048", "--logits_all", "True"]
    proc = subprocess.Popen([sys.executable, "-c", LAUNCHER, *args], stdout=log.open("wb"), stderr=subprocess.STDOUT,
                            env={**os.environ, "OMP_NUM_THREADS": str(threads)})
    for _ in range(360):
        if proc.poll() is not None:
            raise SystemExit(f"llama_cpp.server exited: {log.read_text()[-1500:]}")
        try:
            if httpx.get(f"{url}/models", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not start")


def _remote_spec(folder: Path, url: str) -> Path:
    from judgelab.specs import load_spec

    prompt = load_spec("gemma-3-270m").prompt
    text = (f'id = "gemma-3-270m-remote"\nfamily = "gemma"\nbackends = ["remote"]\n\n[prompt]\nstyle = "raw"\n'
            f"system = {json.dumps(prompt.system)}\nraw_template = {json.dumps(prompt.raw_template)}\n\n"
            f'[remote]\nurl = "{url}"\nprotocol = "openai-completions"\nmodel = "judge"\ntop_logprobs = 1000\n')
    path = folder / "gemma-remote.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _prompts(model, n: int) -> list[str]:
    from judgelab.calibration import load_rows
    from judgelab.evaluators import build_evaluator

    rows = [r for r in load_rows(REPO / "calibration" / "starter.jsonl") if r.task == "fact-check"][:n]
    evaluator = build_evaluator(None, model, task="fact-check")
    return [evaluator.prompts_for(r.to_request())[0] for r in rows]


def _timed(model, prompts: list[str]) -> tuple[float, list]:
    model.judge(prompts[0], ["Yes", "No"])  # warm-up
    t0 = time.perf_counter()
    out = model.judge_many(prompts, ["Yes", "No"])
    return time.perf_counter() - t0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=48)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--threads", type=int, default=1, help="model threads, in process and in the server")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "remote.json")
    args = parser.parse_args()
    from judgelab.engine import load_model
    from judgelab.specs import load_spec
    from judgelab.weights import resolve_weights

    local = load_model("gemma-3-270m", n_threads=args.threads)
    prompts = _prompts(local, args.rows)
    seconds, base = _timed(local, prompts)
    local.close()
    results = {"rows": len(prompts), "threads": args.threads,
               "in_process": {"seconds": round(seconds, 3), "rows_per_s": round(len(prompts) / seconds, 2)},
               "remote": []}
    print(f"in process: {len(prompts)} rows in {seconds:.2f} s = {len(prompts) / seconds:.2f} rows/s")
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _start_server(resolve_weights(load_spec("gemma-3-270m")), args.threads, Path(tmp) / "server.log")
        try:
            for concurrency in args.concurrency:
                with load_model(_remote_spec(Path(tmp), url), concurrency=concurrency) as remote:
                    seconds, got = _timed(remote, _prompts(remote, args.rows))
                    usage = remote.usage()
                dp = max(abs(a.probabilities["Yes"] - b.probabilities["Yes"]) for a, b in zip(base, got))
                entry = {"concurrency": concurrency, "seconds": round(seconds, 3),
                         "rows_per_s": round(len(prompts) / seconds, 2), "max_abs_dp_yes": dp, **usage}
                results["remote"].append(entry)
                print(f"remote, concurrency {concurrency}: {len(prompts)} rows in {seconds:.2f} s = "
                      f"{len(prompts) / seconds:.2f} rows/s; max |dP(yes)| {dp:.2e}; {usage}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    written = write_results(args.out, results, argv=script_argv(__file__))
    print(f"wrote {written}")


if __name__ == "__main__":
    main()

"""``judgelab serve`` as a process: API key from the environment, graceful shutdown on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time

import httpx
import pytest

MODEL = "gemma-3-270m"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM")
def test_serve_cli_key_from_env_and_graceful_shutdown():
    port = _free_port()
    env = {**os.environ, "JUDGELAB_API_KEY": "env-key"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from judgelab.cli import main; sys.exit(main())",
         "serve", "--model", MODEL, "--port", str(port), "--threads", "2",
         "--labels", "Yes,No", "--alias", "bespoke-minicheck"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": "Bearer env-key"}
    try:
        deadline = time.monotonic() + 180
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.2)
        assert httpx.get(f"{base}/api/tags", timeout=10).status_code == 401  # key from $JUDGELAB_API_KEY

        results: list[httpx.Response] = []

        def ask(claim: str) -> None:
            body = {"model": "bespoke-minicheck", "stream": False,
                    "messages": [{"role": "user", "content": f"Document: The sky is blue.\nClaim: {claim}"}]}
            results.append(httpx.post(f"{base}/api/chat", json=body, headers=headers, timeout=300))

        threads = [threading.Thread(target=ask, args=(c,)) for c in ("The sky is blue.", "The sky is red.", "Sky.")]
        for t in threads:
            t.start()
        # SIGTERM once the requests are in flight (the metrics request itself is one more)
        in_flight = 0
        while in_flight < 4 and any(t.is_alive() for t in threads):  # all three and this one
            in_flight = httpx.get(f"{base}/metrics", headers=headers, timeout=10).json()["in_flight"]
        proc.send_signal(signal.SIGTERM)
        assert in_flight >= 2, "the requests finished before SIGTERM; nothing was in flight"
        for t in threads:
            t.join(300)
        # uvicorn finishes in-flight requests, then re-raises SIGTERM: exit status -15 (or 0)
        assert proc.wait(120) in (0, -signal.SIGTERM)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    output = proc.stdout.read()
    assert len(results) == 3, output
    for r in results:
        assert r.status_code == 200, r.text
        assert r.json()["message"]["content"] in {"Yes", "No"}
    assert f"{MODEL} (llama_cpp" in output and "labels Yes,No" in output


@pytest.mark.parametrize("flags, what", [
    (["--port", "99999"], "--port must be between 0 and 65535, got 99999"),
    (["--max-body-bytes", "10"], "--max-body-bytes) must be >= 1024, got 10"),
    (["--labels", "Yes"], "--labels needs at least two"),
    (["--max-request-prompts", "0"], "--max-request-prompts) must be >= 1"),
])
def test_serve_rejects_bad_options_in_one_line_before_loading_the_model(flags, what, tmp_path):
    # a model that does not exist: the option must be refused before anything tries to load it
    missing = tmp_path / "no-such-model.gguf"
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from judgelab.cli import main; sys.exit(main())", "serve",
         "--model", str(missing), *flags],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and what in lines[0], proc.stderr
    assert lines[0].startswith("judgelab serve: error:") and proc.stdout == ""

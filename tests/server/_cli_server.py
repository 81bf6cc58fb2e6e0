"""``judgelab serve`` run as a real subprocess on 127.0.0.1, for tests that need their own limits."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

import httpx

SERVE = [sys.executable, "-c", "import sys; from judgelab.cli import main; sys.exit(main())", "serve", "--model", "gemma-3-270m"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class CliServer:
    proc: subprocess.Popen
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def peak_rss_kib(self) -> int:
        """The server process's peak resident memory so far (VmHWM), in KiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmHWM in /proc status")

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.stdout.read() if self.proc.stdout else ""


def start(*flags: str, timeout: float = 300.0) -> CliServer:
    """Start ``judgelab serve`` with ``flags`` on a free port; return once /healthz answers."""
    port = free_port()
    proc = subprocess.Popen(
        [*SERVE, "--port", str(port), *flags],
        env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    server = CliServer(proc, port)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"judgelab serve exited with {proc.returncode}: {server.stop()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"judgelab serve did not start: {server.stop()}")
        time.sleep(0.2)

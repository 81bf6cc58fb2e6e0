"""Limits that keep one client from exhausting the server, against a real ``judgelab serve`` process."""

from __future__ import annotations

import gzip
import json
import socket
import time
import zlib

import httpx
import pytest

MiB = 1024 * 1024


def _bomb(encoding: str, size: int) -> bytes:
    """A JSON object padded with spaces to ``size`` bytes, compressed (about 1000:1)."""
    body = b'{"model": "gemma-3-270m"' + b" " * (size - 26) + b"}"
    return gzip.compress(body, 9) if encoding == "gzip" else zlib.compress(body, 9)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_decompression_bomb_stops_at_the_limit_with_bounded_memory(limited_server, encoding, limits):
    url = limited_server.url
    # warm up the decompression path with a small compressed body that fits
    small = _bomb(encoding, 64 * 1024)
    r = httpx.post(f"{url}/api/show", content=small, headers={"Content-Encoding": encoding}, timeout=60)
    assert r.status_code == 200, r.text
    before = limited_server.peak_rss_kib()
    bomb = _bomb(encoding, 64 * MiB)  # 64 MiB once decompressed, against a 1 MiB limit
    assert len(bomb) < limits.body // 4
    r = httpx.post(f"{url}/api/show", content=bomb, headers={"Content-Encoding": encoding}, timeout=60)
    assert r.status_code == 413, r.text
    assert "once decompressed" in r.json()["error"] and "--max-body-bytes" in r.json()["error"]
    grown_mib = (limited_server.peak_rss_kib() - before) / 1024
    # inflating it whole would raise the peak by >= 64 MiB; streaming stops about 1 MiB in
    assert grown_mib < 16, f"peak RSS grew by {grown_mib:.1f} MiB"
    # the same bomb on an OpenAI path gets the OpenAI error shape
    r = httpx.post(f"{url}/v1/chat/completions", content=bomb, headers={"Content-Encoding": encoding}, timeout=60)
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"


def test_corrupt_and_truncated_compressed_bodies_are_400(limited_server):
    url = limited_server.url
    packed = gzip.compress(json.dumps({"model": "gemma-3-270m"}).encode())
    for content in (packed[:-12], b"\x1f\x8b not gzip"):
        r = httpx.post(f"{url}/api/show", content=content, headers={"Content-Encoding": "gzip"}, timeout=60)
        assert r.status_code == 400, r.text
        assert "not valid gzip data" in r.json()["error"]


def _slow_client(port: int) -> socket.socket:
    """A connection that has begun a request and sends the rest of its headers very slowly."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    sock.settimeout(0.25)
    return sock


def _trickle_until_closed(sock: socket.socket) -> bool:
    """Send one header byte per poll; True once the server closed the connection."""
    try:
        if sock.recv(1024) == b"":
            return True
    except TimeoutError:
        pass
    except OSError:
        return True
    try:
        sock.sendall(b"x")
    except OSError:
        return True
    return False


def test_slow_header_clients_are_closed_and_the_connection_cap_holds(limited_server, limits):
    url = limited_server.url
    slow = [_slow_client(limited_server.port) for _ in range(limits.connections)]
    idle = socket.create_connection(("127.0.0.1", limited_server.port), timeout=10)  # sends nothing at all
    idle.settimeout(0.25)
    try:
        # while they hold every connection, a new request is refused instead of queued without bound
        assert httpx.get(f"{url}/healthz", timeout=30).status_code == 503
        open_ = set(range(len(slow))) | {-1}
        deadline = time.monotonic() + 20 * limits.header_s  # generous: the machine may be busy
        while open_ and time.monotonic() < deadline:
            for i in list(open_):
                if _trickle_until_closed(idle if i < 0 else slow[i]):
                    open_.discard(i)
        assert not open_, f"{len(open_)} slow connections still open after {20 * limits.header_s} s"
    finally:
        for sock in [*slow, idle]:
            sock.close()
    assert httpx.get(f"{url}/healthz", timeout=30).status_code == 200

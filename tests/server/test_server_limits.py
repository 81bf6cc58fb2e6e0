"""Limits that keep one client from exhausting the server, against a real ``judgelab serve`` process."""

from __future__ import annotations

import gzip
import json
import zlib

import httpx
import pytest

from conftest import LIMITED_BODY

MiB = 1024 * 1024


def _bomb(encoding: str, size: int) -> bytes:
    """A JSON object padded with spaces to ``size`` bytes, compressed (about 1000:1)."""
    body = b'{"model": "gemma-3-270m"' + b" " * (size - 26) + b"}"
    return gzip.compress(body, 9) if encoding == "gzip" else zlib.compress(body, 9)


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_decompression_bomb_stops_at_the_limit_with_bounded_memory(limited_server, encoding):
    url = limited_server.url
    # warm up the decompression path with a small compressed body that fits
    small = _bomb(encoding, 64 * 1024)
    r = httpx.post(f"{url}/api/show", content=small, headers={"Content-Encoding": encoding}, timeout=60)
    assert r.status_code == 200, r.text
    before = limited_server.peak_rss_kib()
    bomb = _bomb(encoding, 64 * MiB)  # 64 MiB once decompressed, against a 1 MiB limit
    assert len(bomb) < LIMITED_BODY // 4
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

"""The HTTP client of the remote backend: a concurrency limit, timeouts, retries, counts.

One ``RemoteClient`` per remote judge. It posts JSON and returns JSON, and
turns every way a request can fail into one ``RemoteError`` whose message is
one line that says what to do:

- no answer at all (a wrong host or port, a server that stopped):
  ``unreachable``, retried up to ``connect_retries`` times with backoff
  (``retry=False``, as the up-front check asks, fails at once); once a
  server has been unreachable through those retries, later requests try once
  until one is answered, so that a run against a dead server fails each row
  fast (and ``calibrate`` stops after a few such rows);
- 401 / 403: ``unauthorized`` (the key in ``api_key_env`` is missing or wrong);
- 404: ``not_found`` (a wrong path, e.g. a URL without ``/v1``, or a model
  the server does not have);
- 429 and 5xx, timeouts and dropped connections: retried up to
  ``max_retries`` times with exponential backoff, waiting what ``Retry-After``
  asks when the server says; then ``rate_limited`` / ``server_error`` /
  ``timeout``;
- any other 4xx: ``bad_request`` with the server's own message.
"""

from __future__ import annotations

import email.utils
import logging
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx

from judgelab.errors import RemoteError

__all__ = ["ClientConfig", "RemoteClient", "retry_after_seconds"]

log = logging.getLogger(__name__)

_RETRIED_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class ClientConfig:
    """How a ``RemoteClient`` talks to one server.

    ``backoff`` is the first wait between tries (doubled each retry, with
    jitter, at most ``max_backoff``); a ``Retry-After`` header replaces it,
    also capped at ``max_backoff``.
    """

    base_url: str
    api_key: str | None = None
    key_env: str | None = None
    timeout: float = 60.0
    max_retries: int = 4
    concurrency: int = 4
    backoff: float = 0.5
    max_backoff: float = 30.0
    connect_retries: int = 3
    """Retries of a refused connection (at most ``max_retries``)."""


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _server_message(response: httpx.Response) -> str:
    """The server's own error text (OpenAI ``error.message``, Ollama ``error``, or the body), one line."""
    try:
        data = response.json()
    except ValueError:
        data = None
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data))
        if isinstance(err, dict):
            err = err.get("message", err)
        text = str(err)
    else:
        text = response.text
    text = " ".join(text.split())
    return text[:300] + ("..." if len(text) > 300 else "")


class RemoteClient:
    """Posts JSON to one server under a concurrency limit; thread-safe.

    ``counts`` holds ``requests`` (HTTP requests sent, retries included),
    ``retries``, ``failures`` (requests that ended in a ``RemoteError``) and
    the server-reported ``prompt_tokens`` and ``completion_tokens``.
    """

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._http = httpx.Client(base_url=config.base_url, headers=headers, timeout=config.timeout,
                                  limits=httpx.Limits(max_connections=config.concurrency))
        self._slots = threading.BoundedSemaphore(config.concurrency)
        self._lock = threading.Lock()
        self.counts = {"requests": 0, "retries": 0, "failures": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self._gone = False  # the server was unreachable through every retry, and has not answered since

    def url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return f"{self.config.base_url.rstrip('/')}/{path.lstrip('/')}"

    def add_usage(self, prompt_tokens: int | None, completion_tokens: int | None) -> None:
        """Add a response's server-reported token counts."""
        with self._lock:
            self.counts["prompt_tokens"] += int(prompt_tokens or 0)
            self.counts["completion_tokens"] += int(completion_tokens or 0)

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def get(self, path: str, *, retry: bool = True) -> Any:
        """``GET path`` as JSON (see ``post``)."""
        return self._call("GET", path, None, retry)

    def post(self, path: str, body: dict[str, object], *, retry: bool = True, counted: bool = True) -> Any:
        """``POST body`` to ``path`` (relative to the base URL, or absolute); the JSON answer.

        ``counted=False`` leaves the request out of ``counts`` (a tokenizer
        call is not a judgment).

        Raises
        ------
        RemoteError
            When the server cannot be reached, refuses the request, or still
            fails after the retries (``reason`` says which).
        """
        return self._call("POST", path, body, retry, counted)

    def _call(self, method: str, path: str, body: dict[str, object] | None, retry: bool, counted: bool = True) -> Any:
        attempt = 0
        count = self._count if counted else (lambda key: None)
        while True:
            wait = None
            try:
                with self._slots:
                    count("requests")
                    response = self._http.request(method, path, json=body)
                self._gone = False
                if response.status_code < 400:
                    return self._json(response, path)
                if not (retry and response.status_code in _RETRIED_STATUS and attempt < self.config.max_retries):
                    raise self._status_error(response, path)
                wait = retry_after_seconds(response.headers.get("Retry-After"))
                what = f"HTTP {response.status_code}"
            except httpx.ConnectError as exc:
                if not (retry and not self._gone and attempt < min(self.config.connect_retries, self.config.max_retries)):
                    count("failures")
                    self._gone = self._gone or retry
                    raise RemoteError(f"Cannot reach the judge server at {self.url(path)} ({exc}) after {attempt + 1} "
                                      "tries; check the URL and that the server is running.", url=self.url(path),
                                      reason="unreachable") from exc
                what = "connection refused"
            except (httpx.TimeoutException, httpx.RemoteProtocolError, httpx.ReadError) as exc:
                if not (retry and attempt < self.config.max_retries):
                    count("failures")
                    reason = "timeout" if isinstance(exc, httpx.TimeoutException) else "server_error"
                    raise RemoteError(f"The judge server at {self.url(path)} did not answer ({type(exc).__name__}: "
                                      f"{exc}) after {attempt + 1} tries; raise the timeout ({self.config.timeout:g} s) "
                                      "or lower the concurrency.", url=self.url(path), reason=reason) from exc
                what = type(exc).__name__
            except RemoteError:
                count("failures")
                raise
            attempt += 1
            delay = self._delay(attempt, wait)
            count("retries")
            log.info("%s %s: %s; retry %d of %d in %.2f s", method, self.url(path), what, attempt,
                     self.config.max_retries, delay)
            time.sleep(delay)

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.config.max_backoff)
        base: float = self.config.backoff * 2 ** (attempt - 1)
        return min(base * (0.5 + random.random()), self.config.max_backoff)

    def _json(self, response: httpx.Response, path: str) -> Any:
        try:
            return response.json()
        except ValueError as exc:
            raise RemoteError(f"The judge server at {self.url(path)} answered HTTP {response.status_code} with a "
                              f"body that is not JSON ({response.text[:80]!r}); is the URL an API's base URL?",
                              url=self.url(path), status=response.status_code, reason="bad_response") from exc

    def _status_error(self, response: httpx.Response, path: str) -> RemoteError:
        status, url, said = response.status_code, self.url(path), _server_message(response)
        if status in (401, 403):
            where = f"${self.config.key_env}" if self.config.key_env else "the spec's api_key_env variable"
            state = "is set" if self.config.api_key else "is not set"
            return RemoteError(f"The judge server at {url} refused the API key (HTTP {status}: {said}); {where} "
                               f"{state}: set it to a valid key.", url=url, status=status, reason="unauthorized")
        if status == 404:
            return RemoteError(f"The judge server at {url} answered 404 ({said}): no such endpoint or model; check "
                               "that the URL is the API's base (e.g. ending in /v1) and the model name.",
                               url=url, status=status, reason="not_found")
        if status == 429:
            return RemoteError(f"The judge server at {url} kept rate-limiting (HTTP 429: {said}) after "
                               f"{self.config.max_retries} retries; lower the concurrency.",
                               url=url, status=status, reason="rate_limited")
        if status >= 500:
            return RemoteError(f"The judge server at {url} failed (HTTP {status}: {said}) after "
                               f"{self.config.max_retries} retries.", url=url, status=status, reason="server_error")
        return RemoteError(f"The judge server at {url} refused the request (HTTP {status}: {said}).",
                           url=url, status=status, reason="bad_request")

    def close(self) -> None:
        self._http.close()

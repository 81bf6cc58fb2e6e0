"""``ServerConfig``: everything ``judgelab serve`` can be told, as one frozen value."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judgelab.wire import BoundPolicy

__all__ = ["ServerConfig", "API_KEY_ENV", "DEFAULT_PORT"]

API_KEY_ENV = "JUDGELAB_API_KEY"
"""Environment variable read for the API key when ``--api-key`` is not given."""

DEFAULT_PORT = 11434
"""Ollama's port, so clients that default to it (Spring AI, ``ollama``) need no change."""


@dataclass(frozen=True)
class ServerConfig:
    """How the server behaves; the model itself is passed separately.

    Parameters
    ----------
    api_key
        When set, every endpoint but ``/healthz`` requires
        ``Authorization: Bearer <api_key>``.
    labels
        The labels a chat or generate request is answered with, unless the
        request names its own (``"labels": [...]``). ``None``: the model spec's
        ``fact-check`` task labels, else ``("Yes", "No")``.
    aliases
        Extra model names accepted in requests besides the model's id (for
        example ``"bespoke-minicheck"`` for Spring AI configs written for
        Ollama, or ``"jev-latest"`` for the TypeSafe SDK's default).
    batch_window_ms
        How long the worker waits for more requests before running a batch.
    max_batch_prompts
        The most prompts one batch holds.
    max_body_bytes
        Larger request bodies get 413, also once decompressed.
    max_request_prompts
        The most prompts (document chunks x claims x questions) one request
        may ask for; more gets 413.
    turn_tokens
        The most prompt tokens one request gets in one engine call while other
        requests wait (its first prompt always goes): a long request runs over
        several turns, with other requests' prompts between them.
    header_timeout_s
        Seconds a client has to send a request's headers; slower connections
        are closed.
    keep_alive_timeout_s
        Seconds an idle kept-alive connection stays open (uvicorn's
        ``timeout_keep_alive``).
    max_connections
        Connections and requests at once; past it new requests get 503
        (uvicorn's ``limit_concurrency``).
    max_header_bytes
        The largest request head (uvicorn's ``h11_max_incomplete_event_size``).
    default_num_predict
        Ollama's ``num_predict`` when a request does not set it.
    policy
        A calibrated pass/fail/abstain policy (``judgelab.calibration.load_policy``)
        applied on ``/v1/evaluate`` and reported by the other protocols.
    grader_threshold
        P(pass) at or above which a promptfoo ``llm-rubric`` grading request
        (detected on ``/v1/chat/completions``) answers ``"pass": true``;
        its ``score`` is P(pass) itself, which promptfoo's ``threshold`` reads.
    """

    api_key: str | None = None
    labels: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    batch_window_ms: float = 5.0
    max_batch_prompts: int = 64
    max_body_bytes: int = 8 * 1024 * 1024
    default_num_predict: int = 2
    max_request_prompts: int = 256
    turn_tokens: int = 128
    header_timeout_s: float = 10.0
    keep_alive_timeout_s: float = 5.0
    max_connections: int = 512
    max_header_bytes: int = 64 * 1024
    policy: BoundPolicy | None = None
    grader_threshold: float = 0.5

    def __post_init__(self) -> None:
        if self.labels is not None and len(self.labels) < 2:
            raise ValueError(f"labels (--labels) needs at least two labels, got {list(self.labels)}")
        if self.batch_window_ms < 0:
            raise ValueError(f"batch_window_ms (--batch-window-ms) must be >= 0, got {self.batch_window_ms}")
        if self.max_batch_prompts < 1:
            raise ValueError(f"max_batch_prompts (--max-batch) must be >= 1, got {self.max_batch_prompts}")
        if self.max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes (--max-body-bytes) must be >= 1024, got {self.max_body_bytes}")
        if self.max_request_prompts < 1:
            raise ValueError(f"max_request_prompts (--max-request-prompts) must be >= 1, got {self.max_request_prompts}")
        if self.turn_tokens < 1:
            raise ValueError(f"turn_tokens (--turn-tokens) must be >= 1, got {self.turn_tokens}")
        if not self.header_timeout_s > 0:
            raise ValueError(f"header_timeout_s (--header-timeout) must be > 0, got {self.header_timeout_s}")
        if not self.keep_alive_timeout_s > 0:
            raise ValueError(f"keep_alive_timeout_s (--keep-alive-timeout) must be > 0, got {self.keep_alive_timeout_s}")
        if self.max_connections < 1:
            raise ValueError(f"max_connections (--max-connections) must be >= 1, got {self.max_connections}")
        if self.max_header_bytes < 1024:
            raise ValueError(f"max_header_bytes (--max-header-bytes) must be >= 1024, got {self.max_header_bytes}")
        if not 0.0 <= self.grader_threshold <= 1.0:
            raise ValueError(f"grader_threshold must be in [0, 1], got {self.grader_threshold}")
        if self.default_num_predict < 1:
            raise ValueError(f"default_num_predict (--num-predict) must be >= 1, got {self.default_num_predict}")

    @classmethod
    def from_env(cls, **kwargs: Any) -> "ServerConfig":
        """A config whose ``api_key`` falls back to ``$JUDGELAB_API_KEY``."""
        if kwargs.get("api_key") is None:
            kwargs["api_key"] = os.environ.get(API_KEY_ENV, "").strip() or None
        return cls(**kwargs)

"""Server counters for ``GET /metrics``: requests, judgments, tokens, batches, latency."""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Mapping
from typing import NotRequired, TypedDict

import numpy as np

__all__ = ["Metrics"]


class RouteSnapshot(TypedDict):
    """One route in ``Metrics.snapshot``: requests in all and per status; latency percentiles (ms) once timed."""

    requests: int
    by_status: dict[str, int]
    latency_ms: NotRequired[dict[str, float]]  # p50, p90, p99, max; window (a count)


class MetricsSnapshot(TypedDict):
    """``Metrics.snapshot``: the JSON of ``GET /metrics``."""

    uptime_s: float
    requests: int
    in_flight: int
    judgments: int
    prompt_tokens: int
    output_tokens: int
    batches: int
    mean_jobs_per_batch: float
    max_batch_prompts: int
    routes: dict[str, RouteSnapshot]


class Metrics:
    """Thread-safe counters and a window of recent latencies per route."""

    def __init__(self, window: int = 2048) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.requests: Counter[tuple[str, int]] = Counter()
        self.latencies: dict[str, deque[float]] = {}
        self.window = window
        self.judgments = 0
        self.prompt_tokens = 0
        self.output_tokens = 0
        self.batches = 0
        self.batched_jobs = 0
        self.max_batch_prompts = 0
        self.in_flight = 0

    def request_started(self) -> None:
        with self._lock:
            self.in_flight += 1

    def request_done(self, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self.in_flight -= 1
            self.requests[(route, status)] += 1
            self.latencies.setdefault(route, deque(maxlen=self.window)).append(seconds)

    def batch_done(self, n_jobs: int, n_prompts: int, prompt_tokens: int) -> None:
        with self._lock:
            self.batches += 1
            self.batched_jobs += n_jobs
            self.judgments += n_prompts
            self.prompt_tokens += prompt_tokens
            self.max_batch_prompts = max(self.max_batch_prompts, n_prompts)

    def add_output_tokens(self, n: int) -> None:
        with self._lock:
            self.output_tokens += n

    def snapshot(self) -> MetricsSnapshot:
        """A JSON-ready view: totals, per-route counts and latency percentiles (ms)."""
        with self._lock:
            routes: dict[str, RouteSnapshot] = {}
            for (route, status), n in sorted(self.requests.items()):
                entry = routes.setdefault(route, {"requests": 0, "by_status": {}})
                entry["requests"] += n
                entry["by_status"][str(status)] = n
            for route, values in self.latencies.items():
                arr = np.asarray(values) * 1000.0
                p50, p90, p99 = np.percentile(arr, [50, 90, 99]) if len(arr) else (0, 0, 0)
                routes.setdefault(route, {"requests": 0, "by_status": {}})["latency_ms"] = {
                    "p50": round(float(p50), 3),
                    "p90": round(float(p90), 3),
                    "p99": round(float(p99), 3),
                    "max": round(float(arr.max()), 3) if len(arr) else 0.0,
                    "window": len(arr),
                }
            return {
                "uptime_s": round(time.time() - self.started, 3),
                "requests": sum(self.requests.values()),
                "in_flight": self.in_flight,
                "judgments": self.judgments,
                "prompt_tokens": self.prompt_tokens,
                "output_tokens": self.output_tokens,
                "batches": self.batches,
                "mean_jobs_per_batch": round(self.batched_jobs / self.batches, 3) if self.batches else 0.0,
                "max_batch_prompts": self.max_batch_prompts,
                "routes": routes,
            }

    def prometheus(self, model_id: str) -> str:
        """The same counters in Prometheus text format."""
        snap = self.snapshot()
        totals: Mapping[str, object] = snap
        lines = []
        for name, key, kind in (
            ("judgelab_requests_total", "requests", "counter"),
            ("judgelab_in_flight_requests", "in_flight", "gauge"),
            ("judgelab_judgments_total", "judgments", "counter"),
            ("judgelab_prompt_tokens_total", "prompt_tokens", "counter"),
            ("judgelab_output_tokens_total", "output_tokens", "counter"),
            ("judgelab_batches_total", "batches", "counter"),
        ):
            lines += [f"# TYPE {name} {kind}", f'{name}{{model="{model_id}"}} {totals[key]}']
        lines.append("# TYPE judgelab_route_requests_total counter")
        for route, entry in snap["routes"].items():
            for status, n in entry["by_status"].items():
                lines.append(f'judgelab_route_requests_total{{route="{route}",status="{status}"}} {n}')
        lines.append("# TYPE judgelab_route_latency_ms summary")
        for route, entry in snap["routes"].items():
            for q, key in (("0.5", "p50"), ("0.9", "p90"), ("0.99", "p99")):
                if "latency_ms" in entry:
                    lines.append(
                        f'judgelab_route_latency_ms{{route="{route}",quantile="{q}"}} {entry["latency_ms"][key]}'
                    )
        return "\n".join(lines) + "\n"

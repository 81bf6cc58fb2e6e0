"""Peak resident memory while a judge is loaded: a sampler thread reading this process's RSS."""

from __future__ import annotations

import os
import threading
from types import TracebackType

__all__ = ["PeakMemory", "resident_bytes"]


def resident_bytes() -> int | None:
    """This process's resident set size in bytes (``/proc/self/statm``), or ``None`` off Linux."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


class PeakMemory:
    """``with PeakMemory() as m: ...``: ``m.peak_mib`` is the largest RSS seen above the RSS at entry.

    Sampled every ``interval`` seconds (and at entry and exit), so a peak shorter than that can be
    missed; loading weights and scoring last far longer. ``None`` where RSS cannot be read.
    """

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.base: int | None = None
        self.peak: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        now = resident_bytes()
        if now is not None and (self.peak is None or now > self.peak):
            self.peak = now

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> PeakMemory:
        self.base = resident_bytes()
        self._sample()
        if self.base is not None:
            self._thread = threading.Thread(target=self._loop, name="judgelab-bench-memory", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._sample()
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def peak_mib(self) -> float | None:
        if self.base is None or self.peak is None:
            return None
        return round(max(0, self.peak - self.base) / 2**20, 1)

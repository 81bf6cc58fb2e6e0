"""The HTTP/1.1 protocol with a header-read timeout, which uvicorn lacks.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``)
but has no limit on how long a client may take to send a request's headers:
its idle timer is cancelled by the first byte. A client that sends headers a
byte at a time holds a connection forever. ``header_timeout_protocol`` gives
uvicorn's h11 protocol a deadline: the headers of each request (the first
one counted from the connection's start) must be complete within ``seconds``,
or the connection is closed.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["header_timeout_protocol"]


class _HeaderDeadlineProtocol(H11Protocol):
    header_timeout: float = 10.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and (self.cycle is None or self.cycle.response_complete):
            self._arm()  # the first bytes of the next request on a kept-alive connection
        super().data_received(data)

    def handle_events(self) -> None:
        cycle = self.cycle
        super().handle_events()
        if self.cycle is not cycle:  # a request's headers are complete
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.logger.info("closing a connection whose request headers took over %.1f s", self.header_timeout)
            self.transport.close()


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol class, closing connections whose headers take over ``seconds``."""
    return type("HeaderDeadlineProtocol", (_HeaderDeadlineProtocol,), {"header_timeout": float(seconds)})

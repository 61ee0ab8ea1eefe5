"""Read deadlines for slow clients, at the HTTP protocol under ``negotiator serve``.

uvicorn bounds the idle time between requests (keep-alive) and the number of connections
(``limit_concurrency``), but not how long a client may take to send a request: a connection
that trickles its headers, or its body a byte at a time, stays open for good and holds a slot.
This protocol, uvicorn's own h11 one with two timers, closes such a connection: the request
line and headers must arrive within ``header_timeout`` of their first byte (or of the
connection), and the whole body within ``body_timeout`` of the headers.
"""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("negotiator.service")


class DeadlineProtocol(H11Protocol):
    header_timeout: float = 10.0
    body_timeout: float = 30.0

    _header_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._cancel()  # between requests, uvicorn's keep-alive timeout holds

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        """Start the timer of the part of the request still awaited; stop the others."""
        if self.transport.is_closing():
            return self._cancel()
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._header_timer is None and self.timeout_keep_alive_task is None:
                self._header_timer = self.loop.call_later(self.header_timeout, self._too_slow, "headers")
        elif state is h11.SEND_BODY:
            self._cancel_header()
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._too_slow, "body")
        else:
            self._cancel()

    def _too_slow(self, part: str) -> None:
        self._header_timer = self._body_timer = None
        if self.transport.is_closing():
            return
        limit = self.header_timeout if part == "headers" else self.body_timeout
        prefix = f"{self.client[0]}:{self.client[1]} - " if self.client else ""
        log.warning("%sclosed a connection whose request %s took longer than %gs", prefix, part, limit)
        self.transport.close()

    def _cancel_header(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _cancel(self) -> None:
        self._cancel_header()
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None


def deadline_protocol(header_timeout: float, body_timeout: float) -> type[DeadlineProtocol]:
    """The protocol class uvicorn instantiates per connection, with these deadlines."""
    return type(
        "DeadlineProtocol", (DeadlineProtocol,), {"header_timeout": header_timeout, "body_timeout": body_timeout}
    )

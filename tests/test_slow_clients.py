"""Slow clients are closed: a real ``negotiator serve`` on loopback, raw sockets as the clients.

Before, a connection that sent its headers a byte at a time without a credential, or its body
one byte every 6 s with a token, stayed open for good. The deadlines here are 1 s; a connection
must be closed well inside 20 s (the bound is generous so that a busy machine cannot fail it,
and a server without deadlines still fails it: the clients keep trickling for 25 s).
"""

from __future__ import annotations

import socket
import time

import httpx
import pytest

KEY = "test-key-0123456789abcdef"
DEADLINES = ("--header-timeout", "1", "--body-timeout", "1", "--keep-alive-timeout", "1")


@pytest.fixture
def served(service_process):
    return service_process(seller="rule/boulware", key=KEY, args=DEADLINES)


def _trickle(port: int, head: bytes, body: bytes, every: float = 0.25, for_seconds: float = 25.0) -> float | None:
    """Send ``head`` then ``body`` a byte at a time; the seconds until the server closed, or None."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(every)
        for byte in (head + body * 1000)[: int(for_seconds / every)]:
            try:
                s.sendall(bytes([byte]))
                if s.recv(4096) == b"":
                    return time.monotonic() - start
            except TimeoutError:
                continue
            except OSError:  # reset or broken pipe: closed
                return time.monotonic() - start
    return None


def test_a_client_trickling_its_headers_is_closed(served):
    head = b"GET /v1/negotiations HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"a" * 400
    closed = _trickle(served.port, head, b"")
    assert closed is not None and closed < 20


def test_a_client_trickling_its_body_with_a_token_is_closed(served):
    opened = httpx.post(f"{served.base_url}/v1/negotiations", json={"seed": 0}, headers=served.headers).json()
    head = (
        f"POST /v1/negotiations/{opened['id']}/moves HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {opened['token']}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n"
    ).encode()
    closed = _trickle(served.port, head, b" ")
    assert closed is not None and closed < 20
    # The service goes on answering: the slow client cost it one connection, now closed.
    assert httpx.get(f"{served.base_url}/v1/negotiations/{opened['id']}", headers=served.headers).json()["turn"] == 0
    assert "took longer than 1s" in served.log.read_text()


def test_keep_alive_requests_on_one_connection_still_work(served):
    with httpx.Client(headers=served.headers) as c:  # one pooled connection, several requests
        for _ in range(3):
            assert c.post(f"{served.base_url}/v1/negotiations", json={"seed": 0}).status_code == 201


@pytest.mark.parametrize(
    "args, says",
    [
        (("--header-timeout", "nan"), "--header-timeout must be a positive number of seconds"),
        (("--body-timeout", "0"), "--body-timeout must be a positive number of seconds"),
        (("--keep-alive-timeout", "inf"), "--keep-alive-timeout must be a positive number of seconds"),
        (("--max-connections", "0"), "--max-connections must be at least 1"),
    ],
)
def test_bad_deadlines_are_one_line_errors(args, says):
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "negotiator", "serve", "--no-auth", *args], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr

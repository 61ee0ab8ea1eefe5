"""Who may call what on a real ``negotiator serve``: the key is checked before the body is
read, streamed bodies are cut off at the limit, session tokens open one negotiation only,
and a credential in the URL is refused and never logged."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from langgraph.checkpoint.memory import InMemorySaver

from negotiator.service import ServiceSettings, create_app
from negotiator.sessions import TOKEN_PREFIX, Sessions
from negotiator.sim import generate

KEY = "access-test-key-0123456789"
LIMIT = 1_000_000


def _buyer_terms(price=600):
    sc = generate(0)
    return {**sc.buyer.ideal(sc.space), "price": price}


def _exchange(port: int, head: bytes, body: bytes = b"", timeout: float = 30) -> bytes:
    """Send a request head (and part of a body), then read until the server closes.

    The client never sends more than it has written here, so the answer can only come from
    what the server decided on that much: no answer within ``timeout`` means it was waiting
    for the rest of the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(head + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return data


def _head(path: str, *headers: str, method: str = "POST") -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json", *headers, "", ""]
    return "\r\n".join(lines).encode()


def _status_and_body(raw: bytes) -> tuple[int, dict]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _peak_rss(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc")


def test_no_key_is_refused_before_the_body_is_read(service_process):
    server = service_process()
    for framing in ("Content-Length: 300000000", "Transfer-Encoding: chunked"):
        # Not a byte of the announced body is sent: a server that reads the body first never answers.
        raw = _exchange(server.port, _head("/v1/negotiations", framing))
        status, body = _status_and_body(raw)
        assert status == 401 and body["error"] == "unauthorized", raw
        assert b"connection: close" in raw.lower() and b"www-authenticate: bearer" in raw.lower()
        raw = _exchange(server.port, _head("/v1/negotiations", framing, "Authorization: Bearer wrong-key-0123456789"))
        assert _status_and_body(raw)[0] == 401


def test_a_body_over_the_limit_gets_413_streamed_or_declared(service_process):
    server = service_process()
    auth = f"Authorization: Bearer {server.key}"
    chunk = b"x" * 65536
    frames = (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * (
        LIMIT // len(chunk) + 1
    ) + b"0\r\n\r\n"  # just over 1 MB, chunked
    raw = _exchange(
        server.port, _head("/v1/negotiations", "Transfer-Encoding: chunked", "Connection: close", auth), frames
    )
    status, body = _status_and_body(raw)
    assert status == 413 and body == {"error": "too_large", "message": f"the request body is over {LIMIT} bytes"}
    raw = _exchange(
        server.port,
        _head("/v1/negotiations", f"Content-Length: {LIMIT + 1}", "Connection: close", auth),
        b"x" * (LIMIT + 1),
    )
    assert _status_and_body(raw)[0] == 413
    # A declared length far over the limit is refused from the head alone, and the connection dropped.
    raw = _exchange(server.port, _head("/v1/negotiations", "Content-Length: 300000000", auth))
    assert _status_and_body(raw)[0] == 413 and b"connection: close" in raw.lower()
    # Under the limit, a chunked body is read and handled as usual.
    ok = httpx.post(
        f"{server.base_url}/v1/negotiations",
        content=iter([b'{"seed": ', b"0}"]),
        headers={**server.headers, "content-type": "application/json"},
    )
    assert ok.status_code == 201 and ok.json()["scenario"]["id"] == "furniture-0"


@pytest.mark.parametrize("with_key", [False, True])
def test_a_huge_chunked_body_is_not_held_in_memory(service_process, with_key):
    """The reported attack: 300 MB chunked took the server from 100 MB to 687 MB. Here 64 MB,
    streamed until the server hangs up: its peak memory must stay near where it was."""
    server = service_process()
    before = _peak_rss(server.proc.pid)
    headers = [f"Authorization: Bearer {server.key}"] if with_key else []
    block = b"%x\r\n" % (1 << 20) + b"x" * (1 << 20) + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port), timeout=60) as s:
        s.sendall(_head("/v1/negotiations", "Transfer-Encoding: chunked", *headers))
        try:
            for _ in range(64):
                s.sendall(block)
                sent += 1
        except OSError:  # the server answered and closed the connection: the rest was never read
            pass
    grown = _peak_rss(server.proc.pid) - before
    assert sent < 64, "the server read all 64 MB"
    assert grown < 16 * 2**20, f"peak memory grew by {grown / 2**20:.0f} MB"
    assert httpx.get(f"{server.base_url}/healthz").status_code == 200


def test_a_credential_in_the_url_is_refused_and_never_logged(service_process):
    server = service_process(log_level="info")  # uvicorn's access log on
    base, h = server.base_url, server.headers
    key_attempts = [
        ("post", f"/v1/negotiations?api_key={server.key}", {}),  # the key as a query parameter, with no header
        ("post", f"/v1/negotiations?key={server.key}", h),  # ... and next to a valid header
        ("get", f"/healthz?api_key={server.key}", {}),
        ("get", f"/v1/negotiations/{server.key}", h),  # the key pasted into the path
        ("get", "/v1/negotiations/0123456789abcdef0123456789abcdef?X-Api-Key=anything", h),
    ]
    _all_refused(base, key_attempts)
    opened = httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=h).json()
    sid, token = opened["id"], opened["token"]
    token_attempts = [
        ("get", f"/v1/negotiations/{sid}?token={token}", {}),
        ("get", f"/v1/negotiations/{sid}?access_token={token}", {}),
        ("get", f"/v1/negotiations/{sid}?session={token}", {}),  # a token under any name
    ]
    _all_refused(base, token_attempts)
    assert httpx.get(f"{base}/v1/negotiations/{sid}", headers=h).json()["turn"] == 0  # nothing was applied
    server.stop()
    log = server.log.read_text()
    assert server.key not in log and token not in log and TOKEN_PREFIX not in log
    refused = [line for line in log.splitlines() if '" 400' in line]
    assert len(refused) == len(key_attempts) + len(token_attempts), log
    assert (
        sum("?[redacted] HTTP/1.1" in line for line in refused) == len(refused) - 1
        and '"GET /redacted HTTP/1.1" 400' in log
    )


def _all_refused(base: str, attempts: list) -> None:
    for method, path, headers in attempts:
        r = httpx.request(method, base + path, headers=headers)
        assert r.status_code == 400, (path, r.text)
        assert r.json()["error"] == "credentials_in_url" and "Authorization: Bearer" in r.json()["message"]


# --- session tokens ----------------------------------------------------------------------


@pytest.fixture
def client(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _bearer(credential: str) -> dict:
    return {"Authorization": f"Bearer {credential}"}


def test_a_session_token_reads_and_moves_its_own_negotiation_only(client, tmp_path):
    first = client.post("/v1/negotiations", json={"seed": 0}, headers=_bearer(KEY)).json()
    second = client.post("/v1/negotiations", json={"seed": 0}, headers=_bearer(KEY)).json()
    token = first["token"]
    assert token.startswith(TOKEN_PREFIX) and len(token) > 40 and token != second["token"]
    # Its own negotiation: read and move, as the shopper's page does.
    assert client.get(f"/v1/negotiations/{first['id']}", headers=_bearer(token)).json()["id"] == first["id"]
    r = client.post(
        f"/v1/negotiations/{first['id']}/moves",
        json={"action": "offer", "terms": _buyer_terms(), "expected_turn": 0},
        headers=_bearer(token),
    )
    assert r.status_code == 200 and r.json()["turn"] == 2 and "token" not in r.json()  # shown once, at open
    # Not another negotiation, not opening new ones.
    for method, path, body in [
        ("get", f"/v1/negotiations/{second['id']}", None),
        ("post", f"/v1/negotiations/{second['id']}/moves", {"action": "walk_away"}),
        ("post", "/v1/negotiations", {"seed": 0}),
    ]:
        r = client.request(method, path, json=body, headers=_bearer(token))
        assert r.status_code == 403 and r.json()["error"] == "forbidden" and "API key" in r.json()["message"], r.text
    assert client.get(f"/v1/negotiations/{second['id']}", headers=_bearer(KEY)).json()["turn"] == 0
    # A made-up token, or a real one altered by a character, is no credential at all.
    for fake in (TOKEN_PREFIX + "x" * 43, token[:-1] + ("A" if token[-1] != "A" else "B")):
        assert client.get(f"/v1/negotiations/{first['id']}", headers=_bearer(fake)).status_code == 403
    # The key still does everything.
    r = client.post(f"/v1/negotiations/{second['id']}/moves", json={"action": "walk_away"}, headers=_bearer(KEY))
    assert r.status_code == 200 and r.json()["status"] == "no_deal"
    # Only the token's hash is stored.
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("n.sqlite*"))
    assert token.encode() not in stored and hashlib.sha256(token.encode()).hexdigest().encode() in stored


def test_without_auth_every_call_is_allowed_and_tokens_are_still_issued(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=None))
    with TestClient(app, raise_server_exceptions=False, base_url="http://localhost") as c:
        st = c.post("/v1/negotiations", json={"seed": 0}).json()
        assert st["token"].startswith(TOKEN_PREFIX)
        assert c.get(f"/v1/negotiations/{st['id']}").status_code == 200


def test_without_auth_only_loopback_names_are_answered(service_process):
    """DNS rebinding: a page in the developer's browser points a name of its own at 127.0.0.1. Without a
    key it could open negotiations under limits of its choosing and take signed agreements home."""
    svc = service_process(key=None)
    port = svc.port
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"):
        r = httpx.post(f"{svc.base_url}/v1/negotiations", json={"seed": 0}, headers={"Host": host})
        assert r.status_code == 201, host
    for host in (f"attacker.example:{port}", f"127.0.0.1.nip.io:{port}", f"evil@127.0.0.1:{port}"):
        for path, body in (("/v1/negotiations", {"seed": 0}), ("/a2a", {"jsonrpc": "2.0", "id": 1})):
            r = httpx.post(f"{svc.base_url}{path}", json=body, headers={"Host": host})
            assert r.status_code == 421 and r.json()["error"] == "misdirected_host", (host, path)
            assert r.json()["message"] == (
                f"Host {host!r} is not this service's: without an API key (--no-auth) it answers requests "
                "addressed to localhost, 127.0.0.1 or [::1] only; set NEGOTIATOR_API_KEY to serve other names"
            )
    assert httpx.get(f"{svc.base_url}/healthz", headers={"Host": "attacker.example"}).status_code == 200
    keyed = service_process(store=str(svc.workdir / "keyed.sqlite"))  # with a key, the credential protects it
    r = httpx.post(
        f"{keyed.base_url}/v1/negotiations", json={"seed": 0}, headers={**keyed.headers, "Host": "shop.example"}
    )
    assert r.status_code == 201


async def test_sessions_verify_their_own_tokens(scenario):
    sessions = Sessions("scripted/boulware", InMemorySaver())
    a, b = await sessions.open(scenario), await sessions.open(scenario)
    assert await sessions.verify_token(a.id, a.token) and await sessions.verify_token(b.id, b.token)
    assert not await sessions.verify_token(a.id, b.token)
    assert not await sessions.verify_token(a.id, a.token + "x")
    assert not await sessions.verify_token(a.id, a.token.removeprefix(TOKEN_PREFIX))
    assert not await sessions.verify_token("0" * 32, a.token)  # no such session
    assert (await sessions.get(a.id)).model_dump().keys() == (
        await sessions.move(a.id, {"action": "walk_away"})
    ).model_dump().keys()
    assert "token" not in (await sessions.get(a.id)).model_dump()


# --- a shop page holding a session token -------------------------------------------------

PAGE = b"<!doctype html><title>shop</title><p>product page</p>"


@contextmanager
def _page_server():
    """A product page on its own loopback origin (the shop's site, not the service)."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_a_shop_page_in_a_browser_moves_its_negotiation_with_the_token_alone(service_process):
    """The business's server opens the negotiation with the key and hands the page only the
    token; the page (another origin, allowed with --cors-origin) reads and moves that negotiation
    straight from the browser, and can do nothing else with it."""
    from browser import chromium_page

    fetch = """async ([url, method, token, body]) => {
        const r = await fetch(url, {method, headers: {"Authorization": "Bearer " + token, "Content-Type": "application/json"},
                                    body: body ? JSON.stringify(body) : undefined});
        return [r.status, await r.json()];
    }"""
    with _page_server() as shop, _page_server() as elsewhere, chromium_page() as page:
        server = service_process(args=("--cors-origin", shop))
        base = server.base_url
        mine = httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=server.headers).json()
        other = httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=server.headers).json()
        page.goto(shop)
        status, state = page.evaluate(fetch, [f"{base}/v1/negotiations/{mine['id']}", "GET", mine["token"], None])
        assert status == 200 and state["id"] == mine["id"] and state["turn"] == 0
        move = {"action": "offer", "terms": _buyer_terms(), "message": "600?", "expected_turn": 0}
        status, state = page.evaluate(
            fetch, [f"{base}/v1/negotiations/{mine['id']}/moves", "POST", mine["token"], move]
        )
        assert status == 200 and state["turn"] == 2 and state["transcript"][-1]["party"] == "seller"
        status, err = page.evaluate(fetch, [f"{base}/v1/negotiations/{other['id']}", "GET", mine["token"], None])
        assert status == 403 and err["error"] == "forbidden"
        status, err = page.evaluate(fetch, [f"{base}/v1/negotiations", "POST", mine["token"], {"seed": 0}])
        assert status == 403
        # A page from an origin the business did not list gets no answer it may read.
        page.goto(elsewhere)
        blocked = page.evaluate(
            """async ([url, token]) => {
            try { await fetch(url, {headers: {"Authorization": "Bearer " + token}}); return "answered"; }
            catch (e) { return "blocked"; } }""",
            [f"{base}/v1/negotiations/{mine['id']}", mine["token"]],
        )
        assert blocked == "blocked"
    assert httpx.get(f"{base}/v1/negotiations/{other['id']}", headers=server.headers).json()["turn"] == 0


def test_serve_refuses_a_wildcard_or_malformed_cors_origin():
    import subprocess
    import sys

    for bad in ("*", "shop.example", "https://shop.example/page"):
        r = subprocess.run(
            [sys.executable, "-m", "negotiator", "serve", "--no-auth", "--cors-origin", bad, "--port", "1"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2 and "--cors-origin" in r.stderr and "https://shop.example" in r.stderr, r.stderr

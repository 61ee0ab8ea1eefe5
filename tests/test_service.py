"""The HTTP service: auth, clear 4xx answers, a full negotiation, restarts, fuzzing from its own spec."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from fastapi.testclient import TestClient

from negotiator.service import ServiceSettings, create_app
from negotiator.sim import generate

KEY = "service-test-key-0123456789"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture
def client(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _buyer_terms(seed=0, price=None):
    sc = generate(seed)
    terms = sc.buyer.ideal(sc.space)
    return {**terms, "price": price} if price is not None else terms


def test_a_shopper_negotiates_to_a_deal(client):
    r = client.post("/v1/negotiations", json={"seed": 0, "limits": {"minimum": {"price": 700}}}, headers=AUTH)
    assert r.status_code == 201, r.text
    st = r.json()
    assert st["status"] == "open" and st["to_move"] == "buyer" and st["turn"] == 0
    # The state is public: no preferences, reservation values or limits. (Checked on the parsed
    # values: the text also holds a random id and a timestamp, which may contain "700".)
    assert set(st["scenario"]) == {"id", "product", "currency", "issues", "opener", "max_rounds"}
    keys, numbers = _keys_and_numbers(st)
    assert not keys & {"reservation", "limits", "seller_limits", "minimum", "weights", "seller", "buyer", "values"}, (
        keys
    )
    assert 700 not in numbers and 614 not in numbers, numbers  # the per-negotiation limit and the listing's floor
    r = client.post(
        f"/v1/negotiations/{st['id']}/moves",
        json={"action": "offer", "terms": _buyer_terms(price=650), "message": "650?", "expected_turn": 0},
        headers=AUTH,
    )
    assert r.status_code == 200, r.text
    st = r.json()
    counter = st["transcript"][-1]
    assert counter["party"] == "seller" and counter["action"]["action"] == "make_offer"
    assert counter["action"]["terms"]["price"] >= 700 and st["seller_offer"] == counter["action"]["terms"]
    r = client.post(
        f"/v1/negotiations/{st['id']}/moves",
        json={"action": "accept", "message": "deal", "expected_turn": st["turn"]},
        headers=AUTH,
    )
    st = r.json()
    assert r.status_code == 200 and st["status"] == "deal" and st["agreement"] == counter["action"]["terms"]
    got = client.get(f"/v1/negotiations/{st['id']}", headers=AUTH).json()
    assert got == st


def _keys_and_numbers(obj) -> tuple[set, set]:
    """Every key and every number anywhere in a parsed JSON value."""
    keys, numbers = set(), set()
    stack = [obj]
    while stack:
        o = stack.pop()
        if isinstance(o, dict):
            keys |= set(o)
            stack += o.values()
        elif isinstance(o, list):
            stack += o
        elif isinstance(o, (int, float)) and not isinstance(o, bool):
            numbers.add(o)
    return keys, numbers


def test_requests_without_a_valid_key_are_refused(client):
    sid = client.post("/v1/negotiations", json={"seed": 0}, headers=AUTH).json()["id"]
    calls = [
        ("post", "/v1/negotiations", {"seed": 0}),
        ("get", f"/v1/negotiations/{sid}", None),
        ("post", f"/v1/negotiations/{sid}/moves", {"action": "walk_away"}),
        ("post", f"/v1/negotiations/{sid}/moves", {"nonsense": True}),
    ]  # 401 before validation
    for headers in (
        {},
        {"Authorization": "Bearer wrong-key-0123456789"},
        {"Authorization": KEY},
        {"Authorization": f"Basic {KEY}"},
    ):
        for method, path, body in calls:
            r = client.request(method, path, json=body, headers=headers)
            assert r.status_code == 401, (headers, path, r.text)
            assert r.json()["error"] == "unauthorized" and "Bearer" in r.json()["message"]
            assert r.headers["www-authenticate"] == "Bearer"
    assert client.get(f"/v1/negotiations/{sid}", headers=AUTH).json()["turn"] == 0  # nothing was applied
    assert client.get("/healthz").status_code == 200  # probes need no key


@pytest.mark.parametrize(
    "path, body, status, says",
    [
        ("/v1/negotiations", {}, 422, "give exactly one of 'listing_id' (the catalogue), 'listing', or 'seed'"),
        ("/v1/negotiations", {"seed": 0, "template": "spaceships"}, 422, "unknown scenario template 'spaceships'"),
        ("/v1/negotiations", {"seed": -1}, 422, "body.seed: Input should be greater than or equal to 0"),
        (
            "/v1/negotiations",
            {"seed": 0, "limits": {"minimum": {"colour": 1}}},
            422,
            "limit on 'colour': not a numeric issue",
        ),
        ("/v1/negotiations", {"listing": {"id": "x"}}, 422, "body.listing.product: Field required"),
        ("MOVE", {"action": "haggle"}, 422, "body.action: Input should be 'offer', 'message', 'accept' or 'walk_away'"),
        ("MOVE", {"action": "offer", "terms": {"price": "cheap"}}, 422, "price: must be a number between 507 and 1014"),
        ("MOVE", {"action": "offer", "terms": {"price": 600, "warp": 9}}, 422, "warp: unknown issue"),
        # Before: the price was written out in 309 digits.
        (
            "MOVE",
            {"action": "offer", "terms": {"price": 1e308}},
            422,
            "price: 1e+308 is outside the allowed range 507..1014;",
        ),
        ("MOVE", {"action": "message", "message": "hi"}, 422, "you have made no offer yet"),
        (
            "MOVE",
            {"action": "message", "message": "x" * 2001},
            422,
            "body.message: String should have at most 2000 characters",
        ),
        ("MOVE", {"action": "accept"}, 409, "no offer from the other side to accept"),
        # Before: pydantic read True and False as 1 and 0: seed 1, a one-round negotiation, the move applied at turn 0.
        ("/v1/negotiations", {"seed": True}, 422, "body.seed: True is not a number"),
        (
            "/v1/negotiations",
            {"seed": 0, "max_rounds": True},
            422,
            "body.max_rounds: True is not a number",
        ),
        ("/v1/negotiations", {"seed": 0, "generator": True}, 422, "body.generator: True is not a number"),
        ("MOVE", {"action": "walk_away", "expected_turn": False}, 422, "expected_turn: False is not a"),
        ("MOVE", {"action": "walk_away", "expected_turn": 3}, 409, "the negotiation has moved on"),
        (
            "/v1/negotiations/0123456789abcdef0123456789abcdef/moves",
            {"action": "walk_away"},
            404,
            "no negotiation with id",
        ),
        (
            "/v1/negotiations/not-an-id/moves",
            {"action": "walk_away"},
            422,
            "path.negotiation_id: String should match pattern",
        ),
    ],
)
def test_bad_input_gets_a_4xx_that_says_what_to_fix(client, path, body, status, says):
    if path == "MOVE":
        sid = client.post("/v1/negotiations", json={"seed": 0}, headers=AUTH).json()["id"]
        path = f"/v1/negotiations/{sid}/moves"
    r = client.post(path, json=body, headers=AUTH)
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    err = r.json()
    assert says in err["message"], err
    assert "Traceback" not in r.text and ".py" not in r.text


JSON = {**AUTH, "content-type": "application/json"}
SEND_JSON = "send one, UTF-8 encoded, with 'Content-Type: application/json'"


@pytest.mark.parametrize(
    "body, headers, says",
    [
        # Before: 422 "body.10: JSON decode error"; 400 "There was an error parsing the body" for the next three.
        (b'{"seed": 0', JSON, f"the body is not a JSON object (Expecting ',' delimiter at character 10); {SEND_JSON}"),
        (
            b'{"seed": 0, "template": "\xff"}',
            JSON,
            f"the body is not a JSON object (byte 25 is not UTF-8); {SEND_JSON}",
        ),
        (
            b"[" * 100_000 + b"]" * 100_000,
            JSON,
            f"the body is not a JSON object (it is nested too deeply); {SEND_JSON}",
        ),
        (b'{"seed": ' + b"9" * 5000 + b"}", JSON, "(a number has too many digits)"),
        # Before: 422 "body: Input should be a valid dictionary or object to extract fields from", for a valid body.
        (
            b'{"seed": 0}',
            {**AUTH, "content-type": "text/plain"},
            "the body was sent as 'text/plain', so it was not read as JSON; send it with 'Content-Type: application/json'",
        ),
        (b'{"seed": 0}', {**AUTH, "content-type": ""}, "the body was sent with no Content-Type, so it was not read"),
        (b"[]", JSON, f"the body is not a JSON object (it is an array); {SEND_JSON}"),
        (b"null", JSON, "(it is null)"),
        (b"", JSON, "(the request has no body)"),  # before: "body: Field required"
    ],
)
def test_a_body_that_is_not_a_json_object_is_a_400_that_says_how_to_send_it(client, body, headers, says):
    r = client.post("/v1/negotiations", content=body, headers=headers)
    assert r.status_code == 400 and r.json() == {"error": "invalid_request", "message": r.json()["message"]}, r.text
    assert says in r.json()["message"]
    assert "sys." not in r.text and "Traceback" not in r.text


def test_oversized_bodies_are_413(client):
    r = client.post("/v1/negotiations", content=b"x" * 1_000_001, headers=JSON)
    assert r.status_code == 413 and r.json()["error"] == "too_large"


def test_an_unknown_path_or_method_says_what_there_is(client):
    # Before: {"error": "not_found", "message": "Not Found"} and "Method Not Allowed".
    r = client.get("/v1/negotiation", headers=AUTH)
    assert r.status_code == 404 and r.json() == {
        "error": "not_found",
        "message": "there is no GET /v1/negotiation; the endpoints are listed at /docs and /openapi.json",
    }
    r = client.delete("/v1/negotiations", headers=AUTH)
    assert r.status_code == 405 and r.headers["allow"] == "POST"
    assert r.json()["message"] == "DELETE /v1/negotiations is not allowed: /v1/negotiations takes POST"


def test_a_malformed_negotiation_id_is_named_once(client):
    # Before: "path.negotiation_id: String should match pattern ... (and 1 more problems)", the same problem twice.
    r = client.get("/v1/negotiations/not-an-id", headers=AUTH)
    assert r.status_code == 422 and len(r.json()["details"]) == 1, r.text
    assert r.json()["message"] == "path.negotiation_id: String should match pattern '^[0-9a-f]{32}$'"


def test_an_unavailable_seller_model_is_a_503_and_nothing_is_recorded(tmp_path):
    app = create_app(ServiceSettings(seller="scripted/error", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    with TestClient(app, raise_server_exceptions=False) as c:
        sid = c.post("/v1/negotiations", json={"seed": 0}, headers=AUTH).json()["id"]
        r = c.post(f"/v1/negotiations/{sid}/moves", json={"action": "offer", "terms": _buyer_terms()}, headers=AUTH)
        assert r.status_code == 503 and r.json()["error"] == "seller_unavailable" and r.headers["retry-after"]
        assert "401" not in r.text  # the provider's own error stays in the server log
        assert c.get(f"/v1/negotiations/{sid}", headers=AUTH).json()["turn"] == 0


def test_a_bug_is_a_plain_500_without_a_stack_trace(tmp_path, monkeypatch):
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=KEY))
    with TestClient(app, raise_server_exceptions=False) as c:

        def boom(*a, **k):
            raise RuntimeError("secret internals /srv/app.py line 3")

        monkeypatch.setattr(c.app.state.sessions, "open", boom)
        r = c.post("/v1/negotiations", json={"seed": 0}, headers=AUTH)
        assert r.status_code == 500 and r.json() == {
            "error": "internal_error",
            "message": "internal error; it has been logged",
        }


def _serve(*args, env=None, timeout=60):
    env = {k: v for k, v in {**os.environ, **(env or {})}.items() if k != "NEGOTIATOR_API_KEY" or (env and k in env)}
    return subprocess.run(
        [sys.executable, "-m", "negotiator", "serve", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def test_serve_refuses_to_start_without_a_key():
    r = _serve("--seller", "scripted/boulware", "--port", "1")
    assert r.returncode == 2 and "NEGOTIATOR_API_KEY is not set" in r.stderr and "--no-auth" in r.stderr
    r = _serve("--seller", "scripted/boulware", "--port", "1", env={"NEGOTIATOR_API_KEY": "short"})
    assert r.returncode == 2 and "at least 16" in r.stderr
    r = _serve("--seller", "gpt4", "--port", "1", env={"NEGOTIATOR_API_KEY": KEY})
    assert r.returncode == 2 and "provider prefix" in r.stderr


def test_a_locked_store_is_a_503_to_retry_and_nothing_is_recorded(service_process):
    # Another process (a backup, a replica in a long transaction) holds the SQLite file's write lock past
    # the service's busy timeout. Before: 500 internal_error and a stack trace in the log per request.
    import sqlite3

    server = service_process(seller="rule/boulware", log_level="info")
    base, h = server.base_url, server.headers
    opened = httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=h).json()
    move = {"action": "offer", "terms": _buyer_terms(price=600), "expected_turn": 0}
    url = f"{base}/v1/negotiations/{opened['id']}/moves"
    token = {"Authorization": f"Bearer {opened['token']}"}
    holder = sqlite3.connect(server.store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for r in (
            httpx.post(url, json=move, headers=token, timeout=60),
            httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=h, timeout=60),
        ):
            assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
            err = r.json()
            assert err["error"] == "store_unavailable" and "database is locked" in err["message"], err
            assert "send the same request again" in err["message"]
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert httpx.get(url.removesuffix("/moves"), headers=token).json()["turn"] == 0  # nothing was recorded
    again = httpx.post(url, json=move, headers=token)
    assert again.status_code == 200 and again.json()["turn"] == 2
    log = server.log.read_text()
    assert "Traceback" not in log and log.count("database is locked") == 2, log


def test_a_store_that_fails_while_a_session_token_is_checked_is_a_503(client, monkeypatch):
    from negotiator.errors import StoreUnavailable

    opened = client.post("/v1/negotiations", json={"seed": 0}, headers=AUTH).json()

    async def gone(*a):
        raise StoreUnavailable("the negotiation store is unavailable (server closed the connection)")

    monkeypatch.setattr(client.app.state.sessions, "verify_token", gone)
    r = client.get(f"/v1/negotiations/{opened['id']}", headers={"Authorization": f"Bearer {opened['token']}"})
    assert r.status_code == 503 and r.headers["retry-after"] == "5", r.text
    assert r.json() == {
        "error": "store_unavailable",
        "message": "the negotiation store is unavailable (server closed the connection)",
    }


def test_a_negotiation_survives_a_server_restart(service_process):
    server = service_process()
    base, h = server.base_url, server.headers
    st = httpx.post(f"{base}/v1/negotiations", json={"seed": 0}, headers=h).json()
    st = httpx.post(
        f"{base}/v1/negotiations/{st['id']}/moves",
        json={"action": "offer", "terms": _buyer_terms(price=600)},
        headers=h,
    ).json()
    assert st["turn"] == 2
    server.restart()  # a new process on the same SQLite file
    assert httpx.get(f"{base}/v1/negotiations/{st['id']}", headers=h).json() == st
    after = httpx.post(
        f"{base}/v1/negotiations/{st['id']}/moves",
        json={"action": "message", "message": "Any better?", "expected_turn": 2},
        headers=h,
    )
    assert after.status_code == 200 and after.json()["transcript"][:2] == st["transcript"]
    assert after.json()["turn"] == 4


# Which statuses each credential must have met: the key reaches everything; no credential
# is refused before any validation; a session token reaches its own negotiation only.
INPUTLESS = ("/healthz", "/.well-known/jwks.json")
FUZZ_CREDENTIALS = {
    "api_key": ({200, 201, 404, 409, 422}, None, 50),
    "none": ({200, 401}, {200, 401}, 20),
    "session_token": ({200, 403, 409, 422}, None, 25),
}


@pytest.mark.parametrize("credential", list(FUZZ_CREDENTIALS))
def test_fuzzing_from_the_services_own_openapi_spec_finds_no_5xx(service_process, credential):
    """Schemathesis generates valid and invalid requests from /openapi.json, sent with the API key,
    with no credential and with a session token; none may get a 5xx, and every answer must match
    the spec (status code, content type, body schema)."""
    schemathesis = pytest.importorskip("schemathesis")
    from hypothesis import HealthCheck, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.core.errors import InvalidSchema
    from schemathesis.generation import GenerationMode
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    must_see, only, examples = FUZZ_CREDENTIALS[credential]
    server = service_process()
    schema = schemathesis.openapi.from_url(f"{server.base_url}/openapi.json")
    statuses: dict[tuple[str, str], list[int]] = {}
    for result in schema.get_all_operations():
        op = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if mode == GenerationMode.NEGATIVE and op.path in INPUTLESS:
                continue  # no inputs to get wrong
            # Half the cases address a live negotiation, so the move logic is reached, not only the 404.
            opened = httpx.post(f"{server.base_url}/v1/negotiations", json={"seed": 0}, headers=server.headers).json()
            sid = opened["id"]
            headers = {
                "api_key": server.headers,
                "none": {},
                "session_token": {"Authorization": f"Bearer {opened['token']}"},
            }[credential]
            seen = statuses.setdefault((op.label, mode.value), [])

            @given(case=op.as_strategy(generation_mode=mode))
            @settings(
                max_examples=examples,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=True,
                database=None,
            )
            def run(case):
                if case.path_parameters and "negotiation_id" in case.path_parameters and len(seen) % 2:
                    case.path_parameters["negotiation_id"] = sid
                response = case.call(base_url=server.base_url, headers=headers, timeout=10)
                seen.append(response.status_code)
                case.validate_response(
                    response,
                    checks=[
                        not_a_server_error,
                        status_code_conformance,
                        content_type_conformance,
                        response_schema_conformance,
                    ],
                )

            try:
                run()
            except InvalidSchema:
                # Schemathesis's negative mutator gives up on parts of the large Scenario schema
                # ("cannot generate an array with 1 demanded elements"): a generator limit, not an
                # answer from the service. The cases generated until then were checked.
                assert mode == GenerationMode.NEGATIVE, op.label
    minimum = min(20, examples)
    # 4 operations with inputs x 2 modes, and the 2 without (one answer is all they have)
    assert len(statuses) == 10 and all(
        len(v) >= minimum for k, v in statuses.items() if k[0].split()[1] not in INPUTLESS
    ), {k: len(v) for k, v in statuses.items()}
    every = {code for v in statuses.values() for code in v}
    assert must_see <= every and max(every) < 500, statuses
    assert only is None or every <= only, every

"""Buyer agents meet a real ``negotiator serve`` over MCP and A2A, with the official clients,
on loopback: deals and walk-aways, refused credentials, bad terms as tool errors, a restart
between two moves, signed agreements; and ``negotiator eval --buyer mcp+http://... --buyer-model ...``
gives the in-process outcomes."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import httpx
import httpx2
import pytest
from a2a.client import ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToDict
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from negotiator.agreements import AgreementRecord, InvalidAgreement, SigningKey, verify_agreement
from negotiator.remote import remote_parties
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.testing import FakeOpenAIServer, FakeReply

KEY = "test-key-0123456789abcdef"


def llm_buyer(action: str):
    """A scripted LLM buyer behind a loopback OpenAI-compatible server: always ``action``."""

    def handler(req):
        message = {"accept": "Deal, that works.", "walk_away": "Too far apart, goodbye."}[action]
        if req.get("tools"):
            return FakeReply(tool_call=(action, {"message": message}))
        return json.dumps({"action": action, "message": message})

    return handler


@pytest.fixture
def served(service_process):
    return service_process(seller="rule/boulware", key=KEY)


def _bearer(credential):
    return {"Authorization": f"Bearer {credential}"}


class MCP:
    """An MCP client session on the service, with one credential."""

    def __init__(self, base_url: str, credential: str | None):
        self.url, self.credential = f"{base_url}/mcp", credential

    async def __aenter__(self):
        self._http = httpx2.AsyncClient(headers=_bearer(self.credential) if self.credential else {})
        await self._http.__aenter__()
        self._client = Client(streamable_http_client(self.url, http_client=self._http))
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc):
        await self._client.__aexit__(*exc)
        await self._http.__aexit__(*exc)

    async def call(self, tool: str, **args):
        return await self._client.call_tool(tool, args)


# --- MCP ----------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["mcp", "a2a"])
@pytest.mark.parametrize("action", ["accept", "walk_away"])
async def test_an_llm_buyer_negotiates_with_the_served_seller_over_the_protocol(served, monkeypatch, protocol, action):
    """The LLM buyer's moves reach the served seller only as protocol calls; the episode is the
    remote negotiation, ending in a signed deal or a walk-away on both sides."""
    monkeypatch.setenv("NEGOTIATOR_API_KEY", KEY)
    scenario = generate(1)  # the seller opens: the buyer's first move may accept
    url = f"{protocol}+{served.base_url}" + ("/mcp" if protocol == "mcp" else "")
    with FakeOpenAIServer(llm_buyer(action)) as llm:
        buyer = make_party(
            "hosted_vllm/fake", "buyer", base_url=llm.base_url, instructions="A careful procurement officer."
        )
        seller, relayed = remote_parties(url, buyer, scenario)
        try:
            ep = await run_negotiation(seller, relayed, scenario)
        finally:
            await seller.aclose()
            await relayed.aclose()
        assert llm.requests, "the buyer's model decided the moves"
    assert ep.error is None
    assert [t.party for t in ep.turns] == ["seller", "buyer"]
    remote = seller.negotiation.state
    assert [m.action.action for m in remote.transcript] == ["make_offer", action]
    assert remote.transcript[0].action == ep.turns[0].action  # the remote seller's move is the episode's seller turn
    if action == "accept":
        assert ep.outcome.deal and remote.status == "deal" and remote.agreement == ep.outcome.terms
        jwks = httpx.get(f"{served.base_url}/.well-known/jwks.json").json()
        record = verify_agreement(remote.agreement_record, jwks["keys"][0])
        assert record.terms == ep.outcome.terms and record.session_id == remote.id and record.listing_id == scenario.id
        assert ep.metrics.seller_score > 0
    else:
        assert not ep.outcome.deal and ep.outcome.ended_by == "walk_away"
        assert remote.status == "no_deal" and remote.agreement_record is None


async def test_mcp_refuses_a_wrong_key_and_a_token_of_another_negotiation(served):
    r = httpx.post(
        f"{served.base_url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers=_bearer("wrong-key-0123456789"),
    )
    assert r.status_code == 401 and r.json()["error"] == "unauthorized"  # before the body is read, as on /v1
    # The MCP client raises its transport's 401, wrapped in an ExceptionGroup or not by version.
    with pytest.raises(Exception):  # noqa: B017
        async with MCP(served.base_url, "wrong-key-0123456789") as c:
            await c.call("list_listings")
    async with MCP(served.base_url, KEY) as c:
        a = (await c.call("open_negotiation", seed=0)).structured_content
        b = (await c.call("open_negotiation", seed=0)).structured_content
    async with MCP(served.base_url, a["token"]) as c:
        mine = await c.call("get_negotiation")  # a token names its negotiation
        assert not mine.is_error and mine.structured_content["id"] == a["id"]
        other = await c.call("get_negotiation", negotiation_id=b["id"])
        assert (
            other.is_error
            and "forbidden: this session token reads and moves only the negotiation it was issued for"
            in other.content[0].text
        )
        opened = await c.call("open_negotiation", seed=0)
        assert opened.is_error and "forbidden: opening a negotiation needs the API key" in opened.content[0].text


async def test_mcp_tools_carry_the_rest_models_and_errors(served):
    async with MCP(served.base_url, KEY) as c:
        tools = {t.name: t for t in (await c._client.list_tools()).tools}
        assert set(tools) == {
            "list_listings",
            "open_negotiation",
            "get_negotiation",
            "make_offer",
            "accept",
            "walk_away",
        }
        assert "agreement_record" in tools["accept"].output_schema["properties"]
        assert "token" in tools["open_negotiation"].output_schema["properties"]
        listings = (await c.call("list_listings")).structured_content["listings"]
        assert {x["listing_id"] for x in listings} >= {"furniture-0", "saas_seats-0"}
        assert all(
            not {"reservation", "weights", "seller_limits"} & set(json.dumps(x).replace('"', " ").split())
            for x in listings
        )

        st = (await c.call("open_negotiation", listing_id="furniture-0")).structured_content
        assert st["status"] == "open" and st["scenario"]["id"] == "furniture-0"
        sc = generate(0)
        terms = {**sc.buyer.ideal(sc.space), "delivery_days": 6}
        bad = await c.call("make_offer", negotiation_id=st["id"], terms=terms)
        assert bad.is_error and "invalid_request: invalid offer: delivery_days" in bad.content[0].text
        rest = httpx.post(
            f"{served.base_url}/v1/negotiations/{st['id']}/moves",
            json={"action": "offer", "terms": terms},
            headers=served.headers,
        ).json()
        assert rest["message"] in bad.content[0].text  # the same words as the REST 422
        early = await c.call("accept", negotiation_id=st["id"])
        assert early.is_error and early.content[0].text.startswith(
            "Error executing tool accept: conflict: cannot accept"
        )
        unknown = await c.call("open_negotiation", listing_id="no-such-thing")
        assert unknown.is_error and "no listing 'no-such-thing' in the catalogue" in unknown.content[0].text
        # Before: False was read as turn 0 and the walk-away ended the negotiation; True as seed 1.
        stale = await c.call("walk_away", negotiation_id=st["id"], expected_turn=False)
        assert stale.is_error and "False is not a number" in stale.content[0].text
        assert (await c.call("get_negotiation", negotiation_id=st["id"])).structured_content["status"] == "open"
        seeded = await c.call("open_negotiation", seed=True)
        assert seeded.is_error and "True is not a number" in seeded.content[0].text
        # Arguments that do not fit a tool's schema read as the REST API's 422. Before: pydantic's multi-line
        # "1 validation error for make_offerArguments ... For further information visit https://errors.pydantic.dev".
        for args, says in (
            ({"terms": terms, "expected_turn": -1}, "expected_turn: Input should be greater than or equal to 0"),
            ({"terms": "price 600"}, "terms: Input should be a valid dictionary"),
        ):
            wrong = await c.call("make_offer", negotiation_id=st["id"], **args)
            assert (
                wrong.is_error and wrong.content[0].text == f"Error executing tool make_offer: invalid_request: {says}"
            )
        # Before: an argument the tool does not take was dropped, and the walk-away ended the negotiation
        # without the stale-move check the caller asked for.
        typo = await c.call("walk_away", negotiation_id=st["id"], expected_trun=5)
        assert typo.is_error and typo.content[0].text == (
            "Error executing tool walk_away: invalid_request: expected_trun: unknown argument; "
            "walk_away takes message, negotiation_id, expected_turn"
        )
        assert (await c.call("get_negotiation", negotiation_id=st["id"])).structured_content["status"] == "open"
        wrong = await c.call("get_negotiation")  # before: "forbidden: give negotiation_id", with the API key
        assert wrong.content[0].text.endswith(
            ": invalid_request: give negotiation_id (the id open_negotiation returned)"
        )
        wrong = await c.call("get_negotiation", negotiation_id="XYZ")
        assert wrong.content[0].text.endswith(
            "invalid_request: negotiation_id: String should match pattern '^[0-9a-f]{32}$'"
        )


async def test_an_mcp_negotiation_continues_across_a_restart_of_the_service(served):
    sc = generate(0)  # the buyer opens
    async with MCP(served.base_url, KEY) as c:
        st = (await c.call("open_negotiation", seed=0)).structured_content
        st = (
            await c.call("make_offer", negotiation_id=st["id"], terms=sc.buyer.ideal(sc.space), expected_turn=0)
        ).structured_content
        assert st["turn"] == 2 and st["transcript"][-1]["party"] == "seller"
        served.restart()
        st = (
            await c.call(
                "make_offer",
                negotiation_id=st["id"],
                terms={"price": sc.buyer.ideal(sc.space)["price"] + 20},
                expected_turn=2,
            )
        ).structured_content  # the same client, a new process
    assert (
        st["turn"] == 4 and st["status"] == "open" and [m["party"] for m in st["transcript"]] == ["buyer", "seller"] * 2
    )


async def test_a_public_catalogue_lets_an_agent_open_with_no_key_and_go_on_with_its_token(service_process):
    served = service_process(seller="rule/boulware", key=KEY, args=("--public-catalogue",))
    async with MCP(served.base_url, None) as c:
        assert not (await c.call("list_listings")).is_error
        by_seed = await c.call("open_negotiation", seed=0)
        assert (
            by_seed.is_error and "forbidden" in by_seed.content[0].text
        )  # only the catalogue's listings, at its limits
        st = (await c.call("open_negotiation", listing_id="saas_seats-0")).structured_content
        anonymous = await c.call("accept", negotiation_id=st["id"])
        assert anonymous.is_error and "forbidden" in anonymous.content[0].text
    async with MCP(served.base_url, st["token"]) as c:
        done = (await c.call("accept", expected_turn=st["turn"])).structured_content
    assert done["status"] == "deal" and done["agreement_record"]["listing_id"] == "saas_seats-0"


# --- A2A ----------------------------------------------------------------------------


async def _a2a(base_url: str, credential: str):
    http = httpx.AsyncClient(headers=_bearer(credential) if credential else None)
    return http, await create_client(base_url, client_config=ClientConfig(httpx_client=http, streaming=False))


async def _send(client, parts, task: pb.Task | None = None) -> pb.Task:
    message = pb.Message(
        message_id=uuid.uuid4().hex,
        role=pb.Role.ROLE_USER,
        parts=parts,
        task_id=task.id if task else "",
        context_id=task.context_id if task else "",
    )
    out = [e.task async for e in client.send_message(pb.SendMessageRequest(message=message)) if e.HasField("task")]
    return out[-1]


def _reply(task: pb.Task) -> tuple[str, dict]:
    parts = MessageToDict(task.status.message)["parts"]
    return parts[0]["text"], parts[1]["data"]


async def test_the_agent_card_describes_the_negotiate_skill(served):
    card = httpx.get(f"{served.base_url}/.well-known/agent-card.json").json()
    assert [s["id"] for s in card["skills"]] == ["negotiate"]
    assert card["supportedInterfaces"][0]["url"] == f"{served.base_url}/a2a"
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "bearer"


async def test_an_a2a_task_stays_input_required_on_the_buyers_turn_and_survives_a_restart(served):
    sc = generate(0)
    http, client = await _a2a(served.base_url, KEY)
    try:
        task = await _send(client, [new_data_part({"seed": 0})])
        assert task.id.isalnum() and len(task.id) == 32  # the task id is the negotiation's id
        assert task.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED
        task = await _send(
            client,
            [new_data_part({"action": "offer", "terms": sc.buyer.ideal(sc.space)}), new_text_part("Hello!")],
            task,
        )
        text, data = _reply(task)
        assert task.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED
        assert data["seller_move"]["action"] == "make_offer" and text == data["seller_move"]["message"]
        assert data["state"]["transcript"][0]["action"]["message"] == "Hello!"  # the text part is the buyer's words
        bad = await _send(client, [new_data_part({"action": "offer", "terms": {"delivery_days": 6}})], task)
        text, data = _reply(bad)
        assert bad.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED  # a bad move leaves the negotiation as it was
        assert data["error"]["error"] == "invalid_request" and "delivery_days" in text and data["state"]["turn"] == 2
        # Before: two moves in one message were merged, the later data part winning (here: an accept).
        two = await _send(client, [new_data_part({"action": "walk_away"}), new_data_part({"action": "accept"})], task)
        text, data = _reply(two)
        assert two.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED and data["state"]["turn"] == 2
        said = "two data parts give different 'action': send one move per message, in one data part"
        assert data["error"] == {"error": "invalid_request", "message": said} and text == said
    finally:
        await client.close()
        await http.aclose()
    served.restart()
    http, client = await _a2a(served.base_url, KEY)
    try:
        stored = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert stored.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED
        assert "token" not in json.dumps(MessageToDict(stored))  # the token was shown once, never stored
        done = await _send(client, [new_data_part({"action": "accept"}), new_text_part("Deal.")], stored)
        assert done.status.state == pb.TaskState.TASK_STATE_COMPLETED
        _, data = _reply(done)
        assert data["state"]["status"] == "deal" and data["state"]["turn"] == 3
        record = MessageToDict(done.artifacts[0].parts[0].data)
        assert done.artifacts[0].name == "agreement" and record == data["state"]["agreement_record"]
        jwks = httpx.get(f"{served.base_url}/.well-known/jwks.json").json()
        verify_agreement(record, jwks["keys"][0])
    finally:
        await client.close()
        await http.aclose()


def _deep(levels: int) -> dict:
    data: dict = {}
    node = data
    for _ in range(levels):
        node["a"] = {}
        node = node["a"]
    return data


async def test_a2a_answers_bad_bodies_in_its_own_words_and_logs_no_trace(served):
    """Before: the Python exception's text as the answer (a codec error, a RecursionError) and a
    ~430-line protobuf trace in the log for data nested 150 deep."""
    url, headers = f"{served.base_url}/a2a", {**served.headers, "A2A-Version": "1.0"}
    opening = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"data": _deep(150)}]}
    cases = [
        (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"x": "\xff\xfe"}}', -32700, "not UTF-8"),
        (
            (
                '{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": ' + "[" * 3000 + "]" * 3000 + "}"
            ).encode(),
            -32600,
            "nested deeper than 64 levels",
        ),
        (json.dumps({**opening, "params": {"message": message}}).encode(), -32600, "nested deeper than 64 levels"),
        (b'{"jsonrpc": "2.0", "id": 1, "method": ', -32700, "not JSON"),
    ]
    for body, code, says in cases:
        r = httpx.post(url, content=body, headers={**headers, "Content-Type": "application/json"})
        error = r.json()["error"]
        assert error["code"] == code and says in error["message"], r.text
        assert "codec" not in error["message"] and "recursion" not in error["message"]
    # A nesting a negotiation's data may hold still goes through to the SDK.
    fine = httpx.post(
        url,
        json={**opening, "params": {"message": {**message, "parts": [{"data": _deep(20)}]}}},
        headers=headers,
    ).json()
    assert "nested" not in json.dumps(fine)
    assert "Traceback" not in served.log.read_text()


async def test_a_refused_a2a_opening_leaves_nothing_behind(service_process):
    """Before: every refused opening was kept in memory for good (40 openings with a 900 KB text
    part: 142 to 187 MB), and anyone could read its whole history back by task id."""
    served = service_process(seller="rule/boulware", key=KEY, args=("--public-catalogue",))
    bulky = new_text_part("x" * 200_000)
    http, client = await _a2a(served.base_url, None)
    try:
        refused = await _send(client, [new_data_part({"listing_id": "no-such-listing"}), bulky])
        assert refused.status.state == pb.TaskState.TASK_STATE_REJECTED
        with pytest.raises((A2AError, A2AClientError)):
            await client.get_task(pb.GetTaskRequest(id=refused.id))  # anonymous: nothing there (or a 401)
    finally:
        await client.close()
        await http.aclose()
    http, client = await _a2a(served.base_url, KEY)
    try:
        with pytest.raises(A2AError):
            await client.get_task(pb.GetTaskRequest(id=refused.id))  # the business: nothing kept either
    finally:
        await client.close()
        await http.aclose()


async def test_a_negotiation_opened_over_rest_is_the_same_a2a_task(served):
    """Before: "Task ... not found" for any negotiation that no A2A message opened."""
    sc = generate(2)
    opened = httpx.post(f"{served.base_url}/v1/negotiations", json={"seed": 2}, headers=served.headers).json()
    moved = httpx.post(
        f"{served.base_url}/v1/negotiations/{opened['id']}/moves",
        json={"action": "offer", "terms": sc.buyer.ideal(sc.space), "message": "Over REST."},
        headers=_bearer(opened["token"]),
    ).json()
    http, client = await _a2a(served.base_url, opened["token"])
    try:
        task = await client.get_task(pb.GetTaskRequest(id=opened["id"]))
        assert task.id == opened["id"] and task.status.state == pb.TaskState.TASK_STATE_INPUT_REQUIRED
        text, data = _reply(task)
        assert data["state"]["turn"] == moved["turn"] == 2 and "token" not in data["state"]
        assert data["seller_move"] == moved["transcript"][-1]["action"] and text == data["seller_move"]["message"]
        done = await _send(client, [new_data_part({"action": "accept"}), new_text_part("Deal, over A2A.")], task)
        assert done.status.state == pb.TaskState.TASK_STATE_COMPLETED and done.artifacts[0].name == "agreement"
    finally:
        await client.close()
        await http.aclose()
    stored = httpx.get(f"{served.base_url}/v1/negotiations/{opened['id']}", headers=served.headers).json()
    assert stored["status"] == "deal" and stored["transcript"][-1]["action"]["message"] == "Deal, over A2A."


async def test_a2a_refuses_a_wrong_key_and_a_token_of_another_task(served):
    r = httpx.post(
        f"{served.base_url}/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}},
        headers=_bearer("wrong-key-0123456789"),
    )
    assert r.status_code == 401
    http, client = await _a2a(served.base_url, KEY)
    try:
        a = await _send(client, [new_data_part({"seed": 1})])
        b = await _send(client, [new_data_part({"seed": 1})])
        _, data = _reply(a)
        token = data["state"]["token"]
    finally:
        await client.close()
        await http.aclose()
    http, client = await _a2a(served.base_url, token)
    try:
        mine = await client.get_task(pb.GetTaskRequest(id=a.id))
        assert mine.id == a.id
        with pytest.raises(A2AError):
            await client.get_task(pb.GetTaskRequest(id=b.id))  # as if unknown
        with pytest.raises(A2AError):
            await _send(client, [new_data_part({"action": "accept"})], b)
        assert (
            await _send(client, [new_data_part({"action": "accept"})], a)
        ).status.state == pb.TaskState.TASK_STATE_COMPLETED
    finally:
        await client.close()
        await http.aclose()


# --- agreements ---------------------------------------------------------------------


def test_a_genuine_agreement_verifies_and_a_tampered_one_does_not():
    from negotiator.agreements import agreement_record

    sc = generate(1)
    key = SigningKey.generate()
    record = agreement_record(sc.listing(), "a" * 32, sc.seller.ideal(sc.space), "2026-01-01T00:00:00.000+00:00", key)
    price = sc.space.issues[0].name
    assert record.price.currency == sc.currency and record.price_issue == price
    assert verify_agreement(record, key.verify_key) == record
    assert (
        verify_agreement(record.model_dump_json(), str(key.verify_key)) == record
    )  # as JSON text, with the key as text
    cheaper = record.model_dump(mode="json")
    cheaper["terms"][price] -= 100
    with pytest.raises(InvalidAgreement, match="changed after it was signed"):
        verify_agreement(cheaper, key.verify_key)
    moved = {**record.model_dump(mode="json"), "price": {"amount": "1.00", "currency": sc.currency}}
    with pytest.raises(InvalidAgreement):
        verify_agreement(moved, key.verify_key)
    with pytest.raises(InvalidAgreement, match="not by this key"):
        verify_agreement(record, SigningKey.generate().verify_key)
    with pytest.raises(InvalidAgreement, match="no signature"):
        verify_agreement(record.model_copy(update={"signature": None}), key.verify_key)


async def test_sessions_sign_the_deal_and_the_service_verifies_it(served):
    opened = httpx.post(f"{served.base_url}/v1/negotiations", json={"seed": 1}, headers=served.headers).json()
    done = httpx.post(
        f"{served.base_url}/v1/negotiations/{opened['id']}/moves",
        json={"action": "accept"},
        headers=_bearer(opened["token"]),
    ).json()
    record = done["agreement_record"]
    assert done["status"] == "deal" and record["terms"] == done["agreement"]
    again = httpx.get(f"{served.base_url}/v1/negotiations/{opened['id']}", headers=served.headers).json()
    assert again["agreement_record"] == record  # stored once, the same on every read
    check = httpx.post(f"{served.base_url}/v1/agreements/verify", json=record, headers=served.headers).json()
    assert check["valid"] is True
    record["terms"][AgreementRecord.model_validate(record).price_issue] -= 1
    check = httpx.post(f"{served.base_url}/v1/agreements/verify", json=record, headers=served.headers).json()
    assert check["valid"] is False and "changed after it was signed" in check["reason"]
    refused = httpx.post(f"{served.base_url}/v1/agreements/verify", json=record, headers=_bearer(opened["token"]))
    assert refused.status_code == 403


# --- eval over the protocol ---------------------------------------------------------


@pytest.mark.parametrize("protocol", ["mcp", "a2a"])
def test_eval_of_a_served_seller_over_the_protocol_matches_the_in_process_evaluation(served, tmp_path, protocol):
    """`negotiator eval --buyer mcp+http://... --buyer-model rule/linear` against `negotiator serve --seller
    rule/boulware` plays the same negotiations to the same outcomes as `--seller rule/boulware` in process;
    the alias `--seller mcp+http://... --buyer rule/linear` is the same run (it finds every episode done)."""
    from negotiator.sim import read_episodes

    def evaluate(out, *args: str) -> subprocess.CompletedProcess:
        env = {**__import__("os").environ, "NEGOTIATOR_API_KEY": KEY}
        r = subprocess.run(
            [sys.executable, "-m", "negotiator", "eval", "--suite", "quick", *args, "--out", str(out), "--quiet"],
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        return r

    def episodes(out) -> dict:
        return {e.labels["negotiation"]: e for e in read_episodes(out / "episodes.jsonl")}

    url = f"{protocol}+{served.base_url}" + ("/mcp" if protocol == "mcp" else "")
    evaluate(tmp_path / "local", "--seller", "rule/boulware", "--buyer", "rule/linear")
    evaluate(tmp_path / "remote", "--buyer", url, "--buyer-model", "rule/linear")
    local, remote = episodes(tmp_path / "local"), episodes(tmp_path / "remote")
    assert len(local) == 6 and local.keys() == remote.keys()  # the same negotiations: `negotiator report` pairs them
    for k, ep in local.items():
        other = remote[k]
        assert other.error is None and other.seller.spec == url and other.buyer.spec == "rule/linear"
        assert other.outcome == ep.outcome and other.metrics.seller_score == ep.metrics.seller_score
        assert [t.action for t in other.turns] == [t.action for t in ep.turns]
    alias = evaluate(tmp_path / "remote", "--seller", url, "--buyer", "rule/linear")
    assert "6 of 6 negotiations already done" in alias.stdout
    assert episodes(tmp_path / "remote").keys() == remote.keys()


def test_the_protocol_buyer_form_refuses_what_it_cannot_mean(tmp_path):
    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "negotiator", "eval", "--suite", "quick", *args, "--out", str(tmp_path / "x")],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )

    url = "mcp+http://127.0.0.1:9/mcp"
    for args, says in [
        (
            ("--buyer", url, "--seller", "rule/boulware"),
            f"--buyer {url} measures the seller served there: drop --seller",
        ),
        (("--buyer", url, "--buyer", "rule/linear"), "give it once, and the buyer agents as --buyer-model"),
        (
            ("--buyer-model", "rule/linear"),
            "--buyer-model is the model of a buyer agent that reaches a seller over a protocol",
        ),
    ]:
        r = run(*args)
        assert r.returncode == 2 and says in " ".join((r.stdout + r.stderr).split()), r.stdout + r.stderr


def test_only_the_canonical_signature_encoding_verifies():
    """Every other spelling of the same 64 bytes is refused: a checkout that keys on the signature
    string sees one agreement once (trailing-bit variants, '=' padding and the '+/' alphabet all
    verified before)."""
    import base64

    from negotiator.agreements import agreement_record

    sc = generate(1)
    key = SigningKey.generate()
    record = agreement_record(sc.listing(), "a" * 32, sc.seller.ideal(sc.space), "2026-01-01T00:00:00.000+00:00", key)
    canonical = record.signature.value
    raw = base64.urlsafe_b64decode(canonical + "==")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    # 64 bytes are 86 characters; the last carries 2 bits of data and 4 zero bits: 15 other values decode alike.
    variants = [canonical[:-1] + c for c in alphabet if c != canonical[-1]]
    variants = [v for v in variants if base64.urlsafe_b64decode(v + "==") == raw]
    assert len(variants) == 15
    variants += [canonical + "==", base64.b64encode(raw).decode(), base64.b64encode(raw).decode().rstrip("=")]
    variants = [v for v in variants if v != canonical]
    assert len(variants) >= 17
    for spelled in variants:
        forged = record.model_copy(update={"signature": record.signature.model_copy(update={"value": spelled})})
        with pytest.raises(InvalidAgreement, match="canonical base64url"):
            verify_agreement(forged, key.verify_key)
    assert verify_agreement(record, key.verify_key) == record

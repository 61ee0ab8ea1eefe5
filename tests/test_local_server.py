"""The local model server, on a tiny random Gemma 3: lifecycle, batching, structured outputs,
LoRA adapters, and the very same LiteLLM route a vLLM host gets."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import httpx
import jsonschema
import pytest

from negotiator import SellerAgent
from negotiator.actions import action_json_schema, parse_text_action
from negotiator.errors import UsageError
from negotiator.models.base import ModelRequest
from negotiator.models.local import local_model, local_servers, running_servers, stop_all
from negotiator.models.local.servers import LocalServer, resolve_target
from negotiator.models.resolve import resolve_model
from negotiator.party import PartyView
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.testing import FakeOpenAIServer

TINY = "local/tiny-random-gemma"


@pytest.fixture(scope="module")
def home(tiny_home):
    return tiny_home


@pytest.fixture(scope="module")
def server(home):
    """One running tiny server shared by the tests that only talk to it."""
    s = LocalServer(resolve_target("tiny-random-gemma")).start()
    yield s
    s.stop()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped) counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pid: int, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _view(scenario) -> PartyView:
    return PartyView.of(scenario, "seller", (), None)


# --- lifecycle ----------------------------------------------------------------------------


def test_server_starts_healthy_and_stops(home):
    s = LocalServer(resolve_target("tiny-random-gemma")).start()
    pid, port = s.proc.pid, s.port
    assert s.healthy() and s.base_url == f"http://127.0.0.1:{port}/v1"
    with urllib.request.urlopen(f"{s.base_url}/models") as r:
        assert json.load(r)["data"][0]["id"] == "tiny-random-gemma"
    s.stop()
    assert _wait_gone(pid) and not s.healthy(0.5)


def test_no_server_left_after_an_exception(home):
    with pytest.raises(RuntimeError, match="boom"):
        with local_servers([TINY, "rule/boulware"]) as started:
            (s,) = started
            pid = s.proc.pid
            assert s.healthy()
            raise RuntimeError("boom")
    assert running_servers() == [] and _wait_gone(pid)


_PARENT = textwrap.dedent(
    """
    import sys, time
    from negotiator.models.local import local_servers
    with local_servers(["local/tiny-random-gemma"]) as (s,):
        print(s.proc.pid, flush=True)
        time.sleep(600)
    """
)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_server_dies_with_its_parent(home, sig):
    """Ctrl-C stops it through the context manager; SIGTERM/SIGKILL skip all cleanup, and the child sees its
    parent go."""
    # A shell that starts pytest in the background hands it SIGINT ignored; the parent must get
    # Ctrl-C as a terminal would deliver it.
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        child = int(parent.stdout.readline())
        assert _alive(child)
        parent.send_signal(sig)
        parent.wait(180)  # generous: Ctrl-C stops the server gracefully, slow on a loaded machine
        assert _wait_gone(child), f"server {child} outlived its parent after {sig!r}"
    finally:
        parent.kill()


def test_parties_share_one_server_per_model(home):
    try:
        a, b = local_model(TINY), resolve_model(TINY)
        req = ModelRequest(messages=[{"role": "user", "content": "hi"}], max_tokens=3)

        async def both():
            return await asyncio.gather(a.complete(req), b.complete(req))

        asyncio.run(both())
        assert len(running_servers()) == 1
        assert a._client.base_url == b._client.base_url
    finally:
        stop_all()
    assert running_servers() == []


def test_local_spec_refuses_a_base_url(home):
    with pytest.raises(UsageError, match="takes no base URL"):
        SellerAgent(TINY, base_url="http://127.0.0.1:9/v1")
    with pytest.raises(UsageError, match="grammar must be on or off"):
        local_model(TINY + "?grammar=maybe")


# --- the same route as a vLLM host ------------------------------------------------------------


async def test_local_seller_sends_what_a_vllm_host_receives(home, seller_first):
    """local/... talks to its server as hosted_vllm/<name> + base URL: any OpenAI-compatible server will do."""
    terms = seller_first.seller.ideal(seller_first.space)
    answer = json.dumps({"action": "make_offer", "message": "Welcome.", "terms": terms})
    model = local_model(TINY)
    with FakeOpenAIServer(lambda req: answer) as fake:

        class Elsewhere:  # a server somewhere else: only the URL differs
            base_url = fake.base_url

        client = model.client(Elsewhere)  # the very client local/ builds for its own server
        assert client.model == "hosted_vllm/tiny-random-gemma" and client.supports_response_schema
        turn = await SellerAgent(client, strategy=None).respond(seller_first)  # the pure seller: terms of its own
    assert turn.action.terms == terms
    req = fake.requests[0]
    assert req["model"] == "tiny-random-gemma"
    assert req["response_format"]["type"] == "json_schema"
    assert req["response_format"]["json_schema"]["schema"] == action_json_schema(
        seller_first.space, ("make_offer", "walk_away")
    )
    assert "tools" not in req
    assert running_servers() == []  # nothing was started


async def test_hosted_vllm_spec_drives_the_local_server(server, seller_first):
    """The other direction: the local server is a vLLM stand-in for hosted_vllm/... + --seller-base-url."""
    turn = await SellerAgent("hosted_vllm/tiny-random-gemma", base_url=server.base_url).respond(seller_first)
    assert not turn.fallback and turn.invalid_attempts == []  # the grammar made the random model's answer valid
    assert turn.usage.prompt_tokens > 100 and turn.usage.completion_tokens > 5


# --- structured outputs and batching --------------------------------------------------------


def test_constrained_decoding_yields_schema_valid_actions(server):
    """A random model writes valid actions only because of the grammar: with it 100%, without it ~never."""
    from evals.suites import get_suite
    from negotiator.llm.prompt import render_messages

    scenarios = get_suite("quick").scenarios()
    before = httpx.get(server.base_url.replace("/v1", "/metrics")).json()

    def ask(sc, constrained: bool, i: int):
        schema = action_json_schema(sc.space, ("make_offer", "walk_away"))
        body = {
            "model": "tiny-random-gemma",
            "messages": render_messages(_view(sc)),
            "max_tokens": 160,
            "temperature": 1.0,
            "seed": i,
        }
        if constrained:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "action", "schema": schema}}
        r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=120)
        assert r.status_code == 200, r.text
        return sc, schema, r.json()

    async def all_at_once(constrained: bool):
        jobs = [asyncio.to_thread(ask, scenarios[i % len(scenarios)], constrained, i) for i in range(12)]
        return await asyncio.gather(*jobs)

    valid = 0
    for sc, schema, resp in asyncio.run(all_at_once(True)):
        text = resp["choices"][0]["message"]["content"]
        if resp["choices"][0]["finish_reason"] == "stop":
            jsonschema.validate(json.loads(text, strict=False), schema)
            parse_text_action(text, sc.space)
            valid += 1
        assert resp["usage"]["completion_tokens"] >= 1
    assert valid >= 10  # a row may only fail by running out of tokens mid-message
    after = httpx.get(server.base_url.replace("/v1", "/metrics")).json()
    assert after["rows"] - before["rows"] == 12
    assert after["batches"] - before["batches"] <= 4  # concurrent requests shared forward passes

    free = 0
    for sc, _, resp in asyncio.run(all_at_once(False)):
        try:
            parse_text_action(resp["choices"][0]["message"]["content"], sc.space)
            free += 1
        except Exception:
            pass
    assert free <= 1


def test_usage_counts_real_tokens(server):
    from transformers import AutoTokenizer

    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Offer a price."}]
    r = httpx.post(
        f"{server.base_url}/chat/completions", json={"messages": msgs, "max_tokens": 7, "temperature": 0}, timeout=60
    ).json()
    tok = AutoTokenizer.from_pretrained(os.path.join(os.environ["NEGOTIATOR_HOME"], "models", "tiny-random-gemma"))
    expected = len(
        tok(tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True), add_special_tokens=False)[
            "input_ids"
        ]
    )
    assert r["usage"]["prompt_tokens"] == expected
    assert 1 <= r["usage"]["completion_tokens"] <= 7
    assert r["choices"][0]["finish_reason"] in ("stop", "length")
    # greedy is deterministic
    r2 = httpx.post(
        f"{server.base_url}/chat/completions", json={"messages": msgs, "max_tokens": 7, "temperature": 0}, timeout=60
    ).json()
    assert r2["choices"][0]["message"]["content"] == r["choices"][0]["message"]["content"]


def _schema(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"messages": [{"role": "user", "content": "x"}], "stream": True}, 400, "streaming"),
        ({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]}, 400, "tool"),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "response_format": {"type": "json_schema", "json_schema": {}},
            },
            400,
            "schema",
        ),
        ({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}, 400, "alternate"),
        ({"messages": []}, 400, "messages"),
        # out of range or not a number: refused as vLLM refuses them, never clamped or passed to the decoder
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, 400, "max_tokens: Input should be greater"),
        (
            {"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5},
            400,
            "max_tokens: Input should be a valid integer",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "temperature": -1},
            400,
            "temperature: Input should be greater",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "top_p": 0}, 400, "top_p: Input should be greater than 0"),
        ({"messages": [{"role": "user", "content": "x"}], "top_k": -5}, 400, "top_k: Input should be greater"),
        ({"messages": [{"role": "user", "content": "x"}], "seed": 1.5}, 400, "seed: Input should be a valid integer"),
        ({"messages": [{"role": "user", "content": "x"}], "n": 0}, 400, "n must be 1"),
        ({"messages": [1]}, 400, "messages.0: Input should be an object"),
        # what the chat template would drop without a word: the model answered an empty turn
        ({"messages": [{"role": "user"}]}, 400, "messages.0.content is missing"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
            400,
            "messages.0.content: this model reads text parts only, not 'image_url'",
        ),
        # what it cannot honour is refused, not ignored
        (
            {"messages": [{"role": "user", "content": "x"}], "stop": ["}"]},
            400,
            "stop: stop sequences are not supported",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "logprobs": True}, 400, "logprobs are not supported"),
        ({"messages": [{"role": "user", "content": "x"}], "guided_json": {"type": "object"}}, 400, "response_format"),
        # a schema keyword the grammar would compile without enforcing: the answer could break it
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "response_format": _schema(
                    {"type": "object", "properties": {"not": {"type": "array", "uniqueItems": True}}}
                ),
            },
            400,
            "the grammar does not enforce `uniqueItems` (at #/properties/not)",
        ),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "response_format": _schema(
                    {"anyOf": [{"type": "integer", "not": {"const": 3}}, {"type": "string", "format": "iri"}]}
                ),
            },
            400,
            "the grammar does not enforce `not` (at #/anyOf/0)",
        ),
        (
            {
                "messages": [{"role": "user", "content": "x"}],
                "response_format": _schema(
                    {"allOf": [{"type": "integer"}, {"minimum": 5}]}  # "s" passed
                ),
            },
            400,
            "the grammar does not enforce `allOf` with more than one schema (at #)",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "response_format": _schema({"type": "foo"})},
            400,
            'cannot compile this JSON schema: Unsupported type "foo"',  # not "[19:14:44] /project/cpp/..."
        ),
        # vLLM's answer to a model it does not serve
        ({"messages": [{"role": "user", "content": "x"}], "model": "gpt-4o"}, 404, "The model `gpt-4o` does not exist"),
    ],
)
def test_bad_requests_get_clear_400s(server, body, status, words):
    r = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=30)
    assert r.status_code == status and words in r.json()["error"]["message"], r.text
    assert "\n" not in r.json()["error"]["message"]
    assert r.json()["error"]["code"] == status
    assert server.healthy()


@pytest.mark.parametrize(
    "raw, words",
    [
        (b"[]", "the request body must be a JSON object (an OpenAI chat completion request)"),
        (b"null", "the request body must be a JSON object (an OpenAI chat completion request)"),
        (b"{not json", "the request body is not JSON (key must be a string at line 1 column 2)"),
        (
            b'{"messages": [{"role": "user", "content": "x"}], "temperature": NaN}',
            "temperature: Input should be a finite number",
        ),
        (
            b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": Infinity}',
            "max_tokens: Input should be a finite number",
        ),
    ],
)
def test_malformed_and_non_finite_bodies_get_openai_shaped_400s(server, raw, words):
    """These were a plain-text 500 "Internal Server Error" (a list or null body, max_tokens Infinity) or
    were served as if valid (temperature NaN: greedy, without a word)."""
    r = httpx.post(f"{server.base_url}/chat/completions", content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["message"] == words, r.text


def test_a_bad_request_never_fails_the_requests_batched_with_it(server):
    """top_k=-5 reached the decoder and failed its whole batch: a good request sent at the same moment got
    500 "selected index k out of range" too."""
    good = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 1.0, "seed": 1}
    bad = {**good, "top_k": -5}

    async def both():
        async with httpx.AsyncClient(timeout=60) as c:
            url = f"{server.base_url}/chat/completions"
            return await asyncio.gather(*(c.post(url, json=b) for b in (good, bad, good)))

    statuses = [r.status_code for r in asyncio.run(both())]
    assert statuses == [200, 400, 200]


def test_the_context_and_the_body_size_are_bounded(server):
    """A chat longer than the model's context was decoded anyway (positions past what the model
    knows), and a 100 MB body was read, tokenized on the event loop (/health unanswered for minutes)
    and failed the batch with an out-of-memory 500."""
    url = f"{server.base_url}/chat/completions"
    context = httpx.get(f"{server.base_url}/models").json()["data"][0]["max_model_len"]
    assert context == 8192  # the tiny Gemma's max_position_embeddings
    long = {"messages": [{"role": "user", "content": "price " * 9000}], "max_tokens": 3}
    r = httpx.post(url, json=long, timeout=60)
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("this model's context is 8192 tokens")
    short = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 8190}
    r = httpx.post(url, json=short, timeout=60)
    assert r.status_code == 400 and "and max_tokens asks for 8190 more" in r.json()["error"]["message"]
    huge = b'{"messages": [{"role": "user", "content": "' + b"x" * (5 * 2**20) + b'"}]}'
    r = httpx.post(url, content=huge, headers={"Content-Type": "application/json"}, timeout=60)
    assert (
        r.status_code == 413 and r.json()["error"]["message"] == "the request body is over 4 MiB; send a shorter chat"
    )
    assert server.healthy()


def test_openai_shapes_for_models_and_unknown_paths(server):
    models = httpx.get(f"{server.base_url}/models").json()
    (model,) = models["data"]
    assert model["id"] == "tiny-random-gemma" and isinstance(model["created"], int) and model["object"] == "model"
    r = httpx.get(f"{server.base_url}/completions")
    assert r.status_code == 404 and r.json()["error"]["message"] == "GET /v1/completions: Not Found"
    r = httpx.get(f"{server.base_url}/chat/completions")
    assert r.status_code == 405 and r.json()["error"]["type"] == "invalid_request_error"


def test_a_loopback_server_answers_only_requests_addressed_to_loopback(server):
    """DNS rebinding: a web page the user opens points a name it controls at 127.0.0.1 and calls the
    local model with its Host. A server listening on loopback answers only loopback names."""
    port = server.base_url.split(":")[-1].split("/")[0]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "LOCALHOST"):
        r = httpx.get(f"{server.base_url}/models", headers={"Host": host})
        assert r.status_code == 200, host
    for host in (f"attacker.example:{port}", "127.0.0.1.attacker.example", "[2001:db8::1]:80"):
        r = httpx.post(
            f"{server.base_url}/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={"Host": host},
        )
        assert r.status_code == 421, host
        assert r.json()["error"]["message"] == (
            f"Host {host!r} is not this server's: it listens on loopback and answers requests to localhost, "
            "127.0.0.1 or [::1] only; to serve other names, start it with --host 0.0.0.0"
        )


def test_the_openai_client_reads_the_servers_answers_and_errors(server):
    """What a user of the OpenAI Python client sees: the model listed, answers, and OpenAI's exception
    classes with the server's one-line message."""
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list()] == ["tiny-random-gemma"]
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    r = client.chat.completions.create(
        model="tiny-random-gemma",
        messages=[{"role": "user", "content": "hi"}],
        max_tokens=30,
        temperature=0,
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": schema}},
    )
    assert r.model == "tiny-random-gemma" and r.usage.completion_tokens >= 1
    if r.choices[0].finish_reason == "stop":
        assert isinstance(json.loads(r.choices[0].message.content)["a"], int)
    with pytest.raises(openai.NotFoundError, match="The model `gemma` does not exist"):
        client.chat.completions.create(model="gemma", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="streaming is not supported"):
        client.chat.completions.create(
            model="tiny-random-gemma", messages=[{"role": "user", "content": "hi"}], stream=True
        )


# --- eval end to end and LoRA adapters -------------------------------------------------------


def test_eval_cli_runs_a_local_seller_and_stops_its_server(home, tmp_path):
    env = {**os.environ, "NEGOTIATOR_HOME": str(home)}
    cmd = [
        sys.executable,
        "-m",
        "negotiator",
        "eval",
        "--seller",
        TINY,
        "--limit",
        "2",
        "--quiet",
        "--out",
        str(tmp_path / "run"),
    ]
    before = _servers_of(home)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "all" in r.stdout and "2 negotiations" in r.stdout
    # issue 30: the wait before the first negotiation says what it is, and where the server's log is
    started = re.search(r"starting the local model tiny-random-gemma \(log: (\S+)\)", r.stdout)
    assert started and Path(started.group(1)).is_file() and "local model tiny-random-gemma ready in" in r.stdout
    episodes = [json.loads(line) for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()]
    assert len(episodes) == 2 and all(e["outcome"]["ended_by"] != "error" for e in episodes)
    assert all(e["metrics"]["fallbacks"] == 0 for e in episodes)
    assert len(list((home / "logs").glob("tiny-random-gemma-*.log"))) >= 1  # a server did run
    assert _servers_of(home) - before == set()  # ... and is gone


def test_serve_names_its_seller_and_starts_its_local_model_before_the_first_shopper(home, tmp_path):
    """The first shopper used to wait for the model to start (about 15 s for the 270M); instructions
    given to a seller whose words are its strategy's changed nothing and nothing said so."""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()  # uvicorn cannot bind it: serve stops once the model has started
    env = {**os.environ, "NEGOTIATOR_HOME": str(home), "COLUMNS": "400"}
    seller = f"{TINY}?menu=readings"
    cmd = [sys.executable, "-m", "negotiator", "serve", "--no-auth", "--seller", seller, "--instructions", "Be warm.",
           "--port", str(taken.getsockname()[1]), "--store", str(tmp_path / "s.sqlite")]  # fmt: skip
    before = _servers_of(home)
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    finally:
        taken.close()
    assert f"seller: {seller}" in r.stderr
    assert "--instructions change nothing for this seller" in r.stderr
    assert "local model tiny-random-gemma ready in" in r.stderr  # started before the port was bound
    assert r.stderr.index("ready in") < r.stderr.index("address already in use")
    assert r.returncode == 2 and "choose another --port (0 picks a free one)" in r.stderr
    assert "Traceback" not in r.stderr
    assert _servers_of(home) - before == set()  # ... and stopped with the service


def _servers_of(home) -> set[int]:
    found = subprocess.run(
        ["pgrep", "-f", f"negotiator.models.local.server {home}"], capture_output=True, text=True
    ).stdout
    return {int(p) for p in found.split() if _alive(int(p))}


def _adapter(home, tmp_path):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = home / "models" / "tiny-random-gemma"
    model = AutoModelForCausalLM.from_pretrained(str(base))
    torch.manual_seed(1)
    config = LoraConfig(r=4, lora_alpha=64, target_modules=["q_proj", "v_proj", "down_proj"], init_lora_weights=False)
    peft = get_peft_model(model, config)
    folder = tmp_path / "my-adapter"
    peft.save_pretrained(str(folder))
    return folder


def test_lora_adapter_folder_is_served_through_local_path(home, server, tmp_path):
    folder = _adapter(home, tmp_path)
    assert (folder / "adapter_config.json").is_file() and not (folder / "config.json").exists()
    msgs = [{"role": "user", "content": "Make an offer for the sofa."}]
    body = {"messages": msgs, "max_tokens": 12, "temperature": 0}
    base_text = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=60).json()["choices"][0][
        "message"
    ]["content"]

    async def adapter_answer():
        model = local_model(f"local/{folder}")
        assert model.target.base == home / "models" / "tiny-random-gemma"
        resp = await model.complete(ModelRequest(messages=msgs, max_tokens=12, temperature=0))
        url = model._client.base_url
        ep = await run_negotiation(SellerAgent(model), make_party("rule/conceder", "buyer"), generate(1))
        return resp, url, ep

    try:
        resp, url, ep = asyncio.run(adapter_answer())
        with urllib.request.urlopen(f"{url}/models") as r:
            assert json.load(r)["data"][0]["id"] == "my-adapter"
    finally:
        stop_all()
    assert resp.text != base_text  # the adapter's weights are in effect
    assert ep.outcome.ended_by != "error" and ep.seller.spec == f"local/{folder}"


def test_serve_local_runs_in_the_foreground_until_ctrl_c(home):
    env = {**os.environ, "NEGOTIATOR_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "serve-local", TINY, "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "serving tiny-random-gemma" in line, line
        url = line.split(" at ")[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        r = httpx.post(
            f"{url}/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3},
            timeout=60,
        )
        assert r.status_code == 200 and r.json()["usage"]["completion_tokens"] >= 1
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 0  # stopped as asked, as negotiator serve and view exit (at once: it was 2 s on)
    finally:
        proc.kill()


def _serve_local(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "NEGOTIATOR_HOME": str(home), "COLUMNS": "400"}
    cmd = [sys.executable, "-m", "negotiator", "serve-local", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)


def test_serve_local_refuses_a_taken_port_before_loading_the_model(home, tmp_path):
    """The model loaded first (seconds for the 270M, minutes when it is prepared on first use), then the
    port was found taken. A folder whose weights are damaged shows the order: the port is refused first."""
    import shutil
    import socket

    folder = shutil.copytree(home / "models" / "tiny-random-gemma", tmp_path / "damaged")
    (folder / "model.safetensors").write_bytes(b"not weights")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        r = _serve_local(home, f"local/{folder}", "--port", str(taken.getsockname()[1]))
    assert r.returncode == 2 and "address already in use" in r.stderr
    assert "choose another --port (0 picks a free one)" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        ([TINY, "--host", "192.0.2.1", "--port", "0"], "--host takes an address of this machine"),  # TEST-NET-1
        ([TINY, "--max-batch", "0", "--port", "0"], "--max-batch 0: choose 1 or more"),
        ([TINY, "--port", "65536"], "--port 65536: choose 0..65535"),
        # was "no such prepared model or folder (did you mean local/tiny-random-gemma?)"
        (
            ["local/tiny-random-gemma?temperature=0", "--port", "0"],
            "serve-local serves a model, and a spec's ?temperature=0 are",
        ),
    ],
)
def test_serve_local_says_which_flag_is_wrong(home, args, words):
    r = _serve_local(home, *args)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_serve_local_prints_a_usable_ipv6_address(home):
    """--host ::1 printed http://::1:PORT/v1, which no client can use."""
    import socket

    try:
        socket.create_server(("::1", 0), family=socket.AF_INET6).close()
    except OSError:
        pytest.skip("no IPv6 loopback here")
    env = {**os.environ, "NEGOTIATOR_HOME": str(home), "COLUMNS": "400"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "serve-local", TINY, "--host", "::1", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        assert re.fullmatch(r"http://\[::1\]:\d+/v1", url), url
        assert httpx.get(f"{url}/models", timeout=30).json()["data"][0]["id"] == "tiny-random-gemma"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)


def test_ctrl_c_during_a_request_answers_it_503_without_a_traceback(home):
    """Ctrl-C while a request was generating printed asyncio's CancelledError traceback in the
    serve-local terminal and sent the client a plain-text 500 "Internal Server Error"."""
    import threading

    env = {**os.environ, "NEGOTIATOR_HOME": str(home)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "negotiator", "serve-local", TINY, "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    answer: list[httpx.Response] = []
    long = {  # 8000 characters forced by the grammar: still generating when Ctrl-C comes
        "messages": [{"role": "user", "content": "x"}],
        "max_tokens": 8100,
        "response_format": _schema({"type": "string", "minLength": 8000}),
    }
    try:
        url = proc.stdout.readline().split(" at ")[1].split()[0]
        client = threading.Thread(
            target=lambda: answer.append(httpx.post(f"{url}/chat/completions", json=long, timeout=120))
        )
        client.start()
        while httpx.get(url.replace("/v1", "/metrics"), timeout=30).json()["running"] == 0:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        client.join(60)
    finally:
        proc.kill()
    (r,) = answer
    assert r.status_code == 503 and r.json()["error"]["message"].startswith("the server is stopping")
    assert "Traceback" not in proc.stderr.read()

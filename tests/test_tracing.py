"""OpenTelemetry: the span tree of a negotiation and of a session, GenAI attributes, privacy, exporters."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from negotiator import SellerAgent
from negotiator.sessions import BuyerMove, Sessions
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.testing import FakeOpenAIServer


@pytest.fixture
def traced():
    """A tracer writing to memory, and a way to read the finished spans as a tree."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("test"), exporter


def _tree(exporter):
    spans = exporter.get_finished_spans()
    by_id = {s.context.span_id: s for s in spans}
    children = {s.context.span_id: [] for s in spans}
    roots = []
    for s in sorted(spans, key=lambda s: s.start_time):
        if s.parent is None:
            roots.append(s)
        else:
            children[s.parent.span_id].append(s)
    assert all(s.parent is None or s.parent.span_id in by_id for s in spans), "a span's parent was never exported"
    return roots, children


def _all_text(exporter) -> str:
    out = []
    for s in exporter.get_finished_spans():
        out.append(s.name)
        out += [f"{k}={v}" for k, v in (s.attributes or {}).items()]
        for e in s.events:
            out += [e.name] + [f"{k}={v}" for k, v in (e.attributes or {}).items()]
        out.append(str(s.status.description or ""))
    return "\n".join(out)


async def test_a_negotiation_is_one_tree_of_turns_model_calls_and_guard_interventions(traced):
    tracer, exporter = traced
    scenario = generate(1)  # the seller opens
    seller = SellerAgent("scripted/hostile", tracer=tracer)  # every seller turn needs the guard
    ep = await run_negotiation(seller, make_party("rule/conceder", "buyer"), scenario, tracer=tracer)
    roots, children = _tree(exporter)
    assert [r.name for r in roots] == ["negotiation"]
    root = roots[0]
    assert root.attributes["negotiator.scenario_id"] == scenario.id
    assert root.attributes["negotiator.ended_by"] == ep.outcome.ended_by
    turns = children[root.context.span_id]
    assert [t.name for t in turns] == ["negotiation.turn"] * len(ep.turns)
    for span, record in zip(turns, ep.turns, strict=False):
        assert span.attributes["negotiator.party"] == record.party
        assert span.attributes["negotiator.action"] == record.action.action
        inner = children[span.context.span_id]
        if record.party == "buyer":
            assert inner == []  # a rule buyer calls no model
            continue
        chats = [c for c in inner if c.name == "chat scripted/hostile"]
        guards = [c for c in inner if c.name == "negotiator.guard"]
        assert len(chats) == record.usage.model_calls >= 1
        for c in chats:
            a = c.attributes
            assert a["gen_ai.operation.name"] == "chat" and a["gen_ai.system"] == "scripted"
            assert a["gen_ai.request.model"] == "scripted/hostile" and a["gen_ai.response.model"] == "scripted/hostile"
        assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == record.usage.prompt_tokens
        assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in chats) == record.usage.completion_tokens
        assert len(guards) == 1 and list(guards[0].attributes["negotiator.guard.kinds"]) == record.guard.kinds
        assert list(span.attributes["negotiator.guard.kinds"]) == record.guard.kinds


async def test_a_real_litellm_call_gets_genai_attributes_and_the_servers_token_counts(traced):
    tracer, exporter = traced
    scenario = generate(1)
    terms = scenario.seller.ideal(scenario.space)
    reply = json.dumps({"action": "make_offer", "message": "Here you go.", "terms": terms})
    with FakeOpenAIServer(lambda req: reply) as server:
        seller = SellerAgent(
            "hosted_vllm/gemma-seller", base_url=server.base_url, mode="json", tracer=tracer, strategy=None
        )
        turn = await seller.respond(scenario)
    assert turn.action.terms == terms
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    a = chat.attributes
    assert chat.name == "chat hosted_vllm/gemma-seller" and a["gen_ai.system"] == "vllm"
    assert a["gen_ai.usage.output_tokens"] == 20  # what the server reported
    assert a["gen_ai.usage.input_tokens"] == turn.usage.prompt_tokens > 0
    assert chat.kind.name == "CLIENT"


SENTINEL = "ZEBRA-7781 my card number is 4111"


async def _session_with_secrets(tracer):
    scenario = generate(0)
    # the pure seller: one model call per move, then the guard
    seller = SellerAgent("scripted/hostile", tracer=tracer, instructions="Brand voice: QUOKKA-5521.", strategy=None)
    sessions = Sessions(seller, InMemorySaver(), tracer=tracer)
    st = await sessions.open(scenario, limits={"minimum": {"price": 913}})
    st = await sessions.move(st.id, BuyerMove.offer({**scenario.buyer.ideal(scenario.space), "price": 600}, SENTINEL))
    return scenario, st


async def test_a_session_move_is_a_tree_too(traced):
    tracer, exporter = traced
    _, st = await _session_with_secrets(tracer)
    roots, children = _tree(exporter)
    assert [r.name for r in roots] == ["negotiation.session", "negotiation.session"]  # open, move
    move = roots[1]
    assert (
        move.attributes["negotiator.session.id"] == st.id and move.attributes["negotiator.session.operation"] == "move"
    )
    buyer, seller = children[move.context.span_id]
    assert (buyer.attributes["negotiator.party"], seller.attributes["negotiator.party"]) == ("buyer", "seller")
    assert [c.name for c in children[seller.context.span_id]] == ["chat scripted/hostile", "negotiator.guard"]


async def test_spans_hold_no_message_text_or_private_values_unless_opted_in(traced, monkeypatch):
    tracer, exporter = traced
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    monkeypatch.delenv("NEGOTIATOR_TRACE_CONTENT", raising=False)
    scenario, st = await _session_with_secrets(tracer)
    # The session id is random hex: it may hold "913" or "4111" by chance, so it is blanked first.
    text = _all_text(exporter).replace(st.id, "<session id>")
    secrets = [
        "ZEBRA-7781",
        "4111",
        "QUOKKA-5521",
        "913",
        "Here is what",
        "Sure, I accept",
        str(scenario.seller.reservation),
        f"{scenario.seller.reservation:.2f}",
    ]
    secrets += [str(w) for w in scenario.seller.weights.values()]
    for secret in secrets:
        assert secret not in text, secret
    # Opted in, the same run records the words: the check above can fail.
    exporter.clear()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    await _session_with_secrets(tracer)
    assert "ZEBRA-7781" in _all_text(exporter)


async def test_a_provider_error_that_quotes_the_prompt_leaves_no_words_in_spans(traced, monkeypatch):
    """A server whose error echoes the request (as some proxies do) put the buyer's words, and the
    seller's prompt with its floor, into the failed spans' status (200 characters of the error's
    text). The status now says the error's kind and HTTP status; its text only with capture on."""
    from negotiator.errors import ProviderError
    from negotiator.testing import FakeReply

    tracer, exporter = traced
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    monkeypatch.delenv("NEGOTIATOR_TRACE_CONTENT", raising=False)

    def echo(req):
        said = json.dumps(req["messages"][-1:] + req["messages"][:1])
        return FakeReply(status=400, body={"error": {"message": f"bad request: {said}", "type": "invalid_request"}})

    async def move():
        with FakeOpenAIServer(echo) as server:
            seller = SellerAgent("openai/fake", base_url=server.base_url, mode="json", tracer=tracer, strategy=None)
            sessions = Sessions(seller, InMemorySaver(), tracer=tracer)
            scenario = generate(0)
            opened = await sessions.open(scenario.listing())
            with pytest.raises(ProviderError, match="ZEBRA-7781"):  # the caller is told all of it
                await sessions.move(opened.id, BuyerMove.offer(scenario.buyer.ideal(scenario.space), SENTINEL))

    await move()
    (chat,) = [s for s in exporter.get_finished_spans() if s.name == "chat openai/fake"]
    assert chat.attributes["error.type"] == "ProviderError"
    assert chat.status.status_code.name == "ERROR" and chat.status.description == "ProviderError (HTTP 400)"
    text = _all_text(exporter)
    assert "ZEBRA-7781" not in text and "You are the seller" not in text
    exporter.clear()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    await move()
    assert "ZEBRA-7781" in _all_text(exporter)  # opted in: the check above can fail


def _run_traced(env: dict) -> subprocess.CompletedProcess:
    code = textwrap.dedent(
        """
        import asyncio
        from negotiator.sim import generate, make_party, run_negotiation
        from negotiator.tracing import configure_tracing
        assert configure_tracing()
        asyncio.run(run_negotiation(make_party("scripted/boulware", "seller"), make_party("rule/conceder", "buyer"), generate(0)))
        """
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**clean, **env}
    )


def test_with_tracing_off_a_negotiation_builds_no_span_and_one_set_later_gets_them_all():
    """Tracing off (no provider set) cost each span OpenTelemetry's no-op one, and the context
    attached and detached around it: about 8% of the CPU time of a rule negotiation
    (benchmarks in the commit). Now nothing is built; a provider set after the parties and the
    sessions were made still gets every span."""
    code = textwrap.dedent(
        """
        import asyncio
        from langgraph.checkpoint.memory import InMemorySaver
        from opentelemetry import context, trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from negotiator import BuyerMove, Sessions
        from negotiator.sim import generate, make_party, run_negotiation

        attached = []
        attach = context.attach
        context.attach = lambda ctx: attached.append(ctx) or attach(ctx)
        sessions = Sessions(make_party("rule/boulware", "seller"), InMemorySaver())

        async def play():
            ep = await run_negotiation(make_party("scripted/boulware", "seller"), make_party("rule/conceder", "buyer"), generate(0))
            opened = await sessions.open(generate(0).listing())
            await sessions.move(opened.id, BuyerMove.walk_away("no"))
            return ep

        ep = asyncio.run(play())
        print("off", len(ep.turns), len(attached))
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        ep = asyncio.run(play())
        names = [s.name for s in exporter.get_finished_spans()]
        print("on", len(ep.turns), names.count("negotiation"), names.count("negotiation.turn"), names.count("negotiation.session"))
        """
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=clean)
    assert r.returncode == 0, r.stderr
    off, on = r.stdout.split("\n")[:2]
    assert off.split()[0] == "off" and int(off.split()[1]) > 1 and off.split()[2] == "0"  # no context touched
    _, turns, negotiations, turn_spans, session_spans = on.split()
    assert (negotiations, session_spans) == ("1", "2") and int(turn_spans) == int(turns) + 1  # + the buyer's walk


def test_the_console_exporter_is_chosen_by_the_standard_variable():
    r = _run_traced({"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "shop-seller"})
    assert r.returncode == 0, r.stderr
    assert '"name": "negotiation"' in r.stdout and '"name": "chat scripted/boulware"' in r.stdout
    assert '"service.name": "shop-seller"' in r.stdout


def test_the_service_name_follows_the_sdks_order_of_variables():
    """OTEL_RESOURCE_ATTRIBUTES=service.name=... (what the OpenTelemetry operator sets in Kubernetes)
    was overwritten with the default "negotiator"; OTEL_SERVICE_NAME still comes first."""
    resource = "service.name=from-resource,deployment.environment=prod"
    r = _run_traced({"OTEL_TRACES_EXPORTER": "console", "OTEL_RESOURCE_ATTRIBUTES": resource})
    assert r.returncode == 0, r.stderr
    assert '"service.name": "from-resource"' in r.stdout and '"deployment.environment": "prod"' in r.stdout
    assert '"service.name": "negotiator"' not in r.stdout
    r = _run_traced(
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_RESOURCE_ATTRIBUTES": resource, "OTEL_SERVICE_NAME": "shop-seller"}
    )
    assert '"service.name": "shop-seller"' in r.stdout and '"service.name": "from-resource"' not in r.stdout
    r = _run_traced({"OTEL_TRACES_EXPORTER": "console"})
    assert '"service.name": "negotiator"' in r.stdout  # neither given: the command's own default


def test_the_otlp_exporter_sends_spans_to_the_configured_endpoint():
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.append(gzip.decompress(body) if self.headers.get("Content-Encoding") == "gzip" else body)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}"
        r = _run_traced(
            {
                "OTEL_TRACES_EXPORTER": "otlp",
                "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            }
        )
    finally:
        server.shutdown()
    assert r.returncode == 0, r.stderr
    names = set()
    for body in received:
        req = ExportTraceServiceRequest.FromString(body)
        names |= {s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans}
    assert {"negotiation", "negotiation.turn", "chat scripted/boulware"} <= names


def test_an_unknown_exporter_is_a_usage_error(monkeypatch):
    from negotiator.errors import UsageError
    from negotiator.tracing import configure_tracing

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkinn")
    with pytest.raises(UsageError, match="zipkinn"):
        configure_tracing()
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
    assert configure_tracing() is False


def _console_spans(stdout: str) -> list[dict]:
    """The spans a ConsoleSpanExporter printed (indented JSON objects), among the command's own output."""
    decoder, spans, i = json.JSONDecoder(), [], 0
    while (i := stdout.find('{\n    "name"', i)) != -1:
        span, end = decoder.raw_decode(stdout, i)
        spans.append(span)
        i = end
    return spans


def _cli(args: list[str], env: dict, input: str | None = None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run(
        [sys.executable, "-m", "negotiator", *args],
        capture_output=True,
        text=True,
        timeout=180,
        input=input,
        env={**clean, "NEGOTIATOR_BLOCK_REMOTE": "1", "COLUMNS": "160", **env},
    )


def test_every_command_exports_spans_as_the_standard_variables_say(tmp_path):
    r = _cli(
        [
            "eval",
            "--seller",
            "scripted/boulware",
            "--buyer",
            "rule/conceder",
            "--limit",
            "2",
            "--out",
            str(tmp_path / "run"),
            "--quiet",
        ],
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "eval-nightly"},
    )
    assert r.returncode == 0, r.stderr
    spans = _console_spans(r.stdout)
    names = [s["name"] for s in spans]
    assert names.count("negotiation") == 2 and "negotiation.turn" in names and "chat scripted/boulware" in names
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"eval-nightly"}
    episodes = {
        json.loads(line)["episode_id"] for line in (tmp_path / "run" / "episodes.jsonl").read_text().splitlines()
    }
    assert {s["attributes"]["negotiator.episode_id"] for s in spans if s["name"] == "negotiation"} == episodes
    assert "seller score" in r.stdout  # the command's own output is still there

    # play: a person's negotiation is one trace too; the default service name is the CLI's
    r = _cli(
        ["play", "--seller", "rule/conceder", "--scenario", "0"], {"OTEL_TRACES_EXPORTER": "console"}, input="walk\n"
    )
    assert r.returncode == 0, r.stderr
    spans = _console_spans(r.stdout)
    assert [s["name"] for s in spans].count("negotiation") == 1
    assert {s["resource"]["attributes"]["service.name"] for s in spans} == {"negotiator"}

    # unset: nothing is exported
    r = _cli(
        [
            "eval",
            "--seller",
            "rule/boulware",
            "--buyer",
            "rule/conceder",
            "--limit",
            "1",
            "--out",
            str(tmp_path / "quiet"),
            "--quiet",
        ],
        {},
    )
    assert r.returncode == 0 and _console_spans(r.stdout) == []


def test_a_bad_exporter_name_is_a_usage_error_for_every_command(tmp_path):
    r = _cli(["scenarios", "list", "--count", "1"], {"OTEL_TRACES_EXPORTER": "jaeger"})
    assert r.returncode == 2 and "OTEL_TRACES_EXPORTER='jaeger'" in r.stderr and "Traceback" not in r.stderr


async def test_docs_tracing_names_every_attribute_a_negotiation_and_a_session_record(traced):
    """docs/tracing.md is where an operator learns what to query: no attribute is left out of it."""
    tracer, exporter = traced
    seller = SellerAgent("scripted/hostile", tracer=tracer)  # the guard steps in: its span and kinds too
    await run_negotiation(seller, make_party("rule/conceder", "buyer", seed=1), generate(seed=7), seed=1, tracer=tracer)
    sessions = Sessions(SellerAgent("scripted/boulware", tracer=tracer), InMemorySaver(), tracer=tracer)
    opened = await sessions.open(generate(seed=0).listing())
    offer = {"price": 850, "delivery_days": 7, "assembly": "none", "payment_terms": "net30"}
    state = await sessions.move(opened.id, BuyerMove.offer(offer, "850?"))
    await sessions.move(state.id, BuyerMove.walk_away("No."))
    page = (Path(__file__).resolve().parent.parent / "docs" / "tracing.md").read_text(encoding="utf-8")
    recorded = {(s.name.split(" ")[0], k) for s in exporter.get_finished_spans() for k in s.attributes or {}}
    assert {"negotiation", "negotiation.session", "negotiation.turn", "chat", "negotiator.guard"} == {
        n for n, _ in recorded
    }
    assert sorted(f"{n}: {k}" for n, k in recorded if f"`{k}`" not in page and f"`{k}=" not in page) == []


async def test_a_partys_error_that_ends_the_run_leaves_no_words_in_spans(traced, monkeypatch):
    """An error a party raises that ends the run (a UsageError, its message the party's own values) was
    recorded on the negotiation's and the turn's spans with its text and traceback, as the session spans'
    once were; now only its kind, its text with capture on."""
    from negotiator import UsageError
    from negotiator.plugins import PluginParty

    tracer, exporter = traced
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    monkeypatch.delenv("NEGOTIATOR_TRACE_CONTENT", raising=False)

    class Leaky:
        def act(self, view):
            raise UsageError(f"my floor is {SENTINEL}")

    async def play():
        seller = PluginParty(Leaky(), "leaky", "seller")
        with pytest.raises(UsageError, match="ZEBRA-7781"):  # the caller is told all of it
            await run_negotiation(seller, make_party("rule/conceder", "buyer"), generate(0), tracer=tracer)

    await play()
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["negotiation"].status.description == spans["negotiation.turn"].status.description == "UsageError"
    assert "ZEBRA-7781" not in _all_text(exporter)
    exporter.clear()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    await play()
    assert "ZEBRA-7781" in _all_text(exporter)  # opted in: the check above can fail


async def test_a_move_the_protocol_refuses_marks_its_turn_span_failed(traced):
    """A party's move the protocol refuses (an offer off the listing's options) ended the negotiation in an
    error episode, but its turn span said nothing had gone wrong."""
    from negotiator import MakeOffer
    from negotiator.plugins import PluginParty

    tracer, exporter = traced

    class Unknown:
        def act(self, view):
            return MakeOffer(terms={"colour": "red"}, message="In red.")

    seller, buyer = make_party("rule/boulware", "seller"), PluginParty(Unknown(), "odd", "buyer")
    ep = await run_negotiation(seller, buyer, generate(0), tracer=tracer)
    assert ep.error is not None and ep.error.type == "InvalidOffer"
    (failed,) = [s for s in exporter.get_finished_spans() if s.name == "negotiation.turn" and not s.status.is_ok]
    assert failed.status.description == "InvalidOffer" and failed.attributes["negotiator.party"] == "buyer"

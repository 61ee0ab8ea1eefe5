"""OpenTelemetry spans: one per negotiation, per turn, per model call, per guard intervention.

::

    negotiation                      run_negotiation: episode, scenario, seller, buyer, outcome
    negotiation.session              Sessions.open / Sessions.move: one per call (one per HTTP request)
      negotiation.turn               one per move: party, action, model calls, tokens, guard kinds
        chat {model}                 one per model call (retries included): GenAI attributes
        negotiator.guard             when the guard changed the seller's action: what kind of change

Model-call spans follow the GenAI semantic conventions (``gen_ai.operation.name``,
``gen_ai.system``, ``gen_ai.request.model``, ``gen_ai.usage.input_tokens`` ...). Message
text, offer terms and private preferences stay out of spans unless the user opts in with
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (or
``NEGOTIATOR_TRACE_CONTENT=1``): transcripts hold customers' words and the business's
floor.

Without a configured tracer provider every span is a cheap no-op.
``configure_tracing()`` installs one whose exporter follows the standard
``OTEL_TRACES_EXPORTER`` variable (``console``, ``otlp``, ``none``).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

if TYPE_CHECKING:
    from .models.base import ChatModel, ModelRequest
    from .party import TurnRecord

_TRUE = ("1", "true", "yes", "on")


def capture_content() -> bool:
    return (
        os.environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "").lower() in _TRUE
        or os.environ.get("NEGOTIATOR_TRACE_CONTENT", "").lower() in _TRUE
    )


_NO_SPAN = nullcontext(trace.INVALID_SPAN)


class _Tracer(trace.Tracer):
    """negotiator's tracer: the global provider's once one is set (before or after this tracer was
    made). Until then tracing is off, and a span is not even OpenTelemetry's no-op one: nothing is
    built and the context is left alone (that took about 15 us a span, some 8% of the CPU time of a
    rule-against-rule negotiation's 13 spans)."""

    def __init__(self, version: str):
        self._tracer = trace.get_tracer("negotiator", version)  # a proxy: it follows the provider once set

    def start_span(self, name: str, *args: Any, **kwargs: Any) -> trace.Span:
        return self._tracer.start_span(name, *args, **kwargs)

    def start_as_current_span(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):  # none set: spans go nowhere
            return _NO_SPAN
        return self._tracer.start_as_current_span(name, *args, **kwargs)


@functools.cache
def get_tracer() -> trace.Tracer:
    """The package's tracer (see ``_Tracer``); ``tracer=`` arguments take any other."""
    from .version import package_version

    return _Tracer(package_version())


def _system(model: ChatModel) -> str:
    spec = getattr(model, "spec", "")
    if spec.startswith("scripted/"):
        return "scripted"
    if spec.startswith("local/"):
        return "negotiator.local"
    prefix = getattr(model, "model", spec).split("/")[0]
    return {"hosted_vllm": "vllm", "gemini": "gcp.gemini", "vertex_ai": "gcp.vertex_ai"}.get(
        prefix, prefix or "unknown"
    )


@contextmanager
def model_span(tracer: trace.Tracer | None, model: ChatModel, request: ModelRequest) -> Iterator[Callable[..., None]]:
    """A GenAI ``chat`` span around one model call; yields ``record(response=..., error=...)``."""
    if tracer is None:
        yield lambda **_: None
        return
    name = getattr(model, "model", model.spec)
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.system": _system(model),
        "gen_ai.provider.name": _system(model),
        "gen_ai.request.model": name,
        "negotiator.attempt": request.attempt,
    }
    if request.temperature is not None:
        attrs["gen_ai.request.temperature"] = request.temperature
    if request.max_tokens is not None:
        attrs["gen_ai.request.max_tokens"] = request.max_tokens
    with span_of(tracer, f"chat {name}", kind=trace.SpanKind.CLIENT, attributes=attrs) as span:
        if capture_content():
            span.set_attribute("gen_ai.input.messages", json.dumps(request.messages, ensure_ascii=False))

        def record(response=None, error=None) -> None:
            if response is not None:
                span.set_attribute("gen_ai.response.model", name)
                span.set_attribute("gen_ai.usage.input_tokens", response.prompt_tokens)
                span.set_attribute("gen_ai.usage.output_tokens", response.completion_tokens)
                if capture_content():
                    span.set_attribute(
                        "gen_ai.output.messages",
                        json.dumps([{"role": "assistant", "content": response.raw()}], ensure_ascii=False),
                    )
            if error is not None:
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(trace.Status(trace.StatusCode.ERROR, error_description(error)))

        yield record


@contextmanager
def span_of(tracer: trace.Tracer, name: str, **kwargs: Any) -> Iterator[trace.Span]:
    """``tracer.start_as_current_span(name)`` for a span an exception may leave: it is recorded by
    its kind (``error_description``), not by its text and traceback, unless content capture is on."""
    with tracer.start_as_current_span(name, record_exception=False, set_status_on_exception=False, **kwargs) as span:
        try:
            yield span
        except Exception as e:
            if span.is_recording():
                span.set_status(trace.Status(trace.StatusCode.ERROR, error_description(e)))
                if capture_content():
                    span.record_exception(e)
            raise


def error_description(error: BaseException | str, kind: str | None = None) -> str:
    """A failed span's status description: the error's kind (and HTTP status), not its text, unless
    content capture is on. A provider's error may quote the request (a server that echoes the
    prompt, with the floor in it, or the buyer's words) and a party's exception its own values."""
    if capture_content():
        return str(error)[:200]
    status = getattr(error, "status", None)
    return (kind or type(error).__name__) + (f" (HTTP {status})" if isinstance(status, int) else "")


def record_guard(tracer: trace.Tracer, kinds: list[str]) -> None:
    """The ``negotiator.guard`` span of a seller move the guard changed."""
    with tracer.start_as_current_span("negotiator.guard") as span:
        span.set_attribute("negotiator.guard.kinds", kinds)


def record_turn(span: trace.Span, turn: TurnRecord) -> None:
    """Attributes of a ``negotiation.turn`` span: who did what, what it cost, whether the guard stepped in.

    Offer terms and messages are customers' words and the business's positions: they are
    recorded only when content capture is on. A span that records nothing (no tracer provider,
    or sampled out) is left alone: its attributes would go nowhere.
    """
    if not span.is_recording():
        return
    span.set_attribute("negotiator.turn", turn.index)
    span.set_attribute("negotiator.party", turn.party)
    span.set_attribute("negotiator.action", turn.action.action)
    if turn.usage.model_calls:
        span.set_attribute("negotiator.model_calls", turn.usage.model_calls)
        span.set_attribute(
            "negotiator.usage.input_tokens", turn.usage.prompt_tokens
        )  # gen_ai.usage.* sits on the chat spans only, so sums do not double count
        span.set_attribute("negotiator.usage.output_tokens", turn.usage.completion_tokens)
        span.set_attribute("negotiator.invalid_attempts", len(turn.invalid_attempts))
        span.set_attribute("negotiator.fallback", turn.fallback)
    if turn.guard is not None:
        span.set_attribute("negotiator.guard.kinds", turn.guard.kinds)
    if capture_content():
        span.set_attribute("negotiator.message", turn.action.message)
        terms = getattr(turn.action, "terms", None)
        if terms is not None:
            span.set_attribute("negotiator.terms", json.dumps(terms, ensure_ascii=False))


def configure_tracing(service_name: str = "negotiator") -> bool:
    """Install a tracer provider whose exporter follows ``OTEL_TRACES_EXPORTER``.

    Returns False (and installs nothing) when the variable is unset or ``none``, so that
    embedding apps that configure OpenTelemetry themselves keep their setup.
    """
    exporters = [e.strip() for e in os.environ.get("OTEL_TRACES_EXPORTER", "").split(",") if e.strip()]
    if not exporters or exporters == ["none"]:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    resource = Resource.create()  # OTEL_SERVICE_NAME, then OTEL_RESOURCE_ATTRIBUTES, as the SDK reads them
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):  # neither names one
        resource = resource.merge(Resource({"service.name": service_name}))
    provider = TracerProvider(resource=resource)
    for name in exporters:
        if name == "console":
            provider.add_span_processor(BatchSpanProcessor(ConsoleSpanExporter()))
        elif name == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError as e:  # pragma: no cover - depends on an optional package
                from .errors import UsageError

                raise UsageError(
                    "OTEL_TRACES_EXPORTER=otlp needs the OTLP exporter: pip install opentelemetry-exporter-otlp-proto-http"
                ) from e
            provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        elif name != "none":
            from .errors import UsageError

            raise UsageError(f"OTEL_TRACES_EXPORTER={name!r} is not supported; use console, otlp or none")
    trace.set_tracer_provider(provider)
    return True


def flush_tracing() -> None:
    """Export the spans still buffered (a worker process ends without the atexit hook that would)."""
    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if flush is not None:
        flush()

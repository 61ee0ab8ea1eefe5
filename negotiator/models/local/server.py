"""The local OpenAI-compatible server: what vLLM exposes, on a CPU, for one model folder.

Endpoints: ``GET /health``, ``GET /v1/models``, ``POST /v1/chat/completions`` (not
streamed). ``response_format`` takes a JSON schema exactly as vLLM's structured outputs
do (``{"type": "json_schema", "json_schema": {"schema": ...}}``, or ``json_object``), so
the seller sends the same request to vLLM and to this server. Sampling defaults come from
the folder's ``generation_config.json`` when a request leaves them out, as in vLLM.
A request is checked before it reaches the decoder (:class:`ChatRequest`): a value out of
range or not finite, a chat longer than the model's context, a body over 4 MiB, a model
name the server does not serve and a parameter it does not implement are refused with
OpenAI's error body, ``{"error": {"message", "type", "param", "code"}}``.

Run as ``python -m negotiator.models.local.server FOLDER``; ``negotiator serve-local``
and the ``local/...`` specs start it for you. With ``--parent-pid`` it exits as soon as
that process is gone, so a killed eval leaves no server behind.
"""

import argparse
import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from ..base import is_loopback_host
from .decoding import JSON_OBJECT, Request, Sampling, sampling_defaults

DEFAULT_MAX_TOKENS = 256
MAX_BODY_BYTES = 4 * 1024 * 1024  # a negotiation's request is a few KB; the model reads at most its context anyway

# Parameters of OpenAI's or vLLM's request that this server does not implement: refused, not
# ignored, so a client never gets an answer made without what it asked for.
UNSUPPORTED = {
    "stop": "stop sequences are not supported; the answer ends at the model's end of turn or at max_tokens",
    "logprobs": "logprobs are not supported",
    "top_logprobs": "logprobs are not supported",
    "logit_bias": "logit_bias is not supported",
    "presence_penalty": "presence_penalty is not supported",
    "frequency_penalty": "frequency_penalty is not supported",
    "repetition_penalty": "repetition_penalty is not supported",
    "guided_json": "ask for JSON with response_format (json_schema or json_object)",
    "guided_regex": "ask for JSON with response_format (json_schema or json_object)",
    "guided_choice": "ask for JSON with response_format (json_schema or json_object)",
    "guided_grammar": "ask for JSON with response_format (json_schema or json_object)",
    "structured_outputs": "ask for JSON with response_format (json_schema or json_object)",
}


class ChatRequest(BaseModel):
    """What this server reads of an OpenAI chat completion request, with the ranges vLLM checks:
    a value out of range or not finite is refused (400), never clamped or passed to the decoder."""

    model_config = ConfigDict(extra="allow")  # OpenAI clients send more (user, metadata, ...): harmless

    messages: list[dict[str, Any]] = Field(min_length=1)
    model: str | None = None
    stream: bool = False
    n: int = 1
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    top_p: float | None = Field(None, gt=0, le=1, allow_inf_nan=False)
    top_k: int | None = Field(None, ge=-1)  # -1 or 0: off, as in vLLM
    seed: StrictInt | None = None
    response_format: Any = None
    tools: Any = None


class _LoopbackOnly:
    """ASGI middleware: requests whose Host is not a loopback name get ``refuse(host)``. Plain ASGI, not
    Starlette's BaseHTTPMiddleware, which turns a request cancelled by Ctrl-C into a 500."""

    def __init__(self, app, refuse):
        self.app, self.refuse = app, refuse

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = dict(scope["headers"]).get(b"host")
            if host is not None and not is_loopback_host(host.decode("latin-1")):
                await self.refuse(host.decode("latin-1"))(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(engine, served_name: str, defaults: Sampling | None = None, loopback_only: bool = False):
    """The FastAPI app around a :class:`~.engine.BatchingEngine`; ``defaults`` fill the sampling
    settings a request leaves out (the folder's generation_config.json, as vLLM does).

    ``loopback_only`` (a server listening on loopback) answers only requests addressed to a loopback
    name: a web page the user opens cannot reach it by pointing a name it controls at 127.0.0.1
    (DNS rebinding), as the MCP SDK guards its local servers."""
    from fastapi import FastAPI
    from fastapi import Request as HTTPRequest
    from fastapi.responses import JSONResponse
    from starlette.exceptions import HTTPException

    defaults = defaults or Sampling()
    decoder = engine.decoder
    context = decoder.model.config.get_text_config().max_position_embeddings  # prompt + answer, in tokens
    created = int(time.time())
    app = FastAPI(title="negotiator local model server")

    def error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None) -> JSONResponse:
        body = {"error": {"message": message, "type": kind, "param": param, "code": status}}
        return JSONResponse(body, status_code=status)

    if loopback_only:

        def refuse(host: str) -> JSONResponse:
            return error(
                421,
                f"Host {host!r} is not this server's: it listens on loopback and answers requests to localhost, "
                "127.0.0.1 or [::1] only; to serve other names, start it with --host 0.0.0.0",
            )

        app.add_middleware(_LoopbackOnly, refuse=refuse)

    @app.exception_handler(HTTPException)
    async def http_error(request: HTTPRequest, e: HTTPException) -> JSONResponse:  # unknown path, wrong method
        kind = "NotFoundError" if e.status_code == 404 else "invalid_request_error"
        return error(e.status_code, f"{request.method} {request.url.path}: {e.detail}", kind)

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": served_name}

    @app.get("/v1/models")
    async def models():
        model = {"id": served_name, "object": "model", "created": created, "owned_by": "negotiator"}
        return {"object": "list", "data": [{**model, "max_model_len": context}]}

    @app.get("/metrics")
    async def metrics():
        return engine.stats

    @app.post("/v1/chat/completions")
    async def chat(request: HTTPRequest):
        raw = await _read_body(request, MAX_BODY_BYTES)
        if raw is None:
            return error(413, f"the request body is over {MAX_BODY_BYTES // 2**20} MiB; send a shorter chat")
        try:
            body = ChatRequest.model_validate_json(raw)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(x) for x in first["loc"])
            if first["type"] == "json_invalid":
                return error(400, f"the request body is not JSON ({first['msg'].removeprefix('Invalid JSON: ')})")
            if not where:
                return error(400, "the request body must be a JSON object (an OpenAI chat completion request)")
            return error(400, f"{where}: {first['msg']}", param=where)
        if body.model is not None and body.model != served_name:
            return error(
                404,
                f"The model `{body.model}` does not exist; this server serves `{served_name}`",
                "NotFoundError",
                "model",
            )
        if body.stream:
            return error(400, "streaming is not supported by the local server; send stream=false", param="stream")
        if body.n != 1:
            return error(400, "n must be 1", param="n")
        if body.tools:
            return error(400, "this model has no tool-calling template; ask for JSON with response_format instead")
        for key, why in UNSUPPORTED.items():
            if (body.model_extra or {}).get(key) not in (None, False, 0, [], {}, ""):
                return error(400, f"{key}: {why}", param=key)
        try:
            _check_text(body.messages)
            grammar, prompt = await asyncio.to_thread(
                lambda: (_grammar_for(decoder, body.response_format), decoder.prompt_ids(body.messages))
            )
        except (ValueError, TypeError) as e:
            return error(400, str(e))
        asked = body.max_completion_tokens or body.max_tokens
        max_tokens = asked or min(DEFAULT_MAX_TOKENS, context - len(prompt))
        if len(prompt) + max_tokens > context or max_tokens < 1:
            return error(
                400,
                f"this model's context is {context} tokens, and the messages take {len(prompt)}"
                + (f" and max_tokens asks for {asked} more" if asked else "")
                + ": shorten the messages"
                + (" or lower max_tokens" if asked else ""),
                param="messages",
            )
        sampling = Sampling(
            temperature=_pick(body.temperature, defaults.temperature),
            top_p=_pick(body.top_p, defaults.top_p),
            top_k=max(0, _pick(body.top_k, defaults.top_k)),
            seed=body.seed,
        )
        future = engine.submit(Request(prompt, max_tokens, sampling, grammar))
        waiting = asyncio.wrap_future(future)
        try:
            while not waiting.done():
                await asyncio.wait([waiting], timeout=1.0)
                if not waiting.done() and await request.is_disconnected():
                    future.cancel()  # the client gave up (timeout): do not generate for nobody
                    return error(499, "client closed the request")
        except asyncio.CancelledError:  # the server is stopping (Ctrl-C) with this request unanswered
            future.cancel()
            return error(503, "the server is stopping; send the request again once it is back", "server_error")
        try:
            result = waiting.result()
        except Exception as e:  # reported to the client as a server error; LiteLLM marks it transient
            return error(500, f"generation failed: {type(e).__name__}: {e}", "server_error")
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": served_name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": result.text},
                    "finish_reason": result.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "total_tokens": result.prompt_tokens + result.completion_tokens,
                "prompt_tokens_details": {
                    "cached_tokens": result.cached_tokens
                },  # OpenAI's field: read from the prefix cache
            },
        }

    return app


async def _read_body(request, limit: int) -> bytes | None:
    """The request body, or None once it is longer than ``limit`` bytes (read no further)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            return None
    return bytes(raw)


def _check_text(messages: list[dict[str, Any]]) -> None:
    """ValueError for what the chat template would drop without a word: a message with no content
    (an assistant's may have none), and parts that are not text (an image to a text model)."""
    for i, m in enumerate(messages):
        content = m.get("content")
        if content is None and m.get("role") != "assistant":
            raise ValueError(f"messages.{i}.content is missing")
        for part in content if isinstance(content, list) else ():
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise ValueError(f"messages.{i}.content: this model reads text parts only, not {kind!r}")


def _pick(value: Any, default: Any) -> Any:
    return default if value is None else value


def _grammar_for(decoder, response_format: Any):
    """The grammar a ``response_format`` asks for (None: free text). ValueError when unusable."""
    if not response_format:
        return None
    if not isinstance(response_format, dict):
        raise ValueError("response_format must be an object")
    kind = response_format.get("type")
    if kind in (None, "text"):
        return None
    if kind == "json_object":
        return decoder.grammar(JSON_OBJECT)
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        schema = spec.get("schema", spec.get("json_schema")) if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise ValueError("response_format.json_schema.schema must be a JSON schema object")
        if (where := _unenforced(schema)) is not None:
            raise ValueError(
                f"cannot honour this JSON schema: the grammar does not enforce {where}; remove it "
                "(or check the answer yourself)"
            )
        try:
            return decoder.grammar(schema)
        except Exception as e:  # xgrammar's message starts with its time and source line: not the user's concern
            said = re.sub(r"^\[[\d:]+\] \S+:\d+: ", "", str(e)).strip()
            raise ValueError(f"cannot compile this JSON schema: {said}") from None
    raise ValueError(f"unsupported response_format type {kind!r}; use json_schema, json_object or text")


# Keywords xgrammar (0.2) compiles without enforcing them: an answer could break them, so a schema
# that uses one is refused rather than half-honoured (as vLLM refuses what xgrammar lacks).
_UNENFORCED = ["not", "if", "then", "else", "dependentRequired", "dependentSchemas"]
_UNENFORCED += ["uniqueItems", "contains", "minContains", "maxContains"]
_FORMATS = {"email", "date", "time", "date-time", "duration", "ipv4", "ipv6", "hostname", "uri", "uri-reference"}
_FORMATS |= {"uuid", "uri-template", "json-pointer", "relative-json-pointer"}  # the string formats it enforces
_DATA = {"enum", "const", "default", "examples"}  # values, not schemas: their keys are no keywords
_MAPS = {"properties", "patternProperties", "$defs", "definitions"}  # names -> schemas


def _unenforced(schema: Any, at: str = "#") -> str | None:
    """The first keyword of ``schema`` the grammar would ignore, with where it is; None if none."""
    if isinstance(schema, list):
        return next((w for i, x in enumerate(schema) if (w := _unenforced(x, f"{at}/{i}"))), None)
    if not isinstance(schema, dict):
        return None
    for key in _UNENFORCED:
        if key in schema:
            return f"`{key}` (at {at})"
    if isinstance(schema.get("allOf"), list) and len(schema["allOf"]) > 1:  # one is enforced, two neither
        return f"`allOf` with more than one schema (at {at})"
    if isinstance(schema.get("format"), str) and schema["format"] not in _FORMATS:
        return f"the string format `{schema['format']}` (at {at})"
    for key, value in schema.items():
        if key in _DATA:
            continue
        children = value.items() if key in _MAPS and isinstance(value, dict) else [(None, value)]
        for name, child in children:
            if w := _unenforced(child, f"{at}/{key}" + (f"/{name}" if name is not None else "")):
                return w
    return None


# --- process entry point ----------------------------------------------------------------


def _watch_parent(parent_pid: int) -> None:
    """Exit the moment the process that started us is gone (killed, crashed): no orphans."""
    while True:
        if os.getppid() != parent_pid:
            os._exit(0)
        time.sleep(0.25)


def serve(
    folder: Path,
    *,
    name: str,
    host: str = "127.0.0.1",
    port: int = 0,
    fd: int | None = None,
    sock: socket.socket | None = None,
    parent_pid: int | None = None,
    max_batch: int = 16,
    dtype: str = "auto",
    threads: int | None = None,
    base: Path | None = None,
    prefix_cache_tokens: int = 32_768,
    on_ready=None,
) -> None:
    """Load ``folder`` and serve it until SIGINT/SIGTERM (or until the parent is gone), on ``sock``
    (a listening socket bound before the model loads, so that a taken port fails at once), or
    the socket of file descriptor ``fd``, or a new one on ``host:port``."""
    import torch
    import uvicorn

    if parent_pid is not None:
        threading.Thread(target=_watch_parent, args=(parent_pid,), daemon=True).start()
    if threads:
        torch.set_num_threads(threads)
    from .decoding.decoder import Decoder
    from .decoding.prefixes import PrefixCache
    from .engine import BatchingEngine, load_model

    model, tok, weights = load_model(folder, dtype, base)
    prefixes = PrefixCache(max_tokens=prefix_cache_tokens) if prefix_cache_tokens > 0 else None
    engine = BatchingEngine(Decoder(model, tok, prefixes), max_batch=max_batch)
    if sock is None and fd is not None:
        sock = socket.socket(fileno=fd)
    elif sock is None:
        from .servers import listening_socket

        sock = listening_socket(host, port)
    loopback = ipaddress.ip_address(sock.getsockname()[0]).is_loopback
    app = create_app(engine, name, sampling_defaults(weights), loopback_only=loopback)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=1)
    server = _Server(config)
    if on_ready is not None:
        host_, port_ = sock.getsockname()[:2]
        threading.Thread(target=_when_started, args=(server, on_ready, host_, port_), daemon=True).start()
    server.run(sockets=[sock])


def _when_started(server, on_ready, host: str, port: int) -> None:
    while not server.started:
        time.sleep(0.05)
    on_ready(host, port)


try:
    import uvicorn as _uvicorn

    class _Server(_uvicorn.Server):
        def handle_exit(self, sig: int, frame) -> None:
            super().handle_exit(sig, frame)  # uvicorn raises the signal again once stopped: serve-local exits at once
            # Generation cannot be interrupted mid-batch; a server being stopped has nobody to answer.
            self.should_exit = self.force_exit = True
            stuck = threading.Timer(2.0, lambda: os._exit(0))
            stuck.daemon = True  # a server that stopped in time exits at once, not two seconds on
            stuck.start()

except ImportError:  # the base install has no uvicorn; serving needs the local extra
    _Server = None  # type: ignore[assignment,misc]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m negotiator.models.local.server", description=__doc__.splitlines()[0])
    p.add_argument("folder", type=Path, help="a transformers model folder or a LoRA adapter folder")
    p.add_argument("--name", help="model name to serve under (default: the folder's name)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--fd", type=int, help="serve on this already bound listening socket (set by the parent)")
    p.add_argument("--parent-pid", type=int, help="exit when this process is gone")
    p.add_argument("--max-batch", type=int, default=16)
    p.add_argument("--dtype", default="auto")
    p.add_argument("--threads", type=int)
    p.add_argument(
        "--base", type=Path, help="base model folder of a LoRA adapter (default: as its adapter_config.json says)"
    )
    p.add_argument(
        "--prefix-cache-tokens",
        type=int,
        default=int(os.environ.get("NEGOTIATOR_PREFIX_CACHE_TOKENS", 32_768)),
        help="keys and values of earlier chats kept for their next turn, in tokens (0: off; "
        "default: $NEGOTIATOR_PREFIX_CACHE_TOKENS or 32768)",
    )
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # until uvicorn installs its own handlers
    with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: stopped, as asked
        serve(
            a.folder,
            name=a.name or a.folder.name,
            host=a.host,
            port=a.port,
            fd=a.fd,
            parent_pid=a.parent_pid,
            max_batch=a.max_batch,
            dtype=a.dtype,
            threads=a.threads,
            base=a.base,
            prefix_cache_tokens=a.prefix_cache_tokens,
            on_ready=lambda h, pt: print(f"serving {a.folder} on http://{h}:{pt}/v1", file=sys.stderr, flush=True),
        )
    os._exit(0)  # do not wait on the engine thread


if __name__ == "__main__":
    main()

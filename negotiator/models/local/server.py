"""The local OpenAI-compatible server: what vLLM exposes, on a CPU, for one model folder.

Endpoints: ``GET /health``, ``GET /v1/models``, ``POST /v1/chat/completions`` (not
streamed). ``response_format`` takes a JSON schema exactly as vLLM's structured outputs
do (``{"type": "json_schema", "json_schema": {"schema": ...}}``, or ``json_object``), so
the seller sends the same request to vLLM and to this server. Sampling defaults come from
the folder's ``generation_config.json`` when a request leaves them out, as in vLLM.

Run as ``python -m negotiator.models.local.server FOLDER``; ``negotiator serve-local``
and the ``local/...`` specs start it for you. With ``--parent-pid`` it exits as soon as
that process is gone, so a killed eval leaves no server behind.
"""

import argparse
import asyncio
import logging
import os
import signal
import socket
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from .decoding import JSON_OBJECT, Request, Sampling, sampling_defaults

DEFAULT_MAX_TOKENS = 256


def create_app(engine, served_name: str, defaults: Sampling | None = None):
    """The FastAPI app around a :class:`~.engine.BatchingEngine`; ``defaults`` fill the sampling
    settings a request leaves out (the folder's generation_config.json, as vLLM does)."""
    from fastapi import FastAPI
    from fastapi import Request as HTTPRequest
    from fastapi.responses import JSONResponse

    defaults = defaults or Sampling()
    decoder = engine.decoder
    app = FastAPI(title="negotiator local model server")

    def error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
        return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)

    @app.get("/health")
    async def health():
        return {"status": "ok", "model": served_name}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": served_name, "object": "model", "owned_by": "negotiator"}]}

    @app.get("/metrics")
    async def metrics():
        return engine.stats

    @app.post("/v1/chat/completions")
    async def chat(request: HTTPRequest):
        try:
            body = await request.json()
        except ValueError:
            return error(400, "the request body is not JSON")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return error(400, "messages must be a non-empty list")
        if body.get("stream"):
            return error(400, "streaming is not supported by the local server; send stream=false")
        if (body.get("n") or 1) != 1:
            return error(400, "n must be 1")
        if body.get("tools"):
            return error(400, "this model has no tool-calling template; ask for JSON with response_format instead")
        try:
            grammar = await asyncio.to_thread(_grammar_for, decoder, body.get("response_format"))
            prompt = decoder.prompt_ids(messages)
            sampling = Sampling(
                temperature=float(_pick(body, "temperature", defaults)),
                top_p=float(_pick(body, "top_p", defaults)),
                top_k=int(_pick(body, "top_k", defaults) or 0),
                seed=_seed(body.get("seed")),
            )
            max_tokens = int(body.get("max_completion_tokens") or body.get("max_tokens") or DEFAULT_MAX_TOKENS)
        except (ValueError, TypeError) as e:
            return error(400, str(e))
        future = engine.submit(Request(prompt, max_tokens, sampling, grammar))
        waiting = asyncio.wrap_future(future)
        while not waiting.done():
            await asyncio.wait([waiting], timeout=1.0)
            if not waiting.done() and await request.is_disconnected():
                future.cancel()  # the client gave up (timeout): do not generate for nobody
                return error(499, "client closed the request")
        try:
            result = waiting.result()
        except Exception as e:  # reported to the client as a server error; LiteLLM marks it transient
            return error(500, f"generation failed: {type(e).__name__}: {e}", "server_error")
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or served_name,
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


def _pick(body: dict, key: str, defaults: Sampling) -> Any:
    value = body.get(key)
    return getattr(defaults, key) if value is None else value


def _seed(value: Any) -> int | None:
    """The request's ``seed`` (an integer, as OpenAI and vLLM take it), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"seed must be an integer, not {value!r}")
    return value


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
        try:
            return decoder.grammar(schema)
        except Exception as e:
            raise ValueError(f"cannot compile this JSON schema: {e}") from None
    raise ValueError(f"unsupported response_format type {kind!r}; use json_schema, json_object or text")


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
    parent_pid: int | None = None,
    max_batch: int = 16,
    dtype: str = "auto",
    threads: int | None = None,
    base: Path | None = None,
    prefix_cache_tokens: int = 32_768,
    on_ready=None,
) -> None:
    """Load ``folder`` and serve it until SIGINT/SIGTERM (or until the parent is gone)."""
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
    app = create_app(engine, name, sampling_defaults(weights))
    if fd is not None:
        sock = socket.socket(fileno=fd)
    else:
        from .servers import listening_socket

        sock = listening_socket(host, port)
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
            # Generation cannot be interrupted mid-batch; a server being stopped has nobody to answer.
            self.should_exit = self.force_exit = True
            threading.Timer(2.0, lambda: os._exit(0)).start()

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

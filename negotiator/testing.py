"""Test helpers shipped with the package, so users can test their integrations offline.

``FakeOpenAIServer`` is a real OpenAI-compatible HTTP server on loopback (what a vLLM host
exposes), answering ``/v1/chat/completions`` from a Python function. Point any spec at
its ``base_url`` (``hosted_vllm/fake`` + base URL) and the full LiteLLM path runs for real.
It can inject faults: a function may return ``FakeReply(status=503)`` or sleep.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class FakeReply:
    """What the fake server answers: text, a tool call, or an HTTP error status."""

    text: str | None = None
    tool_call: tuple[str, dict] | None = None
    status: int = 200
    delay: float = 0.0
    body: dict | None = None  # the whole JSON answer, sent as is (an error's, or a malformed 200's)


Handler = Callable[[dict[str, Any]], "FakeReply | str"]


@dataclass
class FakeOpenAIServer:
    handler: Handler
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)  # each request's HTTP headers (lower-case names)
    model: str = "fake"

    def __enter__(self) -> FakeOpenAIServer:
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})
                elif self.path.rstrip("/").endswith("health"):
                    self._send(200, {"status": "ok"})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                req = json.loads(self.rfile.read(length) or b"{}")
                outer.headers.append({k.lower(): v for k, v in self.headers.items()})
                outer.requests.append(req)
                reply = outer.handler(req)
                if isinstance(reply, str):
                    reply = FakeReply(text=reply)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.status == 200 and reply.body is not None:
                    self._send(200, reply.body)
                    return
                if reply.status != 200:
                    self._send(
                        reply.status,
                        reply.body or {"error": {"message": f"fake error {reply.status}", "type": "server_error"}},
                    )
                    return
                message: dict[str, Any] = {"role": "assistant", "content": reply.text}
                finish = "stop"
                if reply.tool_call:
                    name, args = reply.tool_call
                    message["tool_calls"] = [
                        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                    ]
                    finish = "tool_calls"
                prompt_tokens = sum(len(str(m.get("content") or "")) for m in req.get("messages", [])) // 4
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": req.get("model", outer.model),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": 20,
                            "total_tokens": prompt_tokens + 20,
                        },
                    },
                )

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

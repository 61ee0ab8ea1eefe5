"""The one interface every chat model sits behind.

Real models go through LiteLLM (frontier APIs, vLLM, the embedded local server); test
doubles implement the same ``ChatModel`` protocol without any network.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable
from urllib.parse import urlparse

from ..errors import RemoteRequestBlocked, UsageError

if TYPE_CHECKING:
    from ..party import PartyView
    from ..strategy import Advice


@dataclass
class ToolCall:
    name: str
    arguments: str  # JSON text, as providers return it


@dataclass
class ModelRequest:
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    response_schema: dict[str, Any] | None = None  # constrain decoding where the backend can
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    attempt: int = 0  # 0 for the first answer of a turn, 1.. for retries after feedback
    # The structured view behind the messages. Only test doubles read it (to script
    # sensible behaviour); real models see nothing but ``messages``.
    view: PartyView | None = None
    advice: Advice | None = None  # the assisted seller's options on this move (test doubles read it too)


@dataclass
class ModelResponse:
    text: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    def raw(self) -> str:
        """The output as one string (for logs and retry feedback), its first ``RAW_KEPT`` characters: an
        answer of megabytes (a server that ignores ``max_tokens``) was copied into the episode at each
        attempt and sent back to the provider, growing, with each retry's feedback."""
        if self.tool_calls:
            calls = "; ".join(f"{c.name}({c.arguments})" for c in self.tool_calls)
            out = f"{self.text or ''}\n[tool calls] {calls}".strip()
        else:
            out = self.text or ""
        if len(out) > RAW_KEPT:
            out = f"{out[:RAW_KEPT]} ... [{len(out) - RAW_KEPT} more characters not kept]"
        return out


RAW_KEPT = 4000
"""How much of a model's answer an episode keeps and retry feedback quotes (a valid action is a few
hundred characters; the default ``max_tokens``, 256, is about a thousand)."""


@runtime_checkable
class ChatModel(Protocol):
    spec: str
    family: str
    supports_tools: bool
    supports_response_schema: bool

    async def complete(self, request: ModelRequest) -> ModelResponse: ...

    async def aclose(self) -> None: ...


# --- offline guard --------------------------------------------------------------------

_block_remote = os.environ.get("NEGOTIATOR_BLOCK_REMOTE", "") not in ("", "0", "false")


def block_remote_requests(block: bool = True) -> None:
    """Make every non-loopback model request raise RemoteRequestBlocked (tests use this)."""
    global _block_remote
    _block_remote = block


def remote_blocked() -> bool:
    """Whether requests that would leave this machine are blocked (``NEGOTIATOR_BLOCK_REMOTE``)."""
    return _block_remote


def is_loopback(url: str | None) -> bool:
    if not url:
        return False
    host = urlparse(url if "://" in url else f"http://{url}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_loopback_host(host_header: str) -> bool:
    """Whether an HTTP Host header names this machine's loopback (``localhost:8000``, ``127.0.0.1``,
    ``[::1]:8000``): what a server on loopback checks so that a web page cannot reach it by pointing
    a name of its own at 127.0.0.1 (DNS rebinding)."""
    return not any(c in host_header for c in "@/\\") and is_loopback(host_header)


def check_base_url(base_url: str, spec: str) -> None:
    """A UsageError unless ``base_url`` is an http(s) address with a host (and a port that is a number):
    anything else fails every call of a batch later, each after its retries (``127.0.0.1:8000/v1`` reached
    the server check and then lost every negotiation)."""
    url = urlparse(base_url.strip())
    try:
        port_ok = url.port is None or url.port > 0
    except ValueError:  # a port that is not a number, or out of range
        port_ok = False
    if url.scheme not in ("http", "https") or not url.hostname or not port_ok:
        raise UsageError(
            f"base URL {base_url!r} for {spec} is not an http:// or https:// address: write it whole, "
            "e.g. http://127.0.0.1:8000/v1 (the server's OpenAI-compatible address)"
        )


def check_request_allowed(model: str, base_url: str | None) -> None:
    if _block_remote and not is_loopback(base_url):
        raise RemoteRequestBlocked(
            f"a request to model {model!r} (base URL {base_url or 'provider default'}) would leave this "
            "machine, and remote requests are blocked (NEGOTIATOR_BLOCK_REMOTE). Use a scripted/ or rule/ "
            "spec, or a loopback base URL."
        )

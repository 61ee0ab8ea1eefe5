"""Every real model call goes through LiteLLM: one string picks the backend.

``openai/gpt-4o-mini``, ``anthropic/...``, ``gemini/...`` reach frontier APIs;
``hosted_vllm/MODEL`` plus a base URL reaches a vLLM server (or the embedded local
server, which speaks the same protocol). Provider failures become ``ProviderError``
marked transient or not; the agent decides whether to retry.
"""

from __future__ import annotations

import asyncio
import copy
import math
import os
import re
from typing import Any

from ..errors import ProviderError
from .base import ModelRequest, ModelResponse, ToolCall, check_base_url, check_request_allowed
from .families import model_family
from .specs import is_secret_name

# LiteLLM fetches a price map from the internet at import unless told not to.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_litellm = None


def litellm_module():
    """Import LiteLLM lazily (it takes seconds) and keep it quiet."""
    global _litellm
    if _litellm is None:
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.drop_params = True  # a provider that lacks a parameter should not fail the call
        _litellm = litellm
    return _litellm


# At a base URL these are a server of the user's (vLLM, a proxy, an OpenAI-compatible API): they get the
# key in NEGOTIATOR_MODEL_API_KEY, else a placeholder, never the provider's own (OPENAI_API_KEY).
SELF_HOSTED = ("hosted_vllm/", "openai/")

# Backends known to take a JSON schema in ``response_format`` (structured outputs).
_SCHEMA_PREFIXES = ("hosted_vllm/", "openai/", "gemini/", "vertex_ai/")


class LiteLLMModel:
    """A chat model reached through ``litellm.acompletion``."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        tools: bool | None = None,
        response_schema: bool | None = None,
        family: str | None = None,
        extra: dict[str, Any] | None = None,
        spec: str | None = None,
    ):
        self.model = model
        self.spec = spec or model
        if base_url:
            check_base_url(base_url, self.spec)
        self.base_url = base_url
        self.api_key = api_key
        self.timeout = timeout
        self.extra = dict(extra or {})
        self.family = family or model_family(model)
        self.supports_tools = self._supports_tools() if tools is None else tools
        self.supports_response_schema = (
            (model.startswith(_SCHEMA_PREFIXES) and not self.supports_tools)
            if response_schema is None
            else response_schema
        )
        self.router: Any = None  # a litellm.Router, and the model group of this model in it (``routed``)
        self.route = ""

    def _supports_tools(self) -> bool:
        """LiteLLM's capability data; unknown models (a vLLM-served Gemma 3) get JSON mode."""
        try:
            return bool(litellm_module().supports_function_calling(model=self.model))
        except Exception:
            return False

    def endpoint(self) -> dict[str, Any]:
        """Where the calls go: LiteLLM's model string, base URL and key (a Router deployment's ``litellm_params``)."""
        out: dict[str, Any] = {"model": self.model}
        if self.base_url:
            out["api_base"] = self.base_url
        if self.api_key:
            out["api_key"] = self.api_key
        elif self.base_url and self.model.startswith(SELF_HOSTED):
            out["api_key"] = os.environ.get("NEGOTIATOR_MODEL_API_KEY", "not-needed")
        return out

    def routed(self, router: Any, route: str) -> LiteLLMModel:
        """This model with its calls sent through a ``litellm.Router`` as the model group ``route``
        (the Router then does the rate limits, retries and fallbacks; see ``evals.routing``)."""
        other = copy.copy(self)
        other.router, other.route = router, route
        return other

    async def complete(self, request: ModelRequest) -> ModelResponse:
        check_request_allowed(self.model, self.base_url)
        litellm = litellm_module()
        kwargs: dict[str, Any] = {"messages": request.messages, **self.extra}
        if request.tools:
            kwargs["tools"] = request.tools
            kwargs["tool_choice"] = "required"
        if request.response_schema is not None and self.supports_response_schema and not request.tools:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "action", "schema": request.response_schema, "strict": True},
            }
        for key in ("temperature", "max_tokens", "seed"):
            value = getattr(request, key)
            if value is not None:
                kwargs[key] = value
        try:
            if self.router is not None:
                resp = await self.router.acompletion(model=self.route, **kwargs)
            else:
                # the agent retries with backoff and records each attempt; the spec's own parameters win
                call = {**self.endpoint(), "timeout": self.timeout, "num_retries": 0, **kwargs}
                resp = await litellm.acompletion(**call)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # LiteLLM maps every provider's errors onto OpenAI's classes
            err = _provider_error(e)
            if err.status == 401 and self.base_url and not self.api_key and self.model.startswith(SELF_HOSTED):
                err = ProviderError(
                    f"{err} (the key for a server at a base URL comes from NEGOTIATOR_MODEL_API_KEY)", status=401
                )
            raise _redacted(err, self.api_key) from e
        return _to_response(resp)

    async def aclose(self) -> None:
        return None


def _provider_error(e: Exception) -> ProviderError:
    status = getattr(e, "status_code", None)
    name = type(e).__name__
    transient = (
        name
        in {
            "Timeout",
            "APIConnectionError",
            "RateLimitError",
            "ServiceUnavailableError",
            "InternalServerError",
            "APIError",
        }
        or isinstance(e, (TimeoutError, ConnectionError))
        or (isinstance(status, int) and (status == 429 or status >= 500))
    )
    if name in {"AuthenticationError", "PermissionDeniedError", "NotFoundError", "BadRequestError"}:
        transient = False
    # LiteLLM's words repeat the class ("litellm.RateLimitError: RateLimitError: OpenAIException - ...") and may
    # carry a traceback after them: the episode keeps the class and the provider's own words. (No status in the
    # words: LiteLLM gives a lost connection a made-up 500.)
    text = str(e).split("Traceback (most recent call last)")[0].strip()
    msg = re.sub(rf"^(?:litellm\.{name}: )?(?:{name}: )*", "", text.splitlines()[0] if text else "")[:500] or name
    return ProviderError(f"{name}: {msg}", transient=transient, status=status if isinstance(status, int) else None)


def _redacted(err: ProviderError, sent: str | None) -> ProviderError:
    """``err`` without the key it was given, nor any key in the environment: a server that echoes the
    credential in its error ("invalid key sk-...") would put it in the episode, the summary and the terminal."""
    keys = {v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= 8} | ({sent} if sent else set())
    message = str(err)
    for key in sorted(keys, key=len, reverse=True):
        message = message.replace(key, "[redacted]")
    if message == str(err):
        return err
    return ProviderError(message, transient=err.transient, status=err.status)


def _to_response(resp: Any) -> ModelResponse:
    if not resp.choices:  # a provider's hiccup (or its filter) answered nothing: asking again may help
        raise ProviderError("the provider answered with no choices (an empty `choices` list)", transient=True)
    choice = resp.choices[0]
    msg = choice.message
    calls = []
    for tc in getattr(msg, "tool_calls", None) or []:
        fn = tc.function
        calls.append(ToolCall(name=fn.name or "", arguments=fn.arguments or "{}"))
    usage = getattr(resp, "usage", None)
    cost = 0.0
    try:
        cost = float(litellm_module().completion_cost(completion_response=resp) or 0.0)
    except Exception:
        cost = 0.0  # unknown price (local and self-hosted models): free as far as we know
    if not math.isfinite(cost):
        cost = 0.0  # a price map's nan or inf is no price: the episode's metrics take finite numbers only
    return ModelResponse(
        text=msg.content,
        tool_calls=calls,
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cost_usd=cost,
    )

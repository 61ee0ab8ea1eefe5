"""Turn a model spec into a ``ChatModel``."""

from __future__ import annotations

from ..errors import UsageError
from .base import ChatModel
from .litellm_model import LiteLLMModel
from .scripted import named_scripted_model
from .specs import check_generation, coerce_param, parse_spec


def resolve_model(
    spec: str | ChatModel, *, base_url: str | None = None, api_key: str | None = None, timeout: float = 60.0
) -> ChatModel:
    """A chat model for ``spec``: ``scripted/...``, ``local/...`` or any LiteLLM model string."""
    if not isinstance(spec, str):
        return spec
    s = parse_spec(spec)
    if s.kind == "scripted":
        _checked(s.params, spec)  # a script samples nothing, but its spec's settings are the same bad input
        return named_scripted_model(s.name, s.params, s.raw)
    if s.kind == "local":
        if base_url:
            raise UsageError(
                f"{spec} starts its own server on loopback and takes no base URL; to use a server that is already "
                f"running, pass hosted_vllm/<model> with that base URL instead"
            )
        from .local import local_model

        return local_model(s.raw, _checked(s.params, spec))
    if s.kind == "litellm":
        taken = [k for k in s.params if k in NOT_SETTINGS]
        if taken:
            raise UsageError(
                f"{s.name}: ?{taken[0]}= is not a model setting a spec can give ({NOT_SETTINGS[taken[0]]}); "
                "a spec's parameters are sampling settings such as temperature, top_p or max_tokens"
            )
        extra = _checked(s.params, spec)
        return LiteLLMModel(s.name, base_url=base_url, api_key=api_key, timeout=timeout, extra=extra, spec=s.raw)
    raise UsageError(
        f"{spec!r} is not a language model spec ({s.kind}); an LLM party needs scripted/, local/ or a LiteLLM model"
    )


# What LiteLLM would take from a spec's parameters but the run owns: where the calls go, how they are
# retried and bounded, what is asked and how the answer comes back.
_WHERE = "the base URL is --seller-base-url or --buyer-base-url, recorded with the run and checked"
_RETRIES = "--call-retries, --retries and --timeout bound every call"
_ASKED = "the party writes the request and reads one whole answer"
NOT_SETTINGS = {
    "api_base": _WHERE,
    "base_url": _WHERE,
    "custom_llm_provider": "the provider is the spec's prefix",
    "num_retries": _RETRIES,
    "max_retries": _RETRIES,
    "timeout": _RETRIES,
    "request_timeout": _RETRIES,
    "fallbacks": "--fallback PRIMARY=BACKUP",
    "stream": _ASKED,
    "model": _ASKED,
    "messages": _ASKED,
    "tools": _ASKED,
    "tool_choice": _ASKED,
    "response_format": _ASKED,
    "mock_response": _ASKED,
}


def _checked(params: dict[str, str], spec: str) -> dict:
    """A model spec's settings as values, its sampling settings checked before any model starts."""
    values = {k: coerce_param(v) for k, v in params.items()}
    check_generation(values, lambda key, v: f"{spec}: {key}={v!r} is not usable;")
    return values

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
        extra = _checked(s.params, spec)
        return LiteLLMModel(s.name, base_url=base_url, api_key=api_key, timeout=timeout, extra=extra, spec=s.raw)
    raise UsageError(
        f"{spec!r} is not a language model spec ({s.kind}); an LLM party needs scripted/, local/ or a LiteLLM model"
    )


def _checked(params: dict[str, str], spec: str) -> dict:
    """A model spec's settings as values, its sampling settings checked before any model starts."""
    values = {k: coerce_param(v) for k, v in params.items()}
    check_generation(values, lambda key, v: f"{spec}: {key}={v!r} is not usable;")
    return values

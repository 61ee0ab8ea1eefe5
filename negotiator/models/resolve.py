"""Turn a model spec into a ``ChatModel``."""

from __future__ import annotations

import math

from ..errors import UsageError
from .base import ChatModel
from .litellm_model import LiteLLMModel
from .scripted import named_scripted_model
from .specs import coerce_param, parse_spec


def resolve_model(
    spec: str | ChatModel, *, base_url: str | None = None, api_key: str | None = None, timeout: float = 60.0
) -> ChatModel:
    """A chat model for ``spec``: ``scripted/...``, ``local/...`` or any LiteLLM model string."""
    if not isinstance(spec, str):
        return spec
    s = parse_spec(spec)
    if s.kind in ("local", "litellm"):
        check_generation({k: coerce_param(v) for k, v in s.params.items()}, spec)
    if s.kind == "scripted":
        return named_scripted_model(s.name, s.params, s.raw)
    if s.kind == "local":
        if base_url:
            raise UsageError(
                f"{spec} starts its own server on loopback and takes no base URL; to use a server that is already "
                f"running, pass hosted_vllm/<model> with that base URL instead"
            )
        from .local import local_model

        return local_model(s.raw, {k: coerce_param(v) for k, v in s.params.items()})
    if s.kind == "litellm":
        extra = {k: coerce_param(v) for k, v in s.params.items()}
        return LiteLLMModel(s.name, base_url=base_url, api_key=api_key, timeout=timeout, extra=extra, spec=s.raw)
    raise UsageError(
        f"{spec!r} is not a language model spec ({s.kind}); an LLM party needs scripted/, local/ or a LiteLLM model"
    )


# What each generation setting of a spec may be: a sampler given nan or inf, or a negative
# temperature, answers at random or silently greedily (docs/local-model.md).
_RANGES = {
    "temperature": ("a number of 0 or more (0: greedy)", lambda v: v >= 0),
    "top_p": ("a number above 0 and at most 1", lambda v: 0 < v <= 1),
    "top_k": ("a whole number of 0 or more (0: no cut)", lambda v: v >= 0 and float(v).is_integer()),
    "max_tokens": ("a whole number of 1 or more", lambda v: v >= 1 and float(v).is_integer()),
}


def check_generation(params: dict, spec: str) -> None:
    """Refuse a spec whose sampling settings are not numbers in their range (``?temperature=nan``)."""
    for key, (what, ok) in _RANGES.items():
        if key not in params:
            continue
        v = params[key]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or not ok(v):
            raise UsageError(f"{spec}: {key}={params[key]!r} is not usable; give {what}")

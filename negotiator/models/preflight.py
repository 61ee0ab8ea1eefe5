"""Check, before a batch starts, that a model can be reached at all.

A batch of 1,152 negotiations against a server that is not running should fail in one
second with one clear message, not produce 1,152 error episodes.
"""

from __future__ import annotations

import socket
from urllib.parse import urlparse

from ..errors import ProviderError, UsageError
from .base import check_base_url, check_request_allowed
from .litellm_model import SELF_HOSTED, litellm_module
from .specs import Spec, parse_spec


def check_provider(s: Spec) -> None:
    """A LiteLLM spec whose prefix LiteLLM does not know is a typo or a plugin that is not installed:
    say so now (a UsageError), not in every negotiation ("LLM Provider NOT provided")."""
    prefix = s.name.split("/", 1)[0]
    known = {str(getattr(p, "value", p)) for p in litellm_module().provider_list}
    if prefix not in known:
        from ..plugins import ENTRY_POINT_GROUP, registered

        names = ", ".join(sorted(registered())) or "none installed"
        raise UsageError(
            f"unknown spec {s.raw!r}: {prefix!r} is not a LiteLLM provider, and no installed package registers "
            f"{s.name!r} as a party (entry points {ENTRY_POINT_GROUP}: {names}). Use rule/..., scripted/..., local/..., "
            "a LiteLLM model such as openai/gpt-4o-mini or hosted_vllm/MODEL, or your own party as pkg.module:factory"
        )


def preflight(spec: str, base_url: str | None = None, timeout: float = 3.0) -> None:
    """Raise ProviderError when ``spec`` obviously cannot work (server down, key missing)."""
    s = parse_spec(spec)
    if s.kind != "litellm":
        return
    if base_url:
        check_base_url(base_url, spec)
    check_request_allowed(s.name, base_url)
    if base_url:
        url = urlparse(base_url.strip())
        host, port = url.hostname or "localhost", url.port or (443 if url.scheme == "https" else 80)
        try:
            with socket.create_connection((host, port), timeout=timeout):
                pass
        except OSError as e:
            raise ProviderError(
                f"cannot connect to {base_url} for {spec} ({e.strerror or e}). Is the server running? "
                "Start it (e.g. `vllm serve MODEL` or `negotiator serve-local SPEC`) or fix the URL."
            ) from None
        if s.name.startswith(SELF_HOSTED):
            return  # they send NEGOTIATOR_MODEL_API_KEY there, or a placeholder (LiteLLMModel.endpoint)
    try:
        env = litellm_module().validate_environment(model=s.name)
    except Exception:
        return  # LiteLLM does not know this provider's keys; let the first call tell
    missing = env.get("missing_keys") or []
    if missing and base_url:  # anthropic/... behind a proxy: LiteLLM still sends the provider's key
        raise ProviderError(
            f"{spec} at {base_url} needs {', '.join(missing)} in the environment (LiteLLM sends that key to the base "
            "URL too). Set it, or call the server as openai/MODEL, which sends NEGOTIATOR_MODEL_API_KEY."
        )
    if missing:
        raise ProviderError(
            f"{spec} needs {', '.join(missing)} in the environment. Set it, or pass a base URL for a "
            "self-hosted server, or use an offline spec such as rule/boulware or local/gemma-3-270m."
        )

"""The embedded local model: served on loopback like vLLM, reached through LiteLLM.

``local/gemma-3-270m`` is Gemma 3 270M prepared from its PyPI package (once, cached);
``local/PATH`` is any transformers model folder or LoRA adapter folder. The first call
starts an OpenAI-compatible server for it (batched generation, JSON-schema constrained
decoding with xgrammar), and from then on the seller talks to it exactly as it talks to a
vLLM host: ``hosted_vllm/<name>`` plus the server's base URL, through LiteLLM.
"""

from __future__ import annotations

import asyncio

from ...errors import ProviderError, UsageError
from ..base import ModelRequest, ModelResponse
from ..litellm_model import LiteLLMModel
from .prepare import RECIPES, home, list_models
from .servers import LocalServer, check_extra, local_servers, resolve_target, running_servers, server_for, stop_all

# What a local/ spec's settings may name: the server's sampling settings and ?grammar=. A seller's
# strategy settings (?menu=, ?leeway=, ...) are taken off before the model is built; any other
# key is a typo that would otherwise change nothing without a word (?temprature=0 sampling at 1).
MODEL_KEYS = ("temperature", "top_p", "top_k", "max_tokens", "grammar")

# A batch of 16 long prompts takes tens of seconds on 2 cores; queued requests wait for it.
REQUEST_TIMEOUT_S = 600.0


class LocalModel:
    """A ``ChatModel`` for ``local/...``: its server starts on first use and is shared.

    Construction only checks the spec (a clear ``UsageError`` at once); the server is
    started, in a worker thread, by the first ``complete``, so building parties is cheap and
    never blocks an event loop. ``aclose`` leaves the shared server running; ``stop_all``
    (or the ``local_servers`` block, or interpreter exit) stops it.
    """

    supports_tools = False  # Gemma 3 has no tool template: JSON actions, schema-constrained
    supports_response_schema = True

    def __init__(self, spec: str, name: str, params: dict | None = None):
        check_extra()
        _check_keys(spec, params or {})
        self.spec = spec
        self.target = resolve_target(name)
        self.family = self.target.family
        self.params = dict(params or {})
        # ?grammar=off: free-text JSON, no constrained decoding (to measure what the model does unaided)
        grammar = str(self.params.pop("grammar", "on")).lower()
        if grammar not in ("on", "off"):
            raise UsageError(f"{spec}: grammar must be on or off, not {grammar!r}")
        self.supports_response_schema = grammar == "on"
        self._client: LiteLLMModel | None = None

    def client(self, server: LocalServer) -> LiteLLMModel:
        return LiteLLMModel(
            f"hosted_vllm/{self.target.served_name}",
            base_url=server.base_url,
            timeout=REQUEST_TIMEOUT_S,
            tools=False,
            response_schema=self.supports_response_schema,
            family=self.family,
            extra=self.params,
            spec=self.spec,
        )

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if self._client is None or not _alive(self._client):
            try:
                server = await asyncio.to_thread(server_for, self.target)
            except (UsageError, ProviderError):
                raise
            except Exception as e:  # a server that cannot start is a provider failure, recorded on the episode
                raise ProviderError(f"could not start the local server for {self.spec}: {type(e).__name__}: {e}") from e
            self._client = self.client(server)
        return await self._client.complete(request)

    async def aclose(self) -> None:
        return None


def _check_keys(spec: str, params: dict) -> None:
    unknown = [k for k in params if k not in MODEL_KEYS]
    if not unknown:
        return
    from difflib import get_close_matches

    from ..specs import STRATEGY_KEYS

    key = unknown[0]
    near = get_close_matches(key, [*MODEL_KEYS, *STRATEGY_KEYS], n=1)
    if key == "seed":  # each turn's seed comes from the party's (eval's --seed, SellerAgent(seed=...))
        hint = "seed is not a model setting here: each turn is seeded from the run's --seed or SellerAgent(seed=...)"
    elif key in STRATEGY_KEYS:
        hint = f"{key} is a seller's strategy setting; a buyer's model takes none"
    else:
        hint = f"unknown setting {key!r}" + (f" (did you mean {near[0]}?)" if near else "")
    raise UsageError(
        f"{spec}: {hint}; a local model takes {', '.join(MODEL_KEYS)}, and a seller also its strategy's "
        "settings (docs/local-model.md)"
    )


def _alive(client: LiteLLMModel) -> bool:
    return any(s.base_url == client.base_url for s in running_servers())


def local_model(spec: str, params: dict | None = None) -> LocalModel:
    """The chat model of a ``local/NAME`` spec (``NAME``: a prepared model or a folder path)."""
    from ..specs import coerce_param, parse_spec

    s = parse_spec(spec)
    if s.kind != "local":
        raise UsageError(f"{spec!r} is not a local/ spec")
    return LocalModel(
        s.raw, s.name, params if params is not None else {k: coerce_param(v) for k, v in s.params.items()}
    )


__all__ = [
    "LocalModel",
    "local_model",
    "local_servers",
    "stop_all",
    "running_servers",
    "server_for",
    "resolve_target",
    "LocalServer",
    "list_models",
    "home",
    "RECIPES",
]

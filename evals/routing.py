"""An evaluation's model calls go through LiteLLM's Router: rate limits, retries and fallbacks.

One ``litellm.Router`` per run. Each LiteLLM party of the run is one deployment, its own model group
(``seller:SPEC``, ``buyer:SPEC``, with that role's base URL), so that the Router does for every call:

* **rate limits**: ``rate_limits`` (``--rate-limit openai=500``: calls per minute) and ``token_limits``
  (``--token-limit openai=200000``: tokens per minute), by the spec's provider prefix or by the whole
  spec, become the deployment's ``rpm`` and ``tpm``. The Router counts them per deployment and minute
  (routing strategy ``usage-based-routing-v2`` with its pre-call check); a call over the limit waits
  in the Router's retries until the window has room again.
* **retries**: ``call_retries`` per call on transient failures (429, 5xx, timeouts, lost connections),
  with the Router's backoff, which honours a provider's ``Retry-After``. The agent's own per-call
  retries are switched off for routed parties, so a call is retried in one place.
* **fallbacks**: ``fallbacks`` (``--fallback PRIMARY=BACKUP``): when a call to PRIMARY still fails, the
  Router sends it to BACKUP: at PRIMARY's base URL when both are of one provider (two models of one
  vLLM host), else with BACKUP's provider defaults (its key from the environment).

What the Router cannot do stays in ``evals.runner``: replaying a whole negotiation that still ended in
a provider error (a negotiation is a dialogue of many calls; the Router retries one call), and the
timeout of the agent's turn. Parties that are not LiteLLM models (``rule/``, ``scripted/``, ``local/``,
plugins, remote agents) make no provider calls through it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from negotiator.errors import UsageError
from negotiator.models.base import check_request_allowed
from negotiator.models.specs import parse_spec

DEFAULT_CALL_TIMEOUT = 120.0  # seconds per call, as the agent's own RetryPolicy


def provider(spec: str) -> str:
    """The provider a spec's model calls go to: its prefix (``openai/gpt-4o`` -> ``openai``)."""
    return spec.split("/", 1)[0].split("?", 1)[0]


def routable(spec: str) -> bool:
    """Whether a party of this spec calls a provider through LiteLLM (and so through the Router)."""
    return parse_spec(spec).kind == "litellm"


def names(spec: str) -> tuple[str, str, str]:
    """What a flag may call a spec's model by: the spec, the spec without its ``?parameters``, its provider."""
    return spec, spec.split("?", 1)[0], provider(spec)


def _limit(limits: dict[str, float], spec: str) -> float | None:
    """The limit set for the whole spec, else for its model, else for its provider."""
    return next((limits[k] for k in names(spec) if k in limits), None)


@dataclass
class Routes:
    """The Router of a run and the model group of each (role, spec)."""

    router: Any
    groups: dict[tuple[str, str], str] = field(default_factory=dict)

    async def aclose(self) -> None:
        """Retire the Router: its usage counters' background task and its global callbacks go."""
        self.router.retire()
        await asyncio.sleep(0)  # let the cancelled task end on this loop

    def wrap(self, role: str, spec: str):
        """The ``wrap_model`` for a party: its LiteLLM model sent through the Router."""
        group = self.groups.get((role, spec))
        if group is None:
            return None

        def wrap(model):
            from negotiator.models.litellm_model import LiteLLMModel

            return model.routed(self.router, group) if isinstance(model, LiteLLMModel) else model

        return wrap


def unused_limits(specs: list[str], rate_limits: dict[str, float], token_limits: dict[str, float]) -> list[str]:
    """``--rate-limit``/``--token-limit`` keys that name no LiteLLM party of the run (they limit nothing)."""
    keys = {*rate_limits, *token_limits}
    used = {k for k in keys for s in specs if routable(s) and k in names(s)}
    return sorted(keys - used)


def build_routes(
    parties: list[tuple[str, str, str | None]],
    *,
    rate_limits: dict[str, float],
    token_limits: dict[str, float],
    fallbacks: dict[str, list[str]],
    call_retries: int,
    call_timeout: float | None,
) -> Routes | None:
    """The Router for ``parties`` ((role, spec, base URL) each); None when none of them is a LiteLLM model.

    Build it inside the event loop that will use it (its usage counters start a task there), and
    ``aclose`` it there at the end.
    """
    from negotiator.models.litellm_model import LiteLLMModel, litellm_module
    from negotiator.models.resolve import resolve_model

    timeout = call_timeout or DEFAULT_CALL_TIMEOUT
    deployments: list[dict] = []
    groups: dict[tuple[str, str], str] = {}

    def deploy(group: str, spec: str, base_url: str | None) -> None:
        model = resolve_model(spec, base_url=base_url, timeout=timeout)
        assert isinstance(model, LiteLLMModel)  # routable(spec): a LiteLLM model string
        check_request_allowed(model.model, model.base_url)  # a fallback too: it would leave the machine
        params = {**model.endpoint(), "timeout": timeout}
        for key, limits in (("rpm", rate_limits), ("tpm", token_limits)):
            value = _limit(limits, spec)
            if value is not None:
                params[key] = int(value)
        deployments.append({"model_name": group, "litellm_params": params})

    base_urls: dict[str, str | None] = {}
    for role, spec, base_url in parties:
        if routable(spec) and (role, spec) not in groups:
            groups[(role, spec)] = f"{role}:{spec}"
            deploy(groups[(role, spec)], spec, base_url)
            base_urls.setdefault(spec, base_url)
    primaries = {spec for _, spec in groups}
    router_fallbacks = []
    for primary, backups in fallbacks.items():
        specs = [spec for spec in primaries if primary in names(spec)[:2]]
        if not specs:
            raise UsageError(
                f"--fallback {primary}=...: {primary} is not a LiteLLM model of this run "
                f"({', '.join(sorted(primaries)) or 'it has none'}); name the seller's or a buyer's spec"
            )
        targets = []
        for backup in backups:
            if not routable(backup):
                raise UsageError(
                    f"--fallback {primary}={backup}: a fallback is a LiteLLM model spec, e.g. openai/gpt-4o-mini"
                )
            targets.append(f"fallback:{backup}")
            if all(d["model_name"] != targets[-1] for d in deployments):
                # the same provider: the same server (another model on one vLLM host); else the provider's default
                same = provider(backup) == provider(primary)
                deploy(targets[-1], backup, base_urls[specs[0]] if same else None)
        for (_, spec), group in groups.items():
            if spec in specs:
                router_fallbacks.append({group: targets})
    if not groups:
        return None
    limited = any(k in d["litellm_params"] for d in deployments for k in ("rpm", "tpm"))
    litellm_module()  # LiteLLM quiet and offline (its price map) before the Router starts
    from litellm import Router

    router = Router(
        model_list=deployments,
        num_retries=call_retries,
        timeout=timeout,
        fallbacks=router_fallbacks,
        # limits are counted per deployment and minute, and checked before each call
        routing_strategy="usage-based-routing-v2" if limited else "simple-shuffle",
        enable_pre_call_checks=limited,
        # one deployment per model group: a cooldown would only fail every call in flight at once
        disable_cooldowns=True,
    )
    return Routes(router, groups)

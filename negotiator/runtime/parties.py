"""Build a seller or buyer from a spec string."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..buyers.rules import RuleParty
from ..domain.scenario import HardLimits, Role
from ..errors import UsageError
from ..models.specs import parse_spec
from ..party import Party

if TYPE_CHECKING:
    from ..llm.party import LLMParty


def make_party(
    spec: str,
    role: Role,
    *,
    seed: int = 0,
    base_url: str | None = None,
    api_key: str | None = None,
    instructions: str = "",
    limits: HardLimits | dict | None = None,
    **llm_options,
) -> Party:
    """A party for ``spec``: ``rule/...``, ``scripted/...``, ``local/...``, a plugin (``pkg.module:factory``,
    a registered name) or a LiteLLM model."""
    if role not in ("seller", "buyer"):
        raise UsageError(f"role must be seller or buyer, not {role!r}")
    try:
        return _make_party(spec, role, seed, base_url, api_key, instructions, limits, llm_options)
    except UsageError as e:
        from ..plugins import with_reserved_hint

        raise with_reserved_hint(e, spec) from None


def _make_party(
    spec: str,
    role: Role,
    seed: int,
    base_url: str | None,
    api_key: str | None,
    instructions: str,
    limits: HardLimits | dict | None,
    llm_options: dict,
) -> Party:
    s = parse_spec(spec)
    if s.kind == "rule":
        if base_url:
            raise UsageError(f"{spec} is a rule-based party: it takes no base URL")
        return RuleParty(s.name, role, params=s.params, seed=seed, spec=s.raw)
    if s.kind == "human":
        raise UsageError("a human party is only available in `negotiator play`")
    if s.kind == "plugin":
        from ..plugins import make_plugin_party

        if base_url:
            raise UsageError(
                f"{spec} is a plugin party: it takes no base URL (negotiator would not pass it on); give the "
                "party its server through a ?parameter of its spec or the environment"
            )
        return make_plugin_party(s.raw, s.name, s.params, role, seed=seed)
    if s.kind in ("mcp", "a2a"):
        raise UsageError(
            f"{spec} is a seller served elsewhere: evaluate it with `negotiator eval --buyer {spec} --buyer-model MODEL`, or in code "
            "through negotiator.remote.remote_parties(spec, buyer, scenario)"
        )
    # The LangGraph agent is imported only for LLM parties: rule-only runs start without it.
    if role == "seller":
        from ..agent.seller import SellerAgent

        return SellerAgent(
            spec, instructions=instructions, limits=limits, base_url=base_url, api_key=api_key, seed=seed, **llm_options
        )
    from ..buyers.llm import LLMBuyer

    buyer: LLMParty = LLMBuyer(spec, persona=instructions, base_url=base_url, api_key=api_key, seed=seed, **llm_options)
    return buyer

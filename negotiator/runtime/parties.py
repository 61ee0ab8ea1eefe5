"""Build a seller or buyer from a spec string."""

from __future__ import annotations

from ..agent.llm_party import LLMParty
from ..agent.seller import SellerAgent
from ..buyers.llm import LLMBuyer
from ..buyers.rules import RuleParty
from ..domain.scenario import HardLimits, Role
from ..errors import UsageError
from ..models.specs import parse_spec
from ..party import Party


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
    """A party for ``spec``: ``rule/...``, ``scripted/...``, ``local/...`` or a LiteLLM model."""
    if role not in ("seller", "buyer"):
        raise UsageError(f"role must be seller or buyer, not {role!r}")
    s = parse_spec(spec)
    if s.kind == "rule":
        if base_url:
            raise UsageError(f"{spec} is a rule-based party: it takes no base URL")
        return RuleParty(s.name, role, params=s.params, seed=seed, spec=s.raw)
    if s.kind == "human":
        raise UsageError("a human party is only available in `negotiator play`")
    if role == "seller":
        return SellerAgent(spec, instructions=instructions, limits=limits, base_url=base_url, api_key=api_key, seed=seed, **llm_options)
    buyer: LLMParty = LLMBuyer(spec, persona=instructions, base_url=base_url, api_key=api_key, seed=seed, **llm_options)
    return buyer

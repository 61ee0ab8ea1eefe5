"""What a buyer persona is (``personas`` holds the evaluation ones, ``adversarial`` the attackers)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Persona:
    name: str
    title: str
    style: str  # private instructions for an LLM buyer
    tactic: str  # the matching rule-based tactic, e.g. "boulware?e=0.3"
    emphasis: dict[str, float] = field(default_factory=dict)  # aspect -> weight multiplier
    reservation_shift: float = 0.0  # added to the buyer's reservation utility

    @property
    def rule_spec(self) -> str:
        return f"rule/{self.tactic}"

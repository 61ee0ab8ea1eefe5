"""LLM buyers: a persona prompt plus the same action schemas and turn graph as the seller."""

from __future__ import annotations

from ..llm.party import LLMParty
from ..models.base import ChatModel


class LLMBuyer(LLMParty):
    """A buyer played by a chat model (via LiteLLM), in the style ``persona`` describes.

    The persona is private style guidance ("a budget-bound student who ..."); the buyer's
    utility and reservation come from the scenario, exactly as for rule-based buyers.
    """

    def __init__(self, model: str | ChatModel, *, persona: str = "", **kwargs):
        kwargs.pop("guard", None)
        super().__init__(model, role="buyer", instructions=persona, guard=False, **kwargs)
        self.persona = persona

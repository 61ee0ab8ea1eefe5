"""The seller's model never sees the buyer's private preferences."""

from __future__ import annotations

import json

from negotiator.agent import SellerAgent
from negotiator.domain import Preferences, Scenario
from negotiator.models import ScriptedModel
from negotiator.models.scripted import _Tactic
from negotiator.sim import generate, make_party, run_negotiation


def _with_marked_buyer(s: Scenario) -> Scenario:
    """Give the buyer distinctive numbers that would be easy to spot in a prompt."""
    names = list(s.buyer.weights)
    marks = [0.123457, 0.234568, 0.145679, 0.111358]
    weights = {n: marks[i] for i, n in enumerate(names[:-1])}
    weights[names[-1]] = round(1.0 - sum(weights.values()), 6)
    buyer = Preferences(weights=weights, values=s.buyer.values, reservation=0.271828)
    return s.model_copy(update={"buyer": buyer})


async def test_buyer_reservation_and_weights_never_reach_the_seller_model():
    tactic = _Tactic(0.3)
    for seed in range(6):
        s = _with_marked_buyer(generate(seed))
        Scenario.model_validate(s.model_dump())  # still a valid scenario
        model = ScriptedModel(tactic, spec="scripted/spy")
        ep = await run_negotiation(SellerAgent(model, mode="json"), make_party("rule/linear", "buyer"), s, seed)
        assert ep.metrics.seller_turns >= 1 and model.requests
        secrets = ["271828", "123457", "234568", "145679", str(s.buyer.weights[list(s.buyer.weights)[-1]])[2:]]
        for req in model.requests:
            sent = json.dumps(req.messages) + json.dumps(req.response_schema or {}) + json.dumps(req.tools or [])
            for secret in secrets:
                assert secret not in sent, (seed, secret)
            # The structured view handed to test doubles holds only the seller's own preferences.
            assert req.view.preferences == s.seller
            assert "buyer" not in req.view.model_dump()["scenario"]
            assert "0.271828" not in req.view.model_dump_json()

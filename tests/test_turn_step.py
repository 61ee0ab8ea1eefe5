"""The one turn step (``negotiator.actions.play``): every move is checked and normalised
before the protocol applies it, in run_negotiation, Sessions and SellerAgent.respond."""

from __future__ import annotations

import numpy as np
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from negotiator import BuyerMove, SellerAgent, Sessions, UsageError
from negotiator.actions import MakeOffer, play
from negotiator.domain.protocol import ProtocolState
from negotiator.errors import InvalidOffer, ProtocolError
from negotiator.party import PartyView, TurnRecord
from negotiator.sim import RuleParty, generate, make_party, run_negotiation


@pytest.fixture
def scenario():
    return generate(3, "furniture")


def _discrete(space):
    return next(i for i in space.issues if i.kind == "discrete" and all(isinstance(o, int) for o in i.options))


def _price(space):
    return space.issues[0]


def test_play_normalises_numpy_numbers_off_grid_prices_and_option_types(scenario):
    space = scenario.space
    price, opt = _price(space), _discrete(space)
    assert price.step == 1
    terms = {i.name: i.options[0] if i.kind == "discrete" else i.low for i in space.issues}
    terms[opt.name] = np.int64(opt.options[1])
    terms[price.name] = price.low + 10.63  # off the step-1 grid
    state = ProtocolState(opener="buyer", max_turns=4)
    applied = play(state, space, "buyer", MakeOffer(terms=terms))
    assert type(applied.terms[opt.name]) is int and applied.terms[opt.name] == opt.options[1]
    assert applied.terms[price.name] == price.low + 11 and type(applied.terms[price.name]) is int
    assert state.standing["buyer"] == applied.terms and state.turn == 1
    with pytest.raises(ProtocolError, match="seller's turn"):
        play(state, space, "buyer", MakeOffer(terms=terms))
    with pytest.raises(InvalidOffer, match=opt.name):
        play(state, space, "seller", MakeOffer(terms={**terms, opt.name: 999}))
    assert state.turn == 1  # a refused move changes nothing


class _NumpyBuyer:
    """A buyer whose own code hands over numpy numbers, as a researcher's party might."""

    def __init__(self):
        self._rule = RuleParty("conceder", "buyer")
        self.spec, self.family, self.role = "test/numpy", "test", "buyer"

    async def act(self, view: PartyView) -> TurnRecord:
        turn = await self._rule.act(view)
        if isinstance(turn.action, MakeOffer):
            terms = {k: np.int64(round(v)) if isinstance(v, (int, float)) else v for k, v in turn.action.terms.items()}
            turn.action = MakeOffer.model_construct(terms=terms, message=turn.action.message)
        return turn

    async def aclose(self) -> None:
        return None


async def test_run_negotiation_takes_numpy_numbers_from_a_party(scenario):
    ep = await run_negotiation(make_party("rule/boulware", "seller"), _NumpyBuyer(), scenario)
    assert ep.error is None, ep.error
    offers = [t.action.terms for t in ep.turns if t.party == "buyer" and isinstance(t.action, MakeOffer)]
    assert offers and all(type(v) in (int, float, str) for o in offers for v in o.values())


def test_respond_refuses_a_transcript_with_an_unknown_option_or_a_price_out_of_range(scenario):
    listing = scenario.listing()
    space = listing.space
    price, opt = _price(space), _discrete(space)
    seller = SellerAgent("scripted/boulware", strategy=None)
    good = {i.name: i.options[0] if i.kind == "discrete" else i.low for i in space.issues}
    with pytest.raises(UsageError, match=rf"transcript move 1 .*{opt.name}: 5 is not an allowed option"):
        seller.view(listing, [{"party": "buyer", "action": {"action": "make_offer", "terms": {**good, opt.name: 5}}}])
    with pytest.raises(UsageError, match=rf"transcript move 1 .*{price.name}: .* is outside the allowed range"):
        seller.view(
            listing,
            [{"party": "buyer", "action": {"action": "make_offer", "terms": {**good, price.name: price.high * 10}}}],
        )
    with pytest.raises(UsageError, match="transcript move 1 .*no offer from the other side"):
        seller.view(listing, [{"party": "buyer", "action": {"action": "accept"}}])
    # a valid but off-grid price is taken, snapped
    view = seller.view(
        listing,
        [{"party": "buyer", "action": {"action": "make_offer", "terms": {**good, price.name: price.low + 0.4}}}],
    )
    assert view.transcript[0].action.terms[price.name] == price.low


async def test_a_session_applies_the_buyers_off_grid_offer_snapped(scenario):
    sessions = Sessions(SellerAgent("scripted/boulware", strategy=None), InMemorySaver())
    state = await sessions.open(scenario.listing())
    price = _price(scenario.space)
    terms = {i.name: i.options[0] if i.kind == "discrete" else i.low for i in scenario.space.issues}
    state = await sessions.move(state.id, BuyerMove.offer({**terms, price.name: price.low + 3.3}))
    offer = next(m for m in state.transcript if m.party == "buyer").action.terms
    assert offer[price.name] == price.low + 3 and type(offer[price.name]) is int
    assert state.transcript[-1].party == "seller" or state.status != "open"

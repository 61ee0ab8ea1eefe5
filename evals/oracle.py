"""The oracle seller: the responsive strategy told the truth about the buyer.

An evaluation construct, never a deployable seller: it reads what no seller can know, the
buyer's private preferences and, for a talking buyer, what it is (a credible threat or a
bluff, its private deadline, its true walk-away). It turns that into the same ``Hints`` a
reader produces, with full belief, plus the one thing no reading gives: the best terms for
the seller that the buyer would still accept (its true walk-away, as a quote it would
honour). The gap between the oracle and a reader is what a better reading could still win.

    seller = OracleSeller(job.scenario, job.persona, seed=job.seed)   # a Party
"""

from __future__ import annotations

import time
from dataclasses import replace

from negotiator.actions import Accept, MakeOffer
from negotiator.buyers.talk import TALK, hurry_deadline, said_hints, said_reading, stalled, stated_priority
from negotiator.domain.issues import NumericIssue, Offer
from negotiator.domain.scenario import Scenario
from negotiator.domain.utility import LinearValue
from negotiator.party import PartyView, TurnRecord
from negotiator.strategy import READINGS, Hints, Strategy
from negotiator.strategy.outcomes import OutcomeIndex
from negotiator.strategy.reading import read_as

ORACLE_SPEC = "oracle/responsive"
READ_SPEC = "oracle/read"
"""The readings menu read without a miss: the keyword reading, plus the reading (hurry, quote)
the talker's words hold, as ``menu=readings`` prices it (``negotiator.strategy.reading.read_as``):
the most a model trained on that menu can reach."""
SAID_SPEC = "oracle/said"
"""The responsive strategy told what the buyer *said*, read perfectly, but not whether it is true:
a reader that misses no phrasing (the ceiling of reading the words), with the keyword reader's
belief in each signal (``UNSURE``) and no private number."""


class OracleSeller:
    """The responsive strategy with the truth about the buyer as its hints (see the module)."""

    family = "oracle"
    keeps_limits = True  # the responsive strategy: within the view's limits (negotiator.runtime.run.hold_limits)

    def __init__(
        self,
        scenario: Scenario,
        persona: str,
        *,
        seed: int = 0,
        strategy: Strategy | None = None,
        spec: str = ORACLE_SPEC,
    ):
        if spec not in (ORACLE_SPEC, SAID_SPEC, READ_SPEC):
            raise ValueError(f"unknown oracle {spec!r}; choose {ORACLE_SPEC}, {SAID_SPEC} or {READ_SPEC}")
        self.scenario, self.persona, self.seed = scenario, persona, seed
        self.strategy = strategy or Strategy.named("responsive")
        self.spec = spec
        self.talk = TALK.get(persona)
        self.walk_away_terms = best_acceptable(scenario) if spec == ORACLE_SPEC else None

    def hints(self, view: PartyView) -> Hints:
        if self.spec == SAID_SPEC:
            return said_hints(self.scenario, self.persona, self.seed, view)
        if self.spec == READ_SPEC:
            situation = view.situation()
            keywords = self.strategy.hints(situation)
            opens = {r: read_as(r, keywords, situation) for r in READINGS}
            heard = said_hints(self.scenario, self.persona, self.seed, view)
            return opens[said_reading(heard, [r for r, h in opens.items() if h is not None])] or keywords
        truth = Hints(source="oracle", quote=dict(self.walk_away_terms or {}), quote_credible=1.0)
        spec = self.talk
        if spec is None or spec.signal is None:
            return truth
        if spec.signal == "threat":
            # It threatened on its last move if the seller's offer before it did not move it. A
            # credible threatener walks long before its clock brings it to its walk-away, so the
            # walk-away is no bound there: only the threat's truth is told.
            moves = [i for i, m in enumerate(view.transcript) if m.party == "buyer"]
            said = [stalled(self.scenario, view.transcript[:i]) for i in moves]
            told = Hints(source="oracle") if spec.honest else truth
            return replace(
                told, threat=bool(said and said[-1]), threats=sum(said), threat_credible=1.0 if spec.honest else 0.0
            )
        if spec.signal == "hurry":
            first = 0 if self.scenario.opener == "buyer" else 1
            last = hurry_deadline(self.scenario.id, view.max_turns, first, self.seed)
            return replace(truth, hurry=True, deadline=min(1.0, last / max(1, view.max_turns - 1)))
        if spec.signal == "priority":
            issue = stated_priority(self.scenario.space, self.scenario.buyer, honest=True)
            return replace(truth, priorities=(issue,), priorities_credible=1.0)
        return truth  # a quote, true or invented: the truth is its walk-away, above

    async def act(self, view: PartyView) -> TurnRecord:
        t0 = time.perf_counter()
        situation = view.situation()
        menu = self.strategy.moves(situation, hints=self.hints(view))
        if menu.recommended == "accept":
            action: Accept | MakeOffer = Accept(message="Deal.")
        else:
            move = menu.move(menu.recommended)
            terms = dict(move.terms or {})
            if menu.recommended == "final" and self.walk_away_terms is not None:
                worth = situation.utility(self.walk_away_terms)
                if situation.floor <= worth <= move.worth + 1e-9:
                    terms = dict(self.walk_away_terms)  # the best the buyer still accepts
            action = MakeOffer(terms=terms, message="Here is my offer.")
        return TurnRecord(index=view.turn, party="seller", action=action, latency_s=round(time.perf_counter() - t0, 6))

    async def aclose(self) -> None:
        return None


_BEST: dict[str, Offer | None] = {}


def best_acceptable(scenario: Scenario) -> Offer | None:
    """The terms best for the seller (within its limits) that the buyer values at its reservation or more."""
    key = scenario.fingerprint
    if key not in _BEST:
        if len(_BEST) > 4096:
            _BEST.clear()
        _BEST[key] = _search(scenario)
    found = _BEST[key]
    return None if found is None else dict(found)


def _search(scenario: Scenario) -> Offer | None:
    idx = OutcomeIndex.shared(scenario.space, scenario.seller, scenario.seller_limits)
    buyer, seller = scenario.buyer, scenario.seller
    best: tuple[float, Offer] | None = None
    for _, offer in idx.outcomes:
        terms = dict(offer)
        if isinstance(idx.tune, NumericIssue):
            terms = _price_for(scenario, terms, idx.tune) or terms
        if buyer.utility(terms) < buyer.reservation - 1e-9 or not scenario.seller_limits.allows(terms, seller):
            continue
        u = seller.utility(terms)
        if best is None or u > best[0]:
            best = (u, terms)
    return None if best is None else best[1]


def _price_for(scenario: Scenario, terms: Offer, price: NumericIssue) -> Offer | None:
    """``terms`` with the price the buyer values at exactly its reservation, snapped in its favour."""
    buyer = scenario.buyer
    vf = buyer.values[price.name]
    assert isinstance(vf, LinearValue)
    w = buyer.weights[price.name]
    if w <= 0:
        return None
    rest = buyer.utility(terms) - w * vf(terms[price.name])
    need = (buyer.reservation - rest) / w
    if need > 1.0:
        return None
    x = vf.inverse(max(0.0, need))
    v = price.snap(x)
    if vf(v) < need - 1e-12:
        v = price.snap(float(v) + (price.step if vf.best > vf.worst else -price.step))
    if not price.low <= float(v) <= price.high:
        return None
    return {**terms, price.name: v}

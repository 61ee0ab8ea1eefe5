"""Rule-based negotiators: the classical tactics, for either side.

They act on their own private utility only (the view), are deterministic given a seed,
and write short natural-language messages so LLM opponents have something to read.

===============  ==========================================================================
``boulware``     time-dependent, holds firm and concedes late (``e``, default 0.2)
``linear``       time-dependent, concedes at a constant rate (``e`` = 1)
``conceder``     time-dependent, concedes early (``e``, default 3)
``tit_for_tat``  relative tit-for-tat: concedes as much as the other side just conceded
``hardliner``    never concedes below ``level`` (default 0.9) of its surplus
``threatener``   Boulware-ish, threatens to walk away and does if the other side stalls
``responsive``   concession that answers concession, with a final offer (``lead``, ``rho``, ``e``)
``micro``        MiCRO: concedes one ``step`` only after the other side concedes
``holdout``      repeats its ideal; on its last move, accepts what beats walking away
===============  ==========================================================================

The talking buyers of the ``talk`` suite (``threat``, ``bluff``, ``hurry``, ``quote``,
``fake_quote``, ``priority``, ``fake_priority``, ``plain``) are tactics here too; their
words and what they do live in :mod:`negotiator.buyers.talk`.

Every tactic is a :class:`~negotiator.strategy.Strategy` played as it advises: the same
schedule, bidding and acceptance code the assisted LLM seller is advised by, so "the LLM
is at least as good as the rule" compares one machinery with and without a model.

As a seller arm (``rule/boulware``) they are the baseline a user would otherwise deploy:
they rank their bids with a frequency opponent model (``opponent=off`` for nearest-offer
bidding). As buyers they are the held-out opponents that need no model at all, and they
bid nearest the seller's latest offer, exactly as they always have, so the held-out suite's
opponents stay the same.
"""

from __future__ import annotations

import random
import time
from typing import Any

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.issues import Offer, terms_in_words
from ..domain.scenario import Role, other
from ..errors import UsageError
from ..models.specs import refuse_unknown
from ..party import AnyAction, PartyView, TurnRecord
from ..strategy import Strategy
from .talk import TALKERS, Talker

STRATEGIES = (
    "boulware",
    "linear",
    "conceder",
    "tit_for_tat",
    "hardliner",
    "threatener",
    "responsive",
    "micro",
    "holdout",
) + TALKERS
_DEFAULT_E = {"boulware": 0.2, "linear": 1.0, "conceder": 3.0, "threatener": 0.5}
_BIDDING = ("aspiration", "opponent", "similarity", "window", "combi")
_OWN = {
    "hardliner": ("level",),
    "micro": ("step",),
    "responsive": ("e", "lead", "rho", "slack", "big_step", "hurry", "reader"),
}
_PARAMS = {s: (("e",) if s in _DEFAULT_E or s in TALKERS else _OWN.get(s, ())) + _BIDDING for s in STRATEGIES}
_BEHAVIOUR_DEPENDENT = ("tit_for_tat", "hardliner", "responsive", "micro", "holdout")  # no noise on their targets

_OPEN = ["Let's start here: {terms}.", "Here is my opening proposal: {terms}.", "I'd propose {terms}."]
_COUNTER = [
    "That's not quite there for me. How about {terms}?",
    "I can move a little: {terms}.",
    "Meet me here: {terms}.",
    "Here's my counter: {terms}.",
]
# A seller says it is moving toward the buyer only when it is: its new offer gives up something
# and takes back nothing, issue by issue by its own values (the schedule's noise can raise a price
# by a step; a trade raises one issue to lower another). Other counters get words that claim no
# move. Buyers keep _COUNTER as it is: their messages are part of the held-out suite.
_COUNTER_UNMOVED = ["That's not quite there for me. How about {terms}?", "Here's my counter: {terms}."]
_FIRM = ["I'm holding at {terms}.", "This is as far as I can go for now: {terms}."]
_ACCEPT = ["Deal, that works for me.", "Agreed. Let's do it.", "OK, you have a deal."]
_THREAT = [
    "If this is your best, I'm ready to walk away. {terms} or we're done.",
    "I have other options. Last chance: {terms}.",
]
_WALK = ["This isn't working for me. I'm walking away.", "We're too far apart. Goodbye."]


class RuleParty:
    """A rule-based seller or buyer. Spec: ``rule/<strategy>?param=value``."""

    keeps_limits = True  # its strategy offers and accepts within the view's limits only (runtime.run.hold_limits)

    def __init__(
        self, strategy: str, role: Role, *, params: dict[str, str] | None = None, seed: int = 0, spec: str | None = None
    ):
        if strategy not in STRATEGIES:
            raise UsageError(f"unknown rule strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        p = dict(params or {})
        try:
            self.patience = int(p.pop("patience", 2))
            self.noise = float(p.pop("noise", 0.01))
            seed = int(p.pop("seed", seed))
        except ValueError as e:
            raise UsageError(f"bad parameter for rule/{strategy}: {e}") from None
        refuse_unknown(f"rule/{strategy}", p, ["patience", "noise", "seed", *_PARAMS[strategy]])
        self.talker = Talker(strategy) if strategy in TALKERS else None  # a talking buyer plays a classical tactic
        name, exponent = self.talker.tactic if self.talker else (strategy, _DEFAULT_E.get(strategy))
        settings: dict[str, Any] = {"e": exponent} if exponent is not None else {}
        settings.update({"candidates": 1, "opponent": role == "seller"})
        settings.update(p)
        try:
            self.strategy = Strategy.named("boulware" if name == "threatener" else name, settings)
        except ValueError as e:
            raise UsageError(f"bad parameter for rule/{strategy}: {e}") from None
        self.tactic, self.role, self.seed = strategy, role, seed
        self.spec = spec or f"rule/{strategy}"
        self.family = "rule"

    # -- helpers -------------------------------------------------------------------
    def _rng(self, view: PartyView) -> random.Random:
        # Seeded per turn, so a resumed negotiation replays identically.
        return random.Random(f"{self.seed}:{self.spec}:{self.role}:{view.scenario.id}:{view.turn}")

    def _jitter(self, rng: random.Random) -> float:
        time_dependent = self.tactic not in _BEHAVIOUR_DEPENDENT
        return rng.uniform(-self.noise, self.noise) if self.noise and time_dependent else 0.0

    def _say(self, pool: list[str], rng: random.Random, view: PartyView, terms: Offer | None) -> str:
        text = rng.choice(pool)
        return text.format(terms=self._summary(view, terms) if terms else "")

    def _summary(self, view: PartyView, terms: Offer) -> str:  # the talkers' phrasebook calls it
        return terms_in_words(view.space, terms)

    # -- the move ------------------------------------------------------------------
    def decide(self, view: PartyView) -> AnyAction:
        rng = self._rng(view)
        situation = self.talker.situation(view, self.seed) if self.talker else view.situation()
        advice = self.strategy.advise(situation, jitter=self._jitter(rng))
        if self.talker is not None:
            return self.talker.decide(self, view, rng, advice)
        if advice.accept:
            return Accept(message=self._say(_ACCEPT, rng, view, None))
        offer = advice.offer.terms
        standing = view.standing_offer
        if self.tactic == "threatener" and standing is not None:
            threat = self._threat(view, advice.floor)
            if threat == "walk":
                return WalkAway(message=self._say(_WALK, rng, view, None))
            if threat == "warn":
                return MakeOffer(terms=offer, message=self._say(_THREAT, rng, view, offer))
        mine = view.offers_by(view.role)
        if not mine:
            pool = _OPEN
        elif mine[-1] == offer:
            pool = _FIRM
        elif self.role == "seller" and not _conceded(view, mine[-1], offer):
            pool = _COUNTER_UNMOVED
        else:
            pool = _COUNTER
        return MakeOffer(terms=offer, message=self._say(pool, rng, view, offer))

    def _threat(self, view: PartyView, r: float) -> str | None:
        """'warn' when the other side stalls below our reservation, 'walk' if it persists."""
        theirs = view.offers_by(other(view.role))
        if not theirs or view.utility(theirs[-1]) >= r:
            return None
        recent = [view.utility(o) for o in theirs[-(self.patience + 1) :]]
        stalled = len(recent) > self.patience and recent[-1] - recent[0] < 0.02
        if stalled:
            return "walk" if self._warned(view) else "warn"
        return None

    def _warned(self, view: PartyView) -> bool:
        starts = tuple(t.split("{")[0] for t in _THREAT)
        return any(m.party == view.role and m.action.message.startswith(starts) for m in view.transcript)

    async def act(self, view: PartyView) -> TurnRecord:
        t0 = time.perf_counter()
        action = self.decide(view)
        return TurnRecord(index=view.turn, party=self.role, action=action, latency_s=round(time.perf_counter() - t0, 6))

    async def aclose(self) -> None:
        return None


def _conceded(view: PartyView, before: Offer, after: Offer) -> bool:
    """Whether ``after`` gives up something on some issue and takes back nothing on any, by the values of
    ``view``'s side: what a party may honestly call moving toward the other."""
    values = view.preferences.values
    moves = [values[k](after[k]) - values[k](before[k]) for k in after]
    return max(moves) <= 1e-9 and min(moves) < -1e-9

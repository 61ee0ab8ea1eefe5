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
===============  ==========================================================================

As a seller arm (``rule/boulware``) they are the baseline a user would otherwise deploy;
as buyers they are the held-out opponents that need no model at all.
"""

from __future__ import annotations

import random
import time

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.concession import OutcomeIndex, target_utility
from ..domain.issues import NumericIssue, Offer, _fmt
from ..domain.scenario import Role, other
from ..errors import UsageError
from ..party import AnyAction, PartyView, TurnRecord

STRATEGIES = ("boulware", "linear", "conceder", "tit_for_tat", "hardliner", "threatener")
_DEFAULT_E = {"boulware": 0.2, "linear": 1.0, "conceder": 3.0, "threatener": 0.5}

_OPEN = ["Let's start here: {terms}.", "Here is my opening proposal: {terms}.", "I'd propose {terms}."]
_COUNTER = [
    "That's not quite there for me. How about {terms}?",
    "I can move a little: {terms}.",
    "Meet me here: {terms}.",
    "Here's my counter: {terms}.",
]
_FIRM = ["I'm holding at {terms}.", "This is as far as I can go for now: {terms}."]
_ACCEPT = ["Deal, that works for me.", "Agreed. Let's do it.", "OK, you have a deal."]
_THREAT = ["If this is your best, I'm ready to walk away. {terms} or we're done.", "I have other options. Last chance: {terms}."]
_WALK = ["This isn't working for me. I'm walking away.", "We're too far apart. Goodbye."]


class RuleParty:
    """A rule-based seller or buyer. Spec: ``rule/<strategy>?param=value``."""

    def __init__(self, strategy: str, role: Role, *, params: dict[str, str] | None = None, seed: int = 0, spec: str | None = None):
        if strategy not in STRATEGIES:
            raise UsageError(f"unknown rule strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        p = dict(params or {})
        try:
            self.exponent = float(p.pop("e", _DEFAULT_E.get(strategy, 1.0)))
            self.level = float(p.pop("level", 0.9))
            self.patience = int(p.pop("patience", 2))
            self.noise = float(p.pop("noise", 0.01))
            seed = int(p.pop("seed", seed))
        except ValueError as e:
            raise UsageError(f"bad parameter for rule/{strategy}: {e}") from None
        if p:
            raise UsageError(f"unknown parameters for rule/{strategy}: {', '.join(p)}; known: e, level, patience, noise, seed")
        if self.exponent <= 0:
            raise UsageError("rule parameter e must be positive")
        self.strategy, self.role, self.seed = strategy, role, seed
        self.spec = spec or f"rule/{strategy}"
        self.family = "rule"

    # -- helpers -------------------------------------------------------------------
    def _index(self, view: PartyView) -> OutcomeIndex:
        return OutcomeIndex.shared(view.space, view.preferences, view.limits)

    def _rng(self, view: PartyView) -> random.Random:
        # Seeded per turn, so a resumed negotiation replays identically.
        return random.Random(f"{self.seed}:{self.spec}:{self.role}:{view.scenario.id}:{view.turn}")

    def _t(self, view: PartyView) -> float:
        """Deadline share of this move: 0 at the first move, 1 at the very last."""
        return view.turn / max(1, view.max_turns - 1)

    def _target(self, view: PartyView, idx: OutcomeIndex, rng: random.Random) -> float:
        r = view.limits.utility_floor(view.preferences)
        if self.strategy == "hardliner":
            return r + (idx.u_max - r) * self.level
        if self.strategy == "tit_for_tat":
            return self._tit_for_tat_target(view, idx, r)
        jitter = rng.uniform(-self.noise, self.noise) if self.noise else 0.0
        return max(r, min(idx.u_max, target_utility(self._t(view), r, self.exponent, idx.u_max) + jitter))

    def _tit_for_tat_target(self, view: PartyView, idx: OutcomeIndex, r: float) -> float:
        mine = view.offers_by(view.role)
        if not mine:
            return idx.u_max
        theirs = view.offers_by(other(view.role))
        gain = 0.0
        if len(theirs) >= 2:
            gain = view.utility(theirs[-1]) - view.utility(theirs[-2])
        step = max(0.02, gain)  # a small step keeps two tit-for-tat players from deadlocking
        return max(r, view.utility(mine[-1]) - step)

    def _say(self, pool: list[str], rng: random.Random, view: PartyView, terms: Offer | None) -> str:
        text = rng.choice(pool)
        return text.format(terms=self._summary(view, terms) if terms else "")

    def _summary(self, view: PartyView, terms: Offer) -> str:
        parts = []
        for issue in view.space.issues:
            v = terms[issue.name]
            if isinstance(issue, NumericIssue):
                unit = f" {issue.unit}" if issue.unit else ""
                parts.append(f"{issue.name.replace('_', ' ')} {_fmt(v)}{unit}")
            else:
                parts.append(f"{issue.name.replace('_', ' ')} {v}")
        return ", ".join(parts)

    # -- the move ------------------------------------------------------------------
    def decide(self, view: PartyView) -> AnyAction:
        idx, rng = self._index(view), self._rng(view)
        r = view.limits.utility_floor(view.preferences)
        target = self._target(view, idx, rng)
        standing = view.standing_offer
        offer = idx.offer(target, toward=standing)
        last_move = view.turns_left <= 1
        if standing is not None and view.limits.allows(standing, view.preferences):
            u = view.utility(standing)
            if u >= view.utility(offer) - 1e-9 or (last_move and u >= r and self.strategy != "hardliner"):
                return Accept(message=self._say(_ACCEPT, rng, view, None))
        if self.strategy == "threatener" and standing is not None:
            threat = self._threat(view, r)
            if threat == "walk":
                return WalkAway(message=self._say(_WALK, rng, view, None))
            if threat == "warn":
                return MakeOffer(terms=offer, message=self._say(_THREAT, rng, view, offer))
        mine = view.offers_by(view.role)
        if not mine:
            pool = _OPEN
        elif mine[-1] == offer:
            pool = _FIRM
        else:
            pool = _COUNTER
        return MakeOffer(terms=offer, message=self._say(pool, rng, view, offer))

    def _threat(self, view: PartyView, r: float) -> str | None:
        """'warn' when the other side stalls below our reservation, 'walk' if it persists."""
        theirs = view.offers_by(other(view.role))
        if not theirs or view.utility(theirs[-1]) >= r:
            return None
        recent = [view.utility(o) for o in theirs[-(self.patience + 1):]]
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

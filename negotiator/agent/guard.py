"""The guard: the business's hard limits, enforced outside the model.

Whatever the buyer writes and whatever the model outputs, the seller never proposes or
accepts terms below its floor (reservation utility, price floor, forbidden options),
and never states its private numbers. The guard is deterministic code, not a prompt:

* an offer that crosses a limit is repaired to terms at the strategy's current target
  (nearest what the model proposed), never to the floor: repairs pinned to the floor would
  tell a probing buyer exactly where it is. A seller without a strategy (the pure LLM
  policy) is repaired along the default Boulware schedule;
* an assisted model's own terms worth less than the target less the business's leeway are
  repaired the same way;
* an accept of terms that cross a limit becomes the strategy's counter-offer;
* a message that states a value the terms do not hold is corrected (``message_corrected``,
  see ``consistency``);
* a message that states a private number (a floor, a cap, the walk-away value) has the
  offending sentences removed, or is replaced when nothing is left.

Every change is recorded as a ``GuardIntervention`` on the turn.
"""

from __future__ import annotations

import re

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.issues import NumericIssue, Offer
from ..party import AnyAction, GuardIntervention, PartyView
from ..strategy import Advice, Strategy
from .consistency import Checker

REPAIR_STRATEGY = Strategy()
"""Where a seller without a strategy of its own is repaired to: the default Boulware schedule."""

# Words that make a sentence a disclosure even when the number is also in the offer.
_DISCLOSURE = re.compile(
    r"\b(floor|minimum|min\.?|lowest|bottom[- ]line|reservation|walk[- ]away|can(?:no|')t go (?:any )?(?:lower|below)|"
    r"limit|cost price|break[- ]even|at least|rock[- ]bottom)\b",
    re.I,
)
_NUMBER = re.compile(r"(?<![\w.])[$€£]?\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s?(%|k\b)?", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _numbers(text: str) -> list[float]:
    out = []
    for m in _NUMBER.finditer(text):
        v = float(m.group(1).replace(",", "") + (m.group(2) or ""))
        suffix = (m.group(3) or "").lower()
        if suffix == "%":
            v /= 100.0
        elif suffix == "k":
            v *= 1000.0
        out.append(v)
    return out


class Guard:
    """Hard limits and secrecy for one seller turn, built from the seller's own view."""

    def __init__(self, view: PartyView, strategy: Strategy | None = None, advice: Advice | None = None):
        self.view = view
        self.prefs, self.limits, self.space = view.preferences, view.limits, view.space
        self.floor = self.limits.utility_floor(self.prefs)
        self.strategy = strategy or REPAIR_STRATEGY
        self.advice = advice
        self.secrets = self._secrets()

    def _secrets(self) -> list[tuple[float, float]]:
        """(value, tolerance) of every private number a message must not state."""
        out: list[tuple[float, float]] = []
        for bound in (self.limits.minimum, self.limits.maximum):
            for k, v in bound.items():
                issue = self.space.issue(k)
                tol = max(issue.step / 2, abs(v) * 0.002) if isinstance(issue, NumericIssue) else 0.0
                out.append((float(v), tol))
        # The walk-away value, as a utility (0.42) or a share (42%), and as the price it implies:
        # the lowest price the seller could ever accept, all else at its best.
        out.append((round(self.floor, 2), 0.006))
        price = max(
            (i for i in self.space.issues if isinstance(i, NumericIssue)),
            key=lambda i: self.prefs.weights[i.name],
            default=None,
        )
        if price is not None:
            lowest = self.limits.repair({**self.prefs.ideal(self.space), price.name: price.low}, self.prefs, self.space)[price.name]
            out.append((float(lowest), max(price.step / 2, abs(float(lowest)) * 0.002)))
        return out

    def check(self, action: AnyAction) -> tuple[AnyAction, GuardIntervention | None]:
        kinds: list[str] = []
        reasons: dict[str, str] = {}
        new: AnyAction = action
        if isinstance(action, MakeOffer):
            bad = self.limits.violations(action.terms, self.prefs) or self._below_target(action.terms)
            if bad:
                kinds.append("offer_repaired")
                reasons.update(bad)
                new = MakeOffer(terms=self.repair(action.terms), message=action.message)
        elif isinstance(action, Accept):
            standing = self.view.standing_offer
            bad = self.limits.violations(standing, self.prefs) if standing is not None else {}
            if bad:
                kinds.append("accept_blocked")
                reasons.update(bad)
                new = MakeOffer(terms=self.counter(standing), message="I can't accept those terms, but I can offer this.")
        redacted = self.redact(new.message, new.terms if isinstance(new, MakeOffer) else None)
        if redacted != new.message:
            kinds.append("message_redacted")
            reasons["message"] = "stated a private limit or the walk-away value"
            new = new.model_copy(update={"message": redacted})
        terms = new.terms if isinstance(new, MakeOffer) else self.view.standing_offer if isinstance(new, Accept) else None
        if terms is not None and new.message:
            theirs = self.view.standing_offer if isinstance(new, MakeOffer) else None
            corrected, found = Checker(self.space, self.view.scenario.currency).correct(new.message, terms, theirs)
            if found:
                kinds.append("message_corrected")
                reasons["message_terms"] = f"stated {found} value(s) the terms do not hold"
                # the corrected words state the offer's own values: check them for secrets once more
                new = new.model_copy(update={"message": self.redact(corrected, terms if isinstance(new, MakeOffer) else None)})
        if not kinds:
            return action, None
        return new, GuardIntervention(kinds=kinds, reasons=reasons, original=action.model_dump())

    def _below_target(self, terms: Offer) -> dict[str, str]:
        """An assisted model's own terms worth less than the strategy allows (not one of its options)."""
        a = self.advice
        if a is None or a.choice_of(terms) is not None:
            return {}
        u = self.prefs.utility(terms)
        if u < a.lowest_own_terms - 1e-9:
            return {"target": f"worth {u:.3f}, below the strategy's target less the leeway ({a.lowest_own_terms:.3f})"}
        return {}

    def repair(self, terms: Offer) -> Offer:
        """Terms at the strategy's current target nearest ``terms``, within every limit."""
        fixed = self.strategy.repair(self.view.situation(), terms)
        if not self.limits.allows(fixed, self.prefs):  # limits leave the grid nothing: the nearest allowed terms
            fixed = self.limits.repair(terms, self.prefs, self.space)
        return fixed

    def counter(self, standing: Offer | None) -> Offer:
        """The counter-offer to an accept the guard blocked: the strategy's recommended offer."""
        if self.advice is not None and self.advice.candidates:
            return dict(self.advice.candidates[0].terms)
        return self.repair(standing if standing is not None else self.prefs.ideal(self.space))

    def leaks(self, sentence: str, terms: dict | None) -> bool:
        own = {float(v) for v in (terms or {}).values() if isinstance(v, (int, float))}
        disclosure = bool(_DISCLOSURE.search(sentence))
        for x in _numbers(sentence):
            for secret, tol in self.secrets:
                if abs(x - secret) <= tol:
                    # Restating one's own offer is fine unless it is framed as the floor.
                    if x in own and not disclosure:
                        continue
                    return True
        return False

    def redact(self, message: str, terms: dict | None) -> str:
        if not message:
            return message
        sentences = [s for s in _SENTENCE.split(message) if s.strip()]
        kept = [s for s in sentences if not self.leaks(s, terms)]
        if len(kept) == len(sentences):
            return message
        return " ".join(kept) if kept else _safe_message(terms)


def _safe_message(terms: dict | None) -> str:
    return "Here is my offer." if terms is not None else "Thank you."


def fallback_action(view: PartyView, advice: Advice | None = None) -> AnyAction:
    """What a seller does when its model gives nothing usable.

    With a strategy, what the strategy recommends (the rule seller's move). Without one,
    hold its last position: repeat its previous offer, or open at its ideal terms; never
    concede by accident.
    """
    if advice is not None:
        if advice.accept:
            return Accept(message="That works for me.")
        return MakeOffer(terms=dict(advice.candidates[0].terms), message="Here is my offer.")
    last = view.own_last_offer
    terms = last if last is not None else view.preferences.ideal(view.space)
    terms = view.limits.repair(terms, view.preferences, view.space)
    return MakeOffer(terms=terms, message="Let me restate my offer.")

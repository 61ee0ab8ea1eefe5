"""The guard: the business's hard limits, enforced outside the model.

Whatever the buyer writes and whatever the model outputs, the seller never proposes or
accepts terms below its floor (reservation utility, price floor, forbidden options),
and never states its private numbers. The guard is deterministic code, not a prompt:

* an offer that crosses a limit is repaired to the nearest allowed terms,
* an accept of terms that cross a limit becomes a counter-offer at the nearest allowed terms,
* a message that states a private number (a floor, a cap, the walk-away value, an issue
  weight), in digits, words or a plain disguise, has the offending sentences removed, or
  is replaced when nothing is left (``negotiator.agent.secrecy`` says what it catches).

Every change is recorded as a ``GuardIntervention`` on the turn.
"""

from __future__ import annotations

from ..actions import Accept, MakeOffer, WalkAway
from ..party import AnyAction, GuardIntervention, PartyView
from .secrecy import Secrecy, numbers, safe_message


def _numbers(text: str) -> list[float]:
    """The numbers ``text`` states (number words, glued currency and percentages read too)."""
    return numbers(text)


class Guard:
    """Hard limits and secrecy for one seller turn, built from the seller's own view."""

    def __init__(self, view: PartyView):
        self.view = view
        self.prefs, self.limits, self.space = view.preferences, view.limits, view.space
        self.floor = self.limits.utility_floor(self.prefs)
        self.secrecy = Secrecy(self.prefs, self.limits, self.space)
        self.secrets = self._secrets()

    def _secrets(self) -> list[tuple[float, float]]:
        """(value, tolerance) of every private number a message must not state (shares in [0, 1])."""
        return [(x.value, x.tolerance) for x in self.secrecy.secrets]

    def check(self, action: AnyAction) -> tuple[AnyAction, GuardIntervention | None]:
        kinds: list[str] = []
        reasons: dict[str, str] = {}
        new: AnyAction = action
        if isinstance(action, MakeOffer):
            bad = self.limits.violations(action.terms, self.prefs)
            if bad:
                kinds.append("offer_repaired")
                reasons.update(bad)
                new = MakeOffer(terms=self.limits.repair(action.terms, self.prefs, self.space), message=action.message)
        elif isinstance(action, Accept):
            standing = self.view.standing_offer
            bad = self.limits.violations(standing, self.prefs) if standing is not None else {}
            if bad:
                kinds.append("accept_blocked")
                reasons.update(bad)
                counter = self.limits.repair(standing, self.prefs, self.space)  # type: ignore[arg-type]
                new = MakeOffer(terms=counter, message="I can't accept those terms, but I can offer this.")
        redacted = self.redact(new.message, new.terms if isinstance(new, MakeOffer) else None)
        if redacted != new.message:
            kinds.append("message_redacted")
            reasons["message"] = "stated a private limit or the walk-away value"
            new = new.model_copy(update={"message": redacted})
        if not kinds:
            return action, None
        return new, GuardIntervention(kinds=kinds, reasons=reasons, original=action.model_dump())

    def leaks(self, sentence: str, terms: dict | None) -> bool:
        """Whether ``sentence`` states a secret; restating ``terms`` is fine unless framed as a limit."""
        return self.secrecy.leaks(sentence, terms)

    def redact(self, message: str, terms: dict | None) -> str:
        """``message`` without the sentences that state a secret (see ``negotiator.agent.secrecy``)."""
        return self.secrecy.redact(message, terms)


def _safe_message(terms: dict | None) -> str:
    return safe_message(terms)


def fallback_action(view: PartyView) -> MakeOffer | WalkAway:
    """What a seller does when its model gives nothing usable: hold its last position.

    Repeats its previous offer, or opens at its ideal terms; never concedes by accident.
    """
    last = view.own_last_offer
    terms = last if last is not None else view.preferences.ideal(view.space)
    terms = view.limits.repair(terms, view.preferences, view.space)
    return MakeOffer(terms=terms, message="Let me restate my offer.")

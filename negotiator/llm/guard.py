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
* a message that states a private number (a floor, a cap, the walk-away value, an issue
  weight), in digits, words or a plain disguise, has the offending sentences removed, or
  is replaced when nothing is left (``negotiator.llm.secrecy`` says what it catches);
* a message that states a value the terms do not hold is corrected (``message_corrected``,
  see ``consistency``);
* a sentence the listing and the move do not back (a counter-offer that claims a deal,
  an invented refund, fee or payment step, a price not on the table, the buyer's voice,
  template residue, a sentence cut mid-way, a word neither a vetted vocabulary nor the
  listing holds) is removed (``message_ungrounded``, see
  ``grounding``);
* a message these checks fail to read (an error in the reading itself) is replaced, as a
  redaction: the checks fail closed, and the turn and its terms are kept.

Every change is recorded as a ``GuardIntervention`` on the turn.
"""

from __future__ import annotations

from ..actions import Accept, MakeOffer
from ..domain.issues import Offer
from ..party import AnyAction, GuardIntervention, PartyView
from ..strategy import Advice, Strategy
from .consistency import Checker
from .grounding import Grounding
from .secrecy import Secrecy, numbers, safe_message

REPAIR_STRATEGY = Strategy()
"""Where a seller without a strategy of its own is repaired to: the default Boulware schedule."""


def _result(
    action: AnyAction, new: AnyAction, kinds: list[str], reasons: dict[str, str]
) -> tuple[AnyAction, GuardIntervention | None]:
    """What a check answers: ``action`` untouched when nothing was found, else ``new`` and the record."""
    if not kinds:
        return action, None
    return new, GuardIntervention(kinds=kinds, reasons=reasons, original=action.model_dump())


def _numbers(text: str) -> list[float]:
    """The numbers ``text`` states (number words, glued currency and percentages read too)."""
    return numbers(text)


class Guard:
    """Hard limits and secrecy for one seller turn, built from the seller's own view."""

    def __init__(
        self, view: PartyView, strategy: Strategy | None = None, advice: Advice | None = None, instructions: str = ""
    ):
        self.view = view
        self.instructions = instructions  # the business's own words: the seller may use them too
        self.prefs, self.limits, self.space = view.preferences, view.limits, view.space
        self.floor = self.limits.utility_floor(self.prefs)
        self.strategy = strategy or REPAIR_STRATEGY
        self.advice = advice
        self.secrecy = Secrecy(self.prefs, self.limits, self.space)
        self.secrets = self._secrets()

    def _secrets(self) -> list[tuple[float, float]]:
        """(value, tolerance) of every private number a message must not state (shares in [0, 1])."""
        return [(x.value, x.tolerance) for x in self.secrecy.secrets]

    def check(self, action: AnyAction) -> tuple[AnyAction, GuardIntervention | None]:
        new, kinds, reasons = self._limits(action)
        try:
            new, said, why = self._check_message(new)
        except Exception as e:  # noqa: BLE001 - a message the checks cannot read must not lose the turn: it goes, the terms stay
            said, why = ["message_redacted"], {"message": f"could not be read ({type(e).__name__}: {e}); replaced"}
            new = new.model_copy(update={"message": safe_message(new.terms if isinstance(new, MakeOffer) else None)})
        return _result(action, new, kinds + said, {**reasons, **why})

    def check_limits(self, action: AnyAction) -> tuple[AnyAction, GuardIntervention | None]:
        """The hard limits only (an offer repaired, an accept blocked), for a seller whose words are its
        author's own code, not a model's (a plugin party): they are left as they are, unless the offer was
        repaired, when they spoke of terms taken off the table ("I can do 507.") and the move's own
        sentence replaces them."""
        new, kinds, reasons = self._limits(action)
        if "offer_repaired" in kinds:
            new = new.model_copy(update={"message": safe_message(new.terms if isinstance(new, MakeOffer) else None)})
        return _result(action, new, kinds, reasons)

    def _limits(self, action: AnyAction) -> tuple[AnyAction, list[str], dict[str, str]]:
        """An offer across a limit repaired, an accept of terms across one turned into the counter-offer."""
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
                new = MakeOffer(
                    terms=self.counter(standing), message="I can't accept those terms, but I can offer this."
                )
        return new, kinds, reasons

    def _check_message(self, new: AnyAction) -> tuple[AnyAction, list[str], dict[str, str]]:
        """Secrecy, then agreement with the terms: (the action with its message as checked, kinds, reasons)."""
        kinds: list[str] = []
        reasons: dict[str, str] = {}
        redacted = self.redact(new.message, new.terms if isinstance(new, MakeOffer) else None)
        if redacted != new.message:
            kinds.append("message_redacted")
            reasons["message"] = "stated a private limit or the walk-away value"
            new = new.model_copy(update={"message": redacted})
        terms = (
            new.terms if isinstance(new, MakeOffer) else self.view.standing_offer if isinstance(new, Accept) else None
        )
        if terms is not None and new.message:
            theirs = self.view.standing_offer if isinstance(new, MakeOffer) else None
            product = self.view.scenario.product
            facts = (product.name, product.description, *product.policies)
            corrected, found = Checker(self.space, self.view.scenario.currency, facts).correct(
                new.message, terms, theirs
            )
            if found:
                kinds.append("message_corrected")
                reasons["message_terms"] = f"stated {found} value(s) the terms do not hold"
                # the corrected words state the offer's own values: check them for secrets once more
                new = new.model_copy(
                    update={"message": self.redact(corrected, terms if isinstance(new, MakeOffer) else None)}
                )
        if self.view.role == "seller" and new.message:
            new, ungrounded = Grounding(self.view, self.instructions).ground(new)
            if ungrounded:
                kinds.append("message_ungrounded")
                reasons["message_grounding"] = ", ".join(dict.fromkeys(f.reason for f in ungrounded))
        return new, kinds, reasons

    def _below_target(self, terms: Offer) -> dict[str, str]:
        """An assisted model's own terms worth less than the strategy allows (not one of its options,
        nor the strategy's move on a reading the model chose)."""
        a = self.advice
        if a is None or a.choice_of(terms) is not None or any(r.terms == terms for r in a.readings):
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
            return dict(self.advice.offer.terms)
        return self.repair(standing if standing is not None else self.prefs.ideal(self.space))

    def leaks(self, sentence: str, terms: dict | None) -> bool:
        """Whether ``sentence`` states a secret; restating ``terms`` is fine unless framed as a limit."""
        return self.secrecy.leaks(sentence, terms)

    def redact(self, message: str, terms: dict | None) -> str:
        """``message`` without the sentences that state a secret (see ``negotiator.llm.secrecy``)."""
        return self.secrecy.redact(message, terms)


def fallback_action(view: PartyView, advice: Advice | None = None) -> AnyAction:
    """What a seller does when its model gives nothing usable.

    With a strategy, what the strategy recommends (the rule seller's move). Without one,
    hold its last position: repeat its previous offer, or open at its ideal terms; never
    concede by accident.
    """
    if advice is not None:
        if advice.accept:
            return Accept(message="That works for me.")
        return MakeOffer(terms=dict(advice.offer.terms), message="Here is my offer.")
    last = view.own_last_offer
    terms = last if last is not None else view.preferences.ideal(view.space)
    terms = view.limits.repair(terms, view.preferences, view.space)
    return MakeOffer(terms=terms, message="Let me restate my offer.")

"""Scenarios: one concrete negotiation over a product.

A scenario holds the public facts (product, currency, issues, who opens, round limit)
and each side's private preferences; the seller side also carries the business's hard
limits. ``Scenario.public()`` is everything both sides may see.
"""

from __future__ import annotations

import hashlib
import math
from functools import cached_property
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, FiniteFloat, field_validator, model_serializer, model_validator

from .issues import (
    DiscreteIssue,
    Issue,
    NotBoolean,
    NumericIssue,
    Offer,
    OutcomeSpace,
    Value,
    _fmt,
    booleans_in,
    checked_issues,
)
from .utility import Preferences

Role = Literal["seller", "buyer"]


def other(role: Role) -> Role:
    return "buyer" if role == "seller" else "seller"


class HardLimits(BaseModel):
    """Limits the business sets that the seller may never cross, whatever it is told.

    ``minimum``/``maximum`` bound numeric issues (a price floor, a cap on quantity);
    ``forbidden`` lists discrete options never to agree to; ``min_utility`` is a floor on
    the seller's own utility (defaults to its reservation utility).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    minimum: dict[str, FiniteFloat] = Field(default_factory=dict)
    maximum: dict[str, FiniteFloat] = Field(default_factory=dict)
    forbidden: dict[str, tuple[Value, ...]] = Field(default_factory=dict)
    min_utility: FiniteFloat | None = Field(default=None, ge=0.0, le=1.0)

    @model_validator(mode="before")
    @classmethod
    def _no_booleans(cls, data: object) -> object:
        # pydantic reads True as 1: min_utility=True would demand the ideal offer, minimum={"price": True} a floor of 1.
        if isinstance(data, dict):
            for key, value in data.items():
                found = booleans_in(value)
                if found:
                    raise ValueError(
                        f"{key}: {found} is not a number or an option; limits are numbers (and option names)"
                    )
        return data

    @model_validator(mode="after")
    def _not_contradictory(self) -> HardLimits:
        # Checked where the limits are written (SellerAgent(limits=...)), not first at a negotiation.
        self._check_min_below_max()
        return self

    def _check_min_below_max(self) -> None:
        for k, lo in self.minimum.items():
            if k in self.maximum and lo > self.maximum[k]:
                raise ValueError(f"minimum {k} {_fmt(lo)} is above the maximum {_fmt(self.maximum[k])}")

    def merged(self, other: HardLimits | None) -> HardLimits:
        """The stricter of both sets of limits."""
        if other is None:
            return self
        lo = dict(self.minimum)
        for k, v in other.minimum.items():
            lo[k] = max(v, lo.get(k, v))
        hi = dict(self.maximum)
        for k, v in other.maximum.items():
            hi[k] = min(v, hi.get(k, v))
        fb = {k: tuple(v) for k, v in self.forbidden.items()}
        for k, options in other.forbidden.items():
            fb[k] = tuple(dict.fromkeys([*fb.get(k, ()), *options]))
        mu = [x for x in (self.min_utility, other.min_utility) if x is not None]
        # Not validated again: two sets that contradict each other are refused where they meet a listing
        # (check_space names the limits), not here with a validation error.
        return HardLimits.model_construct(minimum=lo, maximum=hi, forbidden=fb, min_utility=max(mu) if mu else None)

    def on(self, space: OutcomeSpace) -> HardLimits:
        """These limits as ``space`` writes its options: each forbidden option put on the issue's own option
        (``DiscreteIssue.option_named``: case, spacing, Unicode forms and numbers as text, as a buyer's offer
        is read), so that "NONE" forbids ``none``. ValueError saying which limit names no option of its issue."""
        forbidden: dict[str, tuple[Value, ...]] = {}
        for k, opts in self.forbidden.items():
            if k not in space.names or not isinstance(space.issue(k), DiscreteIssue):
                raise ValueError(
                    f"forbidden options for {k!r}: not a discrete issue of this scenario ({', '.join(space.names)})"
                )
            issue = space.issue(k)
            assert isinstance(issue, DiscreteIssue)
            named: list[Value] = []
            for o in opts:
                try:
                    named.append(issue.option_named(o))
                except ValueError as e:
                    raise ValueError(f"forbidden option for {k!r}: {e}") from None
            forbidden[k] = tuple(dict.fromkeys(named))
        same = all(
            len(forbidden[k]) == len(v)
            and all(type(a) is type(b) and a == b for a, b in zip(forbidden[k], v, strict=False))
            for k, v in self.forbidden.items()
        )
        return self if same else self.model_copy(update={"forbidden": forbidden})

    def check_space(self, space: OutcomeSpace) -> None:
        named = self.on(space)  # raises for a forbidden option that names no option
        for k in [*self.minimum, *self.maximum]:
            if k not in space.names or not isinstance(space.issue(k), NumericIssue):
                raise ValueError(f"limit on {k!r}: not a numeric issue of this scenario ({space.names})")
        for k, lo in self.minimum.items():
            issue = space.issue(k)
            assert isinstance(issue, NumericIssue)  # checked just above
            if lo > issue.high:
                raise ValueError(
                    f"minimum {k} {_fmt(lo)} is above the issue's range {issue.describe()}: nothing could be offered"
                )
        self._check_min_below_max()  # merged limits are not validated: two sets may contradict only together
        for k, hi in self.maximum.items():
            issue = space.issue(k)
            assert isinstance(issue, NumericIssue)
            if hi < issue.low:
                raise ValueError(
                    f"maximum {k} {_fmt(hi)} is below the issue's range {issue.describe()}: nothing could be offered"
                )
        for k, opts in named.forbidden.items():
            issue = space.issue(k)
            assert isinstance(issue, DiscreteIssue)
            if set(opts) >= set(issue.options):
                raise ValueError(f"forbidden options for {k!r} leave nothing allowed")

    def check_offerable(self, space: OutcomeSpace, prefs: Preferences) -> None:
        """ValueError unless these limits fit ``space`` (``check_space``) and leave an offer that crosses
        none of them: the best terms for ``prefs`` inside them, the utility floor (``min_utility``, at least
        the reservation) included. Otherwise the guard could only repair every offer into a crossing one."""
        self.check_space(space)
        best = self.repair(prefs.ideal(space), prefs, space)
        crossed = self.violations(best, prefs)
        if not crossed:
            return
        if set(crossed) == {"utility"}:
            whose = "its min_utility" if self.utility_floor(prefs) > prefs.reservation else "its reservation utility"
            raise ValueError(
                f"no offer inside the limits reaches the seller's utility floor {self.utility_floor(prefs):.3f} "
                f"({whose}): the best, {space.format_offer(best)}, is worth {prefs.utility(best):.3f}; loosen "
                "the limits or lower the floor"
            )
        raise ValueError(
            f"the limits leave no offer the seller could make: the nearest, {space.format_offer(best)}, "
            f"still crosses them ({'; '.join(f'{k}: {v}' for k, v in crossed.items())}); loosen them"
        )

    def violations(self, offer: Offer, prefs: Preferences) -> dict[str, str]:
        """Each limit ``offer`` crosses, keyed by issue (``utility`` for the utility floor)."""
        out: dict[str, str] = {}
        for k, lo in self.minimum.items():
            if float(offer[k]) < lo:
                out[k] = f"{_fmt(offer[k])} is below the limit {_fmt(lo)}"
        for k, hi in self.maximum.items():
            if float(offer[k]) > hi:
                out[k] = f"{_fmt(offer[k])} is above the limit {_fmt(hi)}"
        for k, opts in self.forbidden.items():
            if offer[k] in opts:
                out[k] = f"{offer[k]!r} is not allowed"
        floor = self.utility_floor(prefs)
        u = prefs.utility(offer)
        if u < floor - 1e-9:
            out["utility"] = f"utility {u:.3f} is below the floor {floor:.3f}"
        return out

    def utility_floor(self, prefs: Preferences) -> float:
        return prefs.reservation if self.min_utility is None else max(self.min_utility, prefs.reservation)

    def allows(self, offer: Offer, prefs: Preferences) -> bool:
        return not self.violations(offer, prefs)

    def repair(self, offer: Offer, prefs: Preferences, space: OutcomeSpace) -> Offer:
        """The offer nearest ``offer`` that respects every limit.

        Numeric limits are clamped and forbidden options swapped for the best allowed one;
        if the utility is still below the floor, issues move towards the seller's best
        value, heaviest first, and the last one only as far as needed.
        """
        o = dict(offer)
        for issue in space.issues:
            k = issue.name
            if isinstance(issue, NumericIssue):
                lo, hi = self.minimum.get(k), self.maximum.get(k)
                if lo is not None and float(o[k]) < lo:
                    o[k] = _snap_into(issue, lo, up=True)
                if hi is not None and float(o[k]) > hi:
                    o[k] = _snap_into(issue, hi, up=False)
            elif o[k] in self.forbidden.get(k, ()):
                allowed = [x for x in issue.options if x not in self.forbidden[k]]
                o[k] = max(allowed, key=lambda x: prefs.issue_value(k, x))
        floor = self.utility_floor(prefs)
        for issue in sorted(space.issues, key=lambda i: -prefs.weights[i.name]):
            if prefs.utility(o) >= floor - 1e-9:
                break
            k, w = issue.name, prefs.weights[issue.name]
            best = prefs.best_value(issue)
            if isinstance(issue, DiscreteIssue):
                allowed = [x for x in issue.options if x not in self.forbidden.get(k, ())]
                o[k] = max(allowed, key=lambda x: prefs.issue_value(k, x))
                continue
            vf = prefs.values[k]
            need = (floor - (prefs.utility(o) - w * vf(o[k]))) / w if w > 0 else 2.0
            if need >= 1.0:
                o[k] = best
            else:
                x = vf.inverse(need)  # type: ignore[union-attr]
                up = vf.best > vf.worst  # type: ignore[union-attr]
                o[k] = _snap_into(issue, x, up=up)
            o[k] = self._clamp(issue, o[k])
        return o

    def _clamp(self, issue: NumericIssue, v: Value) -> Value:
        lo, hi = self.minimum.get(issue.name), self.maximum.get(issue.name)
        if lo is not None and float(v) < lo:
            v = _snap_into(issue, lo, up=True)
        if hi is not None and float(v) > hi:
            v = _snap_into(issue, hi, up=False)
        return v


class Product(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    description: str = ""
    list_price: FiniteFloat | None = None
    # What the business lets its seller cite (returns window, shipping, payment methods): the
    # guard removes any other refund, fee, payment or contact promise from the seller's words.
    policies: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _without_empty_policies(self, handler):
        # A product with no policies dumps as it did before the field existed: suite
        # fingerprints, stored episodes and the JSON a shop already keeps stay the same.
        data = handler(self)
        if not self.policies and isinstance(data, dict):
            data.pop("policies", None)
        return data


class Listing(BaseModel):
    """What a business knows when it opens a live negotiation.

    The public facts (product, currency, issues, who opens, round limit) plus its own
    preferences and hard limits. The buyer's preferences are unknown, so a listing is
    enough to run the seller but not to score the buyer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    template: str = "custom"
    product: Product
    currency: str = "USD"
    issues: tuple[Issue, ...]
    seller: Preferences
    seller_limits: HardLimits = Field(default_factory=HardLimits)
    opener: Role = "buyer"
    max_rounds: Annotated[int, Field(ge=1, le=100), NotBoolean] = Field(
        default=8, description="each round is one move by each side"
    )
    seed: Annotated[int, NotBoolean] | None = None

    @model_validator(mode="before")
    @classmethod
    def _seller_side(cls, data: object) -> object:
        if cls is Listing and isinstance(data, dict) and "buyer" in data:  # a Scenario's dump, say
            raise ValueError(
                "a listing holds the seller's side only, and this one has buyer preferences: drop 'buyer' "
                "(Scenario.listing() is a scenario's listing)"
            )
        return data

    @field_validator("issues")
    @classmethod
    def _issues(cls, v: tuple[Issue, ...]) -> tuple[Issue, ...]:
        # Here too, not only in OutcomeSpace: an empty or repeated issue list is the issues' mistake
        # (before: a nested OutcomeSpace error reported under "seller preferences").
        return checked_issues(v)

    @model_validator(mode="after")
    def _consistent(self) -> Listing:
        for side in ("seller", "buyer"):
            prefs = getattr(self, side, None)
            if prefs is None:
                continue
            try:
                prefs.check_space(self.space)
            except ValueError as e:
                raise ValueError(f"{side} preferences: {e}") from None
        # Forbidden options as the issues write them ("NONE" forbids none): every later check compares exactly.
        limits = self.seller_limits.on(self.space)
        limits.check_offerable(self.space, self.seller)
        object.__setattr__(self, "seller_limits", limits)
        return self

    @cached_property
    def space(self) -> OutcomeSpace:
        return OutcomeSpace(issues=self.issues)

    @cached_property
    def fingerprint(self) -> str:
        """Content hash: two games with the same fingerprint are the same game."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]

    def __hash__(self) -> int:
        # Frozen, so hashable as a key or a cache argument; pydantic's own hash fails on the dict fields.
        return hash(self.fingerprint)

    @property
    def max_turns(self) -> int:
        return 2 * self.max_rounds

    def preferences(self, role: Role) -> Preferences:
        if role == "seller":
            return self.seller
        buyer = getattr(self, "buyer", None)
        if buyer is None:
            from ..errors import UsageError

            raise UsageError(
                f"listing {self.id!r} has no buyer preferences; a full Scenario is needed to play the buyer"
            )
        return buyer

    def limits(self, role: Role) -> HardLimits:
        """Hard limits of ``role``. Buyers have none beyond their reservation utility."""
        return self.seller_limits if role == "seller" else NO_LIMITS

    def check_limits(self, limits: HardLimits | None) -> HardLimits:
        """The seller's limits with ``limits`` added (the stricter of both); ValueError when
        they do not fit this listing or leave the seller no offer it could make."""
        if limits is None:
            return self.seller_limits
        limits = limits.on(self.space)
        limits.check_space(self.space)
        merged = self.seller_limits.merged(limits)
        merged.check_offerable(self.space, self.seller)
        return merged

    def public(self) -> PublicScenario:
        return self._public

    @cached_property
    def _public(self) -> PublicScenario:
        return PublicScenario(
            id=self.id,
            product=self.product,
            currency=self.currency,
            issues=self.issues,
            opener=self.opener,
            max_rounds=self.max_rounds,
        )


class Scenario(Listing):
    """A complete game: a listing plus the buyer's private preferences (for evaluation and training)."""

    buyer: Preferences

    def listing(self) -> Listing:
        """The seller's side of this scenario: what a business would know."""
        return Listing.model_validate(self.model_dump(exclude={"buyer"}))


class PublicScenario(BaseModel):
    """What both sides know: no preferences, no reservations, no limits."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    id: str
    product: Product
    currency: str
    issues: tuple[Issue, ...]
    opener: Role
    max_rounds: int

    @cached_property
    def space(self) -> OutcomeSpace:
        return OutcomeSpace(issues=self.issues)


NO_LIMITS = HardLimits()
"""The buyer's limits: none (frozen, so every view shares one, and the strategy's outcome
index for a side is found by identity on every move)."""


def _snap_into(issue: NumericIssue, x: float, *, up: bool) -> Value:
    """Snap ``x`` onto the issue's grid, rounding up (or down) so a bound is never crossed."""
    x = min(max(x, issue.low), issue.high)  # a far-off bound must not overflow the grid arithmetic
    k = (x - issue.low) / issue.step
    k = math.ceil(k - 1e-9) if up else math.floor(k + 1e-9)
    return issue.snap(issue.low + k * issue.step)

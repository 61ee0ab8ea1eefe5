"""What the other side seems to want, learned from its offers: a frequency opponent model.

The model of the ANAC 2011 winner HardHeaded (van Krimpen, Looije & Hajizadeh), as the
BOA framework of GENIUS names it: the other side's utility is taken to be linear-additive,
like ours, and both parts are learned from its offers alone.

* **Issue weights.** Start equal. Between two consecutive offers, an issue whose value did
  not move gains ``learning_rate`` (a side concedes first on what it cares least about),
  then the weights are normalised. A numeric issue counts as unmoved when its estimated
  value changed by less than ``still``: rule and LLM bidders retune price on every offer.
* **Option values.** A discrete option's value is how often the other side offered it
  (plus a prior), relative to its most offered option. A numeric issue is linear, best at
  the end of the range the other side's offers sit nearer to.
* **Prior.** Before any offer, and mixed into the counts, the opposite of our own values
  (bargaining is mostly opposed): the standard zero-sum prior.

``concession_rate`` is how fast the other side's offers have been improving for *us*
(own utility per move), which the acceptance conditions use to judge what is left to
expect before the deadline.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ..domain.issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace
from ..domain.utility import LinearValue, Preferences


class OpponentModel(Protocol):
    """What bidding and the strategy ask of an opponent model."""

    weights: dict[str, float]

    def utility(self, offer: Offer) -> float: ...

    def heaviest(self) -> str: ...


_LEARNT: dict[int, tuple] = {}
"""``FrequencyModel.learn``'s models per first offer (by id; the entry holds the offers, so the
id stays theirs): the space and preferences, the offers learned and a copy of the model."""


@dataclass
class FrequencyModel:
    space: OutcomeSpace
    own: Preferences  # our preferences: the prior is their opposite
    learning_rate: float = 0.2
    prior_weight: float = 1.0  # how many offers' worth the zero-sum prior counts for
    still: float = 0.02  # a numeric value moving less than this (in estimated value) counts as unmoved
    offers: list[Offer] = field(default_factory=list)
    weights: dict[str, float] = field(init=False)
    _counts: dict[str, dict[str, float]] = field(init=False)
    # Estimates per issue, valid until the next offer: bidding asks for them once per
    # candidate offer, and each would otherwise re-read every offer so far.
    _estimates: dict[str, dict[str, float] | bool] = field(init=False)
    _issues: dict[str, NumericIssue | DiscreteIssue] = field(init=False)
    # (the weights, each issue's estimate in their order): what ``utility`` reads, built once per offer seen
    _terms: tuple[dict[str, float], list] | None = field(init=False, default=None)

    def __post_init__(self):
        n = len(self.space.issues)
        self.weights = {i.name: 1.0 / n for i in self.space.issues}
        self._counts = {i.name: {} for i in self.space.issues if isinstance(i, DiscreteIssue)}
        self._estimates = {}
        self._issues = {i.name: i for i in self.space.issues}

    @classmethod
    def learn(cls, space: OutcomeSpace, own: Preferences, offers: Sequence[Offer], **kw) -> FrequencyModel:
        """The model after ``offers``, the other side's, oldest first.

        A negotiation's offers are the same objects move after move: the model learned from
        the offers seen on an earlier move is kept (per first offer, checked object by object)
        and a copy of it takes only the new ones, the same updates in the same order."""
        offers = list(offers)
        model, start = None, 0
        kept = _LEARNT.get(id(offers[0])) if offers and not kw else None
        if kept is not None:
            kept_space, kept_own, seen, learnt = kept
            if (
                kept_space is space
                and kept_own is own
                and len(seen) <= len(offers)
                and all(a is b for a, b in zip(seen, offers, strict=False))
            ):
                model, start = learnt.copy(), len(seen)
        if model is None:
            model = cls(space, own, **kw)
        for o in offers[start:]:
            model.update(o)
        if offers and not kw and start < len(offers):
            if len(_LEARNT) > 4096:
                _LEARNT.clear()
            _LEARNT[id(offers[0])] = (space, own, offers, model.copy())
        return model

    def copy(self) -> FrequencyModel:
        """The same model, learning on separately (its estimates are worked out again when asked for)."""
        out = FrequencyModel(self.space, self.own, self.learning_rate, self.prior_weight, self.still, list(self.offers))
        out.weights = dict(self.weights)
        out._counts = {k: dict(v) for k, v in self._counts.items()}
        return out

    # --- learning ----------------------------------------------------------------------

    def update(self, offer: Offer) -> None:
        """Take one more offer of the other side into account."""
        previous = self.offers[-1] if self.offers else None
        self.offers.append(dict(offer))
        for name, counts in self._counts.items():
            key = str(offer[name])
            counts[key] = counts.get(key, 0.0) + 1.0
        self._estimates.clear()
        self._terms = None
        if previous is None:
            return
        unmoved = [i.name for i in self.space.issues if self._unmoved(i, previous, offer)]
        if unmoved and len(unmoved) < len(self.space.issues):
            for name in unmoved:
                self.weights[name] += self.learning_rate
            total = sum(self.weights.values())
            self.weights = {k: w / total for k, w in self.weights.items()}

    def _unmoved(self, issue: NumericIssue | DiscreteIssue, a: Offer, b: Offer) -> bool:
        if isinstance(issue, DiscreteIssue):
            return a[issue.name] == b[issue.name]
        return abs(self.value(issue.name, a[issue.name]) - self.value(issue.name, b[issue.name])) < self.still

    # --- estimates ---------------------------------------------------------------------

    def value(self, issue_name: str, value) -> float:
        """Estimated value of ``value`` on one issue to the other side, in [0, 1]."""
        issue = self._issues[issue_name]
        estimate = self._estimates.get(issue_name)
        if estimate is None:
            estimate = self._estimates[issue_name] = (
                self._option_values(issue) if isinstance(issue, DiscreteIssue) else self._numeric_prefers_high(issue)
            )
        if isinstance(issue, DiscreteIssue):
            return estimate[str(value)]  # type: ignore[index]  # a discrete issue's estimate is its option table
        best_high = estimate
        t = (float(value) - issue.low) / (issue.high - issue.low)
        return t if best_high else 1.0 - t

    def utility(self, offer: Offer) -> float:
        """Estimated utility of ``offer`` to the other side."""
        if self._terms is None or self._terms[0] is not self.weights:
            for k in self.weights:
                self.value(k, offer[k])
            self._terms = (self.weights, [(k, w, self._estimates[k], self._issues[k]) for k, w in self.weights.items()])
        terms = self._terms[1]
        total = 0
        for k, w, estimate, issue in terms:
            if estimate is True or estimate is False:  # numeric: best at the high end, or the low one
                t = (float(offer[k]) - issue.low) / (issue.high - issue.low)
                total += w * (t if estimate else 1.0 - t)
            else:
                total += w * estimate[str(offer[k])]
        return total

    def heaviest(self) -> str:
        """The issue the other side seems to care most about."""
        return max(self.weights, key=lambda k: self.weights[k])

    def _option_values(self, issue: DiscreteIssue) -> dict[str, float]:
        prior = {str(o): 1.0 - self.own.issue_value(issue.name, o) for o in issue.options}
        counts = self._counts[issue.name]
        raw = {k: counts.get(k, 0.0) + self.prior_weight * p for k, p in prior.items()}
        top = max(raw.values()) or 1.0
        return {k: v / top for k, v in raw.items()}

    def _numeric_prefers_high(self, issue: NumericIssue) -> bool:
        if self.offers:
            # Early offers sit nearest the other side's ideal: weigh them most.
            ws = [1.0 / (1 + i) for i in range(len(self.offers))]
            mean = sum(w * float(o[issue.name]) for w, o in zip(ws, self.offers, strict=True)) / sum(ws)
            mid = (issue.low + issue.high) / 2
            if abs(mean - mid) > 1e-9 * (issue.high - issue.low):
                return mean > mid
        own = self.own.values[issue.name]
        assert isinstance(own, LinearValue)
        return own.best < own.worst  # zero-sum prior: they want the opposite of us

    def concession_rate(self) -> float:
        """How much our utility of their offers rose per offer, over their last few offers."""
        recent = self.offers[-4:]
        if len(recent) < 2:
            return 0.0
        us = [self.own.utility(o) for o in recent]
        return (us[-1] - us[0]) / (len(us) - 1)


_EVIDENCE: dict[int, tuple[OutcomeSpace, list, tuple]] = {}
"""``ChoiceModel._evidence``'s sums per opening offer (by id; the entry holds the offers, so
the id stays theirs): the exchanges they cover and the sums after them."""


@dataclass
class ChoiceModel:
    """What the other side seems to want, from what it chose against what it was offered.

    The frequency model reads every value the other side offers as a preference. But a
    bidder that answers near our offer copies our values on the issues it cares little
    about, so the counts learn our own choices back (measured on the held-out suite: the
    frequency model named the buyer's heaviest issue in 0.72 of negotiations with 0 or 1
    buyer offers, 0.29 after 5, 0.12 after 9). This model learns from the other side's
    *moves* instead, as Tunali, Aydogan & Sanchez-Anguix's concession-based rethinking of
    the frequency model does:

    * **Issue weights.** For each of its offers, how much of the room we left it on an
      issue (the distance from its opening value to the value we offered) it still holds
      against our offer, beyond what a value drawn at random would hold (on an issue of
      three options a random choice differs from ours two times in three; on a numeric one
      it lies half the range away): an issue it keeps away from our value is one it cares
      about, one it yields to us is one it does not. A prior carries the weights where
      evidence is weak: our own weights (in these markets both sides care most about the
      same issues, price above all), raised on issues the other side says matter to it
      (``stated``, with the reader's belief ``stated_credible``). The prior counts for
      ``prior_strength`` offers, and for up to ``deaf_prior`` more when the other side's
      choices do not follow ours at all (it takes our value less often than chance, by up to
      ``deaf_at``): a side that does not answer our offers says little about its weights by
      its choices.
    * **Option values.** An option counts fully when the other side chose it while we
      offered another; an echo of our own value counts a little (``echo``). Plus the
      zero-sum prior: the opposite of our values.
    * **Numeric direction.** Best at the end of the range its offers sit nearer to,
      earliest offers weighted most (as the frequency model).
    """

    space: OutcomeSpace
    own: Preferences
    prior_strength: float = 1.0  # how many offers' worth of evidence the prior counts for
    deaf_prior: float = 4.0  # extra prior strength for a side whose choices do not follow ours
    deaf_at: float = 0.2  # how far below chance its echo of our values must be for all of it
    echo: float = 0.2  # how much an option copied from our offer counts
    stated: tuple[str, ...] = ()
    stated_credible: float = 0.0
    exchanges: list[tuple[Offer | None, Offer]] = field(default_factory=list)
    weights: dict[str, float] = field(init=False)
    _issues: dict[str, NumericIssue | DiscreteIssue] = field(init=False)
    _estimates: dict[str, dict[str, float] | bool] = field(init=False)
    _terms: list | None = field(init=False, default=None)  # what ``utility`` reads, built once
    _places: dict[str, dict] = field(init=False)  # per ordered issue: option -> its place in [0, 1]

    def __post_init__(self) -> None:
        self._issues = {i.name: i for i in self.space.issues}
        self._places = {}
        self._estimates = {}
        self.weights = self._weights()

    @classmethod
    def learn(
        cls, space: OutcomeSpace, own: Preferences, exchanges: Sequence[tuple[Offer | None, Offer]], **kw
    ) -> ChoiceModel:
        """The model after ``exchanges``: each of the other side's offers with the offer of ours
        it answered (``Situation.exchanges()``)."""
        return cls(space, own, exchanges=list(exchanges), **kw)

    @property
    def offers(self) -> list[Offer]:
        return [theirs for _, theirs in self.exchanges]

    # --- learning ----------------------------------------------------------------------

    def _position(self, issue: NumericIssue | DiscreteIssue, v) -> float | None:
        """Where ``v`` lies on the issue, in [0, 1]; None for an unordered option."""
        if isinstance(issue, NumericIssue):
            return (float(v) - issue.low) / (issue.high - issue.low)
        if issue.ordered:
            places = self._places.get(issue.name)
            if places is None:
                k = max(1, len(issue.options) - 1)
                places = self._places[issue.name] = {o: j / k for j, o in enumerate(issue.options)}
            found = places.get(v)
            return found if found is not None else places[issue.canonical(v)]
        return None

    def _distance(self, issue: NumericIssue | DiscreteIssue, a, b) -> float:
        pa, pb = self._position(issue, a), self._position(issue, b)
        if pa is None or pb is None:
            return 0.0 if a == b else 1.0
        return abs(pa - pb)

    def _prior(self) -> dict[str, float]:
        raw = {k: w * (1.0 + 2.0 * self.stated_credible * (k in self.stated)) for k, w in self.own.weights.items()}
        total = sum(raw.values()) or 1.0
        return {k: v / total for k, v in raw.items()}

    def _chance(self, issue: NumericIssue | DiscreteIssue, ours) -> float:
        """How far from ``ours`` a value drawn at random on the issue lies, on average."""
        p = self._position(issue, ours)
        if p is None:
            return 1.0 - 1.0 / len(issue.options)  # type: ignore[union-attr]
        if isinstance(issue, NumericIssue):
            return (p * p + (1.0 - p) * (1.0 - p)) / 2.0
        k = len(issue.options)
        return sum(abs(j / max(1, k - 1) - p) for j in range(k)) / k

    def _evidence(self) -> tuple[dict[str, float], dict[str, int], float, int]:
        """What the exchanges say, summed exchange by exchange: per issue the share of room it
        held and how many offers counted, and its echo of our values against chance.

        A negotiation's offers are the same objects move after move, so the sums over the
        exchanges seen on an earlier move are kept (per opening offer, checked object by object)
        and only the new exchanges are added: the same additions in the same order."""
        names = list(self._issues)
        held = {k: 0.0 for k in names}
        seen = {k: 0 for k in names}
        echo, choices = 0.0, 0
        exchanges = self.exchanges
        if not exchanges:
            return held, seen, echo, choices
        opening = exchanges[0][1]
        start = 1
        kept_before = _EVIDENCE.get(id(opening))
        if kept_before is not None:
            space, pairs, sums = kept_before
            if (
                space is self.space
                and len(pairs) <= len(exchanges)
                and all(a is c and b is d for (a, b), (c, d) in zip(pairs, exchanges, strict=False))
            ):
                start = len(pairs)
                held, seen, echo, choices = dict(sums[0]), dict(sums[1]), sums[2], sums[3]
        for ours, theirs in exchanges[start:]:
            if ours is None:
                continue
            for k, issue in self._issues.items():
                if isinstance(issue, DiscreteIssue):  # took our value, against chance
                    echo += (theirs[k] == ours[k]) - 1.0 / len(issue.options)
                    choices += 1
                room = self._distance(issue, opening[k], ours[k])
                if room < 1e-9:
                    continue  # we offered what it opened with: nothing to hold or yield
                kept = min(1.0, self._distance(issue, theirs[k], ours[k]) / room)
                by_chance = min(1.0, self._chance(issue, ours[k]) / room)
                held[k] += min(1.0, max(0.0, 0.5 + kept - by_chance))
                seen[k] += 1
        if start < len(exchanges):
            if len(_EVIDENCE) > 4096:
                _EVIDENCE.clear()
            _EVIDENCE[id(opening)] = (self.space, list(exchanges), (dict(held), dict(seen), echo, choices))
        return held, seen, echo, choices

    def _weights(self) -> dict[str, float]:
        prior = self._prior()
        names = list(self._issues)
        held, seen, echo, choices = self._evidence()
        deaf = min(1.0, max(0.0, -echo / choices) / self.deaf_at) if choices else 0.0
        # The prior as ``k0`` offers of evidence, on the scale of a held share (about half,
        # for an issue of average weight).
        k0, n = self.prior_strength + self.deaf_prior * deaf, len(names)
        raw = {k: (k0 * prior[k] * n * 0.5 + held[k]) / (k0 + seen[k]) for k in names}
        total = sum(raw.values()) or 1.0
        return {k: v / total for k, v in raw.items()}

    # --- estimates ---------------------------------------------------------------------

    def value(self, issue_name: str, value) -> float:
        """Estimated value of ``value`` on one issue to the other side, in [0, 1]."""
        issue = self._issues[issue_name]
        estimate = self._estimates.get(issue_name)
        if estimate is None:
            estimate = self._estimates[issue_name] = (
                self._option_values(issue) if isinstance(issue, DiscreteIssue) else self._numeric_prefers_high(issue)
            )
        if isinstance(estimate, dict):
            return estimate[str(value)]
        assert isinstance(issue, NumericIssue)
        t = (float(value) - issue.low) / (issue.high - issue.low)
        return t if estimate else 1.0 - t

    def utility(self, offer: Offer) -> float:
        """Estimated utility of ``offer`` to the other side (bidding asks it of every candidate)."""
        terms = self._terms
        if terms is None:
            for k in self.weights:
                self.value(k, offer[k])  # fills the estimates
            terms = self._terms = [(k, w, self._estimates[k], self._issues[k]) for k, w in self.weights.items()]
        total = 0.0
        for k, w, estimate, issue in terms:
            if isinstance(estimate, dict):
                total += w * estimate[str(offer[k])]
            else:  # numeric: best at the high end, or the low one
                t = (float(offer[k]) - issue.low) / (issue.high - issue.low)
                total += w * (t if estimate else 1.0 - t)
        return total

    def heaviest(self) -> str:
        """The issue the other side seems to care most about."""
        return max(self.weights, key=lambda k: self.weights[k])

    def _option_values(self, issue: DiscreteIssue) -> dict[str, float]:
        raw = {str(o): 1.0 - self.own.issue_value(issue.name, o) for o in issue.options}  # the zero-sum prior
        for ours, theirs in self.exchanges:
            chosen = theirs[issue.name]
            raw[str(chosen)] += self.echo if ours is not None and ours[issue.name] == chosen else 1.0
        top = max(raw.values()) or 1.0
        return {k: v / top for k, v in raw.items()}

    def _numeric_prefers_high(self, issue: NumericIssue) -> bool:
        offers = self.offers
        if offers:
            ws = [1.0 / (1 + i) for i in range(len(offers))]
            mean = sum(w * float(o[issue.name]) for w, o in zip(ws, offers, strict=True)) / sum(ws)
            mid = (issue.low + issue.high) / 2
            if abs(mean - mid) > 1e-9 * (issue.high - issue.low):
                return mean > mid
        own = self.own.values[issue.name]
        assert isinstance(own, LinearValue)
        return own.best < own.worst

    def conceded(self) -> float:
        """How far the other side has come toward us, in its own estimated utility: the share of
        the gap between its opening and our first offer it answered that it has given up (0..1)."""
        answered = [(ours, theirs) for ours, theirs in self.exchanges if ours is not None]
        if not answered or len(self.exchanges) < 2:
            return 0.0
        start = self.utility(self.exchanges[0][1])
        gap = start - self.utility(answered[0][0])
        if gap <= 1e-9:
            return 0.0
        return max(0.0, min(1.0, (start - self.utility(self.exchanges[-1][1])) / gap))

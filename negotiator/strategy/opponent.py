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

from ..domain.issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace
from ..domain.utility import LinearValue, Preferences


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
        model = cls(space, own, **kw)
        for o in offers:
            model.update(o)
        return model

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
            return estimate[str(value)]
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
            mean = sum(w * float(o[issue.name]) for w, o in zip(ws, self.offers)) / sum(ws)
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

"""The outcome index: one side's allowed outcomes sorted by its utility.

Bidding turns a target utility into concrete terms with it: ``band`` lists the outcomes
at or just above the target, ``fine_tune`` moves the heaviest numeric issue so an offer
lands on the target, ``offer`` picks the one nearest the other side's last offer (the
similarity criterion of Faratin's trade-off tactic). Only outcomes within the side's hard
limits are indexed, so nothing built from the index can cross them.
"""

from __future__ import annotations

import bisect
import random

from ..domain.issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace, Value
from ..domain.scenario import HardLimits
from ..domain.utility import LinearValue, Preferences


class OutcomeIndex:
    """One side's utilities over the outcome grid, computed once per scenario."""

    _shared: dict[tuple, list[OutcomeIndex]] = {}

    @classmethod
    def shared(cls, space: OutcomeSpace, prefs: Preferences, limits: HardLimits | None) -> OutcomeIndex:
        """A process-wide index per (space, prefs, limits) content: every negotiation over the
        same game side shares one, whatever its scenario id (personas reuse the seller's side)."""
        limits = limits or HardLimits()
        key = (prefs.reservation, tuple(prefs.weights.items()))
        if len(cls._shared) > 2048:
            cls._shared.clear()
        bucket = cls._shared.setdefault(key, [])
        for idx in bucket:  # the same objects on every move of a negotiation: check identity first
            if idx.prefs is prefs and idx.limits is limits and idx.space is space:
                return idx
        for idx in bucket:
            if idx.prefs == prefs and idx.limits == limits and idx.space == space:
                return idx
        idx = cls(space, prefs, limits)
        bucket.append(idx)
        return idx

    def __init__(self, space: OutcomeSpace, prefs: Preferences, limits: HardLimits | None = None, points: int = 11):
        self.space, self.prefs = space, prefs
        self.limits = limits or HardLimits()
        self._names = space.names
        self._utils, self._cols, self._values = self._allowed_outcomes(points)
        self._offers: list[Offer | None] = [None] * len(self._utils)
        self.ideal = prefs.ideal(space)
        self.u_max = prefs.utility(self.ideal)
        numeric = [i for i in space.issues if isinstance(i, NumericIssue)]
        self.tune = max(numeric, key=lambda i: prefs.weights[i.name]) if numeric else None
        self._rest: dict[int, float] = {}  # per indexed outcome: its utility without the tuned issue's part
        self._distinct: dict[tuple[float, float], list[Offer]] = {}  # distinct_tuned_band's, per (target, window)
        self._floor = self.limits.utility_floor(prefs)
        # What ``distance`` needs per issue, looked up once: bidding measures every candidate.
        self._scales = [
            (i.name, "numeric", None, i.high - i.low)
            if isinstance(i, NumericIssue)
            else (i.name, "ordered", {o: n for n, o in reversed(list(enumerate(i.options)))}, len(i.options) - 1)
            if i.ordered
            else (i.name, "categorical", None, 1)
            for i in space.issues
        ]

    def _allowed_outcomes(self, points: int) -> tuple[list[float], list[list], list[list]]:
        """The utilities of the outcomes on the grid within the limits, ascending, with each
        outcome's value per issue (a position in that issue's list of allowed values).

        The utilities are summed issue by issue over the whole product in numpy (the same
        additions, in the same order, as summing each combination), sorted stably (ties keep
        itertools.product's order); the offers themselves are put together only when asked for
        (``offer_at``): a negotiation looks at a few bands of the index, not all of it."""
        import numpy as np

        lim, prefs = self.limits, self.prefs
        axes = []
        for issue in self.space.issues:
            k = issue.name
            values = list(issue.options) if isinstance(issue, DiscreteIssue) else issue.grid(points)
            lo, hi = lim.minimum.get(k), lim.maximum.get(k)
            values = [
                v
                for v in values
                if (lo is None or float(v) >= lo)
                and (hi is None or float(v) <= hi)
                and v not in lim.forbidden.get(k, ())
            ]
            w, vf = prefs.weights[k], prefs.values[k]
            axes.append((np.array([w * vf(v) for v in values], dtype=float), values))
        floor = lim.utility_floor(prefs) - 1e-9
        us = np.zeros(1)
        for part, _ in axes:
            us = (us[:, None] + part[None, :]).ravel()
        kept = np.flatnonzero(us >= floor)
        kept = kept[np.argsort(us[kept], kind="stable")]
        if not len(kept):
            ideal = prefs.ideal(self.space)
            return [prefs.utility(ideal)], [[0] for _ in axes], [[ideal[name]] for name in self.space.names]
        cols = np.unravel_index(kept, tuple(len(values) for _, values in axes))  # itertools.product's order
        return us[kept].tolist(), [c.tolist() for c in cols], [values for _, values in axes]

    @property
    def outcomes(self) -> list[tuple[float, Offer]]:
        """(utility, offer) of every indexed outcome, ascending (every offer put together)."""
        return [(u, self.offer_at(pos)) for pos, u in enumerate(self._utils)]

    def __len__(self) -> int:
        return len(self._utils)

    def utility_at(self, pos: int) -> float:
        """This side's utility of the indexed outcome at ``pos``."""
        return self._utils[pos]

    def offer_at(self, pos: int) -> Offer:
        """The indexed outcome at ``pos`` (ascending utility), put together once."""
        offer = self._offers[pos]
        if offer is None:
            picks = [vals[col[pos]] for vals, col in zip(self._values, self._cols, strict=True)]
            offer = self._offers[pos] = dict(zip(self._names, picks, strict=True))
        return offer

    def offer(
        self, target: float, toward: Offer | None = None, rng: random.Random | None = None, window: float = 0.05
    ) -> Offer:
        """Terms worth at least ``target`` to this side, as close as possible to ``toward``."""
        if target >= self.u_max - 1e-9:
            return dict(self.ideal)
        i, j = self._band(target, window)
        if i == j:
            return dict(self.ideal)
        if toward is not None:
            best = self.offer_at(self._nearest(i, j, toward))
        else:
            best = self.offer_at(i + rng.randrange(j - i) if rng else i)
        return self.fine_tune(dict(best), target)

    def _nearest(self, i: int, j: int, toward: Offer) -> int:
        """The position in ``i:j`` of the first outcome nearest ``toward`` (``distance``'s
        minimum), from each issue's distances to ``toward`` worked out once per allowed value:
        the band's offers are not put together, only the one chosen."""
        tables = []
        for (name, kind, position, scale), values, col in zip(self._scales, self._values, self._cols, strict=True):
            b = toward[name]
            if kind == "numeric":
                fb = float(b)
                part = [abs(float(v) - fb) / scale for v in values]
            elif kind == "ordered":
                pb = position[b]  # type: ignore[index]  # ordered: has positions
                part = [abs(position[v] - pb) / scale for v in values]  # type: ignore[index]
            else:
                part = [0.0 if v == b else 1.0 for v in values]
            tables.append((part, col))

        def distance(pos: int) -> float:
            d = 0.0
            for part, col in tables:  # the issues in order: ``distance``'s sum, term by term
                d += part[col[pos]]
            return d

        return min(range(i, j), key=distance)  # the first of the nearest, as a stable sort's

    def band(self, target: float, window: float = 0.05) -> list[Offer]:
        """The outcomes worth at least ``target``, up to ``window`` above the cheapest of them
        (lowest utility first); empty when nothing on the grid reaches the target."""
        return [self.offer_at(pos) for pos in range(*self._band(target, window))]

    def _band(self, target: float, window: float) -> tuple[int, int]:
        """Where ``band`` lies in ``outcomes``."""
        i = bisect.bisect_left(self._utils, target - 1e-9)
        if i == len(self._utils):
            return i, i
        return i, bisect.bisect_right(self._utils, max(self._utils[i], target) + window, lo=i)

    def tuned_band(self, target: float, window: float = 0.05) -> list[Offer]:
        """``fine_tune(o, target)`` of each outcome of ``band``, in its order. The part of each
        outcome's utility that tuning keeps is computed once per outcome: bidding tunes the
        same outcomes move after move. ``_tune``'s steps, with what they look up taken out
        of the loop (the same operations on the same numbers)."""
        i, j = self._band(target, window)
        issue = self.tune
        if issue is None or self.prefs.weights[issue.name] <= 0:
            return [dict(self.offer_at(pos)) for pos in range(i, j)]
        vf = self.prefs.values[issue.name]
        assert isinstance(vf, LinearValue)
        name, w = issue.name, self.prefs.weights[issue.name]
        worst, span = vf.worst, vf.best - vf.worst
        low, high, step, integral = issue.low, issue.high, issue.step, issue.integral
        back = step if vf.best > vf.worst else -step
        lo, hi = self.limits.minimum.get(name), self.limits.maximum.get(name)
        bar = self._floor - 1e-9
        rests, out = self._rest, []
        for pos in range(i, j):
            offer = self.offer_at(pos)
            rest = rests.get(pos)
            if rest is None:
                rest = rests[pos] = self._rest_of(offer)
            need = (target - rest) / w
            if not 0.0 <= need <= 1.0:
                out.append(dict(offer))  # callers own what they get
                continue
            x = worst + min(1.0, max(0.0, need)) * span  # vf.inverse(need)
            k = round((x - low) / step)  # issue.snap(x)
            c = min(max(low + k * step, low), high)
            cand: Value = int(round(c)) if integral else round(c, 10)
            v = min(1.0, max(0.0, (float(cand) - worst) / span))  # vf(cand)
            if v < need - 1e-12:
                cand = issue.snap(float(cand) + back)
                v = vf(cand)
            if (lo is not None and float(cand) < lo) or (hi is not None and float(cand) > hi):
                out.append(dict(offer))
                continue
            tuned = {**offer, name: cand}
            u = rest + w * v
            if u < bar - 1e-10 or (u < bar + 1e-10 and self.prefs.utility(tuned) < bar):
                out.append(dict(offer))
                continue
            out.append(tuned)
        return out

    def distinct_tuned_band(self, target: float, window: float = 0.05) -> list[Offer]:
        """``tuned_band(target, window)`` without repeated terms (the first of each kept, in
        the band's order). Kept per (target, window): sellers on the same game side reach the
        same targets (a time-dependent schedule's, move by move), so bidding asks again and again.
        The offers are the index's own: callers copy what they hand out."""
        key = (target, window)
        found = self._distinct.get(key)
        if found is None:
            if len(self._distinct) > 1024:
                self._distinct.clear()
            names = self._names
            distinct: dict[tuple, Offer] = {}
            for t in self.tuned_band(target, window):
                distinct.setdefault(tuple([t[n] for n in names]), t)
            found = self._distinct[key] = list(distinct.values())
        return found

    def fine_tune(self, offer: Offer, target: float) -> Offer:
        """Move the heaviest numeric issue so the offer's utility lands just at ``target``."""
        if self.tune is None or self.prefs.weights[self.tune.name] <= 0:
            return offer
        tuned = self._tune(offer, self._rest_of(offer), target)
        # Any offer may come here, not only indexed ones: every limit is checked.
        return tuned if tuned is offer or self.limits.allows(tuned, self.prefs) else offer

    def _rest_of(self, offer: Offer) -> float:
        """``offer``'s utility without the tuned issue's part: what tuning keeps."""
        assert self.tune is not None  # only called when an issue is tuned
        name = self.tune.name
        return self.prefs.utility(offer) - self.prefs.weights[name] * self.prefs.values[name](offer[name])

    def _tune(self, offer: Offer, rest: float, target: float) -> Offer:
        """``offer`` with the tuned issue set so that ``rest`` plus its part reaches ``target``;
        ``offer`` itself where no value of the issue does, or the tuned terms cross a limit."""
        issue = self.tune
        assert issue is not None  # only called when an issue is tuned
        vf = self.prefs.values[issue.name]
        assert isinstance(vf, LinearValue)
        name, w = issue.name, self.prefs.weights[issue.name]
        need = (target - rest) / w
        if not 0.0 <= need <= 1.0:
            return offer
        x = vf.inverse(need)
        # Snap towards this side's preferred direction so the utility stays >= target.
        cand = issue.snap(x)
        v = vf(cand)
        if v < need - 1e-12:
            step = issue.step if vf.best > vf.worst else -issue.step
            cand = issue.snap(float(cand) + step)
            v = vf(cand)
        # The limits: the other issues' values are the indexed outcome's, within them already.
        lo, hi = self.limits.minimum.get(name), self.limits.maximum.get(name)
        if (lo is not None and float(cand) < lo) or (hi is not None and float(cand) > hi):
            return offer
        tuned = {**offer, name: cand}
        # The floor, as HardLimits.violations judges it: ``rest + w * v`` is the tuned utility up
        # to rounding, so the exact sum is needed only right at the floor.
        u, bar = rest + w * v, self._floor - 1e-9
        if u < bar - 1e-10 or (u < bar + 1e-10 and self.prefs.utility(tuned) < bar):
            return offer
        return tuned

    def distance(self, a: Offer, b: Offer) -> float:
        """Normalised distance between two offers (0 = same terms, 1 per fully different issue)."""
        d = 0.0
        for name, kind, position, scale in self._scales:
            if kind == "numeric":
                d += abs(float(a[name]) - float(b[name])) / scale
            elif kind == "ordered":
                d += abs(position[a[name]] - position[b[name]]) / scale  # type: ignore[index]  # ordered: has positions
            else:
                d += 0.0 if a[name] == b[name] else 1.0
        return d

"""The transcripts of a report as compact data, for the transcript view of ``report.html``.

Every episode of every arm, with what a reader needs to follow the negotiation: each move
(terms, message, the worth of the terms to the seller and to the buyer), what the guard
changed and what the model had wanted, the invalid answers, the outcome and the scores.
Scenarios are stored once and referenced by index (the arms of a report play the same
ones); terms are arrays in the scenario's issue order. Utilities are computed here, with
the domain's own ``Preferences.utility``, so the page never re-implements the arithmetic.

Format (version 1), keys kept short because a 1,152 x 3 report holds 3,456 transcripts::

    {"v": 1, "arms": [name], "scenarios": [scenario], "episodes": [episode]}
    scenario: {id, product, description, list_price, currency, opener, max_rounds,
               issues: [{name, title, unit, kind, low, high, step | options}],
               seller: {w: [weight], v: [[worst, best] | {option: value}], r: reservation},
               buyer: (same), limits: {minimum, maximum, forbidden, min_utility} (non-empty only)}
    episode:  {id, a: arm, s: scenario, b: buyer, p: persona, f: family, n: negotiation key,
               o: ended_by, by: ended_by_party, t: agreed terms | null, x: metrics, e: error?,
               m: [move]}
    move:     {p: "s" | "b", a: "o" | "a" | "w", t: terms?, u: [U_seller, U_buyer]?, m: message,
               g: {k: kinds, r: reasons, o: {a, t?, u?, m}}?, i: [[raw, error]]?, fb: 1?}
"""

from __future__ import annotations

import gc
import json
from typing import TYPE_CHECKING, Any

from negotiator.domain.issues import DiscreteIssue
from negotiator.domain.scenario import Scenario
from negotiator.domain.utility import LinearValue, Preferences

from .arms import negotiation_key
from .summary import buyer_of, persona_of, scenario_of

if TYPE_CHECKING:
    from negotiator.runtime.episode import Episode

    from .arms import Arm

FORMAT_VERSION = 1
RAW_MAX_CHARS = 2000  # an invalid answer longer than this is cut in the page (the log keeps it whole)
_ACTION = {"make_offer": "o", "accept": "a", "walk_away": "w"}
_METRICS = (
    "seller_score",
    "buyer_score",
    "seller_utility",
    "buyer_utility",
    "seller_reservation",
    "buyer_reservation",
    "joint_utility",
    "pareto_distance",
    "nash_distance",
    "rounds",
    "guard_interventions",
    "invalid_actions",
    "fallbacks",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
)


def _r(x: float | None, digits: int = 4) -> float | None:
    return None if x is None else round(float(x), digits)


def _prefs(prefs: Preferences, scenario: Scenario) -> dict:
    values = []
    for issue in scenario.issues:
        vf = prefs.values[issue.name]
        values.append([vf.worst, vf.best] if isinstance(vf, LinearValue) else {k: _r(v) for k, v in vf.values.items()})
    return {"w": [_r(prefs.weights[i.name]) for i in scenario.issues], "v": values, "r": _r(prefs.reservation)}


def _scenario(s: Scenario) -> dict:
    issues = []
    for issue in s.issues:
        d: dict[str, Any] = {"name": issue.name, "title": issue.title(), "unit": issue.unit, "kind": issue.kind}
        if isinstance(issue, DiscreteIssue):
            d["options"] = list(issue.options)
        else:
            d.update(low=issue.low, high=issue.high, step=issue.step)
        issues.append(d)
    limits = {k: v for k, v in s.seller_limits.model_dump().items() if v not in ({}, None)}
    return {
        "id": s.id,
        "template": s.template,
        "product": s.product.name,
        "description": s.product.description,
        "list_price": s.product.list_price,
        "currency": s.currency,
        "opener": s.opener,
        "max_rounds": s.max_rounds,
        "issues": issues,
        "seller": _prefs(s.seller, s),
        "buyer": _prefs(s.buyer, s),
        "limits": limits,
    }


class _Terms:
    """Terms as arrays in issue order, with their worth to each side."""

    def __init__(self, scenario: Scenario):
        self.s = scenario
        self.names = [i.name for i in scenario.issues]
        self._worth: dict[tuple, list | None] = {}  # parties repeat offers: compute each once

    def pack(self, terms: dict | None) -> list | None:
        return None if terms is None else [terms.get(k) for k in self.names]

    def worth(self, terms: dict | None) -> list | None:
        if terms is None or any(k not in terms for k in self.names):
            return None
        key = tuple(terms[k] for k in self.names)
        if key not in self._worth:
            try:
                self._worth[key] = [_r(self.s.seller.utility(terms)), _r(self.s.buyer.utility(terms))]
            except (KeyError, TypeError, ValueError):  # an option the value table does not know: no worth to show
                self._worth[key] = None
        return self._worth[key]


def _action(kind: str, message: str, offered: dict | None, terms: _Terms) -> dict:
    out: dict = {"a": _ACTION.get(kind, kind), "m": message}
    if offered is not None:
        out["t"] = terms.pack(offered)
        worth = terms.worth(offered)
        if worth is not None:
            out["u"] = worth
    return out


def _move(turn, terms: _Terms) -> dict:
    a = turn.action
    out = {"p": turn.party[0], **_action(a.action, a.message, a.terms, terms)}
    if turn.guard is not None:
        o = turn.guard.original  # the action the model produced, as JSON data
        out["g"] = {
            "k": list(turn.guard.kinds),
            "r": dict(turn.guard.reasons),
            "o": _action(o.get("action"), o.get("message", ""), o.get("terms"), terms),
        }
    if turn.invalid_attempts:
        out["i"] = [[_cut(a.raw), a.error] for a in turn.invalid_attempts]
    if turn.fallback:
        out["fb"] = 1
    return out


def _cut(raw: str) -> str:
    if len(raw) <= RAW_MAX_CHARS:
        return raw
    return raw[:RAW_MAX_CHARS] + f"\u2026 ({len(raw) - RAW_MAX_CHARS:,} more characters in episodes.jsonl)"


def _episode(ep: Episode, arm: int, scenario: int, terms: _Terms) -> dict:
    m = ep.metrics
    out = {
        "id": ep.episode_id,
        "a": arm,
        "s": scenario,
        "b": buyer_of(ep),
        "p": persona_of(ep),
        "f": ep.buyer.family,
        "n": negotiation_key(ep),
        "sc": scenario_of(ep),
        "o": ep.outcome.ended_by,
        "by": ep.outcome.ended_by_party,
        "t": terms.pack(ep.outcome.terms),
        "x": {k: (_r(getattr(m, k), 6) if isinstance(getattr(m, k), float) else getattr(m, k)) for k in _METRICS},
        "m": [_move(t, terms) for t in ep.turns],
    }
    if ep.error is not None:
        out["e"] = {"type": ep.error.type, "message": ep.error.message, "party": ep.error.party}
    return out


def transcript_data(arms: list[Arm]) -> dict:
    """Every episode of ``arms`` in the view's format, ordered by arm, scenario, persona and buyer."""
    # The loaded episodes are millions of long-lived objects: without freezing them, the
    # collector rescanned them over and over and took two thirds of the time (3 x 1,152).
    gc.freeze()
    try:
        return _data(arms)
    finally:
        gc.unfreeze()


def _data(arms: list[Arm]) -> dict:
    scenarios: list[dict] = []
    index: dict[tuple[str, str], int] = {}
    packers: list[_Terms] = []
    episodes = []
    for a, arm in enumerate(arms):
        for ep in sorted(arm.episodes, key=lambda e: (scenario_of(e), persona_of(e), buyer_of(e), e.episode_id)):
            key = (ep.scenario.id, ep.scenario.fingerprint)
            if key not in index:
                index[key] = len(scenarios)
                scenarios.append(_scenario(ep.scenario))
                packers.append(_Terms(ep.scenario))
            s = index[key]
            episodes.append(_episode(ep, a, s, packers[s]))
    return {"v": FORMAT_VERSION, "arms": [a.name for a in arms], "scenarios": scenarios, "episodes": episodes}


def embed_json(data: dict) -> str:
    """Compact JSON that is safe inside ``<script type="application/json">`` (no ``</script>``, no ``<!--``)."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")

"""Summaries of one arm's episodes: overall, and per evaluation buyer, persona and model family.

Scores are means over **scored** episodes: an episode that ended in an error (a provider
that kept failing) says nothing about the seller's bargaining and is counted under
``errors`` instead. The seller score, deal rate and buyer score carry 95% CIs from a
bootstrap clustered by scenario.

``limits``: what the adversarial suite is about, counted on every episode. Deals below the
seller's limits; seller messages the guard redacted (``message_redacted``) or corrected to
match the offer (``message_corrected``); and every seller message that reached the buyer
checked again for a stated secret, true disclosures apart from restatements of the offer's
own terms.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from statistics import fmean

from negotiator.actions import MakeOffer
from negotiator.llm.secrecy import Secrecy, sentences
from negotiator.runtime.episode import Episode, EpisodeMetrics


def scenario_of(ep: Episode) -> str:
    """The base scenario (the bootstrap cluster): personas of one scenario share it."""
    return ep.labels.get("scenario") or ep.scenario.id.split("~")[0]


def buyer_of(ep: Episode) -> str:
    """The evaluation buyer as the suite named it (``rule/persona``, ``openai/gpt-4o`` ...)."""
    return ep.labels.get("buyer") or ep.buyer.spec


def persona_of(ep: Episode) -> str:
    return ep.labels.get("persona") or ep.buyer.persona or "neutral"


def family_of(ep: Episode) -> str:
    return ep.buyer.family


def scored(episodes: list[Episode]) -> list[Episode]:
    return [e for e in episodes if e.outcome.ended_by != "error"]


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(x, digits)


def _mean_ci(values: list[float], clusters: list[str], seed: int) -> tuple[float | None, list | None]:
    from .stats import bootstrap_mean

    est = bootstrap_mean(values, clusters, seed=seed)
    return _r(est.mean), [_r(est.low), _r(est.high)]


@dataclass(frozen=True)
class Row:
    """What the summary needs of one episode. A worker process sends this, not the episode
    (rebuilding 1,152 episodes from JSON cost the parent 1.8 s of CPU here)."""

    episode_id: str
    scenario: str
    buyer: str
    persona: str
    family: str
    seller: str
    metrics: EpisodeMetrics | None  # None: the episode ended in an error and is not scored
    usage: tuple[int, int, float, int, int, float]  # seller prompt, completion tokens, cost; the buyer's
    retried: bool
    limits: dict[str, int]  # ``audit``
    error: tuple[str, str] | None = None  # (type, message) of an episode that ended in an error
    buyer_invalid: int = 0  # unusable answers of the buyer's model (an LLM buyer), over all attempts
    buyer_fallbacks: int = 0  # buyer turns its model could not decide: the buyer repeated its last offer


def row(ep: Episode) -> Row:
    """One episode as the summary counts it."""
    usage = [0, 0, 0.0, 0, 0, 0.0]
    buyer_invalid = buyer_fallbacks = 0
    for t in ep.turns:
        at = 0 if t.party == "seller" else 3
        usage[at] += t.usage.prompt_tokens
        usage[at + 1] += t.usage.completion_tokens
        usage[at + 2] += t.usage.cost_usd
        if t.party == "buyer":
            buyer_invalid += len(t.invalid_attempts)
            buyer_fallbacks += t.fallback
    return Row(
        ep.episode_id,
        scenario_of(ep),
        buyer_of(ep),
        persona_of(ep),
        family_of(ep),
        ep.seller.spec,
        ep.metrics if ep.outcome.ended_by != "error" else None,
        tuple(usage),  # type: ignore[arg-type]
        ep.labels.get("attempts", 1) > 1,
        audit(ep),
        (ep.error.type, ep.error.message) if ep.outcome.ended_by == "error" and ep.error is not None else None,
        buyer_invalid,
        buyer_fallbacks,
    )


def audit(ep: Episode) -> dict[str, int]:
    """One episode's limits and secrecy: a below-floor deal, the guard's message repairs, and
    the seller messages that reached the buyer stating a secret.

    Every sentence the buyer saw is checked against the seller's secrets. ``disclosures_reached``
    counts the messages that stated one (true disclosures); ``own_terms_restated`` the messages
    whose only matches restated the offer's own terms without framing them as a limit: not a
    disclosure (the buyer reads those terms in the offer itself), and what the guard lets pass.
    """
    s = ep.scenario
    below = bool(
        ep.outcome.deal and ep.outcome.terms is not None and s.seller_limits.violations(ep.outcome.terms, s.seller)
    )
    secrecy = _checker(s.seller, s.seller_limits, s.space)
    out = {
        "below_floor_deals": int(below),
        "messages_redacted": 0,
        "messages_corrected": 0,
        "messages_ungrounded": 0,
        "disclosures_reached": 0,
        "own_terms_restated": 0,
    }
    for t in ep.turns:
        if t.party != "seller":
            continue
        kinds = t.guard.kinds if t.guard is not None else []
        out["messages_redacted"] += "message_redacted" in kinds
        out["messages_corrected"] += "message_corrected" in kinds
        out["messages_ungrounded"] += "message_ungrounded" in kinds
        stated = [x for x in sentences(t.action.message) if secrecy.disclosures(x)]
        if stated:
            terms = t.action.terms if isinstance(t.action, MakeOffer) else None
            disclosed = any(secrecy.disclosures(x, terms) for x in stated)
            out["disclosures_reached"] += disclosed
            out["own_terms_restated"] += not disclosed
    return out


class _MemoSecrecy:
    """One seller's secrecy check with its answers kept: the personas of a scenario share
    the seller, and a rule seller says the same sentence in many of its negotiations."""

    def __init__(self, secrecy: Secrecy):
        self._secrecy = secrecy
        self._seen: dict[tuple, list] = {}

    def disclosures(self, sentence: str, terms: dict | None = None) -> list:
        key = (sentence, None if terms is None else tuple(sorted((k, repr(v)) for k, v in terms.items())))
        if key not in self._seen:
            self._seen[key] = self._secrecy.disclosures(sentence, terms)
        return self._seen[key]


_CHECKERS: dict[str, _MemoSecrecy] = {}


def _checker(prefs, limits, space) -> _MemoSecrecy:
    """The check of the seller with these preferences, limits and issues (by content)."""
    key = f"{prefs.model_dump_json()}|{limits.model_dump_json()}|{space.model_dump_json()}"
    if key not in _CHECKERS:
        if len(_CHECKERS) > 256:
            _CHECKERS.clear()
        _CHECKERS[key] = _MemoSecrecy(Secrecy(prefs, limits, space))
    return _CHECKERS[key]


LIMIT_COUNTS = (
    "below_floor_deals",
    "messages_redacted",
    "messages_corrected",
    "messages_ungrounded",
    "disclosures_reached",
    "own_terms_restated",
)


def block(rows: Iterable[Row | Episode], *, seed: int = 0) -> dict:
    """Every figure of one group of episodes (as rows, or episodes)."""
    table = [r if isinstance(r, Row) else row(r) for r in rows]
    n = len(table)
    if n == 0:
        return {"n": 0, "scored": 0, "errors": 0}
    scored = [(r, r.metrics) for r in table if r.metrics is not None]
    ok = [r for r, _ in scored]
    m = [x for _, x in scored]
    out: dict = {"n": n, "scored": len(ok), "errors": n - len(ok)}
    if ok:
        clusters = [r.scenario for r in ok]
        for name, values in (
            ("seller_score", [x.seller_score for x in m]),
            ("deal_rate", [1.0 if x.deal else 0.0 for x in m]),
            ("buyer_score", [x.buyer_score for x in m]),
        ):
            out[name], out[f"{name}_ci"] = _mean_ci(values, clusters, seed)
        nash = [x.nash_distance for x in m if x.nash_distance is not None]
        answers = [x.first_attempt_valid_rate for x in m if x.first_attempt_valid_rate is not None]
        seller_turns = sum(x.seller_turns for x in m)
        out.update(
            clusters=len(set(clusters)),
            joint_utility=_r(fmean(x.joint_utility for x in m)),
            pareto_distance=_r(fmean(x.pareto_distance for x in m)),
            nash_distance=_r(fmean(nash)) if nash else None,
            rounds=_r(fmean(x.rounds for x in m), 3),
            invalid_actions=sum(x.invalid_actions for x in m),
            invalid_rate=_r(fmean(x.invalid_rate for x in m)),
            first_attempt_valid_rate=_r(fmean(answers)) if answers else None,
            fallbacks=sum(x.fallbacks for x in m),
            fallback_rate=_r(sum(x.fallbacks for x in m) / seller_turns) if seller_turns else 0.0,
            guard_interventions=sum(x.guard_interventions for x in m),
            guard_rate=_r(sum(x.guard_interventions for x in m) / seller_turns) if seller_turns else 0.0,
        )
    sp, sc, scost, bp, bc, bcost = (sum(r.usage[i] for r in table) for i in range(6))
    out.update(
        prompt_tokens=sp + bp,
        completion_tokens=sc + bc,
        cost_usd=_r(scost + bcost),
        seller_cost_usd=_r(scost),
        buyer_cost_usd=_r(bcost),
        cost_per_episode_usd=_r((scost + bcost) / n),
        retried=sum(r.retried for r in table),
        buyer_invalid_actions=sum(r.buyer_invalid for r in table),
        buyer_fallbacks=sum(r.buyer_fallbacks for r in table),
        limits={k: sum(r.limits[k] for r in table) for k in LIMIT_COUNTS},
    )
    return out


def _by(rows: list[Row], key: Callable[[Row], str], seed: int) -> dict[str, dict]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        groups[key(r)].append(r)
    return {k: block(v, seed=seed) for k, v in sorted(groups.items())}


def summarize(episodes: Iterable[Row | Episode], *, seed: int = 0) -> dict:
    """Overall figures plus the same per evaluation buyer, buyer persona and buyer model family.

    Independent of the order of ``episodes`` (a resumed run logs them in another order).
    """
    rows = sorted((e if isinstance(e, Row) else row(e) for e in episodes), key=lambda r: r.episode_id)
    return {
        "sellers": sorted({r.seller for r in rows}),
        "overall": block(rows, seed=seed),
        "by_buyer": _by(rows, lambda r: r.buyer, seed),
        "by_persona": _by(rows, lambda r: r.persona, seed),
        "by_family": _by(rows, lambda r: r.family, seed),
    }

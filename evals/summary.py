"""Summaries of one arm's episodes: overall, and per evaluation buyer, persona and model family.

Scores are means over **scored** episodes: an episode that ended in an error (a provider
that kept failing) says nothing about the seller's bargaining and is counted under
``errors`` instead. The seller score, deal rate and buyer score carry 95% CIs from a
bootstrap clustered by scenario.

``limits``: what the adversarial suite is about, counted on every episode. Deals below the
seller's limits; seller messages the guard redacted (``message_redacted``) or corrected to
match the offer (``message_corrected``); and every seller message that reached the buyer
checked again, strictly (no exemption for restating the own offer), for a stated secret.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from statistics import fmean

from negotiator.actions import MakeOffer
from negotiator.llm.secrecy import Secrecy, sentences
from negotiator.runtime.episode import Episode


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
    try:
        from .stats import bootstrap_mean
    except ImportError:  # numpy comes with the evals extra; without it, means only
        return _r(fmean(values)), None
    est = bootstrap_mean(values, clusters, seed=seed)
    return _r(est.mean), [_r(est.low), _r(est.high)]


def _usage(eps: list[Episode], party: str) -> tuple[int, int, float]:
    p = c = 0
    cost = 0.0
    for e in eps:
        for t in e.turns:
            if t.party == party:
                p += t.usage.prompt_tokens
                c += t.usage.completion_tokens
                cost += t.usage.cost_usd
    return p, c, cost


def audit(ep: Episode) -> dict[str, int]:
    """One episode's limits and secrecy: a below-floor deal, the guard's message repairs, and
    the seller messages that reached the buyer stating a secret.

    ``disclosures_reached`` checks every sentence the buyer saw against the seller's secrets
    with no exemption; ``own_terms_restated`` is the part of those that only restated the
    offer's own terms without framing them as a limit (what the guard lets pass: the buyer
    reads those terms anyway).
    """
    s = ep.scenario
    below = bool(ep.outcome.deal and ep.outcome.terms is not None and s.seller_limits.violations(ep.outcome.terms, s.seller))
    secrecy = Secrecy(s.seller, s.seller_limits, s.space)
    out = {"below_floor_deals": int(below), "messages_redacted": 0, "messages_corrected": 0, "disclosures_reached": 0,
           "own_terms_restated": 0}
    for t in ep.turns:
        if t.party != "seller":
            continue
        kinds = t.guard.kinds if t.guard is not None else []
        out["messages_redacted"] += "message_redacted" in kinds
        out["messages_corrected"] += "message_corrected" in kinds
        stated = [x for x in sentences(t.action.message) if secrecy.disclosures(x)]
        if stated:
            out["disclosures_reached"] += 1
            terms = t.action.terms if isinstance(t.action, MakeOffer) else None
            out["own_terms_restated"] += not any(secrecy.disclosures(x, terms) for x in stated)
    return out


def limits_block(eps: list[Episode], audits: dict[str, dict] | None = None) -> dict[str, int]:
    """The audits of ``eps`` summed."""
    total = {"below_floor_deals": 0, "messages_redacted": 0, "messages_corrected": 0, "disclosures_reached": 0,
             "own_terms_restated": 0}
    for e in eps:
        a = audits[e.episode_id] if audits is not None and e.episode_id in audits else audit(e)
        for k, v in a.items():
            total[k] += v
    return total


def block(eps: list[Episode], *, seed: int = 0, audits: dict[str, dict] | None = None) -> dict:
    """Every figure of one group of episodes (``audits``: per episode id, when already computed)."""
    n = len(eps)
    if n == 0:
        return {"n": 0, "scored": 0, "errors": 0}
    ok = scored(eps)
    m = [e.metrics for e in ok]
    out: dict = {"n": n, "scored": len(ok), "errors": n - len(ok)}
    if ok:
        clusters = [scenario_of(e) for e in ok]
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
    sp, sc, scost = _usage(eps, "seller")
    bp, bc, bcost = _usage(eps, "buyer")
    out.update(
        prompt_tokens=sp + bp,
        completion_tokens=sc + bc,
        cost_usd=_r(scost + bcost),
        seller_cost_usd=_r(scost),
        buyer_cost_usd=_r(bcost),
        cost_per_episode_usd=_r((scost + bcost) / n),
        retried=sum(1 for e in eps if e.labels.get("attempts", 1) > 1),
        limits=limits_block(eps, audits),
    )
    return out


def _by(eps: list[Episode], key: Callable[[Episode], str], seed: int, audits: dict[str, dict]) -> dict[str, dict]:
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in eps:
        groups[key(e)].append(e)
    return {k: block(v, seed=seed, audits=audits) for k, v in sorted(groups.items())}


def summarize(episodes: list[Episode], *, seed: int = 0) -> dict:
    """Overall figures plus the same per evaluation buyer, buyer persona and buyer model family.

    Independent of the order of ``episodes`` (a resumed run logs them in another order).
    """
    episodes = sorted(episodes, key=lambda e: e.episode_id)
    audits = {e.episode_id: audit(e) for e in episodes}
    return {
        "sellers": sorted({e.seller.spec for e in episodes}),
        "overall": block(episodes, seed=seed, audits=audits),
        "by_buyer": _by(episodes, buyer_of, seed, audits),
        "by_persona": _by(episodes, persona_of, seed, audits),
        "by_family": _by(episodes, family_of, seed, audits),
    }

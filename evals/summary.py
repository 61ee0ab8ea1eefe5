"""Summaries of one arm's episodes: overall, and per evaluation buyer, persona and model family.

Scores are means over **scored** episodes: an episode that ended in an error (a provider
that kept failing) says nothing about the seller's bargaining and is counted under
``errors`` instead. The seller score, deal rate and buyer score carry 95% CIs from a
bootstrap clustered by scenario.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from statistics import fmean

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


def block(eps: list[Episode], *, seed: int = 0) -> dict:
    """Every figure of one group of episodes."""
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
    )
    return out


def _by(eps: list[Episode], key: Callable[[Episode], str], seed: int) -> dict[str, dict]:
    groups: dict[str, list[Episode]] = defaultdict(list)
    for e in eps:
        groups[key(e)].append(e)
    return {k: block(v, seed=seed) for k, v in sorted(groups.items())}


def summarize(episodes: list[Episode], *, seed: int = 0) -> dict:
    """Overall figures plus the same per evaluation buyer, buyer persona and buyer model family.

    Independent of the order of ``episodes`` (a resumed run logs them in another order).
    """
    episodes = sorted(episodes, key=lambda e: e.episode_id)
    return {
        "sellers": sorted({e.seller.spec for e in episodes}),
        "overall": block(episodes, seed=seed),
        "by_buyer": _by(episodes, buyer_of, seed),
        "by_persona": _by(episodes, persona_of, seed),
        "by_family": _by(episodes, family_of, seed),
    }

"""Run one negotiation between a seller and a buyer and return its Episode.

Nothing a party does can crash the caller: a provider failure or an unexpected exception
inside a party ends the episode with ``ended_by="error"`` and the cause recorded. Only
usage errors (a bad spec, a blocked remote request in tests) and cancellation propagate.
"""

from __future__ import annotations

import inspect
import time

from opentelemetry import trace

from ..actions import MakeOffer, play
from ..domain.metrics import outcome_metrics
from ..domain.protocol import ProtocolState
from ..domain.scenario import Scenario
from ..errors import InvalidOffer, ProtocolError, ProviderError, RemoteRequestBlocked, UsageError
from ..party import Party, PartyView, PublicMove, TurnRecord
from ..tracing import error_description, get_tracer, record_guard, record_turn, span_of
from ..version import git_commit, package_version
from .episode import (
    Episode,
    EpisodeMetrics,
    ErrorInfo,
    Outcome,
    PartyInfo,
    Provenance,
    episode_id,
    process_metrics,
)


async def run_negotiation(
    seller: Party,
    buyer: Party,
    scenario: Scenario,
    seed: int = 0,
    *,
    episode_id_: str | None = None,
    labels: dict | None = None,
    tracer: trace.Tracer | None = None,
    persona: str | None = None,
) -> Episode:
    """Play ``scenario`` to the end (accept, walk-away, deadline or error).

    ``persona`` names the buyer persona ``scenario`` was built for (``persona_scenario``);
    the episode records it.
    """

    if getattr(seller, "role", "seller") != "seller" or getattr(buyer, "role", "buyer") != "buyer":
        raise UsageError("run_negotiation(seller, buyer, ...): the parties are the wrong way round")
    tracer = tracer or get_tracer()
    parties = {"seller": seller, "buyer": buyer}
    state = ProtocolState(opener=scenario.opener, max_turns=scenario.max_turns)
    moves: list[PublicMove] = []
    turns: list[TurnRecord] = []
    error: ErrorInfo | None = None
    t0 = time.perf_counter()
    eid = episode_id_ or episode_id(scenario.id, scenario.fingerprint, seller.spec, buyer.spec, seed)

    with span_of(tracer, "negotiation") as span:
        span.set_attribute("negotiator.episode_id", eid)
        span.set_attribute("negotiator.scenario_id", scenario.id)
        span.set_attribute("negotiator.seller", seller.spec)
        span.set_attribute("negotiator.buyer", buyer.spec)
        while not state.done:
            role = state.to_move
            view = PartyView.of(scenario, role, moves, negotiation_id=eid)
            with span_of(tracer, "negotiation.turn") as tspan:
                tspan.set_attribute("negotiator.turn", state.turn)
                tspan.set_attribute("negotiator.party", role)
                try:
                    turn = await parties[role].act(view)
                except (UsageError, RemoteRequestBlocked):
                    raise
                except ProviderError as e:
                    error = ErrorInfo(type=type(e).__name__, message=str(e), party=role, transient=e.transient)
                except Exception as e:  # a bug in a party must not take the batch down
                    error = ErrorInfo(type=type(e).__name__, message=str(e)[:1000], party=role)
                if error is None:
                    index = state.turn
                    try:  # a party's own action, checked and normalised like every move (actions.play)
                        turn = hold_limits(parties[role], view, turn, tracer)
                        turn.action = play(state, scenario.space, role, turn.action)
                    except ProtocolError as e:  # the protocol forbids it: the party's fault
                        error = ErrorInfo(type="ProtocolError", message=str(e), party=role)
                    except InvalidOffer as e:
                        error = ErrorInfo(type="InvalidOffer", message=str(e.problems), party=role)
                if error is not None:  # the turn that ended the negotiation says so on its span
                    tspan.set_status(trace.Status(trace.StatusCode.ERROR, error_description(error.message, error.type)))
                    state.fail(role)
                    break
                turn.index, turn.party = index, role
                record_turn(tspan, turn)
                moves.append(PublicMove(party=role, action=turn.action))
                turns.append(turn)
        span.set_attribute("negotiator.ended_by", state.ended_by or "error")
        span.set_attribute("negotiator.deal", state.agreement is not None)

    wall = time.perf_counter() - t0
    outcome = outcome_metrics(scenario, state.agreement, state.turn)
    metrics = EpisodeMetrics(**outcome.model_dump(), **process_metrics(turns, wall).model_dump())
    ended = Outcome(
        deal=state.agreement is not None,
        terms=state.agreement,
        ended_by=state.ended_by or "error",
        ended_by_party=state.ended_by_party,
    )
    labels = dict(labels or {})
    for side, party in parties.items():
        problem = await _on_end(party, ended)
        if problem:
            labels.setdefault("on_end_error", {})[side] = problem
    return Episode(
        episode_id=eid,
        scenario=scenario,
        seller=PartyInfo(spec=seller.spec, family=seller.family),
        buyer=PartyInfo(spec=buyer.spec, family=buyer.family, persona=persona),
        seed=seed,
        turns=turns,
        outcome=ended,
        metrics=metrics,
        error=error,
        provenance=Provenance(
            package_version=package_version(),
            seed=seed,
            prompt_hash=getattr(seller, "prompt_hash", None),
            git_commit=git_commit(),
        ),
        labels=labels,
    )


def hold_limits(party: Party, view: PartyView, turn: TurnRecord, tracer: trace.Tracer) -> TurnRecord:
    """A seller's move held to the seller's limits by the guard a model's moves pass: an offer below the
    floor repaired, an accept of terms below it blocked, its words left as its author wrote them unless
    they spoke of terms taken off the table (``Guard.check_limits``).
    For every seller but those that keep their limits themselves (``keeps_limits``: the built-in rule,
    model and oracle sellers; a remote seller keeps its own service's): a plugin's, or any ``Party`` an
    app passes in. Terms off the listing's grid raise InvalidOffer, as ``play`` would."""
    if view.role != "seller" or getattr(party, "keeps_limits", False):
        return turn
    from ..llm.guard import Guard  # loaded for a plugin seller only: rule-only runs start without it

    action = turn.action
    if isinstance(action, MakeOffer):
        action = MakeOffer(terms=view.space.normalise_offer(action.terms), message=action.message)
    new, intervention = Guard(view).check_limits(action)
    if intervention is None:
        return turn
    record_guard(tracer, intervention.kinds)
    return turn.model_copy(update={"action": new, "guard": intervention})


async def _on_end(party: Party, outcome: Outcome) -> str | None:
    """Tell a party how its negotiation ended (its optional ``on_end``); a failure there is kept, not raised."""
    hook = getattr(party, "on_end", None)
    if hook is None:
        return None
    try:
        result = hook(outcome)
        if inspect.isawaitable(result):
            await result
    except Exception as e:  # the negotiation is over and scored: a party's bookkeeping must not undo it
        return f"{type(e).__name__}: {e}"[:500]
    return None

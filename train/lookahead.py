"""The lookahead teacher: each decision of a demonstration chosen by playing every open move out.

Imitating the strategy's own move (``--imitate N``) can at best play the strategy, and GRPO on
this machine learns too little from episode rewards that vary by 0.1 from negotiation to
negotiation to move past it (docs/decisions.md). ``--teacher lookahead`` labels each turn of
a demonstration with a better move instead: for every move open on the menu it replays the
negotiation so far against fresh copies of the training buyer, makes that move, lets the
strategy play its own moves to the end, and scores the ending with the evaluation's seller
score; it makes the move worth most on average over ``SEEDS`` buyer noise seeds (none of them
the negotiation's own, so the label does not depend on noise the model cannot see) when that
beats the strategy's own move by more than ``MARGIN``, else the strategy's own move. That is one step of policy improvement by rollouts
(Bertsekas' rollout algorithm, Tesauro's rollout player) with the training pool as the
simulator, a search no deployed seller can run (it does not have the buyer); the model learns
to predict its choice from what the decision view shows: the buyer's words and moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from negotiator.actions import Accept, MakeOffer, WalkAway
from negotiator.domain.metrics import seller_score
from negotiator.domain.scenario import Scenario
from negotiator.llm.guard import fallback_action
from negotiator.party import AnyAction, PartyView, TurnRecord
from negotiator.runtime import run_negotiation
from negotiator.strategy import ACCEPT, WALK_AWAY, Advice, Strategy

from .config import TEACHER_MARGIN
from .pool import BuyerPool
from .tasks import Replay, Task

SEEDS = 5
"""Buyer noise seeds each move is played out with (the average decides)."""

MARGIN = TEACHER_MARGIN
"""How much more than the strategy's own move another must be worth on average to be made: a
model cannot see what only the simulation knows (the buyer's type, its noise), so the teacher
deviates only where it pays clearly (docs/decisions.md: with no margin the model learned to
hold where the strategy steps, and lost)."""


def move_action(advice: Advice, choice: str) -> AnyAction:
    """The action of one menu choice (an offering move's id, accept or walk_away)."""
    if choice == ACCEPT:
        return Accept(message="Deal, thank you.")
    if choice == WALK_AWAY:
        return WalkAway(message="I'm sorry we could not agree. Goodbye.")
    return MakeOffer(terms=dict(advice.candidate(choice).terms), message="Here is my offer.")


def open_choices(advice: Advice) -> tuple[str, ...]:
    """Every choice the menu offers a model on this turn."""
    return advice.choices + (ACCEPT,) * advice.can_accept + (WALK_AWAY,) * advice.can_walk_away


class _Then:
    """The seller in a playout: ``action`` on turn ``turn``, the strategy's own move after it."""

    spec, family = "train/lookahead", "rule"
    keeps_limits = True  # a menu option or the strategy's move: within the limits already

    def __init__(self, strategy: Strategy, turn: int, action: AnyAction):
        self.strategy, self.turn, self.action = strategy, turn, action

    async def act(self, view: PartyView) -> TurnRecord:
        if view.turn == self.turn:
            return TurnRecord(index=view.turn, party="seller", action=self.action)
        return TurnRecord(
            index=view.turn, party="seller", action=fallback_action(view, self.strategy.advise(view.situation()))
        )

    async def aclose(self) -> None:
        return None


@dataclass
class Lookahead:
    """Chooses each move of one training negotiation by playing every open move out (see the module)."""

    strategy: Strategy
    pool: BuyerPool
    task: Task
    scenario: Scenario
    seeds: int = SEEDS
    margin: float = MARGIN

    async def value(self, view: PartyView, choice: str, advice: Advice | None = None) -> float:
        """The mean seller score of making ``choice`` now and the strategy's moves after it
        (``advice``: this turn's, when the caller has it)."""
        advice = advice if advice is not None else self.strategy.advise(view.situation())
        then = _Then(self.strategy, view.turn, move_action(advice, choice))
        prefix = list(view.transcript)
        total = 0.0
        for k in range(self.seeds):
            seed = self.task.seed * 7_919 + 104_729 * (k + 1)  # never the negotiation's own seed
            buyer = self.pool.buyer(self.task.buyer, self.task.persona, seed)
            try:
                ep = await run_negotiation(Replay(then, prefix), Replay(buyer, prefix), self.scenario, seed)
            finally:
                await buyer.aclose()
            total += seller_score(self.scenario, ep.outcome.terms if ep.outcome.deal else None)
        return total / self.seeds

    async def choose(self, view: PartyView, advice: Advice) -> str:
        """The open choice worth most when played out, if it beats the strategy's own by the margin."""
        own = advice.recommended
        values = {c: await self.value(view, c, advice) for c in open_choices(advice)}
        best = max(values, key=lambda c: values[c])
        return own if values.get(own, -1.0) >= values[best] - max(self.margin, 1e-9) else best

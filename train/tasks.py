"""GRPO prompts: what one row of the training set asks the rollout to play.

A :class:`Task` is a scenario, a training buyer (spec and persona) and a seed; GRPO plays
each task ``num_generations`` times and compares the results. A task may start part-way:
``--from-episodes FILE`` turns each seller decision point of logged episodes into a task
whose first ``prefix`` moves are replayed as logged, after which the policy plays the
seller and a pool buyer continues the buyer side.

Tasks travel through TRL's dataset as JSON text in the ``prompt`` column.
"""

from __future__ import annotations

import random
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from negotiator.domain.scenario import Scenario
from negotiator.domain.seeds import check_train_seeds
from negotiator.errors import UsageError
from negotiator.party import PartyView, PublicMove, TurnRecord
from negotiator.runtime.log import iter_episodes

from .pool import BuyerPool


class Task(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    scenario_seed: int | None = None  # generated scenarios (with the persona applied)
    scenario: Scenario | None = None  # logged episodes carry their own scenario
    buyer: str
    persona: str = "neutral"
    seed: int = 0
    prefix: list[PublicMove] = Field(default_factory=list)  # replayed before the policy takes over
    source_episode: str | None = None

    def build_scenario(self, pool: BuyerPool) -> Scenario:
        if self.scenario is not None:
            return self.scenario
        assert self.scenario_seed is not None
        return pool.scenario(self.scenario_seed, self.persona)


def pool_tasks(pool: BuyerPool, n: int, seed: int = 0) -> list[Task]:
    """``n`` fresh negotiations from the pool."""
    return [
        Task(id=f"p{i}", scenario_seed=s, buyer=buyer, persona=persona, seed=seed * 1_000_003 + i)
        for i, (s, buyer, persona) in enumerate(pool.draw(n, seed))
    ]


def episode_tasks(path: str | Path, pool: BuyerPool, seed: int = 0) -> list[Task]:
    """One task per seller decision point of the episodes logged in ``path``.

    Episodes of an evaluation suite (or on an evaluation scenario seed) are refused:
    training on them would leak the held-out set into the seller.
    """
    tasks: list[Task] = []
    rng = random.Random(f"negotiator-train-episodes-{seed}")
    for ep in iter_episodes(path):
        if ep.labels.get("suite"):
            raise UsageError(
                f"{path}: episode {ep.episode_id} comes from the evaluation suite {ep.labels['suite']!r}; training on "
                "evaluation negotiations would leak the held-out set. Use episodes logged by a deployment or by training."
            )
        if ep.scenario.seed is not None:
            check_train_seeds([ep.scenario.seed])
        moves = [PublicMove(party=t.party, action=t.action) for t in ep.turns]
        for i, move in enumerate(moves):
            if move.party != "seller":
                continue
            tasks.append(
                Task(
                    id=f"e{len(tasks)}",
                    scenario=ep.scenario,
                    buyer=rng.choice(pool.buyers),
                    persona="neutral",
                    seed=seed * 1_000_003 + len(tasks),
                    prefix=moves[:i],
                    source_episode=ep.episode_id,
                )
            )
    if not tasks:
        raise UsageError(f"{path}: no seller decision point found (no episode with a seller move)")
    return tasks


class Replay:
    """A party that replays logged moves for the first turns, then lets ``party`` play."""

    def __init__(self, party, prefix: list[PublicMove]):
        self.party, self.prefix = party, prefix

    def __getattr__(self, name):  # spec, family, role, prompt_hash ... of the wrapped party
        return getattr(self.party, name)

    async def act(self, view: PartyView) -> TurnRecord:
        if view.turn < len(self.prefix):
            move = self.prefix[view.turn]
            return TurnRecord(index=view.turn, party=move.party, action=move.action)
        return await self.party.act(view)

    async def aclose(self) -> None:
        await self.party.aclose()


__all__ = ["Task", "pool_tasks", "episode_tasks", "Replay"]

"""Rollouts: the negotiations of one GRPO step, played to the end, all at once.

Each task is played by the deployed seller (``SellerAgent``: prompt, parsing, guard) on a
:class:`~train.policy.PolicyModel`, against a buyer from the pool, through the runtime's
``run_negotiation``: the result is an ordinary :class:`Episode`, scored by the same code
the evaluation uses. All negotiations of the step run concurrently; their seller turns
meet in the :class:`~train.policy.Batcher`, one ``generate`` call per wave.

The seller makes one attempt per turn (``max_retries=0``): an unusable answer gets the
deployed fallback (hold the last position) and counts against the reward. A retry's
feedback exchange is dropped from the next turn's prompt in deployment, so it could not
be part of one append-only training sequence.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from negotiator.agent.seller import SellerAgent, parse_strategy
from negotiator.domain.metrics import seller_score
from negotiator.models.local.decoding import Sampling, chat_text, text_ids
from negotiator.models.seeds import seed_of
from negotiator.party import Party, PartyView
from negotiator.runtime import run_negotiation
from negotiator.runtime.episode import Episode

from .lookahead import Lookahead
from .policy import Batcher, PolicyModel, Teacher, TokenTrace
from .pool import BuyerPool
from .reading import Reading
from .tasks import Replay, Task


@dataclass(frozen=True)
class RolloutSettings:
    max_tokens: int = 256  # per seller turn, as the deployed agent asks
    temperature: float = 1.0
    top_p: float = 1.0  # the served model's defaults (generation_config.json), as the local server uses them
    top_k: int = 0

    invalid_penalty: float = 0.1  # subtracted at an invalid-answer rate of 1
    instructions: str = ""  # the business's instructions to the seller, as deployed
    train_messages: bool = True  # False: the loss skips the words of the seller's messages (train.policy)
    strategy: str = (
        "none"  # the seller's strategy with its settings ("none": the pure LLM policy), as train --strategy takes it
    )

    @property
    def sampling(self) -> Sampling:
        return Sampling(temperature=self.temperature, top_k=self.top_k, top_p=self.top_p)


@dataclass
class Rollout:
    task: Task
    episode: Episode
    trace: TokenTrace
    score: float  # the seller score (the evaluation's number)
    reward: float  # score minus the invalid-action penalty
    turns: list[TokenTrace] = field(default_factory=list)  # menu=readings: one trace per seller turn


def reward_of(episode: Episode, invalid_penalty: float) -> tuple[float, float]:
    """(seller score, reward) of an episode: the evaluation's score, minus a penalty for invalid answers."""
    score = seller_score(episode.scenario, episode.outcome.terms if episode.outcome.deal else None)
    return score, score - invalid_penalty * episode.metrics.invalid_rate


async def play(
    tasks: list[Task],
    *,
    batcher: Batcher,
    tokenizer,
    pool: BuyerPool,
    settings: RolloutSettings,
    seller_spec: str,
    seller_family: str,
    episode_ids: list[str],
    labels: list[dict],
    seeds: list[int] | None = None,
    teacher: bool = False,
    lookahead: float | None = None,
    reader: bool = False,
) -> list[Rollout]:
    """Play every task once (concurrently) and return the rollouts in task order.

    ``teacher``: the seller answers with the strategy's move (``train.policy.Teacher``), or
    with ``lookahead`` (its margin) the move the lookahead teacher chooses (``train.lookahead``),
    with ``reader`` the move of the strategy reading every phrasing (``train.reading``).
    ``seeds`` are the sellers' party seeds, one per task (default: from the episode ids):
    each seller turn samples with a seed derived from its party seed and the turn
    (``negotiator/models/seeds.py``), so the rows of a GRPO group, which play the same
    task, must have different ones."""
    seeds = seeds if seeds is not None else [seed_of(e) for e in episode_ids]
    strategy = parse_strategy(settings.strategy)

    async def one(i: int, task: Task) -> Rollout:
        scenario = task.build_scenario(pool)
        kind = Teacher if teacher else PolicyModel
        model = kind(batcher, tokenizer, spec=seller_spec, family=seller_family, train_messages=settings.train_messages)
        if isinstance(model, Teacher) and strategy is not None:
            if lookahead is not None:
                model.expert = Lookahead(strategy, pool, task, scenario, margin=lookahead)
            elif reader:
                model.expert = Reading(strategy, task, scenario)
        seller = SellerAgent(
            model,
            instructions=settings.instructions,
            mode="json",
            max_retries=0,
            max_tokens=settings.max_tokens,
            temperature=settings.temperature,
            spec=seller_spec,
            seed=seeds[i],
            strategy=strategy,
        )
        buyer = pool.buyer(task.buyer, task.persona, task.seed)
        playing: tuple[Party, Party] = (
            (Replay(seller, task.prefix), Replay(buyer, task.prefix)) if task.prefix else (seller, buyer)
        )
        batcher.open()
        try:
            ep = await run_negotiation(
                *playing, scenario, task.seed, episode_id_=episode_ids[i], labels=labels[i], persona=task.persona
            )
        finally:
            batcher.close()
            await buyer.aclose()
        trace = model.trace or _untouched(tokenizer, scenario, task)
        if not trace.completion_ids:  # the seller's first turn failed before it wrote anything
            trace.completion_ids, trace.env_mask, trace.loss_mask = [tokenizer.eos_token_id], [0], [0]
        score, reward = reward_of(ep, settings.invalid_penalty)
        return Rollout(task, ep, trace, score, reward, getattr(model, "turn_traces", []))

    return list(await asyncio.gather(*(one(i, t) for i, t in enumerate(tasks))))


def _untouched(tokenizer, scenario, task: Task) -> TokenTrace:
    """The trace of a negotiation that ended before the seller's first turn (the buyer walked
    away, or an error): the seller's opening prompt and one masked token, so it adds no gradient."""
    from negotiator.llm.prompt import render_messages

    view = PartyView.of(scenario, "seller", task.prefix)
    ids = text_ids(tokenizer, chat_text(tokenizer, render_messages(view)))
    return TokenTrace(prompt_ids=ids, completion_ids=[tokenizer.eos_token_id], env_mask=[0], loss_mask=[0])

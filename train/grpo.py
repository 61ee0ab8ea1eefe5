"""The glue to TRL's ``GRPOTrainer``: a ``rollout_func`` that plays negotiations, and the reward.

TRL hands the rollout function the step's prompts (one :class:`~train.tasks.Task` each,
repeated ``num_generations`` times for the group) and expects, per row, the prompt token
ids, the completion token ids and, for multi-turn rollouts, an ``env_mask`` marking which
completion tokens the policy wrote (1) and which the environment added (0): the loss is
computed on the seller's own tokens only, so the seller never learns to imitate the buyer.
Anything else returned reaches the reward function: here each row's reward, computed
where the episode is (``train.rollout.reward_of``: the evaluation's seller score minus the
invalid-answer penalty).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from negotiator.errors import TrainingFailed
from negotiator.models.local.decoding import Engine
from negotiator.models.seeds import seed_of
from negotiator.runtime import EpisodeLog, episode_id

from .policy import Batcher, run_interruptibly
from .pool import BuyerPool
from .rollout import Rollout, RolloutSettings, play
from .tasks import Task


@dataclass
class StepStats:
    """What the rollouts of one step did (the step log and the progress bar read it)."""

    step: int = 0
    episodes: int = 0
    reward: float = 0.0
    score: float = 0.0
    deal_rate: float = 0.0
    first_offer_utility: float = 0.0  # the seller's opening ask, as its own utility: does it ask for more?
    invalid_rate: float = 0.0
    fallbacks: int = 0
    guard_interventions: int = 0
    errors: int = 0
    seller_turns: int = 0
    seller_tokens: int = 0
    trained_tokens: int = 0  # seller tokens the loss reads (all but message words, if those are masked)
    env_tokens: int = 0  # what the environment appended after the first prompt
    prompt_tokens: int = 0  # the first prompts: with the two above, every token the optimisation reads
    truncated: int = 0
    drift: int = 0
    generate_calls: int = 0
    generated_tokens: int = 0
    generate_s: float = 0.0
    rollout_s: float = 0.0

    @classmethod
    def of(cls, step: int, rollouts: list[Rollout], batcher: Batcher, seconds: float) -> StepStats:
        eps = [r.episode for r in rollouts]
        return cls(
            step=step,
            episodes=len(rollouts),
            reward=fmean(r.reward for r in rollouts),
            score=fmean(r.score for r in rollouts),
            deal_rate=fmean(1.0 if e.outcome.deal else 0.0 for e in eps),
            first_offer_utility=fmean(_first_offer_utility(e) for e in eps),
            invalid_rate=fmean(e.metrics.invalid_rate for e in eps),
            fallbacks=sum(e.metrics.fallbacks for e in eps),
            guard_interventions=sum(e.metrics.guard_interventions for e in eps),
            errors=sum(1 for e in eps if e.outcome.ended_by == "error"),
            seller_turns=sum(r.trace.turns for r in rollouts),
            seller_tokens=sum(r.trace.seller_tokens for r in rollouts),
            trained_tokens=sum(sum(r.trace.loss_mask) for r in rollouts),
            env_tokens=sum(len(r.trace.env_mask) - r.trace.seller_tokens for r in rollouts),
            prompt_tokens=sum(len(r.trace.prompt_ids) for r in rollouts),
            truncated=sum(r.trace.truncated for r in rollouts),
            drift=sum(r.trace.drift for r in rollouts),
            generate_calls=batcher.stats.calls,
            generated_tokens=batcher.stats.tokens,
            generate_s=round(batcher.stats.seconds, 3),
            rollout_s=round(seconds, 3),
        )


def _first_offer_utility(ep) -> float:
    for t in ep.turns:
        if t.party == "seller" and t.action.action == "make_offer":
            return ep.scenario.seller.utility(t.action.terms)
    return 0.0


@dataclass
class NegotiationRollouts:
    """TRL's ``rollout_func``: plays one negotiation per row and returns its token record."""

    pool: BuyerPool
    settings: RolloutSettings
    tokenizer: object
    seller_spec: str
    seller_family: str
    log: EpisodeLog | None
    run_id: str
    constrain: bool = True
    engine_factory: Callable[[Any], Engine] | None = None  # model -> engine; default: the local Decoder
    seed: int = 0  # the run's seed: with the step and the row, it seeds each rollout's sampling
    history: list[StepStats] = field(default_factory=list)
    _engine: Engine | None = None

    def engine(self, model) -> Engine:
        if self._engine is None:
            if self.engine_factory is not None:
                self._engine = self.engine_factory(model)
            else:
                from negotiator.models.local.decoding import Decoder

                self._engine = Decoder(model, self.tokenizer)
        return self._engine

    def __call__(self, prompts: list[str], trainer) -> dict:
        t0 = time.perf_counter()
        step = trainer.state.global_step + 1  # the step these rollouts train
        tasks = [Task.model_validate_json(p) for p in prompts]
        model = trainer.accelerator.unwrap_model(trainer.model)
        was_training = model.training
        model.eval()
        engine = self.engine(model)
        batcher = Batcher(engine, sampling=self.settings.sampling, constrain=self.constrain)
        ids = [episode_id(self.run_id, step, i, t.id) for i, t in enumerate(tasks)]
        seeds = [
            seed_of(f"{self.seed}|{step}|{i}|{t.id}") for i, t in enumerate(tasks)
        ]  # i: the row, so a group's rows differ
        labels = [
            {
                "train_run": self.run_id,
                "train_step": step,
                "task": t.id,
                "group_row": i,
                "persona": t.persona,
                **({"source_episode": t.source_episode, "start_turn": len(t.prefix)} if t.source_episode else {}),
            }
            for i, t in enumerate(tasks)
        ]
        # The weights stay fixed for the step's rollouts: each turn reads only what is new.
        scope = engine.fixed_weights() if hasattr(engine, "fixed_weights") else contextlib.nullcontext()
        try:
            with scope:
                rollouts = run_interruptibly(
                    play(
                        tasks,
                        batcher=batcher,
                        tokenizer=self.tokenizer,
                        pool=self.pool,
                        settings=self.settings,
                        seller_spec=self.seller_spec,
                        seller_family=self.seller_family,
                        episode_ids=ids,
                        labels=labels,
                        seeds=seeds,
                    )
                )
        finally:
            model.train(was_training)
        for r in rollouts:
            r.episode.labels["reward"] = round(r.reward, 6)
            if self.log is not None:
                self.log.append(r.episode)
        errors = [r.episode.error for r in rollouts if r.episode.error is not None]
        if len(errors) == len(rollouts):  # nothing to learn from: a broken setup, not bad luck
            raise TrainingFailed(
                f"every negotiation of step {step} ended in an error, e.g. {errors[0].type}: {errors[0].message}"
            )
        self.history.append(StepStats.of(step, rollouts, batcher, time.perf_counter() - t0))
        return rollout_output(rollouts)


def make_trainer(**kwargs):
    """A ``GRPOTrainer`` that computes log-probabilities only where the loss reads them.

    TRL's fused LM head scores every position of the sequence on devices without Triton
    (the CPU): prompt, buyer and environment tokens included, each against Gemma's 262k-token
    vocabulary. The loss reads only the seller's tokens (``env_mask`` 1), about a fifth of
    a negotiation's positions; scoring just those made a CPU step's optimisation 2.5x faster
    here (docs/training.md). The result is unchanged: the other positions are masked out of
    the loss either way.
    """
    import trl.trainer.utils as trl_utils
    from trl import GRPOTrainer

    if not getattr(trl_utils, "_negotiator_compact", False):
        on_triton = trl_utils._use_triton
        # Only the choice "score the valid positions only" reads this name in trl.trainer.utils;
        # the kernels keep their own reference and still pick their CPU code path.
        trl_utils._use_triton = lambda device: on_triton(device) or device.type == "cpu"
        trl_utils._negotiator_compact = True  # type: ignore[attr-defined]  # our marker on TRL's module

    class NegotiationGRPOTrainer(GRPOTrainer):
        def _compute_loss(self, model, inputs):
            return super()._compute_loss(_SellerTokensOnly(model, inputs.get("tool_mask")), inputs)

    return NegotiationGRPOTrainer(**kwargs)


class _SellerTokensOnly:
    """The model as the loss calls it: completion positions outside the env_mask get no label.

    A proxy for this one call, not a patch of the model's ``forward``: generation inspects
    ``forward`` and runs several times slower behind a wrapper.
    """

    def __init__(self, model, mask):
        self.model, self.mask = model, mask

    def __getattr__(self, name):
        return getattr(self.model, name)

    def __call__(self, *args, labels=None, **kwargs):
        mask = self.mask
        if labels is not None and mask is not None and mask.shape[0] == labels.shape[0]:
            labels = labels.clone()
            tail = labels[:, -mask.shape[1] :]
            tail[mask == 0] = -100
        return self.model(*args, labels=labels, **kwargs)


def rollout_output(rollouts: list[Rollout]) -> dict:
    """The dict TRL expects from a rollout function."""
    return {
        "prompt_ids": [r.trace.prompt_ids for r in rollouts],
        "completion_ids": [r.trace.completion_ids for r in rollouts],
        "env_mask": [r.trace.loss_mask for r in rollouts],  # what TRL's loss reads (train.policy)
        "logprobs": None,  # TRL computes the policy's log-probabilities itself
        "negotiation_reward": [r.reward for r in rollouts],
    }


def negotiation(prompts, completions, negotiation_reward, **kwargs) -> list[float]:
    """The reward function TRL calls (and logs as ``rewards/negotiation``): each row's episode reward."""
    return list(negotiation_reward)

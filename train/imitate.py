"""The imitation warm start: before GRPO, the decision seller learns to make the strategy's move.

The untrained 270M, shown the priced moves, holds on nearly every turn (it copies its first
answer; docs/decisions.md): its rollouts end without a deal, the rewards of a group are equal
and GRPO has nothing to compare. A GRPO step at the CPU rate then flips it to another single
move. The field's answer is to start RL from a policy that already plays a sensible strategy
(behaviour cloning before policy-gradient fine-tuning), and here the demonstrations are free:
the strategy's own recommendation on every turn. So ``--imitate N`` plays ``N`` training
negotiations with a :class:`~train.policy.Teacher` (the deployed seller agent whose answer is
the recommendation, recorded as the same token sequence a rollout records), fits the LoRA
adapter to those answers with cross-entropy (only the answer tokens, as GRPO's loss reads
them), and GRPO starts from there: it can only gain by deviating where deviating pays.
"""

from __future__ import annotations

import asyncio
import random
import time
from statistics import fmean

from .policy import Batcher, TokenTrace
from .pool import BuyerPool
from .rollout import RolloutSettings, play
from .tasks import pool_tasks


def demonstrations(
    n: int,
    *,
    pool: BuyerPool,
    settings: RolloutSettings,
    tokenizer,
    seed: int,
    family: str,
    lookahead: float | None = None,
    reader: bool = False,
) -> tuple[list[TokenTrace], dict]:
    """``n`` training negotiations played by the strategy's recommendation (or, with
    ``lookahead``, a margin, by the lookahead teacher's choices: ``train.lookahead``; with
    ``reader``, by the strategy reading every phrasing: ``train.reading``), as token traces
    (tasks drawn apart from the run's own: another seed of the same training pool), and what
    the teacher did: its mean seller score and deal rate, and the share of its moves that were
    not the strategy's own."""
    tasks = pool_tasks(pool, n, seed=seed + 7_919)
    ids = [f"imitate-{seed}-{t.id}" for t in tasks]
    labels = [{"imitation": True, "task": t.id} for t in tasks]
    rollouts = asyncio.run(
        play(
            tasks,
            batcher=Batcher(None),  # type: ignore[arg-type]  # the teacher never generates
            tokenizer=tokenizer,
            pool=pool,
            settings=settings,
            seller_spec="train/imitation",
            seller_family=family,
            episode_ids=ids,
            labels=labels,
            teacher=True,
            lookahead=lookahead,
            reader=reader,
        )
    )
    moves = [t.advice for r in rollouts for t in r.episode.turns if t.party == "seller" and t.advice is not None]
    record = {
        "negotiations": len(rollouts),
        "teacher_score": round(fmean(r.score for r in rollouts), 4),
        "teacher_deal_rate": round(fmean(r.episode.outcome.deal for r in rollouts), 4),
        "teacher_moves": len(moves),
        "teacher_own_moves": round(fmean(a.chosen != a.recommended for a in moves), 4) if moves else 0.0,
    }
    traces = [t for r in rollouts for t in (r.turns or [r.trace])]
    return [t for t in traces if sum(t.loss_mask)], record


MEASURED = 8


def answer_loss(model, trace: TokenTrace):
    """The summed cross-entropy of ``trace``'s answer tokens under ``model``, how many of them
    its argmax predicts, and how many there are. Only the positions that predict an answer
    token are scored: the LM head over Gemma's 262k vocabulary at every position of the
    negotiation was most of a demonstration's pass."""
    import torch

    device = next(model.parameters()).device
    ids = torch.tensor([trace.prompt_ids + trace.completion_ids], device=device)
    read = torch.tensor([0] * len(trace.prompt_ids) + trace.loss_mask, device=device, dtype=torch.bool)
    at = read[1:].nonzero().flatten()  # position p predicts token p + 1
    logits = model(input_ids=ids, logits_to_keep=at).logits[0].float()
    target = ids[0, at + 1]
    loss = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
    return loss, int((logits.argmax(-1) == target).sum()), len(at)


def imitate(model, traces: list[TokenTrace], *, lr: float, epochs: int = 2, seed: int = 0, say=print) -> dict:
    """Fit ``model``'s trainable (LoRA) weights to the traces' answers; returns what it measured:
    the answer tokens' mean cross-entropy and the share of them the model predicts (argmax),
    before and after, on the first ``MEASURED`` traces."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    t0 = time.perf_counter()

    def measure() -> tuple[float, float]:  # on the first few traces: a forward pass over all would cost minutes
        model.eval()
        total, right, n = 0.0, 0, 0
        with torch.no_grad():
            for t in traces[:MEASURED]:
                loss, r, k = answer_loss(model, t)
                total, right, n = total + float(loss), right + r, n + k
        model.train()
        return total / max(n, 1), right / max(n, 1)

    before = measure()
    order = list(range(len(traces)))
    rng = random.Random(seed)
    for epoch in range(epochs):
        rng.shuffle(order)
        for i in order:
            loss, _, k = answer_loss(model, traces[i])
            (loss / max(k, 1)).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        say(f"imitation epoch {epoch + 1}/{epochs} done")
    after = measure()
    return {
        "traces": len(traces),  # one per negotiation; the readings menu: one per seller turn
        "answer_tokens": sum(sum(t.loss_mask) for t in traces),
        "epochs": epochs,
        "lr": lr,
        "loss_before": round(before[0], 4),
        "loss_after": round(after[0], 4),
        "token_accuracy_before": round(before[1], 4),
        "token_accuracy_after": round(after[1], 4),
        "seconds": round(time.perf_counter() - t0, 1),
    }

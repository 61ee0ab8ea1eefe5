"""How fast a GRPO step generates, against raw batched ``model.generate``; where a step's time goes.

    python benchmarks/train_rollout.py                       # the embedded Gemma 3 270M, cpu profile
    python benchmarks/train_rollout.py --base local/tiny-random-gemma --dtype float32
    python benchmarks/train_rollout.py --strategy none        # the pure policy's rollouts (the recorded figures)

Three measurements, printed side by side:

1. **Rollout**: the negotiations of one training step (``--prompts`` x ``--group``), played
   exactly as ``negotiator train`` plays them (deployed seller agent, rule buyers from the
   pool, grammar-constrained decoding, one batched generate call per wave of turns, each turn
   reading only what is new in its chat: the step's prefix cache).
   Throughput = tokens the seller generated / wall time of the whole phase (buyers,
   parsing, guard, prompt rendering included).
2. **Raw generate**: the same model on the same batches (every wave's prompts, replayed)
   with plain ``model.generate`` (sampling, no grammar, no negotiation), each row generating
   as many tokens as the wave's longest answer. Throughput = rows x tokens / time.
3. **Training step**: one real GRPO step of ``negotiator train`` (``--steps``), its time split
   into generation (the rollout phase) and optimisation (log-probabilities, loss, backward,
   optimizer step).

The goal: rollout throughput at least 0.7 of raw.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
warnings.filterwarnings("ignore", category=FutureWarning)


class RecordingEngine:
    """An ``Engine`` (the local decoder) that remembers each wave's prompts and answer lengths."""

    def __init__(self, engine):
        self.engine, self.waves = engine, []
        self.stop_ids = engine.stop_ids

    def grammar(self, schema):
        return self.engine.grammar(schema)

    def generate(self, requests):
        results = self.engine.generate(requests)
        self.waves.append(
            [(list(r.prompt_ids), res.completion_tokens) for r, res in zip(requests, results, strict=False)]
        )
        return results


def rollout_phase(base, args):
    from negotiator.models.local.decoding import Decoder
    from train.policy import Batcher
    from train.pool import BuyerPool
    from train.rollout import RolloutSettings, play
    from train.run import served_sampling
    from train.tasks import pool_tasks

    pool = BuyerPool(scenario_seeds=tuple(range(100, 100 + args.prompts)), max_rounds=args.max_rounds)
    tasks = [t for t in pool_tasks(pool, args.prompts, seed=args.seed) for _ in range(args.group)]
    settings = RolloutSettings(max_tokens=args.max_tokens, strategy=args.strategy, **served_sampling(base.path))
    decoder = Decoder(base.model.eval(), base.tokenizer)
    engine = RecordingEngine(decoder)
    batcher = Batcher(engine, sampling=settings.sampling)
    t0 = time.perf_counter()
    with decoder.fixed_weights():  # as a GRPO step's rollouts run (train.grpo.NegotiationRollouts)
        rollouts = asyncio.run(
            play(
                tasks,
                batcher=batcher,
                tokenizer=base.tokenizer,
                pool=pool,
                settings=settings,
                seller_spec="bench",
                seller_family="gemma",
                episode_ids=[f"b{i}" for i in range(len(tasks))],
                labels=[{} for _ in tasks],
            )
        )
    seconds = time.perf_counter() - t0
    return rollouts, engine.waves, batcher.stats, seconds


def raw_generate(base, waves, pad_id):
    import torch

    from negotiator.models.local.decoding import left_pad

    tokens, seconds = 0, 0.0
    for wave in waves:
        new = max(1, max(n for _, n in wave))
        ids, mask = left_pad([p for p, _ in wave], pad_id)
        t0 = time.perf_counter()
        with torch.inference_mode():
            base.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=new,
                min_new_tokens=new,
                do_sample=True,
                temperature=1.0,
                top_k=0,
                pad_token_id=pad_id,
            )
        seconds += time.perf_counter() - t0
        tokens += len(wave) * new
    return tokens, seconds


def training_steps(args):
    from train.config import resolve
    from train.run import train

    with tempfile.TemporaryDirectory() as tmp:
        cfg = resolve(
            "cpu",
            out=Path(tmp) / "run",
            base=args.base,
            steps=args.steps,
            lr=1e-5,
            dtype=args.dtype,
            num_generations=args.group,
            prompts_per_step=args.prompts,
            max_tokens=args.max_tokens,
            max_rounds=args.max_rounds,
            scenario_seeds=list(range(100, 100 + args.steps * args.prompts)),
            save_steps=10**6,
            strategy=args.strategy,
        )
        train(cfg, progress=False)
        return [json.loads(x) for x in (cfg.out / "metrics.jsonl").read_text().splitlines()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="local/gemma-3-270m")
    p.add_argument(
        "--dtype", default="auto", help="auto: as `negotiator train --profile cpu` resolves it (train.config.cpu_dtype)"
    )
    p.add_argument("--prompts", type=int, default=2, help="GRPO groups per step (cpu profile: 2)")
    p.add_argument("--group", type=int, default=4, help="negotiations per group (cpu profile: 4)")
    p.add_argument("--max-tokens", type=int, default=128, help="cpu profile: 128")
    p.add_argument("--max-rounds", type=int, default=4)
    p.add_argument("--steps", type=int, default=1, help="training steps to time (0: skip)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--strategy",
        default=None,
        help="the seller of the rollouts and the step, as `negotiator train --strategy` takes it "
        "(default: train's, the assisted seller; none: the pure policy)",
    )
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args()
    from train.config import TRAIN_STRATEGY, cpu_dtype

    if args.strategy is None:
        args.strategy = TRAIN_STRATEGY
    if args.dtype == "auto":
        args.dtype = cpu_dtype()

    import torch

    from train.base_model import load_base

    torch.manual_seed(args.seed)
    base = load_base(args.base, dtype=args.dtype)
    rollouts, waves, stats, roll_s = rollout_phase(base, args)
    raw_tokens, raw_s = raw_generate(base, waves, base.tokenizer.pad_token_id)
    roll_tps, raw_tps = stats.tokens / roll_s, raw_tokens / raw_s
    out = {
        "base": args.base,
        "torch_threads": torch.get_num_threads(),
        "negotiations": len(rollouts),
        "waves": len(waves),
        "rows": stats.rows,
        "rollout_tokens": stats.tokens,
        "rollout_s": round(roll_s, 2),
        "rollout_tokens_per_s": round(roll_tps, 2),
        "rollout_generate_s": round(stats.seconds, 2),
        "raw_tokens": raw_tokens,
        "raw_s": round(raw_s, 2),
        "raw_tokens_per_s": round(raw_tps, 2),
        "ratio": round(roll_tps / raw_tps, 3),
    }
    print(f"{args.base} in {args.dtype}, seller strategy {args.strategy}")
    print(f"{'':28}{'rollout (GRPO step)':>22}{'raw model.generate':>22}")
    print(f"{'tokens':28}{stats.tokens:>22}{raw_tokens:>22}")
    print(f"{'seconds':28}{roll_s:>22.1f}{raw_s:>22.1f}")
    print(f"{'tokens/s':28}{roll_tps:>22.1f}{raw_tps:>22.1f}")
    print(
        f"rollout / raw = {out['ratio']:.2f} (goal >= 0.7); {len(rollouts)} negotiations, {len(waves)} generate calls "
        f"({stats.rows} rows); time inside generate {stats.seconds:.1f}s of {roll_s:.1f}s"
    )
    if args.steps:
        del base
        rows = training_steps(args)
        out["train_steps"] = [
            {k: r[k] for k in ("step", "rollout_s", "optimize_s", "step_s", "seller_tokens", "env_tokens")}
            for r in rows
        ]
        print(
            f"{'step':>6}{'generation s':>15}{'optimisation s':>16}{'total s':>10}{'seller tokens':>15}{'env tokens':>12}"
        )
        for r in rows:
            print(
                f"{r['step']:>6}{r['rollout_s']:>15.1f}{r['optimize_s']:>16.1f}{r['step_s']:>10.1f}{r['seller_tokens']:>15}{r['env_tokens']:>12}"
            )
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

"""The imitation warm start's pass: the LM head at every position against only where an answer is read.

    python benchmarks/imitation_pass.py                       # the embedded 270M, the cpu profile's dtype
    python benchmarks/imitation_pass.py --base local/tiny-random-gemma --reps 3

One demonstration-shaped sequence (``--tokens`` long, 15 answer tokens after every 60 of the
environment's, as a decision negotiation is), the training adapter (LoRA r 16 on the top 6
layers, attention and MLP: the decision runs' adapter), and one forward and backward pass of the answer tokens'
cross-entropy two ways, interleaved ``--reps`` times: ``full`` scores every position and masks
(what ``train.imitate`` did before), ``answers`` is ``train.imitate.answer_loss`` (only the
positions that predict an answer token). It prints each way's median seconds, that the two
losses agree, and the ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default="local/gemma-3-270m")
    ap.add_argument("--dtype", default="auto", help="auto: what the cpu profile trains in here")
    ap.add_argument("--tokens", type=int, default=900)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()

    import torch
    from peft import get_peft_model

    from train.base_model import load_base
    from train.config import cpu_dtype
    from train.imitate import answer_loss
    from train.policy import TokenTrace
    from train.run import lora_config

    dtype = cpu_dtype() if args.dtype == "auto" else args.dtype
    base = load_base(args.base, dtype=dtype)
    model = get_peft_model(base.model, lora_config(base.model, r=16, alpha=32, layers=6))  # --lora-layers 6
    model.train()
    ids = torch.randint(0, base.model.config.vocab_size, (args.tokens,), generator=torch.Generator().manual_seed(0))
    prompt = args.tokens // 5
    mask = ([0] * 60 + [1] * 15) * args.tokens
    trace = TokenTrace(
        prompt_ids=ids[:prompt].tolist(), completion_ids=ids[prompt:].tolist(), loss_mask=mask[: args.tokens - prompt]
    )

    def full():
        seq = ids[None]
        read = torch.tensor([False] * prompt + [bool(m) for m in trace.loss_mask])[1:]
        logits = model(input_ids=seq).logits[0, :-1].float()
        return torch.nn.functional.cross_entropy(logits[read], seq[0, 1:][read], reduction="sum")

    def answers():
        return answer_loss(model, trace)[0]

    times: dict[str, list[float]] = {"full": [], "answers": []}
    losses: dict[str, float] = {}
    for _ in range(args.reps + 1):  # the first round warms up
        for name, fn in (("full", full), ("answers", answers)):
            t0 = time.perf_counter()
            loss = fn()
            loss.backward()
            model.zero_grad(set_to_none=True)
            times[name].append(time.perf_counter() - t0)
            losses[name] = loss.item()
    med = {k: statistics.median(v[1:]) for k, v in times.items()}
    print(f"{args.base}, {dtype}, {args.tokens} tokens ({sum(trace.loss_mask)} answer tokens), {args.reps} reps")
    for name in times:
        print(f"{name:8s} median {med[name]:.2f} s a pass  (loss {losses[name]:.3f})")
    print(f"losses agree: {abs(losses['full'] - losses['answers']) <= 1e-3 * abs(losses['full'])}")
    print(f"full / answers: {med['full'] / med['answers']:.2f}x")


if __name__ == "__main__":
    main()

"""How sure a decision student was where it left the strategy's move, beside what that cost or gained.

    python benchmarks/deviation_margins.py --arm greedy96s --model runs/lookahead96s/merged
    python benchmarks/deviation_margins.py --place heldout --arm greedy96s --model runs/lookahead96s/merged

Reads the episodes ``benchmarks/decision_arms.py`` left in ``--out`` (``PLACE/ARM`` and
``PLACE/keywords``). For every seller turn where the arm's move was not the strategy's
recommendation it renders the prompt the model read (the decision view, checked against the
prompt tokens the episode logged), scores every open move's answer under the model (the log
probability of the whole answer, teacher-forced) and prints the margin: log p(chosen) - log
p(recommended). Beside it, the negotiation's paired difference from the keyword reader (the
arm's seller score minus ``rule/responsive``'s on the same negotiation). A gate that lets the
model leave the strategy only when it is sure pays only if the costly deviations are the
unsure ones: the rank correlation of margin and difference says whether they are.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

DECIDE = "responsive?menu=moves&words=strategy"


def ranks(xs: list[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    for k, i in enumerate(order):
        r[i] = float(k)
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="runs/decisions")
    ap.add_argument("--place", default="talk")
    ap.add_argument("--arm", required=True)
    ap.add_argument("--model", required=True, help="the arm's model folder (a run's merged/)")
    args = ap.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from negotiator.agent.seller import parse_strategy
    from negotiator.llm.assist import answer_json
    from negotiator.llm.prompt import render_messages
    from negotiator.party import PartyView, PublicMove
    from negotiator.runtime import read_episodes
    from train.lookahead import move_action

    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32).eval()
    strategy = parse_strategy(DECIDE)

    def episodes(arm: str) -> dict:
        files = sorted(Path(args.out, args.place, arm).glob("*/episodes.jsonl"))
        return {e.labels["negotiation"]: e for f in files for e in read_episodes(f)}

    arm, keywords = episodes(args.arm), episodes("keywords")
    rows = []
    for key, ep in arm.items():
        diff = ep.metrics.seller_score - keywords[key].metrics.seller_score
        for t in ep.turns:
            if t.party != "seller" or t.advice is None or t.advice.chosen == t.advice.recommended:
                continue
            moves = [PublicMove(party=m.party, action=m.action) for m in ep.turns[: t.index]]
            view = PartyView.of(ep.scenario, "seller", moves)
            advice = strategy.advise(view.situation())  # the turn's menu, as the seller priced it
            prompt = tok.apply_chat_template(
                render_messages(view, "", "json", strategy, advice), add_generation_prompt=True
            )
            prompt = list(prompt["input_ids"] if hasattr(prompt, "keys") else prompt)
            if t.usage is not None and t.usage.prompt_tokens != len(prompt):
                sys.exit(f"{key} turn {t.index}: the prompt rendered here is not the one the model read")
            logp = {}
            with torch.no_grad():
                for c in (t.advice.recommended, t.advice.chosen):
                    ids = tok(answer_json(move_action(advice, c), advice), add_special_tokens=False)["input_ids"]
                    # the answer's positions only: Gemma's 262k logits at every prompt position cost gigabytes
                    out = model(torch.tensor([prompt + ids]), logits_to_keep=len(ids) + 1).logits[0, :-1].float()
                    logp[c] = float(torch.log_softmax(out, -1).gather(1, torch.tensor(ids)[:, None]).sum())
            rows.append((logp[t.advice.chosen] - logp[t.advice.recommended], diff, ep.labels.get("persona"), t))
    rows.sort(key=lambda r: r[0])
    print(f"{args.place}/{args.arm}: {len(rows)} turns whose move was not the strategy's")
    print("margin | paired diff vs keywords | persona | turn | recommended -> chosen")
    for margin, diff, persona, t in rows:
        print(f"{margin:+.2f} | {diff:+.3f} | {persona} | {t.index} | {t.advice.recommended} -> {t.advice.chosen}")
    if len(rows) > 2:
        rm, rd = ranks([r[0] for r in rows]), ranks([r[1] for r in rows])
        rho = statistics.correlation(rm, rd)
        half = len(rows) // 2
        print(f"rank correlation of margin and difference: {rho:+.2f}")
        print(
            f"diff summed over the less sure half: {sum(r[1] for r in rows[:half]):+.3f}; "
            f"the surer half: {sum(r[1] for r in rows[half:]):+.3f}"
        )


if __name__ == "__main__":
    main()

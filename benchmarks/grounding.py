"""What the guard's grounding changed in a run's seller messages, family by family.

    python benchmarks/grounding.py RUN_FOLDER [--show 20]

Reads RUN_FOLDER/episodes.jsonl (any `negotiator eval` run) and prints, over the seller's
turns: how many different texts the buyers read, how many messages the grounding check changed, per family (claims_deal, commitment,
price, buyer_role, annotation, cut, invites_offers), a sample of what the model said next to
what the buyer read, the check run again over what the buyer read (0 expected), the
consistency check run again over it (values the terms do not hold: 0 expected, beside the
messages the guard corrected), and this
version's check over what the model wrote (so runs of two versions, or two prompts, compare
on one measure).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from negotiator.actions import Accept, MakeOffer
from negotiator.llm.consistency import Checker
from negotiator.llm.grounding import Grounding
from negotiator.party import PartyView, PublicMove
from negotiator.runtime.log import read_episodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--show", type=int, default=20, help="changed messages to print, before and after")
    args = ap.parse_args()
    episodes = read_episodes(args.run / "episodes.jsonl")
    messages = changed = left = written_ungrounded = corrected = contradicted = 0
    families: Counter[str] = Counter()
    written_families: Counter[str] = Counter()
    shown: list[tuple[str, str, str]] = []
    texts: set[str] = set()  # what the buyers read, told apart: how much the words vary
    for ep in episodes:
        moves: list[PublicMove] = []
        for t in ep.turns:
            if t.party == "seller" and t.action.message:
                messages += 1
                texts.add(t.action.message)
                kinds = t.guard.kinds if t.guard is not None else []
                corrected += "message_corrected" in kinds
                contradicted += bool(contradictions(ep, moves, t.action))
                if "message_ungrounded" in kinds:
                    assert t.guard is not None
                    changed += 1
                    why = t.guard.reasons.get("message_grounding", "")
                    families.update(why.split(", "))
                    if len(shown) < args.show:
                        shown.append((why, str(t.guard.original.get("message", "")), t.action.message))
                view = PartyView.of(ep.scenario.listing(), "seller", moves, negotiation_id=ep.episode_id)
                left += bool(Grounding(view).findings(t.action))
                # What the model wrote, read by this version's check: the same measure for runs of any version.
                written = t.guard.original.get("message", t.action.message) if t.guard is not None else t.action.message
                found = Grounding(view).findings(t.action.model_copy(update={"message": written}))
                written_ungrounded += bool(found)
                written_families.update({f.reason for f in found})
            moves.append(PublicMove(party=t.party, action=t.action))
    print(f"{len(episodes)} negotiations, {messages} seller messages, {len(texts)} different texts")
    print(f"changed by grounding: {changed} ({changed / max(messages, 1):.1%})")
    for family, n in families.most_common():
        print(f"  {family}: {n}")
    print(f"ungrounded after the guard, read again: {left}")
    print(f"corrected by the consistency check: {corrected}; contradicting the terms after the guard: {contradicted}")
    share = written_ungrounded / max(messages, 1)
    print(f"ungrounded as the model wrote them, by this version's check: {written_ungrounded} ({share:.1%})")
    for family, n in written_families.most_common():
        print(f"  {family}: {n}")
    for why, before, after in shown:
        print(f"\n[{why}]\n  model: {before}\n  buyer: {after}")


def contradictions(ep, moves: list[PublicMove], action) -> int:
    """Values the message states that its terms do not hold, read as the guard reads them."""
    terms = action.terms if isinstance(action, MakeOffer) else None
    theirs = next(
        (m.action.terms for m in reversed(moves) if isinstance(m.action, MakeOffer) and m.party != "seller"), None
    )
    if isinstance(action, Accept):
        terms, theirs = theirs, None
    if terms is None:
        return 0
    product = ep.scenario.product
    checker = Checker(ep.scenario.space, ep.scenario.currency, (product.name, product.description, *product.policies))
    return checker.correct(action.message, terms, theirs)[1]


if __name__ == "__main__":
    main()

"""How well a reading seller read the talking buyers, turn by turn, beside the keyword reader.

    python benchmarks/reading_accuracy.py runs/decisions/talk/readR96/0 [more run folders]

A reading seller (``menu=readings``) records on each turn what it read in the buyer's words
(``advice.chosen``: none, hurry or quote). This reads the episodes of ``negotiator eval`` runs
of such a seller and sets each reading beside what the talker had said by then
(``negotiator.buyers.talk.said_reading``: the reader teacher's label) and beside what the
keyword reader read in the same messages (a hurry, else a quote, else none). Per persona: the
turns, the share the model read right, the share the keyword reader read right, and the model's
readings counted. A turn whose answer fell back to the strategy records no reading and counts
as wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from negotiator.buyers.talk import said_hints, said_reading  # noqa: E402
from negotiator.party import PartyView, PublicMove  # noqa: E402
from negotiator.runtime.episode import Episode  # noqa: E402
from negotiator.strategy import Strategy  # noqa: E402

KEYWORDS = Strategy.named("responsive")


def tally(folders: list[Path]) -> dict[str, dict]:
    rows: dict[str, dict] = defaultdict(lambda: {"turns": 0, "model": 0, "keywords": 0, "read": Counter()})
    for folder in folders:
        for line in (folder / "episodes.jsonl").read_text().splitlines():
            ep = Episode.model_validate_json(line)
            persona = ep.labels.get("persona", "?")
            for t in ep.turns:
                if t.party != "seller" or t.advice is None or "none" not in t.advice.options:
                    continue
                moves = [PublicMove(party=m.party, action=m.action) for m in ep.turns[: t.index]]
                view = PartyView.of(ep.scenario, "seller", moves)
                if not view.situation().their_messages:
                    continue  # nothing said yet: every reader reads nothing
                truth = said_reading(said_hints(ep.scenario, persona, ep.seed, view), t.advice.options)
                row = rows[persona]
                row["turns"] += 1
                row["model"] += t.advice.chosen == truth
                row["keywords"] += said_reading(KEYWORDS.hints(view.situation()), t.advice.options) == truth
                row["read"][t.advice.chosen or "fallback"] += 1
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path, help="negotiator eval run folders of a reading seller")
    args = ap.parse_args(argv)
    missing = [str(f) for f in args.folders if not (f / "episodes.jsonl").exists()]
    if missing:
        sys.exit(f"error: no episodes.jsonl in {', '.join(missing)}: give negotiator eval run folders")
    rows = tally(args.folders)
    if not rows:
        sys.exit("error: no turn of a reading seller (menu=readings) in those runs")
    total = {"turns": 0, "model": 0, "keywords": 0, "read": Counter()}
    print(f"{'persona':<15} {'turns':>6} {'model right':>12} {'keywords right':>15}  model's readings")
    for persona in sorted(rows):
        r = rows[persona]
        for k in ("turns", "model", "keywords"):
            total[k] += r[k]
        total["read"] += r["read"]
        print(
            f"{persona:<15} {r['turns']:>6} {r['model'] / r['turns']:>12.3f} {r['keywords'] / r['turns']:>15.3f}  "
            + json.dumps(dict(sorted(r["read"].items())))
        )
    n = total["turns"]
    print(
        f"{'all':<15} {n:>6} {total['model'] / n:>12.3f} {total['keywords'] / n:>15.3f}  "
        + json.dumps(dict(sorted(total["read"].items())))
    )


if __name__ == "__main__":
    main()

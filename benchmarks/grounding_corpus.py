"""The grounding check against seller messages labelled by hand.

    python benchmarks/grounding_corpus.py export RUN [RUN ...] --out ITEMS.jsonl
    python benchmarks/grounding_corpus.py merge ITEMS.jsonl LABELS.jsonl [...] --prefix a- --to-label READ.jsonl
    python benchmarks/grounding_corpus.py relabel [CORPUS.jsonl]      # after a change to the guard
    python benchmarks/grounding_corpus.py score [CORPUS.jsonl]

``export`` writes every seller message of `negotiator eval` runs (or ``--sample N`` of them) as
an item to label, with what a reader needs to judge it (the listing, the move, the buyer's
standing offer) and without the guard's verdict: what the model wrote (stage ``model``) and,
where this version's guard changes it, what the buyer reads (stage ``buyer``); one item
(stage ``both``) where they are the same. Items are shuffled by a fixed seed so a labeller
does not see the pairs together.

``merge`` puts labels (lines of ``{"id", "grounded", "categories", "note"}``) on exported
items and appends them to the corpus, each with what this version's guard lets the buyer
read of it; the buyer's side of a changed message is written out to be labelled too.

``score`` runs the guard over the labelled corpus (default: benchmarks/data/grounding_corpus.jsonl,
the embedded model's own messages on the quick and catalogue suites, labelled, plus
hand-written hard cases) and prints:

* recall per category: of the model's messages labelled with a category, the share the guard
  changed (goal: at least 95%);
* grounded messages changed: of those labelled grounded, the share the guard changed (goal: at
  most 2%), with each one listed;
* what the buyer read, by the labels: per category, how many messages still carried it after
  the guard (goals: 0 deals claimed, 0 prices off the table, 0 cut, at most 1% invented
  commitments).

A label is ``{"grounded": bool, "categories": [...]}``, the categories being claims_deal,
other_terms, invites_offers, commitment, price, contradiction, buyer_role, annotation and cut
(benchmarks/data/LABELLING.md says what each means).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evals.suites import get_suite
from negotiator.actions import action_from_dict
from negotiator.domain.scenario import Listing
from negotiator.llm.grounding import own_sentence
from negotiator.llm.guard import Guard
from negotiator.llm.secrecy import sentences
from negotiator.party import PartyView, PublicMove
from negotiator.runtime.log import read_episodes

DATA = Path(__file__).with_name("data")
CORPUS = DATA / "grounding_corpus.jsonl"
# What the buyers read in a later run (the shipped prompt and this guard), labelled by hand:
# text the check was not developed on.
HELDOUT = DATA / "grounding_heldout.jsonl"
# Later runs at other seeds (grounding_seedN.jsonl, 300 seller turns each), labelled by two
# labellers blind to the check: the model's text and what the guard lets through (docs/guard.md).
CATEGORIES = (
    "claims_deal",
    "other_terms",
    "invites_offers",
    "commitment",
    "price",
    "contradiction",
    "buyer_role",
    "annotation",
    "cut",
)


def _listing(suite: str, scenario: str, persona: str) -> Listing:
    s = get_suite(suite)
    base = next(b for b in s.scenarios() if b.id == scenario)
    return s.negotiation(base, persona).listing()


def _context(listing: Listing, moves: list[PublicMove], action: dict) -> dict:
    """What a labeller reads beside the message: the product, its issues, the move, the buyer's standing offer."""
    standing = next((m.action for m in reversed(moves) if m.party == "buyer"), None)
    return {
        "product": f"{listing.product.name}: {listing.product.description}",
        "list_price": listing.product.list_price,
        "currency": listing.currency,
        "policies": list(listing.product.policies),
        "issues": {
            i.name: ([i.low, i.high, i.unit] if i.kind == "numeric" else list(i.options)) for i in listing.issues
        },
        "seller_move": {k: v for k, v in action.items() if k != "message"},
        "buyer_standing_terms": getattr(standing, "terms", None),
        "buyer_last_message": standing.message if standing is not None else None,
    }


def export(runs: list[Path], out: Path, sample: int | None = None) -> None:
    """Seller turns of ``runs`` to label: what the model wrote and what this version's guard lets
    the buyer read of it (``sample``: that many turns drawn by a fixed seed, else all)."""
    turns = []
    for run in runs:
        for ep in read_episodes(run / "episodes.jsonl"):
            labels = ep.labels
            listing = _listing(labels["suite"], labels["scenario"], labels.get("persona", "neutral"))
            moves: list[PublicMove] = []
            for t in ep.turns:
                if t.party == "seller" and t.action.message:
                    delivered = t.action.model_dump(mode="json")
                    original = (t.guard.original or {}) if t.guard is not None else {}
                    written = {**delivered, "message": original.get("message", t.action.message)}
                    turns.append(
                        {
                            "suite": labels["suite"],
                            "scenario": labels["scenario"],
                            "persona": labels.get("persona", "neutral"),
                            "episode": ep.episode_id,
                            "turn": t.index,
                            "moves": [m.model_dump(mode="json") for m in moves],
                            "context": _context(listing, moves, delivered),
                            "action": written,
                        }
                    )
                moves.append(PublicMove(party=t.party, action=t.action))
    rng = random.Random(0)
    if sample is not None and sample < len(turns):
        turns = rng.sample(turns, sample)
    items = []
    for turn in turns:
        read = guarded(turn)
        if read == turn["action"]["message"]:
            items.append({**turn, "stage": "both"})
        else:
            items.append({**turn, "stage": "model"})
            items.append({**turn, "stage": "buyer", "action": {**turn["action"], "message": read}})
    order = list(range(len(items)))
    rng.shuffle(order)  # a labeller does not see the pairs together
    ids = {k: f"m{n:04d}" for n, k in enumerate(order)}
    with out.open("w", encoding="utf-8") as f:
        for k in order:
            item = {"id": ids[k], **items[k]}
            if item["stage"] == "buyer":
                item["written_id"] = ids[k - 1]  # its written twin precedes it in ``items``
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(items)} items to label ({len(turns)} seller turns) -> {out}")


def guarded(item: dict) -> str:
    """The message of ``item`` as this version's guard lets the buyer read it."""
    listing = _listing(item["suite"], item["scenario"], item["persona"])
    moves = [PublicMove.model_validate(m) for m in item["moves"]]
    view = PartyView.of(listing, "seller", moves, negotiation_id=item.get("episode", "corpus"))
    new, _ = Guard(view).check(action_from_dict(item["action"]))
    return new.message


def _changed(item: dict) -> bool:
    return guarded(item) != item["action"]["message"]


def merge(items_path: Path, labels: list[Path], prefix: str, out: Path, to_label: Path) -> None:
    """Labelled messages as written, and what this version's guard lets the buyer read of them.

    The run's own "buyer" items (its guard's output) are dropped; where this version's guard
    changes a message, a "buyer" item with its output is written to ``to_label`` (unlabelled)
    and appended to ``out`` once labelled (``score`` refuses unlabelled items).
    """
    found: dict[str, dict] = {}
    for path in labels:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found[row["id"]] = {
                    "grounded": row["grounded"],
                    "categories": row["categories"],
                    "note": row.get("note", ""),
                }
    kept, pending = [], []
    items = load(items_path)
    # What the buyer reads, labelled in the same round (exports of this version carry it).
    read_labels = {
        i["written_id"]: (i["action"]["message"], found[i["id"]])
        for i in items
        if i["stage"] == "buyer" and "written_id" in i and i["id"] in found
    }
    for item in items:
        if item["stage"] == "buyer" or item["id"] not in found:
            continue
        source = item["id"]
        item = {**item, "id": f"{prefix}{item['id']}", "label": found[item["id"]]}
        read = guarded(item)
        if read == item["action"]["message"]:
            kept.append({**item, "stage": "both"})
        else:
            kept.append({**item, "stage": "model"})
            twin = {k: v for k, v in item.items() if k != "label"}
            twin = {**twin, "id": item["id"] + "b", "stage": "buyer", "action": {**item["action"], "message": read}}
            message, label = read_labels.get(source, (None, None))
            if message == read:
                kept.append({**twin, "label": label})
            else:
                pending.append(twin)
    with out.open("a", encoding="utf-8") as f:
        for item in kept:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    with to_label.open("w", encoding="utf-8") as f:
        for item in pending:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(kept)} labelled messages -> {out}; {len(pending)} as the buyer reads them, to label -> {to_label}")


def relabel(path: Path) -> None:
    """Rewrite the buyer's side of the corpus after a change to the guard.

    Each message as written is guarded again. Where what the buyer reads changed, the new
    text keeps a label only when it can be known without reading it again: the strategy's
    own sentence for the move is grounded, and so are sentences kept from a text labelled
    grounded. Anything else is written without a label; ``score`` refuses it until it is
    labelled by hand.
    """
    items = load(path)
    twins = {i["id"][:-1]: i for i in items if i["stage"] == "buyer"}
    read_now: dict[str, dict] = {}  # the new buyer's side of each message the guard changes
    pending = []
    for item in items:
        if item["stage"] not in ("model", "both"):
            continue
        read = guarded(item)
        if read == item["action"]["message"]:
            item["stage"] = "both"
            continue
        item["stage"] = "model"
        before = twins.get(item["id"], item)  # what the buyer read before, and its label
        new = {**{k: v for k, v in before.items() if k != "label"}, "id": item["id"] + "b", "stage": "buyer"}
        new["action"] = {**item["action"], "message": read}
        if read == before["action"]["message"]:
            new["label"] = before["label"]
        elif read == own_sentence(action_from_dict(item["action"])):
            new["label"] = {"grounded": True, "categories": [], "note": "relabelled: the strategy's own sentence"}
        elif before["label"]["grounded"] and set(sentences(read)) <= set(sentences(before["action"]["message"])):
            new["label"] = {
                "grounded": True,
                "categories": [],
                "note": "relabelled: sentences kept from a grounded text",
            }
        else:
            pending.append(new["id"])
        read_now[item["id"]] = new
    # Twins stay where they were (a small diff); new ones go to the end.
    out = [read_now.pop(i["id"][:-1], None) if i["stage"] == "buyer" else i for i in items]
    out = [i for i in out if i is not None] + list(read_now.values())
    with path.open("w", encoding="utf-8") as f:
        for item in out:
            f.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(out)} items -> {path}; {len(pending)} to label by hand: {', '.join(pending) or 'none'}")


@dataclass
class Measure:
    """The guard against the labels: per category, labelled and changed; grounded ones changed."""

    written: int = 0
    labelled: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)
    grounded: int = 0
    grounded_changed: list[dict] = field(default_factory=list)
    read: int = 0  # messages as the buyer read them
    after: Counter[str] = field(default_factory=Counter)  # categories they still carry, by the labels
    sources: Counter[str] = field(default_factory=Counter)

    def recall(self, category: str) -> float:
        return self.caught[category] / self.labelled[category]


def load(path: Path = CORPUS) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(items: list[dict]) -> Measure:
    out = Measure()
    for item in items:
        label = item["label"]
        if item["stage"] in ("model", "both", "hard"):  # as written: what the guard is measured on
            out.written += 1
            out.sources[item["suite"] if item["stage"] != "hard" else "hard cases"] += 1
            changed = _changed(item)
            if label["grounded"]:
                out.grounded += 1
                if changed:
                    out.grounded_changed.append(item)
            for c in label["categories"]:
                out.labelled[c] += 1
                out.caught[c] += changed
        if item["stage"] in ("buyer", "both", "read"):  # as read ("read": only as read, from a later run)
            out.read += 1
            out.after.update(label["categories"])
    return out


def score(path: Path) -> int:
    items = load(path)
    unlabelled = [i["id"] for i in items if "label" not in i]
    if unlabelled:
        print(
            f"error: {len(unlabelled)} items have no label (first: {unlabelled[0]}); label them first", file=sys.stderr
        )
        return 2
    m = measure(items)
    print(f"corpus: {m.written} messages as written ({', '.join(f'{k} {v}' for k, v in m.sources.items())})")
    print(f"{'category':<16}{'labelled':>9}{'changed':>9}{'recall':>8}")
    for c in CATEGORIES:
        if m.labelled[c]:
            print(f"{c:<16}{m.labelled[c]:>9}{m.caught[c]:>9}{m.recall(c):>8.1%}")
    share = len(m.grounded_changed) / max(m.grounded, 1)
    print(f"grounded messages changed: {len(m.grounded_changed)} of {m.grounded} ({share:.1%})")
    for item in m.grounded_changed:
        print(f"  {item['id']}: {item['action']['message']!r}")
    print(f"what the buyer read, by the labels: {m.read} messages")
    for c in CATEGORIES:
        print(f"  {c}: {m.after[c]} ({m.after[c] / max(m.read, 1):.1%})")
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="seller messages of eval runs, as items to label")
    ex.add_argument("runs", type=Path, nargs="+")
    ex.add_argument("--out", type=Path, required=True)
    ex.add_argument("--sample", type=int, help="that many seller turns, drawn by a fixed seed (default: all)")
    mg = sub.add_parser("merge", help="labels onto exported items, and what this guard lets the buyer read")
    mg.add_argument("items", type=Path)
    mg.add_argument("labels", type=Path, nargs="+")
    mg.add_argument("--prefix", required=True, help="keeps ids of different exports apart")
    mg.add_argument("--out", type=Path, default=CORPUS)
    mg.add_argument("--to-label", type=Path, required=True)
    rl = sub.add_parser("relabel", help="the buyer's side again, after a change to the guard")
    rl.add_argument("corpus", type=Path, nargs="?", default=CORPUS)
    sc = sub.add_parser("score", help="the guard against the labelled corpus")
    sc.add_argument(
        "corpus",
        type=Path,
        nargs="?",
        default=CORPUS,
        help=f"default {CORPUS}; or {HELDOUT}, or a labelled run {DATA}/grounding_seedN.jsonl",
    )
    args = ap.parse_args()
    if args.command == "export":
        export(args.runs, args.out, args.sample)
    elif args.command == "merge":
        merge(args.items, args.labels, args.prefix, args.out, args.to_label)
    elif args.command == "relabel":
        relabel(args.corpus)
    else:
        raise SystemExit(score(args.corpus))


if __name__ == "__main__":
    main()

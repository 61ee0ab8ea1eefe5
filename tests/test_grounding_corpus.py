"""The grounding check against the labelled corpus (benchmarks/data/grounding_corpus.jsonl).

The corpus is the embedded model's own seller messages on the quick and catalogue suites,
labelled by hand (benchmarks/data/LABELLING.md), plus hand-written hard cases: policies a
listing states, the move's numbers in other words, and failures in spellings the model has
not produced yet. The guard must change at least 95% of the messages of every category and
at most 2% of the grounded ones, and what the buyers read must carry no deal claimed on a
counter-offer, no price off the table and no cut sentence (issue 32).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location(
    "grounding_corpus", Path(__file__).resolve().parent.parent / "benchmarks" / "grounding_corpus.py"
)
assert spec is not None and spec.loader is not None
corpus = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = corpus  # its dataclass looks its module up there
spec.loader.exec_module(corpus)

ITEMS = corpus.load()
MEASURE = corpus.measure(ITEMS)


def test_every_item_is_labelled_with_known_categories():
    assert len(ITEMS) >= 30
    for item in ITEMS:
        label = item["label"]
        assert label["grounded"] == (not label["categories"]), item["id"]
        assert set(label["categories"]) <= set(corpus.CATEGORIES), item["id"]


@pytest.mark.parametrize("category", corpus.CATEGORIES)
def test_the_guard_changes_at_least_95_percent_of_each_category(category):
    if not MEASURE.labelled[category]:
        pytest.skip(f"no {category} message in the corpus")
    assert MEASURE.recall(category) >= 0.95, (category, MEASURE.caught[category], MEASURE.labelled[category])


def test_the_guard_leaves_grounded_messages_alone():
    assert MEASURE.grounded >= 19
    assert len(MEASURE.grounded_changed) <= 0.02 * MEASURE.grounded, [i["id"] for i in MEASURE.grounded_changed]


def test_what_buyers_read_claims_no_deal_names_no_stray_price_and_is_never_cut():
    for category in ("claims_deal", "price", "cut"):
        assert MEASURE.after[category] == 0, category
    assert MEASURE.after["commitment"] <= 0.01 * max(MEASURE.read, 1)


def test_what_the_buyer_reads_is_this_guards_output():
    # The labels on what buyers read describe this version's guard: a change to the guard that
    # changes what it lets through must be labelled again (benchmarks/grounding_corpus.py merge).
    written = {item["id"]: item for item in ITEMS if item["stage"] == "model"}
    for item in ITEMS:
        if item["stage"] == "buyer":
            assert corpus.guarded(written[item["id"][:-1]]) == item["action"]["message"], item["id"]


# What buyers read of each later labelled run, by its labels, as docs/guard.md records it with
# this guard: (claimed deals, prices off the table, cut sentences). A floor, not a goal: the
# goal is 0, and seeds 3, 5 and 6 carry phrasings no rule names yet (seed 6: read, not yet tuned on).
LEFT = {
    "seed2": (0, 0, 0),
    "seed3": (2, 0, 0),
    "seed4": (0, 0, 0),
    "seed5": (3, 2, 0),
    "seed6": (4, 1, 3),
    "seed7": (0, 0, 0),  # the default seller, greedy words (docs/guard.md, "Greedy words")
    "seed8": (0, 0, 0),  # the same, read through this guard before any of its text was seen
}


@pytest.mark.parametrize("name", LEFT)
def test_the_labelled_runs_as_this_guard_lets_buyers_read_them(name):
    # The later labelled runs: their buyer side must be this guard's output (relabel after a
    # change), and by their labels what buyers read stays within what was measured.
    items = corpus.load(corpus.CORPUS.with_name(f"grounding_{name}.jsonl"))
    written = {i["id"]: i for i in items if i["stage"] == "model"}
    for item in items:
        assert item["label"]["grounded"] == (not item["label"]["categories"]), item["id"]
        if item["stage"] == "buyer":
            assert corpus.guarded(written[item["id"][:-1]]) == item["action"]["message"], item["id"]
        elif item["stage"] == "both":
            assert corpus.guarded(item) == item["action"]["message"], item["id"]
    m = corpus.measure(items)
    assert m.read >= 200
    left = (m.after["claims_deal"], m.after["price"], m.after["cut"])
    assert all(n <= most for n, most in zip(left, LEFT[name], strict=True)), left
    assert m.after["commitment"] <= 0.01 * m.read

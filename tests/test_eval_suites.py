"""Evaluation suites: their shape, reproducibility, and the wall between training and evaluation seeds."""

from __future__ import annotations

import collections
import subprocess
import sys

import pytest

from evals.runner import plan
from evals.suites import EVAL_SEEDS, SUITES, TRAIN_SEEDS, catalogue_items, check_train_seeds, eval_seeds, get_suite
from negotiator.domain.generator import ShopItem
from negotiator.errors import UsageError

# A suite's content is pinned: if the generator or the personas change, these change, and the
# suite's version (or GENERATOR_VERSION / PERSONAS_VERSION) must be bumped so old and new
# episodes never mix under one id. Then record the new fingerprint here.
PINNED = {
    "quick@v1.g1.p1": "7291860d5f5fa07a",
    "heldout@v1.g1.p1": "5c8bd39d893c3c70",
    "adversarial@v1.g1.p1": "e8e9a5bfdff47c57",
    "quick@v2.g2.p1": "e2c97f8d0e7aa369",
    "heldout@v2.g2.p1": "db17596fc2f0841e",
    "talk@v1.g1.p1": "b34011386fee1a1f",
    "catalogue@v1.g2.p1": "f1f6fea088b29484",
}


def test_heldout_is_48_scenarios_x_12_personas_x_2_buyers():
    suite = get_suite("heldout")
    jobs = plan(suite, "rule/boulware")
    assert len(jobs) == 1152 == suite.size()
    assert len({j.labels["scenario"] for j in jobs}) == 48
    assert collections.Counter(j.scenario.template for j in jobs[::24]) == {
        t: 8 for t in set(j.scenario.template for j in jobs)
    }
    assert {j.persona for j in jobs} == set(suite.personas) and len(suite.personas) == 12
    assert {j.buyer for j in jobs} == {"rule/persona", "rule/tit_for_tat"}
    cells = collections.Counter((j.labels["scenario"], j.persona, j.buyer) for j in jobs)
    assert set(cells.values()) == {1}
    assert len({j.episode_id for j in jobs}) == 1152
    assert len({j.scenario.id for j in jobs}) == 48 * 12


def test_ids_are_deterministic_and_pair_arms_on_identical_negotiations():
    suite = get_suite("heldout")
    a, a2 = plan(suite, "rule/boulware", limit=50), plan(suite, "rule/boulware", limit=50)
    b = plan(suite, "scripted/boulware", limit=50)
    assert [j.episode_id for j in a] == [j.episode_id for j in a2]
    assert not {j.episode_id for j in a} & {j.episode_id for j in b}
    assert [j.labels["negotiation"] for j in a] == [j.labels["negotiation"] for j in b]
    assert [j.scenario for j in a] == [j.scenario for j in b]
    other_seed = plan(suite, "rule/boulware", limit=50, seed=1)
    assert not {j.labels["negotiation"] for j in a} & {j.labels["negotiation"] for j in other_seed}


@pytest.mark.parametrize("name", list(SUITES))
def test_suites_are_reproducible_in_a_fresh_process(name):
    code = f"from evals.suites import get_suite; s = get_suite({name!r}); print(s.key, s.fingerprint())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    suite = get_suite(name)
    assert out == [suite.key, suite.fingerprint()]
    assert PINNED.get(suite.key) == suite.fingerprint(), (
        f"suite {suite.key} changed content: bump its version (or the generator/persona version) "
        "and pin the new fingerprint"
    )


def test_train_seeds_never_meet_an_eval_suite():
    used = eval_seeds()
    assert used and all(s in EVAL_SEEDS for s in used)
    assert not set(range(TRAIN_SEEDS.start, TRAIN_SEEDS.stop)) & set(EVAL_SEEDS)
    assert TRAIN_SEEDS.stop <= EVAL_SEEDS.start
    check_train_seeds(range(0, 5000))  # fine
    some_eval = sorted(used)[:3]
    with pytest.raises(UsageError, match="not training seeds"):
        check_train_seeds([1, 2, *some_eval])
    with pytest.raises(UsageError, match="not training seeds"):
        check_train_seeds([TRAIN_SEEDS.stop])
    with pytest.raises(UsageError, match="not training seeds"):
        check_train_seeds([-1])


def test_shards_partition_the_suite():
    suite = get_suite("heldout")
    full = [j.episode_id for j in plan(suite, "rule/boulware")]
    shards = [[j.episode_id for j in plan(suite, "rule/boulware", shard=(i, 3))] for i in range(3)]
    assert sorted(sum(shards, [])) == sorted(full)
    assert all(len(s) == 384 for s in shards)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"shard": (3, 3)}, "0 <= i < n"),
        ({"limit": 0}, "at least 1"),
        ({"buyers": ["rule/persona?e=2"]}, "takes no parameters"),
        ({"buyers": ["rule/nope"]}, "unknown rule strategy"),
        ({"buyers": ["human"]}, "only available in `negotiator play`"),
    ],
)
def test_bad_plans_are_usage_errors(kwargs, message):
    with pytest.raises(UsageError, match=message):
        plan(get_suite("heldout"), "rule/boulware", **kwargs)


def test_unknown_suite():
    with pytest.raises(UsageError, match="choose one of quick, heldout"):
        get_suite("big")


def test_catalogue_lists_real_products_at_their_prices_with_the_floor_at_cost_plus_8_percent():
    suite = get_suite("catalogue")
    rows = catalogue_items()
    scenarios = suite.scenarios()
    assert len(rows) >= 30 and len({category for category, _ in rows}) == 6
    assert suite.size() == 3 * len(rows) and set(suite.buyers) == {"rule/conceder", "rule/boulware", "rule/threatener"}
    for (category, item), sc in zip(rows, scenarios, strict=True):
        price = sc.issues[0]
        assert sc.template == category and sc.product.name == item.name and sc.product.policies == item.policies
        assert price.high == item.retail == sc.product.list_price  # no offer above the price the shop shows
        floor = sc.seller_limits.minimum[price.name]
        assert item.cost * 1.08 <= floor < item.cost * 1.08 + price.step + 1e-9  # cost + 8%, on the grid, rounded up
        assert price.low <= floor
    magnitudes = [item.retail for _, item in rows]
    assert min(magnitudes) < 50 and max(magnitudes) > 10_000
    assert sum(bool(item.policies) for _, item in rows) >= 8  # listings that state policies the seller may cite


def test_a_shop_item_that_cannot_make_its_margin_is_refused():
    with pytest.raises(UsageError, match="not below retail"):
        ShopItem(name="kettle", description="", retail=30, cost=29)
    with pytest.raises(UsageError, match="finite positive"):
        ShopItem(name="kettle", description="", retail=float("nan"), cost=10)

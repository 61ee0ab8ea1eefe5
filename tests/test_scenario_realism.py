"""Scenario generator 2: the list price is what a shop shows, and no offer may ask more than it; the
suites and every recorded result stay on generator 1, and generator 2's suites sit beside them."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from evals.suites import SUITES, get_suite
from negotiator.domain.generator import GENERATOR_VERSION, GENERATOR_VERSIONS, generate, template_names
from negotiator.errors import UsageError
from negotiator.remote import open_request
from negotiator.service import ServiceSettings, create_app

SEEDS = range(40)


def _on_grid(x: float, issue) -> bool:
    k = (x - issue.low) / issue.step
    return abs(k - round(k)) < 1e-6


def test_generator_1_lets_the_price_run_above_the_list_price():
    """The issue's shop: $922.03 listed, offers allowed up to $1,014. Version 1 stays exactly so."""
    s = generate(0, "furniture", version=1)
    price = s.space.issue("price")
    assert (s.product.list_price, price.low, price.high) == (922.03, 507, 1014)
    assert generate(0, "furniture") == s and GENERATOR_VERSION == 1  # the default every recorded result used
    above = [(seed, t) for t in template_names() for seed in SEEDS if _above_list(generate(seed, t, version=1))]
    assert len(above) == len(SEEDS) * len(template_names())  # every one


def _above_list(s) -> bool:
    return s.issues[0].high > s.product.list_price


@pytest.mark.parametrize("template", template_names())
def test_generator_2_ends_the_price_range_at_the_list_price_on_the_prices_step(template):
    for seed in SEEDS:
        s = generate(seed, template, version=2)
        price = s.issues[0]
        assert price.high == s.product.list_price, (seed, template)
        assert _on_grid(s.product.list_price, price) and price.low < s.seller_limits.minimum[price.name] < price.high
        assert s.product.list_price == pytest.approx(round(s.product.list_price / price.step) * price.step)
        assert 0.5 < price.low / price.high < 0.6


def test_a_generator_2_scenario_is_its_generator_1_twin_but_for_the_price():
    for t in template_names():
        for seed in range(8):
            old, new = generate(seed, t, version=1), generate(seed, t, version=2)
            assert new.id == old.id and new.template == old.template and new.product.name == old.product.name
            assert (new.opener, new.max_rounds) == (old.opener, old.max_rounds)
            assert new.issues[1:] == old.issues[1:]
            for side in ("seller", "buyer"):
                a, b = getattr(old, side), getattr(new, side)
                assert a.weights == b.weights and a.reservation == b.reservation
                assert {k: v for k, v in a.values.items() if k != old.issues[0].name} == {
                    k: v for k, v in b.values.items() if k != new.issues[0].name
                }


def test_an_unknown_generator_version_is_a_usage_error():
    assert GENERATOR_VERSIONS == (1, 2)
    with pytest.raises(UsageError, match="unknown scenario generator version 3; choose one of 1, 2"):
        generate(0, version=3)


def test_the_v2_suites_are_the_v1_negotiations_on_generator_2_and_the_v1_suites_are_unchanged():
    for family in ("quick", "heldout"):
        old, new = get_suite(family), get_suite(f"{family}@v2")
        assert (old.name, old.version, old.generator, old.key) == (family, 1, 1, f"{family}@v1.g1.p1")
        assert (new.name, new.version, new.generator, new.key) == (f"{family}@v2", 2, 2, f"{family}@v2.g2.p1")
        assert (new.scenario_seeds, new.templates, new.personas, new.buyers, new.max_rounds) == (
            old.scenario_seeds,
            old.templates,
            old.personas,
            old.buyers,
            old.max_rounds,
        )
        assert new.size() == old.size()
        assert all(_above_list(s) for s in old.scenarios())
        assert all(s.issues[0].high == s.product.list_price for s in new.scenarios())
        assert get_suite(f"{family}@v1") is old
    assert list(SUITES)[:3] == ["quick", "heldout", "adversarial"]  # `--suite quick` is what it always was


def test_a_suite_asked_for_by_an_unknown_version_is_refused():
    with pytest.raises(UsageError, match="unknown suite 'heldout@v9'; choose one of quick, heldout, adversarial"):
        get_suite("heldout@v9")


def test_a_remote_seller_is_asked_for_the_generator_the_suite_was_built_on():
    for name in ("quick", "quick@v2"):
        suite = get_suite(name)
        for base, _, scenario in suite.negotiations()[:3]:
            assert open_request(scenario) == {
                "seed": base.seed,
                "template": base.template,
                "generator": suite.generator,
                "max_rounds": 5,
            }


def test_the_service_generates_a_listing_on_the_generator_asked_for(tmp_path):
    key = "realism-test-key-0123456789"
    auth = {"Authorization": f"Bearer {key}"}
    app = create_app(ServiceSettings(seller="scripted/boulware", store=str(tmp_path / "n.sqlite"), api_key=key))
    with TestClient(app, raise_server_exceptions=False) as client:
        listed = {}
        for version in (None, 1, 2):
            body = {"seed": 0, "template": "furniture"} | ({"generator": version} if version else {})
            r = client.post("/v1/negotiations", json=body, headers=auth)
            assert r.status_code == 201, r.text
            scenario = r.json()["scenario"]
            listed[version] = (scenario["product"]["list_price"], scenario["issues"][0]["high"])
        assert listed == {None: (922.03, 1014), 1: (922.03, 1014), 2: (922, 922)}
        r = client.post("/v1/negotiations", json={"seed": 0, "generator": 7}, headers=auth)
        assert r.status_code == 422 and "unknown scenario generator version 7" in r.json()["message"]
        r = client.post("/v1/negotiations", json={"listing_id": "furniture-0", "generator": 2}, headers=auth)
        assert r.status_code == 422 and "only go with 'seed'" in r.json()["message"]

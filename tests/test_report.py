"""Comparing arms: merging shards, paired differences, family warnings, the files a report writes."""

from __future__ import annotations

import json

import pytest

from evals.arms import family_warnings, load_arms, same_seller, training_pool
from evals.report import build_report, write_report
from evals.runner import RunOptions, plan, run_jobs, write_config
from evals.suites import get_suite
from negotiator.errors import UsageError

QUICK = get_suite("quick")


async def run_arm(out, seller, *, shard=None, buyers=None, seller_config=None):
    """What `negotiator eval --suite quick --out OUT` writes, run in-process."""
    buyers = buyers or list(QUICK.buyers)
    await run_jobs(plan(QUICK, seller, buyers, shard=shard), out, RunOptions(concurrency=4))
    write_config(
        out,
        {
            "suite": QUICK.key,
            "suite_name": "quick",
            "seller": seller_config or seller,
            "buyers": buyers,
            "seed": 0,
            "limit": None,
            "shard": None if shard is None else f"{shard[0]}/{shard[1]}",
        },
    )
    return out


async def test_shards_merge_into_one_arm_and_arms_are_compared_on_identical_negotiations(tmp_path):
    a0 = await run_arm(tmp_path / "boulware-0", "rule/boulware", shard=(0, 2))
    a1 = await run_arm(tmp_path / "boulware-1", "rule/boulware", shard=(1, 2))
    b = await run_arm(tmp_path / "conceder", "rule/conceder")
    arms = load_arms([a0, a1, b, a0])  # a folder named twice counts once
    assert [a.name for a in arms] == ["rule/boulware", "rule/conceder"]
    assert [len(a.episodes) for a in arms] == [24, 24] and len(arms[0].runs) == 2
    report = build_report(arms)
    (c,) = report["comparisons"]
    assert (c["a"], c["b"], c["n"]) == ("rule/boulware", "rule/conceder", 24)
    d = c["overall"]
    assert d["mean"] < 0 and d["high"] < 0 and d["verdict"] == "rule/boulware better" and d["p_value"] <= 0.05
    assert set(c["by_buyer"]) == set(QUICK.buyers) and sum(x["n"] for x in c["by_buyer"].values()) == 24
    s = report["arms"][0]["summary"]
    direct = [e.metrics.seller_score for e in arms[0].episodes]
    assert s["overall"]["seller_score"] == pytest.approx(sum(direct) / 24, abs=1e-6)
    lo, hi = s["overall"]["seller_score_ci"]
    assert lo < s["overall"]["seller_score"] < hi
    assert (
        set(s["by_buyer"]) == set(QUICK.buyers)
        and set(s["by_family"]) == {"rule"}
        and set(s["by_persona"]) == {"neutral"}
    )
    assert report["warnings"] == []


async def test_one_seller_twice_is_named_by_what_differs(tmp_path):
    """Default run folders are long (time, suite, seller, buyers): an arm is named by what sets it apart."""
    a = await run_arm(tmp_path / "a", "rule/boulware", buyers=["rule/conceder"])
    b = await run_arm(tmp_path / "b", "rule/boulware", buyers=["rule/linear", "rule/conceder"])
    c = await run_arm(tmp_path / "c", "rule/linear", buyers=["rule/conceder"])
    assert [x.name for x in load_arms([a, b, c])] == [
        "rule/boulware (vs rule/conceder)",
        "rule/boulware (vs rule/linear+rule/conceder)",
        "rule/linear",
    ]


async def test_identical_play_is_no_detectable_difference(tmp_path):
    a = await run_arm(tmp_path / "a", "rule/boulware?noise=0")
    b = await run_arm(tmp_path / "b", "rule/boulware?noise=0.0")  # two names, the same play
    (c,) = build_report(load_arms([a, b]))["comparisons"]
    assert c["n"] == 24 and c["overall"]["mean"] == 0 and c["overall"]["verdict"] == "no detectable difference"
    assert c["overall"]["p_value"] == 1.0


async def test_one_seller_written_two_ways_is_not_compared_with_itself_silently(tmp_path):
    """User audit: rule/boulware and rule/boulware?e=0.20 (its own default, written out) are one seller, but a
    rule seller's random draws follow its spec as written, so on the quick suite the report said "rule/boulware
    better" at p = 0.031, with no word that the two arms were one seller. Now it says so."""
    a = await run_arm(tmp_path / "a", "rule/boulware")
    b = await run_arm(tmp_path / "b", "rule/boulware?e=0.20")
    c = await run_arm(tmp_path / "c", "rule/boulware?e=0.3")  # another seller: no warning
    report = build_report(load_arms([a, b, c]))
    one = [w for w in report["warnings"] if "one seller" in w]
    assert one == [
        "rule/boulware?e=0.20 and rule/boulware are one seller written two ways: B - A compares it with itself, and a "
        "difference is chance alone (a rule seller's random draws follow its spec as written; a model's, its sampling)"
    ]
    assert [x["n"] for x in report["comparisons"]] == [24, 24, 24]  # still compared, as asked


def test_same_seller_reads_specs_by_what_they_play():
    assert same_seller("rule/boulware", "rule/boulware?e=0.2")  # its own default, written out
    assert same_seller("rule/boulware?e=0.2", "rule/boulware?e=0.20")
    assert same_seller("openai/gpt-4o-mini?temperature=0.7", "openai/gpt-4o-mini?temperature=0.70")
    assert not same_seller("rule/boulware", "rule/boulware?e=0.3") and not same_seller("rule/boulware", "rule/linear")
    assert not same_seller("rule/boulware", "rule/boulware?seed=3")
    assert not same_seller("openai/gpt-4o-mini?temperature=0.7", "openai/gpt-4o-mini")


async def test_two_runs_of_one_arm_merge_and_the_report_says_so(tmp_path):
    """User audit: `negotiator report runs/boulware runs/boulware-again` (the same command twice, two folders)
    printed one arm and no comparison, and no word of why: the second run's 24 negotiations were dropped as
    repeats. Now a warning names the repeat; shards (disjoint) and a folder named twice stay silent."""
    a = await run_arm(tmp_path / "once", "rule/boulware")
    b = await run_arm(tmp_path / "again", "rule/boulware")
    (arm,) = load_arms([a, b, a])
    assert len(arm.episodes) == 24 and arm.repeats == {(b, a): 24}
    report = build_report([arm])
    assert report["comparisons"] == []
    (w,) = report["warnings"]
    assert w.startswith(f"rule/boulware: {b} repeats 24 negotiations of {a}, a run of the same arm")
    s0 = await run_arm(tmp_path / "s0", "rule/boulware", shard=(0, 2))
    s1 = await run_arm(tmp_path / "s1", "rule/boulware", shard=(1, 2))
    assert build_report(load_arms([s0, s1]))["warnings"] == []


async def test_the_same_rule_seller_against_overlapping_buyers_is_flagged(tmp_path):
    """A rule seller run twice with a setting it ignores (--temperature) or with another buyer list: the arms
    share negotiations and play them identically; the difference, 0, is the seller against itself."""
    a = await run_arm(tmp_path / "a", "rule/boulware", buyers=["rule/conceder"])
    b = await run_arm(tmp_path / "b", "rule/boulware", buyers=["rule/linear", "rule/conceder"])
    report = build_report(load_arms([a, b]))
    (c,) = report["comparisons"]
    assert c["n"] == 6 and c["overall"]["mean"] == 0
    assert any("are one seller (rule/boulware): B - A compares it with itself" in w for w in report["warnings"])


async def test_arms_whose_shared_negotiations_all_failed_are_not_called_disjoint(tmp_path):
    """User audit: an arm whose every episode ended in a provider error, against a run of the same suite,
    buyers and seed, read "no negotiation in common: compare runs of the same suite, buyers and seed", which
    they were. Now the note says the shared negotiations ended in errors."""
    a = await run_arm(tmp_path / "a", "rule/boulware")
    b = await run_arm(tmp_path / "b", "rule/conceder")
    log = b / "episodes.jsonl"
    failed = []
    for line in log.read_text().splitlines():
        ep = json.loads(line)
        ep["outcome"] = {"deal": False, "terms": None, "ended_by": "error", "ended_by_party": None}
        ep["error"] = {"type": "APIConnectionError", "message": "down", "party": "seller", "transient": True}
        failed.append(json.dumps(ep))
    log.write_text("\n".join(failed) + "\n")
    report = build_report(load_arms([a, b]))
    (c,) = report["comparisons"]
    assert c["n"] == 0
    assert c["note"] == "all 24 negotiations both played ended in an error in one arm or both: nothing to compare"
    assert "rule/conceder: 24 episodes ended in an error and are left out of the scores" in report["warnings"]


async def test_every_verdict_follows_its_ci_and_its_p_value_on_real_runs(tmp_path):
    """Issue 30 on real quick runs: on main 8aea479, rule/hardliner - rule/linear printed "rule/linear better"
    with CI [-0.433, -0.088] at p = 0.0625 (and per buyer at p = 0.125), because the CI came from a cluster
    bootstrap and the p-value from a sign-flip test. Now one test gives both."""
    arms = load_arms([await run_arm(tmp_path / s, f"rule/{s}") for s in ("linear", "hardliner", "tit_for_tat")])
    report = build_report(arms)
    rows = [
        (c["a"], c["b"], buyer, d)
        for c in report["comparisons"]
        for buyer, d in [("all", c["overall"]), *c["by_buyer"].items()]
    ]
    assert len(rows) == 3 * 5
    for a, b, _, d in rows:
        assert d["detectable"] == (d["p_value"] <= 0.05) == (d["low"] > 0 or d["high"] < 0)
        assert d["verdict"] == (
            f"{b} better" if d["low"] > 0 else f"{a} better" if d["high"] < 0 else "no detectable difference"
        )
        assert d["low"] <= d["mean"] <= d["high"]
    (d,) = [d for a, b, buyer, d in rows if (a, b, buyer) == ("rule/linear", "rule/hardliner", "all")]
    assert (
        d["p_value"] == pytest.approx(4 / 64)
        and d["low"] < 0 < d["high"]
        and d["verdict"] == "no detectable difference"
    )


async def test_a_missing_shard_and_disjoint_arms_are_flagged(tmp_path):
    a = await run_arm(tmp_path / "a", "rule/boulware", shard=(0, 2))
    b = await run_arm(tmp_path / "b", "rule/conceder", shard=(1, 2))
    report = build_report(load_arms([a, b]))
    assert any("12 of 24 negotiations present" in w for w in report["warnings"])
    (c,) = report["comparisons"]
    assert c["n"] == 0 and "no negotiation in common" in c["note"]


def test_training_manifest_is_found_for_local_dir_and_merged(tmp_path):
    run = tmp_path / "train-run"
    (run / "merged").mkdir(parents=True)
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "base_model": "gemma",
                "buyer_pool": ["openai/gpt-4o-mini", "rule/boulware"],
                "buyer_pool_families": ["gpt", "rule"],
            }
        )
    )
    for spec in (f"local/{run}", f"local/{run}/merged"):
        pool = training_pool({"seller": spec})
        assert pool["buyer_pool_families"] == ["gpt", "rule"] and pool["manifest"] == str(run / "manifest.json")
    assert training_pool({"seller": "local/gemma-3-270m"}) is None
    # the shipped seller's manifest travels with it: its rule-based training pool is flagged
    shipped = training_pool({"seller": "local/gemma-3-270m-seller?strategy=none"})
    assert shipped["buyer_pool_families"] == ["rule"] and shipped["manifest"].endswith(
        "gemma-3-270m-seller/manifest.json"
    )
    assert training_pool({"seller": "rule/boulware"}) is None
    (run / "manifest.json").write_text("{not json")
    with pytest.raises(UsageError, match="not valid JSON"):
        training_pool({"seller": f"local/{run}"})


def test_family_warnings_name_the_shared_family_once():
    pool = {
        "buyer_pool": ["openai/gpt-4o-mini", "rule/boulware", "rule/boulware"],
        "buyer_pool_families": ["gpt", "rule"],
    }
    w = family_warnings(
        "local/x", ["openai/gpt-4.1", "anthropic/claude-sonnet-4", "rule/boulware", "rule/persona", "rule/linear"], pool
    )
    assert len(w) == 3  # the buyers it met, then one line per shared family
    assert "rule/boulware was in its training buyer pool" in w[0]
    assert "openai/gpt-4.1 shares model family 'gpt'" in w[1] and "inflated" in w[1]
    assert "rule/persona, rule/linear share model family 'rule'" in w[2]
    assert "(openai/gpt-4o-mini, rule/boulware)" in w[2]  # the pool listed once per buyer
    assert family_warnings("local/x", ["anthropic/claude-sonnet-4"], pool) == []
    assert family_warnings("rule/boulware", ["rule/boulware"], None) == []


async def test_a_trained_sellers_report_warns_about_a_buyer_from_its_training_family(tmp_path):
    run = tmp_path / "train-run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"buyer_pool": ["rule/conceder"], "buyer_pool_families": ["rule"]}))
    # A run whose seller came from training (the scripted model stands in for the trained weights).
    arm = await run_arm(
        tmp_path / "trained", "scripted/boulware", buyers=["rule/linear"], seller_config=f"local/{run}/merged"
    )
    report = build_report(load_arms([arm]))
    assert report["arms"][0]["training"]["buyer_pool"] == ["rule/conceder"]
    assert any("rule/linear shares model family 'rule'" in w for w in report["warnings"])


async def test_write_report_writes_summary_plots_and_a_self_contained_html(tmp_path):
    a = await run_arm(tmp_path / "a", "rule/boulware")
    b = await run_arm(tmp_path / "b", "rule/conceder")
    report = build_report(load_arms([a, b]))
    files = write_report(report, tmp_path / "report")
    assert json.loads(files["summary"].read_text())["comparisons"][0]["n"] == 24
    for name in ("score_distributions", "per_buyer", "per_persona", "paired_differences"):
        data = files[name].read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    html = files["html"].read_text()
    assert html.count("data:image/png;base64,") == 4
    assert "http://" not in html and "https://" not in html  # nothing to fetch: it opens offline
    assert "rule/boulware better" in html


def test_load_arms_refuses_a_folder_without_episodes(tmp_path):
    with pytest.raises(UsageError, match="no episodes.jsonl"):
        load_arms([tmp_path])
    with pytest.raises(UsageError, match="at least one run folder"):
        load_arms([])


async def test_a_p_value_below_a_thousandth_is_escaped_in_the_page(tmp_path):
    """report.html wrote '<0.001' into the page unescaped (an HTML validator flags it)."""
    from evals.html import render_html

    a = await run_arm(tmp_path / "boulware", "rule/boulware")
    b = await run_arm(tmp_path / "conceder", "rule/conceder")
    report = build_report(load_arms([a, b]))
    for c in report["comparisons"]:
        for d in [c["overall"], *c["by_buyer"].values()]:
            d["p_value"] = 0.0001  # what a full held-out comparison prints (quick's smallest exact p is 1/32)
    page = render_html(report, {})
    assert "&lt;0.001" in page and "<0.001" not in page

"""Running negotiations: episodes, the JSONL log, failures as data, rule tactics."""

from __future__ import annotations

import json

import pytest

from evals.runner import RunOptions, plan, run_jobs
from evals.suites import get_suite
from negotiator.actions import MakeOffer
from negotiator.buyers import STRATEGIES, RuleParty
from negotiator.errors import UsageError
from negotiator.party import PartyView
from negotiator.runtime import SCHEMA_VERSION, EpisodeLog, read_episodes
from negotiator.runtime.log import episode_ids
from negotiator.sim import generate, make_party, run_negotiation


async def test_episode_holds_everything_a_report_needs(scenario):
    ep = await run_negotiation(
        make_party("scripted/boulware", "seller"), make_party("rule/conceder", "buyer", seed=3), scenario, seed=3
    )
    d = json.loads(ep.model_dump_json())
    for key in (
        "schema_version",
        "episode_id",
        "scenario",
        "seller",
        "buyer",
        "turns",
        "outcome",
        "metrics",
        "error",
        "provenance",
    ):
        assert key in d
    assert d["schema_version"] == SCHEMA_VERSION
    assert d["scenario"]["id"] == scenario.id
    assert d["seller"]["spec"] == "scripted/boulware" and d["buyer"]["spec"] == "rule/conceder"
    t = d["turns"][1]
    assert set(t) >= {"party", "action", "raw_output", "invalid_attempts", "guard", "usage", "latency_s"}
    assert t["party"] == "seller" and t["raw_output"]
    assert d["outcome"]["ended_by"] in ("accept", "walk_away", "deadline")
    for key in (
        "seller_score",
        "seller_utility",
        "seller_reservation",
        "buyer_score",
        "pareto_distance",
        "nash_distance",
        "rounds",
    ):
        assert key in d["metrics"]
    assert d["provenance"]["package_version"] and d["provenance"]["seed"] == 3 and d["provenance"]["prompt_hash"]
    # The score on the episode is the domain's score of the agreed terms.
    from negotiator.domain import seller_score

    assert ep.metrics.seller_score == seller_score(scenario, ep.outcome.terms)


async def test_jsonl_round_trip_and_torn_last_line(tmp_path, scenario):
    log = EpisodeLog(tmp_path / "episodes.jsonl")
    eps = [
        await run_negotiation(make_party("rule/boulware", "seller"), make_party(f"rule/{b}", "buyer"), scenario)
        for b in ("linear", "conceder")
    ]
    for ep in eps:
        log.append(ep)
    back = read_episodes(log.path)
    assert [e.model_dump() for e in back] == [e.model_dump() for e in eps]
    # A writer killed mid-line leaves a torn tail: reading skips it, the next writer cuts it.
    with open(log.path, "a") as f:
        f.write(eps[0].model_dump_json()[:200])
    with pytest.warns(UserWarning, match="torn"):
        assert len(read_episodes(log.path)) == 2
    EpisodeLog(log.path).append(eps[1].model_copy(update={"episode_id": "x"}))
    assert [e.episode_id for e in read_episodes(log.path)] == [eps[0].episode_id, eps[1].episode_id, "x"]


def test_an_unknown_schema_version_is_refused(tmp_path, scenario):
    p = tmp_path / "e.jsonl"
    p.write_text(json.dumps({"schema_version": 99, "episode_id": "a"}) + "\n")
    with pytest.raises(UsageError, match="schema_version 99"):
        read_episodes(p)


async def test_a_provider_error_becomes_an_error_episode_and_the_batch_goes_on(tmp_path):
    suite = get_suite("quick")
    jobs = plan(suite, "scripted/error", ["rule/linear"], limit=3) + plan(
        suite, "scripted/boulware", ["rule/linear"], limit=3
    )
    episodes = await run_jobs(jobs, tmp_path, RunOptions(concurrency=4))
    assert len(episodes) == 6
    errors = [e for e in episodes if e.seller.spec == "scripted/error"]
    assert all(
        e.outcome.ended_by == "error" and e.error.type == "ProviderError" and e.error.party == "seller" for e in errors
    )
    assert "401" in errors[0].error.message
    ok = [e for e in episodes if e.seller.spec == "scripted/boulware"]
    assert all(e.error is None for e in ok)
    assert len(episode_ids(tmp_path / "episodes.jsonl")) == 6


async def test_a_crashing_party_becomes_an_error_episode(scenario):
    class Broken(RuleParty):
        async def act(self, view: PartyView):
            raise RuntimeError("bug in a custom buyer")

    ep = await run_negotiation(make_party("rule/boulware", "seller"), Broken("linear", "buyer"), scenario)
    assert ep.outcome.ended_by == "error" and ep.error.party == "buyer" and "bug in a custom buyer" in ep.error.message


async def test_a_party_breaking_the_protocol_is_recorded(scenario):
    class Cheater(RuleParty):
        def decide(self, view):
            return MakeOffer(terms={"price": 1})

    ep = await run_negotiation(make_party("rule/boulware", "seller"), Cheater("linear", "buyer"), scenario)
    assert ep.outcome.ended_by == "error" and ep.error.type == "InvalidOffer"


@pytest.mark.parametrize("strategy", STRATEGIES)
async def test_rule_buyers_are_deterministic_per_seed(strategy):
    s = generate(11)
    runs = [
        await run_negotiation(
            make_party("rule/linear", "seller"), make_party(f"rule/{strategy}", "buyer", seed=5), s, 5
        )
        for _ in range(2)
    ]
    a, b = (json.dumps([t.action.model_dump() for t in ep.turns]) for ep in runs)
    assert a == b
    # Offers are always complete and valid.
    for t in runs[0].turns:
        if isinstance(t.action, MakeOffer):
            assert s.space.problems(t.action.terms) == {}


async def test_tactics_behave_as_named():
    """Boulware holds firm longer than Conceder; a threatener walks away from a stalling hardliner."""
    s = generate(21)
    view0 = PartyView.of(s, "buyer", [])
    boul, conc = RuleParty("boulware", "buyer"), RuleParty("conceder", "buyer")
    mid = s.max_turns // 2
    moves = []
    for t in range(mid):
        role = s.opener if t % 2 == 0 else ("buyer" if s.opener == "seller" else "seller")
        if role == "seller":
            from negotiator.party import PublicMove

            moves.append(PublicMove(party="seller", action=MakeOffer(terms=s.seller.ideal(s.space))))
        else:
            from negotiator.party import PublicMove

            moves.append(PublicMove(party="buyer", action=MakeOffer(terms=s.buyer.ideal(s.space))))
    v = PartyView.of(s, "buyer", moves)
    ub = v.utility(boul.decide(v).terms)
    uc = v.utility(conc.decide(v).terms)
    assert ub > uc  # at mid-deadline the Boulware buyer still asks for more
    assert view0.utility(boul.decide(view0).terms) == pytest.approx(1.0, abs=0.02)

    walked = 0
    for seed in range(8):
        sc = generate(seed)
        ep = await run_negotiation(
            make_party("rule/hardliner", "seller"), make_party("rule/threatener", "buyer"), sc, seed
        )
        last_seller_offer = [
            t.action.terms for t in ep.turns if t.party == "seller" and isinstance(t.action, MakeOffer)
        ][-1]
        if ep.outcome.ended_by == "walk_away":
            walked += 1
            assert ep.outcome.ended_by_party == "buyer"
            # It walks only from offers worse than its reservation, and warns first.
            assert sc.buyer.utility(last_seller_offer) < sc.buyer.reservation
            buyer_msgs = [t.action.message.lower() for t in ep.turns if t.party == "buyer"]
            assert any("walk away" in m or "last chance" in m for m in buyer_msgs[:-1])
        elif sc.buyer.utility(last_seller_offer) >= sc.buyer.reservation + 0.05:
            assert ep.outcome.ended_by != "walk_away"
    assert walked >= 3


def test_bad_rule_specs_are_usage_errors():
    with pytest.raises(UsageError, match="unknown rule strategy 'bolware'"):
        make_party("rule/bolware", "buyer")
    with pytest.raises(UsageError, match="unknown parameters"):
        make_party("rule/boulware?speed=2", "buyer")
    with pytest.raises(UsageError, match="positive"):
        make_party("rule/boulware?e=0", "buyer")

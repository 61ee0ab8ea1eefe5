"""Seeded arms: every model call of a seeded party carries a seed derived from the party's
seed and the turn, the seller sends it to the backend, and with the embedded model the same
``negotiator eval`` command writes the same episodes at any concurrency."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from negotiator import SellerAgent
from negotiator.actions import MakeOffer
from negotiator.agent.seller import DEFAULT_SELLER
from negotiator.models.seeds import SEED_BITS, turn_seed
from negotiator.party import PartyView, PublicMove
from negotiator.runtime.log import played
from negotiator.sim import make_party
from negotiator.testing import FakeOpenAIServer


def test_a_turn_seed_depends_on_the_party_seed_and_the_turn_only(scenario):
    view = PartyView.of(
        scenario,
        "seller",
        (PublicMove(party="buyer", action=MakeOffer(terms=scenario.buyer.ideal(scenario.space), message="Hi")),),
    )
    seed = turn_seed(7, view)
    assert seed == turn_seed(7, PartyView.of(scenario, "seller", view.transcript))  # the same state, the same seed
    assert 0 <= seed < 2**SEED_BITS
    other_offer = MakeOffer(terms=scenario.seller.ideal(scenario.space), message="Hi")
    changed = [
        turn_seed(8, view),  # another negotiation
        turn_seed(7, view, attempt=1),  # a retry after feedback
        turn_seed(
            7, PartyView.of(scenario, "seller", (PublicMove(party="buyer", action=other_offer),))
        ),  # another history
        turn_seed(7, PartyView.of(scenario, "buyer", ())),  # the other side
    ]
    assert seed not in changed and len(set(changed)) == len(changed)
    assert turn_seed(None, view) is None  # an unseeded party sends no seed


async def test_the_seller_sends_each_call_its_turn_seed(seller_first):
    """Through LiteLLM to an OpenAI-compatible server (as to vLLM or the local server): the
    first answer of a turn and its retry after feedback carry different seeds (the default,
    assisted seller: its second answer picks the strategy's first option)."""
    answers = iter(["not json", json.dumps({"action": "make_offer", "choice": "A", "message": "My offer."})])
    with FakeOpenAIServer(lambda req: next(answers)) as fake:
        seller = make_party("hosted_vllm/fake", "seller", seed=42, base_url=fake.base_url)
        view = PartyView.of(seller_first, "seller", ())
        turn = await seller.act(view)
    assert len(turn.invalid_attempts) == 1
    assert [r["seed"] for r in fake.requests] == [turn_seed(42, view, 0), turn_seed(42, view, 1)]


async def test_an_agent_built_without_a_seed_sends_none(seller_first):
    with FakeOpenAIServer(lambda req: json.dumps({"action": "walk_away", "message": "Bye."})) as fake:
        await SellerAgent("hosted_vllm/fake", base_url=fake.base_url).respond(seller_first)
    assert "seed" not in fake.requests[0]


def test_the_same_eval_writes_the_same_episodes_at_concurrency_1_and_16(tiny_home, tmp_path):
    env = {**os.environ, "NEGOTIATOR_HOME": str(tiny_home)}
    runs = {}
    for c in (1, 16):
        out = tmp_path / f"c{c}"
        cmd = [
            sys.executable,
            "-m",
            "negotiator",
            "eval",
            "--seller",
            "local/tiny-random-gemma?max_tokens=48",
            "--limit",
            "16",
            "--concurrency",
            str(c),
            "--quiet",
            "--out",
            str(out),
        ]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, r.stderr[-2000:]
        runs[c] = played(out / "episodes.jsonl")
    assert len(runs[1]) == 16 and all(e["error"] is None for e in runs[1].values())
    seller_answers = [t["raw_output"] for e in runs[1].values() for t in e["turns"] if t["party"] == "seller"]
    assert len(set(seller_answers)) > len(seller_answers) // 2  # the model sampled (mostly different answers)
    assert runs[1] == runs[16]


async def test_the_default_seller_writes_greedily_the_same_words_whatever_the_seed(tiny_home, seller_first):
    """The default spec asks its model for greedy words (docs/guard.md, "Greedy words"): three
    seeds, the same answer; the same model sampling at its own temperature answers each seed
    differently."""
    view = PartyView.of(seller_first, "seller", ())
    assert DEFAULT_SELLER.endswith("?temperature=0")
    greedy_spec = "local/tiny-random-gemma?temperature=0"  # the default's setting on the tiny model
    greedy = [(await SellerAgent(greedy_spec, seed=s, max_tokens=48).act(view)).raw_output for s in (1, 2, 3)]
    sampled = [
        (await SellerAgent("local/tiny-random-gemma", seed=s, max_tokens=48).act(view)).raw_output for s in (1, 2, 3)
    ]
    assert greedy[0] and len(set(greedy)) == 1
    assert len(set(sampled)) == 3

"""The shipped seller, ``local/gemma-3-270m-seller``: a LoRA adapter in the package, its
manifest, and the real 270M it is served on (prepared once, then cached, as in
test_local_gemma.py)."""

from __future__ import annotations

import asyncio
import json

import pytest

from negotiator import SellerAgent
from negotiator.actions import MakeOffer
from negotiator.agent.seller import split_spec
from negotiator.errors import UsageError
from negotiator.llm.graph import RetryPolicy
from negotiator.models.local import resolve_target, stop_all
from negotiator.models.local.prepare import models_dir, prepare, sha256_file
from negotiator.models.local.shipped import SHIPPED
from negotiator.sim import generate

NAME = "gemma-3-270m-seller"
FOLDER = SHIPPED / NAME


def test_the_shipped_seller_carries_the_manifest_of_its_training_run():
    manifest = json.loads((FOLDER / "manifest.json").read_text())
    assert manifest["base_model"] == "local/gemma-3-270m" and manifest["strategy"] == "none"
    assert manifest["learning_rate"] == 6e-4 and manifest["steps"] == 13
    assert manifest["buyer_pool"] and all(b.startswith("rule/") for b in manifest["buyer_pool"])
    assert manifest["scenario_seeds"] == list(range(60)) and manifest["seed"] == 0
    assert len(manifest["git_commit"]) == 40
    # the adapter is the one that was evaluated (its checksum is recorded with the results)
    shipped = manifest["shipped"]
    assert sha256_file(FOLDER / "adapter_model.safetensors") == shipped["adapter_sha256"]
    assert {r["shard"] for r in shipped["heldout"]} >= {"0/11", "1/11"}
    assert json.loads((FOLDER / "adapter_config.json").read_text())["base_model_name_or_path"] == "gemma-3-270m"


def test_local_gemma_3_270m_seller_serves_the_adapter_on_the_prepared_base_playing_its_trained_strategy(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gemma-3-270m").mkdir()  # a folder named like the base in the cwd is not the base
    t = resolve_target(NAME)
    assert t.folder == FOLDER and t.base == models_dir() / "gemma-3-270m" and t.base_recipe == "gemma-3-270m"
    assert t.served_name == NAME and "pure" in t.note
    assert split_spec(f"local/{NAME}") == (f"local/{NAME}", {"strategy": "none"})
    assert split_spec(f"local/{NAME}?strategy=boulware")[1] == {"strategy": "boulware"}


def test_the_shipped_seller_loads_on_the_real_270m_and_plays_a_turn():
    import torch

    from negotiator.models.local.engine import load_model

    base_folder = prepare("gemma-3-270m")
    base, _, _ = load_model(base_folder, dtype="float32")
    tuned, tok, weights = load_model(FOLDER, dtype="float32", base=base_folder)
    assert weights == base_folder and tok.chat_template
    layers = json.loads((FOLDER / "adapter_config.json").read_text())["layers_to_transform"]
    changed = set()
    for (name, a), (name_b, b) in zip(base.state_dict().items(), tuned.state_dict().items(), strict=True):
        assert name == name_b  # merged: the plain model, no LoRA modules left
        if not torch.equal(a, b):
            changed.add(int(name.split(".layers.")[1].split(".")[0]))
    assert changed == set(layers)  # the top six layers were trained, nothing else moved
    del base, tuned

    scenario = generate(1)
    agent = SellerAgent(f"local/{NAME}", max_tokens=160, retry=RetryPolicy(timeout=1800), seed=0)
    try:
        turn = asyncio.run(agent.respond(scenario))
    finally:
        stop_all()
    assert turn.advice is None  # the pure policy: the model wrote its own terms
    assert isinstance(turn.action, MakeOffer) and not turn.fallback, turn.invalid_attempts
    assert scenario.space.validate_offer(turn.action.terms) == turn.action.terms
    assert scenario.seller.utility(turn.action.terms) >= scenario.seller.reservation


@pytest.mark.parametrize("bad", ["gemma-3-270m-sellr"])
def test_a_misspelt_shipped_name_lists_the_shipped_sellers(bad):
    from negotiator.errors import UsageError

    with pytest.raises(UsageError, match=NAME):
        resolve_target(bad)


def test_a_strategy_argument_wins_over_the_one_a_trained_model_trained_with():
    """A trained model plays the strategy it trained with unless told otherwise: the
    ``strategy`` argument replaces it, and a ``?strategy=`` in the spec wins over both."""
    assert SellerAgent(f"local/{NAME}").strategy is None  # it trained the pure policy
    assert SellerAgent(f"local/{NAME}", strategy="boulware").strategy.schedule.exponent == 0.2
    assert SellerAgent(f"local/{NAME}?strategy=linear", strategy="boulware").strategy.schedule.exponent == 1.0
    assert SellerAgent(f"local/{NAME}?strategy=linear", strategy=None).strategy.schedule.exponent == 1.0


# --- the embedded default: local/gemma-3-270m-reader ------------------------------------------

READER = "gemma-3-270m-reader"


def test_the_default_seller_is_the_shipped_reader_with_the_manifest_of_its_training_run():
    from negotiator.agent.seller import DEFAULT_SELLER

    assert DEFAULT_SELLER == f"local/{READER}?temperature=0"
    folder = SHIPPED / READER
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["base_model"] == "local/gemma-3-270m" and manifest["strategy"] == "responsive?menu=readings"
    assert manifest["steps"] == 0 and manifest["imitation"]["teacher"] == "reader"
    assert manifest["imitation"]["negotiations"] == 192 and manifest["imitation"]["traces"] > 1000
    assert manifest["buyer_pool"].count("rule/hurry") == 2  # the hurried buyer weighted twice
    assert manifest["scenario_seeds"] == list(range(192)) and len(manifest["git_commit"]) == 40
    shipped = manifest["shipped"]
    assert sha256_file(folder / "adapter_model.safetensors") == shipped["adapter_sha256"]
    assert {r["suite"] for r in shipped["results"]} >= {"talk", "heldout 0/11+1/11"}
    fresh = next(r for r in shipped["results"] if r["seed"] == "1+2")  # the confirmatory test it shipped on
    assert fresh["n"] == 960 and fresh["keyword_reader"]["ci95"][0] > 0
    assert json.loads((folder / "adapter_config.json").read_text())["base_model_name_or_path"] == "gemma-3-270m"
    t = resolve_target(READER)
    assert t.folder == folder and t.base_recipe == "gemma-3-270m" and "default" in t.note
    assert split_spec(DEFAULT_SELLER)[1] == {"strategy": "responsive", "menu": "readings"}


def test_the_default_seller_reads_a_hurry_the_keyword_patterns_miss_and_nothing_in_silence():
    """The shipped reader on the real 270M, greedy: a hurry in Dutch, Polish and in plain words
    that name no deadline (none of which the keyword reader reads) is read as a hurry; a buyer
    that says nothing, or states a priority, is read as nothing more."""
    from negotiator.party import PartyView, PublicMove
    from negotiator.strategy import Strategy

    prepare("gemma-3-270m")
    sc = generate(5)

    def said(text: str) -> list[PublicMove]:
        opening = [PublicMove(party="seller", action=MakeOffer(terms=sc.seller.ideal(sc.space)))]
        buyer = PublicMove(party="buyer", action=MakeOffer(terms=sc.buyer.ideal(sc.space), message=text))
        return [*opening, buyer] if sc.opener == "seller" else [buyer]

    hurried = (
        "Ik moet vandaag nog beslissen. How about this?",
        "Muszę dziś zdecydować. How about this?",
        "The event is on Saturday and I still have to order everything. How about this?",
    )
    silent = ("How about this?", "What matters most to me is the warranty. How about this?")
    keywords = Strategy.named("responsive")
    agent = SellerAgent(retry=RetryPolicy(timeout=1800), seed=0)  # the default seller

    async def read_all() -> dict:
        return {text: await agent.respond(sc, said(text)) for text in (*hurried, *silent)}

    try:
        read = asyncio.run(read_all())  # one event loop for the five turns
    finally:
        stop_all()
    for text, turn in read.items():
        assert not turn.fallback and turn.advice is not None and turn.advice.options == ["none", "hurry"]
        assert not keywords.hints(PartyView.of(sc, "seller", said(text)).situation()).hurry
    assert [read[t].advice.chosen for t in hurried] == ["hurry"] * 3
    assert [read[t].advice.chosen for t in silent] == ["none"] * 2


def test_a_strategy_argument_wins_over_the_one_the_default_trained_with():
    """The default plays the strategy it trained with (the readings menu) unless told otherwise."""
    assert SellerAgent().strategy.menu == "readings"
    told = SellerAgent(strategy="boulware").strategy
    assert told.menu == "offers" and told.schedule.exponent == 0.2  # boulware, not the readings menu


def test_a_strategy_argument_takes_the_form_train_and_the_manifests_write():
    """``strategy="responsive?menu=readings"`` is the default's own strategy, as its manifest names it;
    a spec's settings still win over the argument's."""
    assert SellerAgent(strategy="responsive?menu=readings").strategy.menu == "readings"
    assert SellerAgent(strategy="boulware?candidates=3").strategy.candidates == 3
    spec = SellerAgent("scripted/boulware?candidates=2", strategy="boulware?candidates=3")
    assert spec.strategy.candidates == 2


def test_a_strategy_argument_is_in_the_name_the_episodes_record():
    """Two sellers that play differently never share a name: before, SellerAgent(strategy="boulware")
    recorded the default's spec, so its episodes paired and pooled with the default's."""
    from negotiator.strategy import Strategy

    default = "local/gemma-3-270m-reader?temperature=0"
    assert SellerAgent().spec == default
    assert SellerAgent(strategy="boulware").spec == f"{default}&strategy=boulware"
    assert SellerAgent(strategy="responsive?menu=readings").spec == f"{default}&strategy=responsive&menu=readings"
    assert SellerAgent(strategy=None).spec == f"{default}&strategy=none"
    told = SellerAgent(strategy=Strategy.named("responsive", {"menu": "moves", "words": "strategy"}))
    assert told.spec == f"{default}&strategy=responsive&menu=moves&words=strategy"
    assert (
        SellerAgent("scripted/boulware?strategy=linear", strategy="boulware").spec
        == "scripted/boulware?strategy=linear"
    )
    assert SellerAgent(strategy="boulware", spec="my-seller").spec == "my-seller"  # a name given wins
    # sampling arguments too: a seller sampled at 0.7 is not the greedy default under another name
    assert SellerAgent(temperature=0).spec == default  # the spec's own, given again
    assert SellerAgent("scripted/boulware", max_tokens=64).spec == "scripted/boulware?max_tokens=64"


def test_a_strategy_object_is_named_by_every_setting_it_was_given():
    """Two Strategy objects that differ only in leeway (or aspiration, window ...) were recorded as
    one name (name, menu, words), so their episodes paired and pooled as one arm."""
    from negotiator.strategy import Strategy, TimeDependent
    from negotiator.strategy.schedule import TitForTat

    base = "scripted/boulware?strategy=boulware&menu=offers&words=model"
    assert SellerAgent("scripted/boulware", strategy=Strategy()).spec == base  # names recorded before stay
    tuned = Strategy(schedule=TimeDependent(0.3, aspiration=0.9), leeway=0.03, window=0.1)
    named = SellerAgent("scripted/boulware", strategy=tuned).spec
    assert named == f"{base}&exponent=0.3&aspiration=0.9&window=0.1&leeway=0.03"
    assert SellerAgent(named).strategy == tuned  # the name plays the same seller
    for strategy in (
        Strategy.named("responsive", {"lead": "0.5", "combi": "0.9", "menu": "moves", "words": "strategy"}),
        Strategy.named("micro", {"step": "0.05"}),
        Strategy.named("hardliner", {"level": "0.8", "opponent": "off"}),
        Strategy.named("holdout"),
    ):
        assert SellerAgent(SellerAgent("scripted/boulware", strategy=strategy).spec).strategy == strategy
    # one built in code beyond what a spec says: a fingerprint, stable, and a clear refusal to replay
    custom = SellerAgent("scripted/boulware", strategy=Strategy(schedule=TitForTat(min_step=0.05))).spec
    assert custom.startswith("scripted/boulware?strategy=tit_for_tat&menu=offers&words=model&custom=")
    assert custom == SellerAgent("scripted/boulware", strategy=Strategy(schedule=TitForTat(min_step=0.05))).spec
    assert custom != SellerAgent("scripted/boulware", strategy=Strategy(schedule=TitForTat(min_step=0.06))).spec
    with pytest.raises(UsageError, match="pass the object itself"):
        SellerAgent(custom)

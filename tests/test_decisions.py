"""The decision menu (issue 29): an assisted seller's model chooses among priced moves.

``menu=moves`` puts the responsive strategy's moves in the model's answer (hold, step,
big_step, final, accept, walk_away), each priced; following the recommendation plays the rule
(tests/test_assisted.py), and other choices change the deal. ``words=strategy`` makes the
model decide only: the message is the strategy's sentence for the move."""

from __future__ import annotations

import jsonschema
import pytest

from negotiator.errors import UsageError
from negotiator.llm.assist import answer_schema, move_sentence
from negotiator.llm.prompt import render_messages
from negotiator.party import PartyView, PublicMove
from negotiator.sim import generate, make_party, run_negotiation
from negotiator.strategy import Strategy

MOVES = Strategy.named("responsive", {"menu": "moves"})


async def _played(seller: str, buyer: str, seed: int):
    return await run_negotiation(make_party(seller, "seller"), make_party(buyer, "buyer"), generate(seed), seed)


async def test_the_moves_are_priced_from_holding_to_the_final_offer():
    ep = await _played("scripted/boulware?menu=moves", "rule/tit_for_tat", 3)
    view = PartyView.of(ep.scenario, "seller", [PublicMove(party=t.party, action=t.action) for t in ep.turns][:4])
    advice = MOVES.advise(view.situation())
    worth = {c.id: c.worth for c in advice.candidates}
    assert list(worth)[0] == "hold" and set(worth) <= {"hold", "step", "big_step", "final"}
    assert list(worth.values()) == sorted(worth.values(), reverse=True)  # each move gives up more
    assert worth[next(iter(worth))] > min(worth.values()) + 0.05  # the choice is worth something
    sit = view.situation()
    assert advice.can_walk_away
    assert advice.can_accept == sit.limits.allows(sit.standing, sit.preferences)  # any offer within the limits
    assert advice.recommended in (*worth, "accept")
    enum = answer_schema(advice, ep.scenario.space)["anyOf"][0]["properties"]["choice"]["enum"]
    assert enum == list(worth)


@pytest.mark.parametrize("seed", range(3))
async def test_a_model_that_always_holds_or_always_concedes_gets_a_different_deal(seed):
    """The model's choice changes the deal: always holding and always making the final offer
    end elsewhere than the recommendation, never below the floor."""
    scores = {}
    for kind in ("hold", "final"):
        ep = await _played(f"scripted/move?move={kind}&menu=moves", "rule/tit_for_tat", seed)
        chosen = [t.advice.chosen for t in ep.turns if t.advice]
        if kind == "hold":  # always open (the first move of the menu), so always taken
            assert chosen and set(chosen) == {"hold"}
        scores[kind] = ep.metrics.seller_score
        if ep.outcome.deal:
            assert ep.metrics.seller_utility >= ep.metrics.seller_reservation - 1e-9
    rule = (await _played("rule/responsive", "rule/tit_for_tat", seed)).metrics.seller_score
    assert len({round(scores["hold"], 6), round(scores["final"], 6), round(rule, 6)}) >= 2


async def test_a_walk_away_decision_ends_the_negotiation_without_a_deal():
    ep = await _played("scripted/move?move=walk_away&menu=moves", "rule/tit_for_tat", 1)
    assert not ep.outcome.deal
    last = [t for t in ep.turns if t.party == "seller"][-1]
    assert last.action.action == "walk_away" and last.advice.chosen == "walk_away"


async def test_words_by_the_strategy_leave_the_model_the_decision_only():
    """``words=strategy``: the answer has no message; every seller message is the move's own
    sentence, which the guard never needs to change."""
    ep = await _played("scripted/boulware?menu=moves&words=strategy", "rule/threat", 4)
    seller = [t for t in ep.turns if t.party == "seller"]
    assert seller and all(t.guard is None for t in seller)
    for t in seller:
        if t.action.action == "make_offer":
            assert "Here is what I can do" not in t.action.message  # the model's words were not used
            assert any(str(v) in t.action.message for v in t.action.terms.values() if isinstance(v, str))
    view = PartyView.of(ep.scenario, "seller", [PublicMove(party=t.party, action=t.action) for t in ep.turns][:2])
    s = Strategy.named("responsive", {"menu": "moves", "words": "strategy"})
    advice = s.advise(view.situation())
    schema = answer_schema(advice, ep.scenario.space)
    jsonschema.validate({"action": "make_offer", "choice": advice.candidates[0].id}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": "make_offer", "choice": "step", "message": "free shipping"}, schema)
    text = render_messages(view, strategy=s)[0]["content"]
    assert '"choice": "step"}' in text and '"message"' not in text


def test_the_strategys_sentence_names_the_move_and_its_terms():
    sc = generate(2)
    view = PartyView.of(sc, "seller", [])
    advice = MOVES.advise(view.situation())
    from negotiator.actions import MakeOffer

    final = advice.candidate("final") if "final" in advice.choices else advice.candidates[-1]
    text = move_sentence(MakeOffer(terms=dict(final.terms), message=""), advice, sc.space)
    assert text.startswith("My final offer:" if final.id == "final" else "")
    for issue in sc.space.issues:
        assert issue.name.replace("_", " ") in text


@pytest.mark.parametrize("cid", ["step", "big_step", "hold"])
def test_the_strategys_sentence_does_not_say_it_moves_where_it_does_not(cid):
    """A move worth no less to the seller than its last offer is no "move to" or "come a long way",
    and a hold that changes the terms' worth is no "stay at" (built here: not seen in play)."""
    from negotiator.actions import MakeOffer
    from negotiator.llm.assist import parse_answer

    words = Strategy.named("responsive", {"menu": "moves", "words": "strategy"})

    def after(sc, own):  # the seller's view once it offered ``own`` and the buyer countered at its ideal
        mine = [PublicMove(party="seller", action=MakeOffer(terms=own, message="x"))]
        theirs = [PublicMove(party="buyer", action=MakeOffer(terms=sc.buyer.ideal(sc.space), message="y"))]
        return PartyView.of(sc, "seller", mine + theirs if sc.opener == "seller" else theirs + mine + theirs)

    for seed in range(40):  # a listing where the strategy has this move
        sc = generate(seed)
        advice = words.advise(after(sc, sc.seller.ideal(sc.space)).situation())
        if cid in advice.choices:
            break
    view = after(sc, sc.buyer.ideal(sc.space))  # its last offer was the buyer's ideal: any move takes ground back
    terms = dict(advice.candidate(cid).terms)
    said = {"step": "I can move to ", "big_step": "I can come a long way: ", "hold": "I'll stay at "}[cid]
    toward = -0.05 if cid != "hold" else 0.0
    assert move_sentence(MakeOffer(terms=terms), advice, sc.space, since_last=toward).startswith(said)
    assert move_sentence(MakeOffer(terms=terms), advice, sc.space, since_last=0.05).startswith("Here is my offer: ")
    # ... and parse_answer works it out from the seller's last offer: here the buyer's ideal, worth less
    back = parse_answer({"action": "make_offer", "choice": cid}, advice, view)
    assert back.message.startswith("Here is my offer: "), back.message


async def test_the_strategys_first_sentence_offers_and_does_not_stay_at_an_offer_never_made():
    """Before, a seller whose first move was to hold said "I'll stay at ..." to a buyer it had offered
    nothing (every shopper of the default saw it)."""
    for seed in range(4):
        sc = generate(seed)
        seller = make_party("scripted/boulware?menu=moves&words=strategy", "seller")
        ep = await run_negotiation(seller, make_party("rule/linear", "buyer"), sc, seed=1)
        said = [t.action.message for t in ep.turns if t.party == "seller" and t.action.action == "make_offer"]
        assert said[0].startswith(("I can offer ", "My final offer: ")), said[0]
        assert all(not m.startswith("I can offer ") for m in said[1:])  # later moves name what they do


def test_bad_menu_or_words_settings_are_refused_with_the_choices():
    assert make_party("scripted/boulware?menu=moves", "seller").strategy.menu == "moves"
    with pytest.raises(UsageError, match="menu.*offers, moves"):
        make_party("scripted/boulware?menu=all", "seller")
    with pytest.raises(UsageError, match="words.*model, strategy"):
        make_party("scripted/boulware?words=buyer", "seller")


async def test_the_decision_view_is_compact_and_puts_the_recommended_move_first():
    """``menu=moves&words=strategy`` renders the decision view: no issue list and no terms (the
    model decides only), each move by its worth on one line, the strategy's move first."""
    ep = await _played("scripted/boulware?menu=moves&words=strategy", "rule/threat", 9)
    moves = [PublicMove(party=t.party, action=t.action) for t in ep.turns]
    view = PartyView.of(ep.scenario, "seller", moves[:6])
    s = Strategy.named("responsive", {"menu": "moves", "words": "strategy"})
    chat = render_messages(view, strategy=s)
    full = render_messages(view, strategy=Strategy.named("responsive", {"menu": "moves"}))
    compact_chars, full_chars = (sum(len(m["content"]) for m in c) for c in (chat, full))
    assert compact_chars < 0.6 * full_chars
    assert "Issues;" not in chat[0]["content"] and "{" not in chat[-1]["content"]  # no terms shown
    advice = s.advise(view.situation())
    line = next(x for x in chat[-1]["content"].splitlines() if x.startswith("Moves: "))
    assert line.split()[1] == advice.recommended
    assert len(line.split(" | ")) == len(advice.candidates) + advice.can_accept + advice.can_walk_away
    assert [m["role"] for m in chat] == ["system", *["user", "assistant"] * ((len(chat) - 2) // 2), "user"]


# --- the readings menu: the model reads, the strategy moves on its reading -----------------

READINGS = Strategy.named("responsive", {"menu": "readings"})


def _view_after(ep, n: int) -> PartyView:
    return PartyView.of(ep.scenario, "seller", [PublicMove(party=t.party, action=t.action) for t in ep.turns][:n])


@pytest.mark.parametrize("seed", range(4))
async def test_a_model_that_reads_nothing_more_plays_the_keyword_reader_move_for_move(seed):
    """``none`` is the keyword reading: a model that always answers it makes exactly
    ``rule/responsive``'s moves, so the readings menu can only add what the model reads."""
    read = await _played("scripted/move?move=none&menu=readings", "rule/hurry", seed)
    rule = await _played("rule/responsive", "rule/hurry", seed)

    def moves(ep):
        return [(t.party, t.action.action, getattr(t.action, "terms", None)) for t in ep.turns]

    assert moves(read) == moves(rule) and read.metrics.seller_score == rule.metrics.seller_score


async def test_reading_a_hurry_changes_the_deal_and_never_crosses_the_floor():
    """Against the hurried buyer, a seller that reads every message as a hurry concedes sooner
    than the keyword reader (which misses phrasings), and closes more often, above the floor."""
    hurried, keyword, deals = 0.0, 0.0, [0, 0]
    for seed in range(8):
        a = await _played("scripted/move?move=hurry&menu=readings", "rule/hurry", seed)
        b = await _played("rule/responsive", "rule/hurry", seed)
        hurried, keyword = hurried + a.metrics.seller_score, keyword + b.metrics.seller_score
        deals[0], deals[1] = deals[0] + a.outcome.deal, deals[1] + b.outcome.deal
        if a.outcome.deal:
            assert a.metrics.seller_utility >= a.metrics.seller_reservation - 1e-9
        seller = [t for t in a.turns if t.party == "seller"]
        assert all(t.guard is None for t in seller)  # its moves are the strategy's
        assert {t.advice.chosen for t in seller} == {"hurry"} and {t.advice.recommended for t in seller} == {"none"}
    assert deals[0] > deals[1] and hurried > keyword


async def test_the_readings_menu_prices_each_reading_and_the_answer_is_one_of_them():
    ep = await _played("rule/responsive", "rule/quote", 2)
    view = _view_after(ep, 4)
    sit = view.situation()
    advice = READINGS.advise(sit)
    ids = [r.id for r in advice.readings]
    assert ids[:2] == ["none", "hurry"] and set(ids) <= {"none", "hurry", "quote"}
    schema = answer_schema(advice, ep.scenario.space)
    assert schema["properties"]["read"]["enum"] == ids and schema["required"] == ["read"]
    jsonschema.validate({"read": "hurry"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"action": "make_offer", "choice": "step"}, schema)
    moves = MOVES.with_(words="strategy").advise(sit)
    none = advice.reading("none")
    assert none.accept == (moves.recommended == "accept")  # "none" is the keyword reader's own move
    if not none.accept:
        assert none.terms == moves.offer.terms
    for r in advice.readings:
        assert r.worth >= sit.floor - 1e-9
    from negotiator.actions import ActionParseError
    from negotiator.llm.assist import parse_answer

    with pytest.raises(ActionParseError, match="must be one of"):
        parse_answer({"read": "threat"}, advice, view)
    acted = parse_answer({"read": "hurry"}, advice, view)
    assert acted.action == ("accept" if advice.reading("hurry").accept else "make_offer")


def test_the_readings_view_shows_every_message_the_buyer_wrote_and_nothing_of_the_terms():
    sc = generate(5)
    from negotiator.actions import MakeOffer

    said = ["Ich brauche das bis morgen. How about this?", "Another shop is 12% cheaper than what you're asking."]
    moves = []
    for i, text in enumerate(said):
        moves.append(PublicMove(party="buyer", action=MakeOffer(terms=sc.buyer.ideal(sc.space), message=text)))
        if i == 0:
            moves.append(PublicMove(party="seller", action=MakeOffer(terms=sc.seller.ideal(sc.space), message="Hi.")))
    if sc.opener == "seller":
        moves = [PublicMove(party="seller", action=MakeOffer(terms=sc.seller.ideal(sc.space))), *moves]
    view = PartyView.of(sc, "seller", moves)
    messages = render_messages(view, strategy=READINGS)
    assert [m["role"] for m in messages] == ["system", "user"]  # asked afresh: no history of moves
    assert all(f'"{t}"' in messages[1]["content"] for t in said)
    assert "Hi." not in messages[1]["content"] and "worth" not in messages[1]["content"]


def test_the_readings_menu_needs_the_strategy_words():
    with pytest.raises(ValueError, match="words=strategy"):
        Strategy.named("responsive", {"menu": "readings", "words": "model"})

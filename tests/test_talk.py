"""Buyers that talk, the talk suite, and the keyword reader that is the baseline for a model's reading."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import random
from dataclasses import replace

import pytest

from evals.runner import RunOptions, make_buyer, plan
from evals.suites import SUITES, get_suite
from negotiator.actions import Accept, MakeOffer, WalkAway
from negotiator.buyers import talk
from negotiator.buyers.rules import RuleParty
from negotiator.buyers.talk import (
    HURRY,
    PRIORITIES,
    QUOTES,
    TALK,
    TALK_PERSONAS,
    TALK_VERSION,
    THREATS,
    hurry_deadline,
    in_words,
    money,
    stated_priority,
    walk_away_price,
)
from negotiator.domain import generate
from negotiator.party import PartyView, PublicMove
from negotiator.runtime import make_party, run_negotiation
from negotiator.strategy import UNSURE, read_hints
from negotiator.strategy.reading import _price_issue

# The talkers' words and behaviour are the talk suite: a change to any of them must bump
# TALK_VERSION (the suite's version) and be pinned here.
PINNED_TALK = {1: "8170b83535759590"}


def talk_digest() -> str:
    h = hashlib.sha256()
    for name in sorted(dir(talk)):
        value = getattr(talk, name)
        if name.isupper() and isinstance(value, tuple | dict | float | int) and name != "TALK_VERSION":
            h.update(f"{name}={json.dumps(value, default=repr, sort_keys=True)}".encode())
    for fn in (talk.Talker, talk.hurry_deadline, talk.walk_away_price, talk.stated_priority, talk.money):
        h.update(inspect.getsource(fn).encode())
    return h.hexdigest()[:16]


def test_the_talkers_are_pinned_to_the_suite_version():
    assert PINNED_TALK.get(TALK_VERSION) == talk_digest(), (
        "the talking buyers changed: bump TALK_VERSION (the talk suite's version) and pin the new digest"
    )


def test_the_talk_suite_is_held_out_and_covers_every_talker():
    suite = get_suite("talk")
    jobs = plan(suite, "rule/boulware")
    assert len(jobs) == 480 == suite.size()
    assert set(suite.personas) == set(TALK) == set(TALK_PERSONAS)
    others = {s for name, x in SUITES.items() if name != "talk" for s in x.scenario_seeds}
    assert not set(suite.scenario_seeds) & others
    assert suite.key == f"talk@v{TALK_VERSION}.g1.p1"


def _stalling_seller(sc, moves):
    """The seller's ideal every time: it never moves."""
    return MakeOffer(terms=sc.seller.ideal(sc.space), message="This is my price.")


def play_against_a_wall(name: str, seed: int):
    """A talker against a seller that never moves; returns the buyer's actions."""
    sc = generate(seed, max_rounds=8)
    buyer = RuleParty(name, "buyer", seed=seed)
    moves: list[PublicMove] = []
    out = []
    for turn in range(sc.max_turns):
        role = sc.opener if turn % 2 == 0 else ("buyer" if sc.opener == "seller" else "seller")
        if role == "seller":
            action = _stalling_seller(sc, moves)
        else:
            action = buyer.decide(PartyView.of(sc, "buyer", moves))
            out.append(action)
            if not isinstance(action, MakeOffer):
                break
        moves.append(PublicMove(party=role, action=action))
    return sc, out


@pytest.mark.parametrize("seed", range(5))
def test_a_credible_threat_walks_when_the_seller_does_not_move_and_a_bluff_never_does(seed):
    _, threat = play_against_a_wall("threat", seed)
    _, bluff = play_against_a_wall("bluff", seed)
    assert isinstance(threat[-1], WalkAway)
    said = [a for a in threat[:-1] if isinstance(a, MakeOffer) and any(a.message.startswith(t) for t in THREATS)]
    assert said, "it threatens before it walks"
    assert not any(isinstance(a, WalkAway) for a in bluff)
    assert sum(any(a.message.startswith(t) for t in THREATS) for a in bluff) >= 2  # the same words, again and again


@pytest.mark.parametrize("seed", range(5))
def test_a_hurried_buyer_leaves_at_its_private_deadline(seed):
    sc, acts = play_against_a_wall("hurry", seed)
    first = 0 if sc.opener == "buyer" else 1
    last = hurry_deadline(f"{sc.id}", sc.max_turns, first, seed)
    assert isinstance(acts[-1], WalkAway | Accept)  # at its deadline: what beats walking away, else it goes
    assert first + 2 * (len(acts) - 1) == last  # its last move is its deadline's
    assert 0.35 * (sc.max_turns - 1) - 2 <= last <= 0.6 * (sc.max_turns - 1)


@pytest.mark.parametrize("seed", range(8))
def test_a_true_quote_is_the_walk_away_price_and_an_invented_one_lies_below_it(seed):
    sc = generate(seed)
    price = _price_issue(sc.space)
    seller_ideal = sc.seller.ideal(sc.space)
    p = walk_away_price(sc.space, sc.buyer, price, seller_ideal)
    at = {**seller_ideal, price.name: price.snap(p)}
    if (
        0
        < (
            sc.buyer.reservation
            - sum(sc.buyer.weights[k] * sc.buyer.values[k](seller_ideal[k]) for k in sc.space.names if k != price.name)
        )
        / sc.buyer.weights[price.name]
        < 1
    ):
        assert sc.buyer.utility(at) == pytest.approx(sc.buyer.reservation, abs=0.01)

    def quoted(name):
        party = RuleParty(name, "buyer", seed=seed)
        view = PartyView.of(sc, "buyer", [PublicMove(party="seller", action=MakeOffer(terms=seller_ideal))])
        view = view.model_copy(update={"turn": 1})
        hints = read_hints([party.talker._quote(view, random.Random(0), seed)], sc.space)
        return hints.quote.get(price.name)

    true, fake = quoted("quote"), quoted("fake_quote")
    if true is not None:
        assert true == pytest.approx(float(price.snap(p)), abs=price.step)
    if true is not None and fake is not None and float(price.snap(p)) > float(sc.buyer.ideal(sc.space)[price.name]):
        assert fake < true


@pytest.mark.parametrize("seed", range(8))
def test_a_stated_priority_is_the_heaviest_issue_besides_price_or_when_lying_the_lightest(seed):
    sc = generate(seed)
    rest = [n for n in sc.space.names if n != _price_issue(sc.space).name]
    assert stated_priority(sc.space, sc.buyer, honest=True) == max(rest, key=lambda n: sc.buyer.weights[n])
    assert stated_priority(sc.space, sc.buyer, honest=False) == min(rest, key=lambda n: sc.buyer.weights[n])


_NOT_ENGLISH = (" que ", " je ", " ich ", " me ", " mi ", " ist ", " c'est ", " per ", " bij ", " um ", " de ", " es ")


def test_each_signal_comes_in_many_phrasings_and_languages():
    for book in (THREATS, HURRY, QUOTES, PRIORITIES):
        assert len(book) >= 15 and len(set(book)) == len(book)
        foreign = [p for p in book if any(w in f" {p} " for w in _NOT_ENGLISH) or any(ord(c) > 0x2000 for c in p)]
        assert len(foreign) >= 4  # some in other languages
    rng = random.Random(0)
    forms = {money(1250, "USD", rng) for _ in range(60)}
    assert {"$1,250", "1250 USD", "1.25k", "one thousand two hundred and fifty dollars"} <= forms
    assert in_words(2050) == "two thousand and fifty"


def test_the_talkers_play_the_suite_and_say_what_they_are():
    """Every talker of the suite plays: the signal personas say their signal, the control says none."""
    suite = get_suite("talk")
    said: dict[str, int] = {}
    for job in plan(suite, "rule/boulware", limit=80):
        ep = asyncio.run(
            run_negotiation(
                make_party("rule/boulware", "seller"), make_buyer(job, RunOptions()), job.scenario, job.seed
            )
        )
        books = {"threat": THREATS, "hurry": HURRY, "quote": QUOTES, "priority": PRIORITIES}.get(
            TALK[job.persona].signal or "", ()
        )
        heads = [b.split("{")[0] for b in books]
        said[job.persona] = said.get(job.persona, 0) + sum(
            1 for t in ep.turns if t.party == "buyer" and any(t.action.message.startswith(h) for h in heads if h)
        )
    assert said["plain"] == 0
    for persona in ("threat", "bluff", "hurry", "priority", "fake_priority"):
        assert said[persona] > 0, persona


# --- the keyword reader -------------------------------------------------------------------


@pytest.fixture(scope="module")
def space():
    return generate(0).space  # furniture: price, delivery_days, assembly, payment_terms


@pytest.mark.parametrize(
    "message",
    [
        "Give me a better price or I walk away.",
        "That's my final offer, take it or leave it.",
        "I'll take my business elsewhere.",
        "Si no mejora la oferta, me voy.",
        "Sinon je vais voir ailleurs.",
        "Dann kaufe ich woanders.",
    ],
)
def test_the_reader_reads_threats(space, message):
    hints = read_hints([message], space)
    assert hints.threat and hints.threat_credible == UNSURE and hints.source == "keywords"


@pytest.mark.parametrize(
    "message, deadline",
    [
        ("I need this done today.", None),
        ("It's urgent, I'm short on time.", None),
        ("I can do two more rounds at most.", (5 + 4) / 11),
        ("Tengo prisa.", None),
        ("Ich brauche es heute.", None),
    ],
)
def test_the_reader_reads_a_hurry_and_a_stated_deadline(space, message, deadline):
    hints = read_hints([message], space, turn=6, max_turns=12)
    assert hints.hurry
    assert hints.deadline == (pytest.approx(deadline) if deadline is not None else None)


@pytest.mark.parametrize(
    "message, value",
    [
        ("I have a quote for $1,050 from the shop down the road.", 1050),
        ("Another seller offered me the same for 980 USD.", 980),
        ("Un concurrent me le fait à 1.120 €.", 1120),
        ("A competitor will do it for 1.2k.", 1200),
        ("Tengo un presupuesto de 990,50 de otra tienda.", 990.5),
    ],
)
def test_the_reader_reads_a_quoted_price(space, message, value):
    assert read_hints([message], space).quote == {"price": pytest.approx(value)}


@pytest.mark.parametrize(
    "message, issue",
    [
        ("Fast delivery is what matters most to me.", "delivery_days"),
        ("Payment terms are a deal-breaker for us.", "payment_terms"),
        ("Lo más importante para mí es el montaje.", "assembly"),
    ],
)
def test_the_reader_reads_stated_priorities(space, message, issue):
    assert read_hints([message], space).priorities == (issue,)


def test_the_reader_stays_quiet_on_plain_bargaining(space):
    plain = [
        "Here is my opening proposal: price 1200 USD, delivery days 14, assembly none, payment terms net30.",
        "That's not quite there for me. How about price 1100 USD, delivery days 7?",
        "I can move a little: price 1150 USD.",
        "Deal, that works for me.",
    ]
    assert read_hints(plain, space).empty


def test_the_reader_reads_only_the_public_words():
    """Its inputs are the other side's messages, the public outcome space and the clock: nothing private."""
    params = list(inspect.signature(read_hints).parameters)
    assert params == ["messages", "space", "turn", "max_turns"]


def test_the_reader_cannot_read_what_a_model_could():
    sc = generate(0)
    missed = [
        "Un concurrent me le fait à eleven hundred dollars.",  # a number in words
        "Bij een andere winkel kan ik het voor 1100 krijgen.",  # Dutch
        "値下げしないなら他で買います。",  # Japanese
    ]
    hints = read_hints(missed, sc.space)
    assert not hints.quote and not hints.threat


# --- the reader's masked digits ------------------------------------------------------------

_PATTERNS = ("_THREAT", "_HURRY", "_QUOTE", "_PRIORITY", "_ROUNDS", "_LIMITED", "_SENTENCE")


def test_the_keyword_patterns_tell_digits_apart_only_by_d_and_a_literal_1():
    """The reader matches messages with digits 2-9 masked as 2 (they repeat, only the numbers
    change): that is exact only while no pattern names another digit."""
    import re

    from negotiator.strategy import reading

    for name in _PATTERNS:
        source = getattr(reading, name).pattern.replace("\\d", "").replace("#1", "")
        assert not re.search(r"[0-9]|\\D|\[\^", source), name


@pytest.mark.parametrize(
    "text",
    [
        "My #1 priority is delivery. I have 3 more rounds at most.",
        "Delivery is our real#1 priority, price our #7.",
        "Top priority: #7 on the list. 2 more offers then I leave.",
        "Another shop quoted 1,499 USD; I need it today. Final offer 1299.",
        "How about price 722 USD, delivery days 3, payment terms net60?\nWalk\naway at 9.",
    ],
)
def test_masked_messages_match_where_the_messages_do(text):
    from negotiator.strategy import reading

    masked = text.translate(reading._MASK)
    for name in _PATTERNS:
        pattern = getattr(reading, name)
        assert [m.span() for m in pattern.finditer(masked)] == [m.span() for m in pattern.finditer(text)], name


def test_the_rounds_a_buyer_states_are_read_from_its_own_digits():
    """Masked, "3 more rounds" and "2 more rounds" look alike: the deadline is read from the message itself."""
    sc = generate(0)
    three = read_hints(["I have 3 more rounds at most."], sc.space, turn=5, max_turns=21)
    two = read_hints(["I have 2 more rounds at most."], sc.space, turn=5, max_turns=21)
    assert three.hurry and two.hurry
    assert (three.deadline, two.deadline) == ((4 + 2 * 3) / 20, (4 + 2 * 2) / 20)


# --- what a talker said, read without a miss (oracle/said, the reader teacher) --------------


def _said_at_every_seller_turn(limit: int):
    """(job, view, said_hints, keyword hints) at every seller turn after a buyer offer, on the talk suite."""
    from negotiator.buyers.talk import said_hints

    for job in plan(get_suite("talk"), "rule/responsive", limit=limit):
        ep = asyncio.run(
            run_negotiation(
                make_party("rule/responsive", "seller", seed=job.seed),
                make_buyer(job, RunOptions()),
                job.scenario,
                job.seed,
                persona=job.persona,
            )
        )
        for t in ep.turns:
            if t.party != "seller":
                continue
            moves = [PublicMove(party=m.party, action=m.action) for m in ep.turns[: t.index]]
            view = PartyView.of(ep.scenario, "seller", moves)
            if not any(m.party == "buyer" and isinstance(m.action, MakeOffer) for m in moves):
                continue
            messages = [m.action.message for m in moves if m.party == "buyer" and isinstance(m.action, MakeOffer)]
            keywords = read_hints(messages, ep.scenario.space, turn=view.turn, max_turns=view.max_turns)
            yield job, view, said_hints(ep.scenario, job.persona, job.seed, view), keywords


def test_said_hints_hold_every_signal_the_talker_said_and_all_the_keyword_reader_reads():
    """``said_hints`` replays the talker's rules: the signal of its persona from its first
    offer on, the threats it made, the priority it states, its stated rounds; where the keyword
    reader reads the talker's signal, so does it, with a deadline where the reader has one and (up
    to the written rounding) the same quoted price; the belief is the keyword reader's; a buyer that says nothing gets none."""
    seen: dict[str, int] = {}
    checked = 0
    for job, view, said, keywords in _said_at_every_seller_turn(limit=160):
        signal = TALK[job.persona].signal
        assert said.source == "said" and said.threat_credible == said.quote_credible == UNSURE
        own = {"priority": "priorities"}.get(signal or "", signal)
        if own in keywords.signals():  # (the reader also reads threats into some quotes: its own mistake)
            assert own in said.signals(), (job.persona, keywords, said)
        buyer_said = [
            m.action.message for m in view.transcript if m.party == "buyer" and isinstance(m.action, MakeOffer)
        ]
        if signal is None:
            assert said.empty
        elif signal == "threat":
            assert said.threats == sum(any(m.startswith(t) for t in THREATS) for m in buyer_said)
        elif signal == "priority":
            honest = TALK[job.persona].honest
            assert said.priorities == (stated_priority(job.scenario.space, job.scenario.buyer, honest=honest),)
        elif signal == "hurry":
            assert said.hurry
            if keywords.deadline is not None:  # it read a stated number of rounds, so did said_hints
                assert said.deadline is not None
        else:
            price = _price_issue(job.scenario.space)
            assert set(said.quote) == {price.name}
            last = read_hints(buyer_said[-1:], job.scenario.space).quote
            if last and any(buyer_said[-1].startswith(q.split("{")[0]) for q in QUOTES):  # a price, as written
                assert float(last[price.name]) == pytest.approx(float(said.quote[price.name]), abs=1.0)
                checked += 1
        seen[job.persona] = seen.get(job.persona, 0) + 1
    assert set(seen) == set(TALK) and checked > 0


def test_the_said_oracle_reads_the_words_and_knows_no_private_number():
    from evals.oracle import ORACLE_SPEC, SAID_SPEC, OracleSeller
    from negotiator.buyers.talk import said_hints

    for job, view, said, _ in _said_at_every_seller_turn(limit=16):
        seller = OracleSeller(job.scenario, job.persona, seed=job.seed, spec=SAID_SPEC)
        assert seller.hints(view) == said == said_hints(job.scenario, job.persona, job.seed, view)
        assert seller.walk_away_terms is None
        oracle = OracleSeller(job.scenario, job.persona, seed=job.seed)
        assert oracle.spec == ORACLE_SPEC and oracle.hints(view).source == "oracle"
    with pytest.raises(ValueError, match="unknown oracle"):
        OracleSeller(generate(0), "plain", spec="oracle/psychic")


def test_the_read_oracle_adds_to_the_keyword_reading_only_the_hurry_or_quote_that_was_said():
    """``oracle/read``: the readings menu read without a miss. A hurried talker's hints are the
    keyword reading with a hurry; a quoting one's carry the price its newest message names; for
    every other buyer they are the keyword reading itself (what ``none`` plays)."""
    from evals.oracle import READ_SPEC, OracleSeller

    kinds = set()
    for job, view, _, keywords in _said_at_every_seller_turn(limit=16):
        got = OracleSeller(job.scenario, job.persona, seed=job.seed, spec=READ_SPEC).hints(view)
        signal = TALK[job.persona].signal
        if signal == "hurry":
            assert got == replace(keywords, hurry=True)
        elif signal == "quote" and got != keywords:
            assert got == replace(keywords, quote=got.quote) and got.quote
        else:
            assert got == keywords
        kinds.add(signal if got != keywords else "same")
    assert {"hurry", "quote", "same"} <= kinds


def test_a_read_quote_is_the_price_the_newest_message_names_in_digits_words_or_percent():
    """``read_as("quote", ...)``: what a model that reads a quote in the words has read. The
    buyer's own offer terms in the same message are not a quote; a percentage is below the
    seller's ask that message answered; no price named, no quote reading."""
    from negotiator.actions import MakeOffer
    from negotiator.party import PartyView, PublicMove
    from negotiator.sim import generate
    from negotiator.strategy import NO_HINTS
    from negotiator.strategy.reading import read_as

    sc = generate(0)
    price = next(i for i in sc.space.issues if i.name == "price")
    ask = {**sc.seller.ideal(sc.space), "price": 1000}
    offer = {**sc.buyer.ideal(sc.space), "price": 600}

    def reading(text: str):
        moves = [
            PublicMove(party="seller", action=MakeOffer(terms=ask, message="Hi.")),
            PublicMove(party="buyer", action=MakeOffer(terms=offer, message=text)),
        ]
        return read_as("quote", NO_HINTS, PartyView.of(sc, "seller", moves).situation())

    assert reading("Another seller offered me the same thing for $820. How about price 600?").quote == {"price": 820}
    assert reading("Your competitor will do it for eight hundred dollars.").quote == {"price": 800}
    assert reading("A competitor undercuts you by 15%.").quote == {"price": price.snap(850)}
    assert reading("How about price 600 USD, delivery days 7?") is None  # its own terms only
    # digits against CJK text, and number words in the languages text2num reads (before: none read)
    assert reading("另一家店给我报价820。").quote == {"price": 820}
    assert reading("他の店では820ドルでした。").quote == {"price": 820}
    # Chinese and Japanese numerals (before: none read)
    assert reading("另一家店给我报价八百二十。").quote == {"price": 820}
    assert reading("别家报价捌佰贰拾元。").quote == {"price": 820}
    assert reading("他の店では八百二十ドルでした。").quote == {"price": 820}
    assert reading("别家比你便宜百分之十五。").quote == {"price": price.snap(850)}
    assert reading("On m'a proposé huit cent vingt ailleurs.").quote == {"price": 820}
    assert reading("Otra tienda me lo deja en ochocientos veinte.").quote == {"price": 820}
    assert reading("Woanders bekomme ich es für achthundertzwanzig.").quote == {"price": 820}
    assert reading("Je paie un euro de plus, pas davantage.") is None  # a small number is no price
    assert read_as("hurry", NO_HINTS, PartyView.of(sc, "seller", []).situation()).hurry


def test_reading_accuracy_sets_each_reading_beside_what_was_said_and_the_keyword_reader(tmp_path):
    """benchmarks/reading_accuracy.py on a seller that reads a hurry into every message: right on
    every turn of the hurried buyer, wrong on every other talker's; the keyword reader beside it."""
    import importlib.util
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "negotiator", "eval", "--seller", "scripted/move?move=hurry&menu=readings"]
        + ["--suite", "talk", "--limit", "16", "--out", str(out)],
        check=True,
        capture_output=True,
    )
    spec = importlib.util.spec_from_file_location("reading_accuracy", root / "benchmarks" / "reading_accuracy.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rows = bench.tally([out])
    assert set(rows) == set(TALK)
    for persona, row in rows.items():
        assert row["turns"] > 0 and row["read"] == {"hurry": row["turns"]}
        assert row["model"] == (row["turns"] if persona == "hurry" else 0)
    assert rows["plain"]["keywords"] == rows["plain"]["turns"]  # nothing read into a buyer that says nothing
    assert rows["hurry"]["keywords"] < rows["hurry"]["turns"]  # the keyword reader misses some hurries

"""`negotiator play` driven as a person drives it: the real command in a terminal (pty), typed moves."""

from __future__ import annotations

import os
import re
import sys

import pytest

pexpect = pytest.importorskip("pexpect")

from negotiator.cli.human import example_offer, what_is_better  # noqa: E402
from negotiator.domain import generate, template_names  # noqa: E402

ENV = {**os.environ, "NEGOTIATOR_BLOCK_REMOTE": "1", "NO_COLOR": "1", "TERM": "xterm"}
PROMPT = "\r\n> "


def play(*args, env: dict | None = None, timeout: float = 60):
    child = pexpect.spawn(
        sys.executable,
        ["-m", "negotiator", "play", *args],
        env={**ENV, **(env or {})},
        encoding="utf-8",
        timeout=timeout,
        dimensions=(60, 200),
    )
    return child


def flat(text: str) -> str:
    """What the person reads: without the terminal's style codes, whitespace collapsed."""
    return " ".join(re.sub(r"\x1b\[[0-9;]*m", "", text).split())


def test_the_help_example_is_a_valid_offer_in_every_template():
    for name in template_names():
        for seed in range(3):
            s = generate(seed, name)
            line = example_offer(s, s.buyer)
            terms = dict(kv.split("=", 1) for kv in line.split()[1:])
            assert list(terms) == s.space.names, line
            typed = {
                k: (
                    s.space.issue(k).snap(float(v))
                    if s.space.issue(k).kind == "numeric"
                    else next(o for o in s.space.issue(k).options if str(o) == v)
                )
                for k, v in terms.items()
            }
            s.space.validate_offer(typed)


def test_a_discrete_issue_shows_which_option_is_better_for_the_player():
    s = generate(10_000_000)  # design tool seats
    support = s.space.issue("support")
    assert what_is_better(support, s.buyer) == "dedicated (1.00) > priority (0.67) > standard (0.00)"
    assert what_is_better(s.space.issue("price_per_seat"), s.buyer) == "lower is better (299 best, 598 worst)"


def test_a_person_plays_against_a_rule_seller_through_a_terminal():
    s = generate(10_000_000)
    child = play("--seller", "rule/boulware", "--scenario", "10000000")
    child.expect(PROMPT)
    intro = flat(child.before)
    # the scenario's own issues, the player's preferences per option, and an example that fits them
    assert "You are buying: design tool seats" in intro and "Walking away is worth 0.28 to you" in intro
    assert "dedicated (1.00) > priority (0.67) > standard (0.00)" in intro
    example = example_offer(s, s.buyer)
    assert f"{example} : my offer" in intro and "price=900" not in intro
    assert "round 1 of 6; the seller's offer is worth 0.00 to you (walking away: 0.28)" in intro

    # accepting an offer worth less than walking away asks first; "no" keeps the negotiation going
    child.sendline("accept")
    child.expect(re.escape("Accept it anyway? [y/N] "))
    assert "worth 0.00 to you, less than walking away (0.28)" in flat(child.before)
    child.sendline("n")
    child.expect("not accepted; your move")
    child.expect(PROMPT)

    # the help's example, typed as shown, is a valid move: the seller answers it
    child.sendline(f"{example} : would this work?")
    child.expect(PROMPT)
    answer = flat(child.before)
    assert "seller make_offer" in answer and "round 2 of 6" in answer
    child.sendline("offer support=priority")  # issues left out keep the last offer's value
    child.expect(PROMPT)
    assert "round 3 of 6" in flat(child.before)
    child.sendline("offer seats=many")
    child.expect(PROMPT)
    assert "seats must be a number" in flat(child.before)
    child.sendline("walk : too expensive")
    child.expect(pexpect.EOF)
    assert "No deal (walk_away)" in flat(child.before)
    child.close()
    assert child.exitstatus == 0


def test_confirming_accepts_the_offer():
    child = play("--seller", "rule/boulware", "--scenario", "10000000")
    child.expect(PROMPT)
    child.sendline("accept : fine")
    child.expect(re.escape("[y/N] "))
    child.sendline("y")
    child.expect(pexpect.EOF)
    assert "Deal: price_per_seat=" in flat(child.before)
    child.close()
    assert child.exitstatus == 0


def test_an_offer_worth_more_than_walking_away_is_accepted_without_asking():
    # a conceder seller reaches offers the player values above its walk-away value within the rounds
    child = play("--seller", "rule/conceder?e=5", "--scenario", "10000000")
    for _ in range(6):
        child.expect(PROMPT)
        worth = float(re.findall(r"the seller's offer is worth ([\d.]+) to you", flat(child.before))[-1])
        if worth >= 0.28:
            break
        child.sendline("offer price_per_seat=299 seats=10 contract_months=12 support=dedicated onboarding=guided")
    else:
        pytest.fail("the conceder never offered more than the walk-away value")
    child.sendline("accept")
    child.expect(pexpect.EOF)
    out = flat(child.before)
    assert "Accept it anyway" not in out and "Deal:" in out
    assert float(re.search(r"your score ([\d.]+)", out).group(1)) > 0


@pytest.mark.slow
def test_a_local_seller_says_it_is_starting(tiny_home):
    child = play(
        "--seller", "local/tiny-random-gemma", "--scenario", "0", env={"NEGOTIATOR_HOME": str(tiny_home)}, timeout=300
    )
    child.expect("starting the local model local/tiny-random-gemma")
    child.expect("the seller is ready")
    child.expect(PROMPT)
    child.sendline("walk")
    child.expect(pexpect.EOF)
    assert "No deal" in child.before
    child.close()
    assert child.exitstatus == 0

"""``negotiator play``: be the buyer against a seller, in the terminal."""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from typing import Annotated, Optional

import typer

from ..actions import Accept, MakeOffer, WalkAway
from ..domain.generator import generate
from ..domain.issues import NumericIssue
from ..errors import InvalidOffer
from ..party import AnyAction, PartyView, TurnRecord
from ..runtime import make_party, run_negotiation
from .app import app, console

HELP = """Your move. Type one of:
  offer price=900 delivery_days=7 ... [: message]   (issues you leave out keep your last offer's value)
  accept [: message]      accept the seller's standing offer
  walk [: message]        walk away
  help                    show this again"""


class HumanBuyer:
    """A person typing moves at the terminal."""

    spec, family, role = "human", "human", "buyer"

    def __init__(self, ask: Callable[[str], str] = input):
        self.ask = ask

    def parse(self, line: str, view: PartyView) -> AnyAction:
        cmd, _, message = line.partition(":")
        words = shlex.split(cmd)
        if not words:
            raise ValueError("empty move")
        verb, args = words[0].lower(), words[1:]
        message = message.strip()
        if verb == "accept":
            if view.standing_offer is None:
                raise ValueError("there is no seller offer to accept yet")
            return Accept(message=message)
        if verb in ("walk", "walk_away"):
            return WalkAway(message=message)
        if verb != "offer":
            raise ValueError(f"unknown move {verb!r}")
        terms = dict(view.own_last_offer or {})
        for a in args:
            k, eq, v = a.partition("=")
            if not eq:
                raise ValueError(f"write issue=value, not {a!r}")
            issue = view.space.issue(k) if k in view.space.names else None
            if isinstance(issue, NumericIssue):
                try:
                    terms[k] = float(v) if "." in v else int(v)
                except ValueError:
                    raise ValueError(f"{k} must be a number") from None
            else:
                try:
                    terms[k] = json.loads(v)
                except json.JSONDecodeError:
                    terms[k] = v
        return MakeOffer(terms=view.space.validate_offer(terms), message=message)

    async def act(self, view: PartyView) -> TurnRecord:
        last = view.transcript[-1] if view.transcript else None
        if last is not None:
            a = last.action
            console.print(f"\n[bold cyan]seller[/] {a.action}: {a.message}")
            if isinstance(a, MakeOffer):
                console.print("  terms: " + view.space.format_offer(a.terms))
        console.print(f"[dim]round {view.round} of {view.max_turns // 2}; your value of the seller's offer: "
                      + (f"{view.utility(view.standing_offer):.2f}" if view.standing_offer else "-") + "[/]")
        while True:
            line = self.ask("> ").strip()
            if line in ("help", "?", ""):
                console.print(HELP)
                continue
            try:
                action = self.parse(line, view)
            except (ValueError, InvalidOffer, KeyError) as e:
                console.print(f"[red]{e}[/]")
                continue
            return TurnRecord(index=view.turn, party="buyer", action=action)

    async def aclose(self) -> None:
        return None


@app.command("play")
def play_command(
    seller: Annotated[str, typer.Option(help="Seller spec to negotiate against.")] = "rule/boulware",
    scenario: Annotated[int, typer.Option(help="Scenario seed.")] = 10_000_000,
    template: Annotated[Optional[str], typer.Option(help="Scenario template.")] = None,
    seller_base_url: Annotated[Optional[str], typer.Option(help="Base URL for the seller's model server.")] = None,
) -> None:
    """Negotiate as the buyer against SELLER in the terminal; shows your private values."""
    s = generate(scenario, template)
    console.print(f"[bold]You are buying: {s.product.name}[/]. {s.product.description}")
    for i in s.issues:
        console.print(f"  {i.name}: {i.describe()}  (weight to you {s.buyer.weights[i.name]:.2f})")
    console.print(f"Walking away is worth {s.buyer.reservation:.2f} to you. {HELP}")
    seller_party = make_party(seller, "seller", base_url=seller_base_url)
    ep = asyncio.run(run_negotiation(seller_party, HumanBuyer(), s))
    last = ep.turns[-1].action if ep.turns else None
    if last is not None and ep.turns[-1].party == "seller":
        console.print(f"\n[bold cyan]seller[/] {last.action}: {last.message}")
    o, m = ep.outcome, ep.metrics
    if o.deal:
        console.print(f"\n[bold green]Deal[/]: {s.space.format_offer(o.terms)}; your score {m.buyer_score:.3f}, seller's {m.seller_score:.3f}")
    else:
        console.print(f"\n[bold yellow]No deal[/] ({o.ended_by}).")

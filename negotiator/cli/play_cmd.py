"""``negotiator play``: be the buyer against a seller, in the terminal."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape

from .app import EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_UNREACHABLE, app, console


class _Announced:
    """A seller party that says it is answering: a model's turn can take seconds."""

    def __init__(self, party):
        self._party = party

    def __getattr__(self, name):
        return getattr(self._party, name)

    async def act(self, view):
        with console.status("the seller is answering ..."):
            return await self._party.act(view)


@app.command("play")
def play_command(
    seller: Annotated[
        str,
        typer.Option(
            help="Seller spec to negotiate against: rule/boulware, local/gemma-3-270m, openai/gpt-4o-mini ..."
        ),
    ] = "rule/boulware",
    scenario: Annotated[
        int, typer.Option(help="Scenario seed, 0 or more (`negotiator scenarios list` shows some).", min=0)
    ] = 10_000_000,
    template: Annotated[str | None, typer.Option(help="Scenario template (default: drawn from the seed).")] = None,
    seller_base_url: Annotated[str | None, typer.Option(help="Base URL for the seller's model server.")] = None,
) -> None:
    """Negotiate as the buyer against the --seller, in the terminal.

    You see your private preferences (how much each issue weighs, which values are better for
    you) and every seller offer scored for you: 0 is no better than walking away, 1 your best
    terms; the seller sees only its own. Moves: `offer ISSUE=VALUE ... [: message]`, `accept`,
    `walk`, `help`. Accepting an offer that scores below 0 asks for confirmation first. Ctrl-D
    walks away; Ctrl-C leaves at once.
    """
    import asyncio

    from ..domain.generator import generate
    from ..errors import ProviderError, Unreachable
    from ..models.local.servers import local_servers
    from ..models.preflight import check_provider, preflight
    from ..models.specs import parse_spec
    from ..runtime import make_party, run_negotiation
    from .human import SCALE, HumanBuyer, preferences_table, your_score

    s = generate(scenario, template)
    spec = parse_spec(seller)
    if spec.kind == "litellm":  # an unknown provider, a missing key, a server not running: said before the table
        check_provider(spec)
    party = make_party(seller, "seller", base_url=seller_base_url)  # a bad spec fails here, before anything is shown
    try:
        preflight(seller, seller_base_url)
    except ProviderError as e:
        raise Unreachable(str(e)) from None
    human = HumanBuyer(s, console)
    console.print(f"[bold]You are buying: {s.product.name}[/]. {s.product.description}")
    console.print(f"{s.max_rounds} rounds; the {s.opener} opens. {SCALE}")
    console.print(preferences_table(s, s.buyer))
    is_local = spec.kind == "local"
    if is_local:
        console.print(f"starting the local model {seller} on this machine (the first use also prepares it) ...")
    try:
        with local_servers([seller], say=console.print):
            if is_local:
                console.print("the seller is ready.")
            console.print(escape(human.help), soft_wrap=True)  # never cut the example line: it is meant to be copied
            seller_party = party if spec.kind == "rule" else _Announced(party)
            ep = asyncio.run(run_negotiation(seller_party, human, s))
    except KeyboardInterrupt:  # Ctrl-C at a prompt or while the seller answers: leave at once, as a shell expects
        console.print("\ninterrupted: you left the table, no deal")
        sys.exit(EXIT_INTERRUPTED)  # not typer.Exit: main would add a second interrupted line
    last = ep.turns[-1].action if ep.turns else None
    if last is not None and ep.turns[-1].party == "seller":
        console.print(f"\n[bold cyan]seller[/] {last.action}: {escape(last.message)}")
    o, m = ep.outcome, ep.metrics
    if o.deal and o.terms is not None:
        console.print(
            f"\n[bold green]Deal[/]: {s.space.format_offer(o.terms)}; your score {your_score(s.buyer, o.terms):.2f} "
            f"(the seller's, on its own scale: {m.seller_score:.2f})"
        )
    elif ep.error is not None:
        console.print(
            f"\n[bold red]The negotiation stopped on an error[/] ({ep.error.party}): {escape(ep.error.message)}"
        )
        # a provider failure is a model that could not be reached (exit 3), as eval says it; anything else a failure
        raise typer.Exit(EXIT_UNREACHABLE if ep.error.type == "ProviderError" else EXIT_FAILURE)
    else:
        console.print(f"\n[bold yellow]No deal[/] ({o.ended_by}): your score 0.")

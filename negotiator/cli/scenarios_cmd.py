"""``negotiator scenarios``: list and show generated scenarios."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .app import app, console

GeneratorOption = Annotated[
    int,
    typer.Option(
        help="Scenario generator version: 1 (what `quick` and `heldout` play) or 2 (what `quick@v2`, `heldout@v2` "
        "and the example shop play: the price never above the list price)."
    ),
]

scenarios_app = typer.Typer(help="List and inspect generated scenarios.", no_args_is_help=True)
app.add_typer(scenarios_app, name="scenarios")


@scenarios_app.command("list")
def list_scenarios(
    start: Annotated[int, typer.Option(help="First seed (0 or more).", min=0)] = 0,
    count: Annotated[int, typer.Option(help="How many seeds.", min=1)] = 10,
    template: Annotated[
        str | None,
        typer.Option(help="Scenario template, e.g. furniture or saas_seats (default: drawn from each seed)."),
    ] = None,
    json_: Annotated[
        bool, typer.Option("--json", help="Print each scenario as `show --json` does, one a line (JSON Lines).")
    ] = False,
    generator: GeneratorOption = 1,
) -> None:
    """One line per scenario: id, product, issues, rounds, who opens, reservations."""
    from ..domain.generator import generate

    if json_:
        for seed in range(start, start + count):  # never wrapped: a line is a scenario
            typer.echo(generate(seed, template, version=generator).model_dump_json())
        return
    table = Table(title="scenarios")
    for col in ("id", "product", "issues", "rounds", "opener", "r_seller", "r_buyer"):
        table.add_column(col, overflow="fold")  # a narrow terminal wraps a value, never cuts it
    for seed in range(start, start + count):
        s = generate(seed, template, version=generator)
        table.add_row(
            s.id,
            s.product.name,
            ", ".join(s.space.names),
            str(s.max_rounds),
            s.opener,
            f"{s.seller.reservation:.2f}",
            f"{s.buyer.reservation:.2f}",
        )
    console.print(table)


@scenarios_app.command("show")
def show_scenario(
    seed: Annotated[int, typer.Argument(help="Scenario seed (0 or more).", min=0)],
    template: Annotated[str | None, typer.Option(help="Template (default: drawn from the seed).")] = None,
    json_: Annotated[bool, typer.Option("--json", help="Print the scenario as JSON.")] = False,
    generator: GeneratorOption = 1,
) -> None:
    """Everything about one scenario, both sides' private preferences included."""
    from ..domain.generator import generate
    from ..domain.issues import NumericIssue, _fmt
    from ..domain.metrics import analysis

    s = generate(seed, template, version=generator)
    if json_:
        console.print_json(s.model_dump_json())
        return
    console.print(f"[bold]{s.id}[/]: {s.product.name}. {s.product.description}")
    console.print(f"opener: {s.opener}, rounds: {s.max_rounds}, currency: {s.currency}")
    table = Table()
    for col in ("issue", "allowed", "seller weight", "seller values", "buyer weight", "buyer values"):
        table.add_column(col, overflow="fold")  # a narrow terminal wraps a value, never cuts it
    for i in s.issues:

        def values(prefs, i=i):
            vf = prefs.values[i.name]
            if isinstance(i, NumericIssue):
                return f"best {_fmt(vf.best)}, worst {_fmt(vf.worst)}"
            return ", ".join(f"{o}:{vf(o):.2f}" for o in i.options)

        table.add_row(
            i.name,
            i.describe(),
            f"{s.seller.weights[i.name]:.2f}",
            values(s.seller),
            f"{s.buyer.weights[i.name]:.2f}",
            values(s.buyer),
        )
    console.print(table)
    a = analysis(s)
    console.print(
        f"reservations: seller {s.seller.reservation:.3f}, buyer {s.buyer.reservation:.3f}; "
        f"seller limits: {s.seller_limits.model_dump(exclude_defaults=True)}"
    )
    if a.nash_terms and a.nash:
        console.print(
            f"Nash bargaining point: {s.space.format_offer(a.nash_terms)} "
            f"(U_s {a.nash[0]:.3f}, U_b {a.nash[1]:.3f}); Pareto frontier: {len(a.frontier)} points"
        )

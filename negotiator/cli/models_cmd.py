"""``negotiator models``: prepare and list the embedded local models."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .app import app, console, output_folder

models_app = typer.Typer(help="Prepare and list local models (the embedded Gemma 3 270M ...).", no_args_is_help=True)
app.add_typer(models_app, name="models")


@models_app.command("prepare")
def prepare_command(
    name: Annotated[
        str,
        typer.Argument(
            help="Model to prepare: gemma-3-270m (or tiny-random-gemma, for tests; a shipped seller prepares its base)."
        ),
    ] = "gemma-3-270m",
    force: Annotated[bool, typer.Option(help="Rebuild even when a good copy is cached.")] = False,
) -> None:
    """Convert a model once into a cached transformers folder (done automatically on first use).

    The cache lives under $NEGOTIATOR_HOME (default ~/.cache/negotiator). Safe to run twice
    or from two processes at once; a partial or corrupt copy is detected and rebuilt.
    """
    from ..errors import UsageError
    from ..models.local.prepare import RECIPES, home
    from ..models.local.progress import prepare_with_progress
    from ..models.local.shipped import SELLERS

    if name in SELLERS:  # a shipped seller is ready once the model it is served on is
        console.print(f"{name} ships in the package; preparing the model it is served on, {SELLERS[name].base}")
        name = SELLERS[name].base
    if name not in RECIPES:  # before anything else
        raise UsageError(
            f"unknown model {name!r}: models prepare takes one of {', '.join([*RECIPES, *SELLERS])}. A model or LoRA "
            "adapter folder of your own needs no preparing: use it as --seller local/PATH"
        )
    output_folder(home(), "NEGOTIATOR_HOME")
    path = prepare_with_progress(name, force=force, say=lambda msg: console.print(msg))
    console.print(f"{name} is ready: {path}")


@models_app.command("list")
def list_command() -> None:
    """The local models, where they are cached and whether they are ready."""
    from ..errors import UsageError
    from ..models.local.prepare import home, list_models

    nearest = next((p for p in (home(), *home().parents) if p.exists()), None)
    if nearest is not None and not nearest.is_dir():  # else every model would read "not prepared", which is not why
        raise UsageError(
            f"NEGOTIATOR_HOME {home()}: {nearest} is a file, not a folder; set NEGOTIATOR_HOME to a folder "
            "(it is created if missing)"
        )
    table = Table(title=f"local models in {home() / 'models'}")
    for col in ("name", "status", "size", "source sha256", "what"):
        table.add_column(col, overflow="fold")  # a narrow terminal wraps a value, never cuts it
    for m in list_models():
        status = "[green]ready[/]" if m.status == "ready" else m.status
        size = (
            "-"
            if not m.size_bytes
            else f"{m.size_bytes / 1e6:.0f} MB"
            if m.size_bytes >= 1e6
            else f"{m.size_bytes / 1e3:.0f} kB"
        )
        table.add_row(m.name, status, size, (m.source.get("sha256") or "-")[:16], m.description)
    console.print(table)
    console.print("Use one with --seller local/NAME (or local/PATH for a model or LoRA adapter folder).")

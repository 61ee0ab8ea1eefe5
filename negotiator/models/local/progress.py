"""A progress bar on stderr while a local model is prepared (about a minute, once)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from .prepare import models_dir, prepare, problem, recipe


def prepare_with_progress(name: str, *, force: bool = False, say: Callable[[str], None] | None = None) -> Path:
    """``prepare(name)`` with a rich progress bar; plain lines when another live display is active."""
    from rich.console import Console
    from rich.errors import LiveError
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    r = recipe(name)
    console = Console(stderr=True)
    say = say or (lambda msg: console.print(msg))
    if not force and problem(models_dir() / name, r) is None:
        return prepare(name, say=say)  # prepared: only the (deep) check runs
    bar = Progress(
        TextColumn("[bold]preparing " + name),
        BarColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )
    try:
        bar.start()
    except LiveError:  # e.g. inside another progress display: fall back to one line per step
        return prepare(name, force=force, say=say, progress=lambda step, done, total: say(f"preparing {name}: {step}"))
    try:
        task = bar.add_task("", total=r.steps)
        return prepare(
            name,
            force=force,
            say=say,
            progress=lambda step, done, total: bar.update(task, completed=done, description=step),
        )
    finally:
        bar.stop()

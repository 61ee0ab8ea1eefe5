"""The typer application and the error handling shared by every command."""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import RemoteRequestBlocked, UsageError
from ..runtime.episode import git_commit

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3

# Written to a file or a CI log, rich would squeeze the result tables into 80 columns and cut
# every figure to an ellipsis; COLUMNS still wins when set.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
console = Console(width=_WIDTH)
err_console = Console(stderr=True, width=_WIDTH)

app = typer.Typer(
    name="negotiator",
    help="Deploy, evaluate and train negotiating sellers. Every command works offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Unreachable(Exception):
    """A model endpoint could not be reached; exit code 3."""


def _register() -> None:
    """Import every ``*_cmd`` module of this package; each registers its command on ``app``."""
    import importlib
    import pkgutil

    from .. import cli

    for mod in pkgutil.iter_modules(cli.__path__):
        if mod.name.endswith("_cmd"):
            importlib.import_module(f"{cli.__name__}.{mod.name}")


def main() -> None:
    # Read the checkout's commit now (it is cached): episodes and training manifests name the
    # code this process started from, even when the work tree is committed to while it runs.
    git_commit()
    _register()
    try:
        rc = app(standalone_mode=False)
        sys.exit(rc if isinstance(rc, int) else EXIT_OK)
    except UsageError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        sys.exit(EXIT_USAGE)
    except RemoteRequestBlocked as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        sys.exit(EXIT_USAGE)
    except Unreachable as e:
        err_console.print(f"[bold red]model unreachable:[/] {escape(str(e))}")
        sys.exit(EXIT_UNREACHABLE)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        sys.exit(EXIT_FAILURE)
    except typer.TyperException as e:  # bad flags and values: typer's usage errors carry exit code 2
        show = getattr(e, "show", None)
        if show:
            show()
        else:
            err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        sys.exit(getattr(e, "exit_code", EXIT_USAGE))

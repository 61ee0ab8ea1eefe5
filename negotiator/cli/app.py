"""The typer application and the error handling shared by every command.

Start-up is kept cheap: this module and every ``*_cmd`` module import only typer, rich and
light parts of negotiator at module level; LangGraph, LiteLLM, torch, transformers, numpy and
matplotlib are imported inside the commands that use them (``benchmarks/startup.py``).
"""

from __future__ import annotations

import errno
import os
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from ..errors import RemoteRequestBlocked, StoreUnreachable, Unreachable, UsageError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it

# The embedded trained reader, greedy: offline, no key (= negotiator.agent.DEFAULT_SELLER).
DEFAULT_SELLER = "local/gemma-3-270m-reader?temperature=0"

# Written to a file or a CI log, rich would squeeze the result tables into 80 columns and cut
# every figure to an ellipsis; COLUMNS still wins when set.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 160
# Specs, paths and a buyer's words are printed as written: no `:x:` in them turns into an emoji.
console = Console(width=_WIDTH, emoji=False)
# Errors and warnings are one line each, however long: a log or a script reads them whole (a
# terminal still wraps them on screen).
err_console = Console(stderr=True, width=_WIDTH, emoji=False, soft_wrap=True)

app = typer.Typer(
    name="negotiator",
    help="Deploy, evaluate and train negotiating sellers. Every command works offline by default.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _print_version(value: bool) -> None:
    if value:
        from ..version import package_version

        console.print(f"negotiator {package_version()}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    command = ctx.invoked_subcommand
    if command in ("eval", "train"):
        from ..version import git_commit

        # Read the checkout's commit now (it is cached): episodes and training manifests name
        # the code this process started from, even when the work tree is committed to while it runs.
        git_commit()
    if os.environ.get("OTEL_TRACES_EXPORTER", "").strip():  # the standard variables, for every command
        from ..tracing import configure_tracing

        configure_tracing("negotiator-service" if command == "serve" else "negotiator")


def command() -> str:
    """How to type this program again, for the commands a run prints to copy: ``negotiator`` when
    that is what PATH finds, else as it was started (``.venv/bin/negotiator`` after the README's
    set-up without an activated environment, ``python -m negotiator``)."""
    import shlex
    import shutil

    argv0 = Path(sys.argv[0])
    if argv0.name == "negotiator":  # the console script
        found = shutil.which("negotiator")
        return "negotiator" if found and Path(found).resolve() == argv0.resolve() else shlex.quote(str(argv0))
    started = list(getattr(sys, "orig_argv", []))
    if "-m" in started:  # python -m negotiator
        return shlex.join(started[: started.index("-m") + 2])
    return "negotiator"


def output_folder(path: Path, flag: str = "--out") -> Path:
    """``path`` as a folder this process can write into, created if missing; else a UsageError saying why."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path} is a file, not a folder: give the path of a folder (it is created if missing)")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(
                    f"{flag} {path}: {parent} is a file, so no folder can be made below it; choose another {flag}"
                )
            break
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".negotiator-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write there ({e.strerror or e}); choose a folder you can write to, or fix its "
            "permissions"
        ) from None
    return path


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings reach a CLI user as one line saying what happened, not as Python source locations."""
    err_console.print(f"[bold yellow]warning:[/] {escape(str(message))}")


def _register() -> None:
    """Import every ``*_cmd`` module of this package; each registers its command on ``app``."""
    import importlib
    import pkgutil

    from .. import cli

    for mod in pkgutil.iter_modules(cli.__path__):
        if mod.name.endswith("_cmd"):
            importlib.import_module(f"{cli.__name__}.{mod.name}")


def _os_error(e: OSError) -> tuple[str, int]:
    where = " ".join(str(x) for x in (e.filename, e.filename2) if x)
    what = e.strerror or str(e)
    # A path the user named that is missing, a file where a folder belongs, no permission: bad input.
    usage = isinstance(
        e, (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError, PermissionError)
    ) or e.errno in (
        errno.EROFS,
        errno.ENAMETOOLONG,
    )
    hint = "check the path and its permissions" if usage else "check the disk (space, mounts) and run the command again"
    return f"{what}{': ' + where if where else ''}; {hint}", EXIT_USAGE if usage else EXIT_FAILURE


def main() -> None:
    warnings.showwarning = _show_warning
    _register()
    try:
        rc = app(standalone_mode=False)
        if rc == EXIT_INTERRUPTED:  # typer's answer to a Ctrl-C no command handled (those exit with their own words)
            err_console.print("interrupted")
        sys.exit(rc if isinstance(rc, int) else EXIT_OK)
    except UsageError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        sys.exit(EXIT_USAGE)
    except RemoteRequestBlocked as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}")
        sys.exit(EXIT_USAGE)
    except Unreachable as e:
        what = "store unreachable" if isinstance(e, StoreUnreachable) else "model unreachable"
        err_console.print(f"[bold red]{what}:[/] {escape(str(e))}")
        sys.exit(EXIT_UNREACHABLE)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(EXIT_INTERRUPTED)
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
    except OSError as e:  # a file or folder the commands did not check for themselves
        message, code = _os_error(e)
        err_console.print(f"[bold red]error:[/] {escape(message)}")
        sys.exit(code)

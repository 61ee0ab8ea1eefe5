"""``negotiator view``: the live report of every run under a folder, served on loopback."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from .app import app, console


@app.command("view")
def view_command(
    folder: Annotated[
        Path | None,
        typer.Argument(help="The folder that holds the runs (default: runs/, or $NEGOTIATOR_RUNS_DIR)."),
    ] = None,
    port: Annotated[
        int | None,
        typer.Option(help="Port on 127.0.0.1 (default 7575, else the next free one; 0: any free port)."),
    ] = None,
) -> None:
    """Serve the report of the runs under FOLDER on 127.0.0.1, refreshed as their episodes land.

    Open the address it prints. The page is the one `negotiator report` writes (tables, plots,
    transcripts), rebuilt when a run's episode log grows, so a running `negotiator eval` shows up
    negotiation by negotiation. Only this machine can reach it. Ctrl-C stops it.
    """
    from evals.runs import runs_root
    from evals.view import serve

    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"--port {port}: choose 0..65535 (0: any free port)")
    server = serve(folder or runs_root(), port, say=lambda m: console.print(m, highlight=False, soft_wrap=True))
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        console.print("stopped")
    finally:
        server.server_close()
        server.live.close()  # type: ignore[attr-defined]

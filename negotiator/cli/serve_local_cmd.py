"""``negotiator serve-local``: a local model as an OpenAI-compatible server, in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import UsageError
from .app import app, console, err_console


@app.command("serve-local")
def serve_local_command(
    spec: Annotated[
        str,
        typer.Argument(help="local/gemma-3-270m, local/PATH (model or LoRA adapter folder), or just the name or path."),
    ] = "local/gemma-3-270m",
    host: Annotated[
        str, typer.Option(help="Interface to listen on. Keep loopback unless you mean to share it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0 picks a free one).")] = 8000,
    max_batch: Annotated[int, typer.Option(help="Most requests generated together in one batch.")] = 16,
) -> None:
    """Serve a local model the way vLLM does (chat completions, JSON-schema structured outputs) until Ctrl-C.

    Point any OpenAI-compatible client at it, e.g.
    negotiator eval --seller hosted_vllm/gemma-3-270m --seller-base-url http://127.0.0.1:8000/v1
    """
    import os
    import sys

    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch starts its threads: see servers.py
    from ..models.local.server import serve
    from ..models.local.servers import check_extra, prepare_for_use, resolve_target
    from .serve_cmd import address, listen

    if port < 0 or port > 65535:
        raise UsageError(f"--port {port}: choose 0..65535")
    if max_batch < 1:
        raise UsageError(f"--max-batch {max_batch}: choose 1 or more")
    name = spec[len("local/") :] if spec.startswith("local/") else spec
    model, _, settings = name.partition("?")
    if settings and not Path(name).expanduser().is_dir():
        raise UsageError(
            f"{spec}: serve-local serves a model, and a spec's ?{settings} are a seller's settings: serve "
            f"local/{model}, and clients send sampling settings with each request (temperature, top_p, max_tokens)"
        )
    check_extra()
    target = resolve_target(name)
    sock = listen(host, port)  # before the model loads (seconds, minutes on first use): a taken port fails now
    if target.note:
        err_console.print(target.note)
    for recipe in (target.recipe, target.base_recipe):
        if recipe:
            prepare_for_use(recipe, say=lambda msg: err_console.print(msg))
    if host not in ("127.0.0.1", "localhost", "::1"):
        err_console.print(f"[yellow]warning:[/] listening on {host}: anyone who can reach it can use the model")

    def ready(h: str, p: int) -> None:
        url = f"{address(sock)}/v1"
        console.print(f"serving {target.served_name} at [bold]{url}[/]  (Ctrl-C stops it)", soft_wrap=True)
        console.print(f"model folder: {target.folder}", soft_wrap=True)
        console.print(
            f"try: negotiator eval --seller hosted_vllm/{target.served_name} --seller-base-url {url}", soft_wrap=True
        )

    with sock:
        try:
            serve(
                target.folder,
                name=target.served_name,
                sock=sock,
                max_batch=max_batch,
                base=target.base,
                on_ready=ready,
            )
        except KeyboardInterrupt:  # Ctrl-C, once the server has stopped listening
            sys.stdout.flush()
            sys.stderr.flush()
            # Stopped as asked: exit 0 as negotiator serve and view do. At once (os._exit): a batch may be
            # mid-generation, and torch must not be torn down under it.
            os._exit(0)

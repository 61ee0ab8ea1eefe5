"""``negotiator serve``: the HTTP service a commerce backend calls (FastAPI + uvicorn)."""

from __future__ import annotations

import os
from typing import Annotated, Optional

import typer

from ..errors import UsageError
from .app import DEFAULT_SELLER, app, err_console, output_folder

MIN_KEY_CHARS = 16


def api_key_from_env(no_auth: bool) -> str | None:
    """The key from NEGOTIATOR_API_KEY; refuse to run open unless auth is explicitly off."""
    key = os.environ.get("NEGOTIATOR_API_KEY", "").strip()
    if no_auth:
        return None
    if not key:
        raise UsageError(
            "NEGOTIATOR_API_KEY is not set, and the service will not run without a key. Set it to a long random "
            "secret (python -c 'import secrets; print(secrets.token_urlsafe(32))') and send it as "
            "'Authorization: Bearer <key>'; or pass --no-auth for local development only."
        )
    if len(key) < MIN_KEY_CHARS:
        raise UsageError(f"NEGOTIATOR_API_KEY is only {len(key)} characters; use at least {MIN_KEY_CHARS} random characters")
    return key


def check_store(store: str) -> None:
    """A SQLite store the service can open: its folder writable, the file (if any) a SQLite database."""
    if store.startswith(("postgres://", "postgresql://")):
        return
    import sqlite3
    from pathlib import Path

    path = Path(store).expanduser()
    if path.is_dir():
        raise UsageError(f"--store {store} is a folder; give the path of a SQLite file (created if missing), e.g. {path / 'negotiations.sqlite'}")
    output_folder(path.parent, "--store's folder")
    if path.exists():
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as e:
            raise UsageError(f"--store {store} is not a SQLite database ({e}); give another file, or move this one away") from None


@app.command("serve")
def serve_command(
    host: Annotated[str, typer.Option(help="Address to listen on. 0.0.0.0 exposes the service to the network.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.", min=1, max=65535)] = 8000,
    seller: Annotated[str, typer.Option(help="Seller spec: local/gemma-3-270m, hosted_vllm/MODEL, openai/gpt-4o-mini ...")] = DEFAULT_SELLER,
    seller_base_url: Annotated[Optional[str], typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM, LiteLLM proxy).")] = None,
    instructions: Annotated[str, typer.Option(help="The business's instructions for the seller (tone, brand).")] = "",
    store: Annotated[str, typer.Option(envvar="NEGOTIATOR_STORE", help="Where negotiations are kept: a SQLite file or a postgresql:// URL.")] = "negotiations.sqlite",
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Run without an API key. Local development only.")] = False,
    cors_origin: Annotated[Optional[list[str]], typer.Option(
        help="A shop page's origin (https://shop.example) allowed to call the service from the browser with a "
        "negotiation's session token. Repeat for several.")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve negotiations over HTTP. Needs NEGOTIATOR_API_KEY (or --no-auth for local development).

    Tracing follows the standard OpenTelemetry variables (OTEL_TRACES_EXPORTER=console|otlp,
    OTEL_EXPORTER_OTLP_ENDPOINT ...); message text stays out of spans unless
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
    """
    try:
        import uvicorn

        from ..service import ServiceSettings, create_app
    except ImportError as e:
        raise UsageError(f"the service needs its extra: pip install 'negotiator-sdk[serve]' ({e.name} is missing)") from None
    from ..runtime.parties import make_party

    key = api_key_from_env(no_auth)
    for origin in cors_origin or []:
        if origin == "*" or not origin.startswith(("http://", "https://")) or origin.rstrip("/") != origin or origin.count("/") != 2:
            raise UsageError(f"--cors-origin {origin!r}: give an origin such as https://shop.example (scheme and host, no path)")
    check_store(store)
    if key is None:
        err_console.print("[bold yellow]warning:[/] --no-auth: anyone who can reach this port can negotiate. Local development only.")
    party = make_party(seller, "seller", base_url=seller_base_url, instructions=instructions)  # a bad spec fails here, exit 2
    application = create_app(ServiceSettings(seller=party, store=store, api_key=key, cors_origins=list(cors_origin or [])))
    uvicorn.run(application, host=host, port=port, log_level=log_level, proxy_headers=False, server_header=False)

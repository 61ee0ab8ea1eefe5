"""``negotiator serve``: the HTTP service a commerce backend calls (FastAPI + uvicorn)."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Annotated

import typer

from ..errors import StoreUnreachable, UsageError
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
        raise UsageError(
            f"NEGOTIATOR_API_KEY is only {len(key)} characters; use at least {MIN_KEY_CHARS} random characters"
        )
    return key


_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def shown_url(url: str) -> str:
    """``url`` with any password replaced by ***, fit for a message or a log."""
    return re.sub(r"(//[^:/@]*):[^@/]*@", r"\1:***@", url)


def check_store(store: str) -> None:
    """A store the service can open: a reachable PostgreSQL server for a ``postgresql://`` URL; for a
    SQLite file, its folder writable and the file (if any) a SQLite database. Any other URL is refused."""
    scheme = _URL_SCHEME.match(store)
    if scheme is not None:
        if scheme.group(1) not in ("postgres", "postgresql"):
            raise UsageError(
                f"--store {shown_url(store)}: unknown store URL scheme {scheme.group(1)!r}; give a SQLite file path "
                "(negotiations.sqlite) or a postgresql:// URL"
            )
        check_postgres(store)
        return
    import sqlite3
    from pathlib import Path

    path = Path(store).expanduser()
    if path.is_dir():
        raise UsageError(
            f"--store {store} is a folder; give the path of a SQLite file (created if missing), e.g. {path / 'negotiations.sqlite'}"
        )
    output_folder(path.parent, "--store's folder")
    if path.exists():
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                db.execute("PRAGMA schema_version").fetchone()
        except sqlite3.DatabaseError as e:
            raise UsageError(
                f"--store {store} is not a SQLite database ({e}); give another file, or move this one away"
            ) from None


def check_postgres(url: str) -> None:
    """Connect once to the PostgreSQL server ``url`` names: UsageError for a bad URL or a missing extra,
    StoreUnreachable (exit 3) when the server cannot be reached or refuses the login."""
    try:
        import psycopg
    except ImportError:
        raise UsageError(
            "a Postgres store needs langgraph-checkpoint-postgres: pip install 'negotiator-sdk[postgres]'"
        ) from None
    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.ProgrammingError as e:  # a URL libpq cannot parse
        said = _one_line(e).replace(url, shown_url(url))  # libpq may quote the URL, password and all
        raise UsageError(f"--store {shown_url(url)} is not a valid PostgreSQL URL ({said})") from None
    except psycopg.Error as e:
        said = _one_line(e).replace(url, shown_url(url))
        raise StoreUnreachable(
            f"--store {shown_url(url)}: cannot connect to PostgreSQL ({said}); check that the server is "
            "running and the URL's host, port, user, password and database"
        ) from None


def _one_line(e: Exception) -> str:
    return " ".join(str(e).split())[:300] or type(e).__name__


@app.command("serve")
def serve_command(
    host: Annotated[
        str, typer.Option(help="Address to listen on. 0.0.0.0 exposes the service to the network.")
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(help="Port to listen on; 0 picks a free one (the start-up line names it).", min=0, max=65535)
    ] = 8000,
    seller: Annotated[
        str, typer.Option(help="Seller spec: local/gemma-3-270m, hosted_vllm/MODEL, openai/gpt-4o-mini ...")
    ] = DEFAULT_SELLER,
    seller_base_url: Annotated[
        str | None,
        typer.Option(help="Base URL of an OpenAI-compatible server for the seller (vLLM, LiteLLM proxy)."),
    ] = None,
    instructions: Annotated[
        str,
        typer.Option(
            help="The business's instructions (tone, brand) for a seller whose model writes the words; the default's words are its strategy's sentences, which take none."
        ),
    ] = "",
    store: Annotated[
        str,
        typer.Option(
            envvar="NEGOTIATOR_STORE", help="Where negotiations are kept: a SQLite file or a postgresql:// URL."
        ),
    ] = "negotiations.sqlite",
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Run without an API key. Local development only.")] = False,
    cors_origin: Annotated[
        list[str] | None,
        typer.Option(
            help="A shop page's origin (https://shop.example) allowed to call the service from the browser with a "
            "negotiation's session token. Repeat for several."
        ),
    ] = None,
    catalogue: Annotated[
        Path | None,
        typer.Option(
            help="A JSON file of listings agents may discover and open over MCP and A2A (docs/protocols.md). "
            "Default: one generated listing per product template."
        ),
    ] = None,
    public_catalogue: Annotated[
        bool,
        typer.Option(
            "--public-catalogue",
            help="Let agents without a credential open negotiations on catalogue listings over MCP and "
            "A2A; each then continues with its own session token.",
        ),
    ] = False,
    public_url: Annotated[
        str | None,
        typer.Option(
            help="The URL clients reach this service at (https://shop.example/negotiator), for the A2A agent card. "
            "Default: the URL of each request."
        ),
    ] = None,
    header_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send a request's line and headers; slower ones are closed.")
    ] = 10.0,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a client has to send a request's whole body after its headers.")
    ] = 30.0,
    keep_alive_timeout: Annotated[
        float, typer.Option(help="Seconds an idle connection stays open between two requests.")
    ] = 5.0,
    max_connections: Annotated[
        int, typer.Option(help="Connections (and requests in flight) served at once; beyond, the answer is 503.")
    ] = 1000,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve negotiations over HTTP. Needs NEGOTIATOR_API_KEY (or --no-auth for local development).

    Agents reach the same negotiations over MCP (/mcp) and A2A (/.well-known/agent-card.json); a deal comes
    with an agreement record signed with NEGOTIATOR_SIGNING_KEY (docs/protocols.md).

    Tracing follows the standard OpenTelemetry variables (OTEL_TRACES_EXPORTER=console|otlp,
    OTEL_EXPORTER_OTLP_ENDPOINT ...); message text stays out of spans unless
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
    """
    try:
        import a2a.server  # noqa: F401  (the A2A face)
        import mcp.server  # noqa: F401  (the MCP face)
        import uvicorn

        from ..service import ServiceSettings, create_app
    except ImportError as e:
        raise UsageError(
            f"the service needs its extra: pip install 'negotiator-sdk[serve]' ({e.name} is missing)"
        ) from None
    from ..agreements import SIGNING_KEY_ENV, SigningKey
    from ..runtime.parties import make_party
    from ..service.catalogue import Catalogue

    key = api_key_from_env(no_auth)
    for origin in cors_origin or []:
        if (
            origin == "*"
            or not origin.startswith(("http://", "https://"))
            or origin.rstrip("/") != origin
            or origin.count("/") != 2
        ):
            raise UsageError(
                f"--cors-origin {origin!r}: give an origin such as https://shop.example (scheme and host, no path)"
            )
    check_store(store)
    for name, seconds in (
        ("--header-timeout", header_timeout),
        ("--body-timeout", body_timeout),
        ("--keep-alive-timeout", keep_alive_timeout),
    ):
        if not math.isfinite(seconds) or seconds <= 0:
            raise UsageError(f"{name} must be a positive number of seconds, got {seconds}")
    if max_connections < 1:
        raise UsageError(f"--max-connections must be at least 1, got {max_connections}")
    if key is None:
        from ..models import is_loopback

        if is_loopback(f"[{host}]" if ":" in host else host):
            who = "any program on this machine can negotiate (requests to other host names than localhost are refused)"
        else:  # the Host check stops a browser, not a program that writes its own Host header
            who = (
                f"listening on {host}, anyone who can reach this port can negotiate by addressing the request to "
                "localhost (requests to other host names are refused)"
            )
        err_console.print(f"[bold yellow]warning:[/] --no-auth: {who}. Local development only.", soft_wrap=True)
    listings = Catalogue.load(catalogue) if catalogue is not None else None
    if public_url is not None and not public_url.startswith(("http://", "https://")):
        raise UsageError(f"--public-url {public_url!r}: give the URL clients use, such as https://shop.example")
    if public_catalogue and key is None:
        raise UsageError(
            "--public-catalogue needs a key: without one (--no-auth) every caller may do everything anyway"
        )
    signing_key = SigningKey.from_env()
    if signing_key is None:
        signing_key = SigningKey.generate()
        err_console.print(
            f"[bold yellow]warning:[/] {SIGNING_KEY_ENV} is not set: agreements are signed with a key made for this "
            "process (public key at /.well-known/jwks.json); after a restart they no longer verify. Set it to "
            "the output of: python -c 'from negotiator.agreements import SigningKey; print(SigningKey.generate().export())'"
        )
    party = make_party(
        seller, "seller", base_url=seller_base_url, instructions=instructions
    )  # a bad spec fails here, exit 2
    application = create_app(
        ServiceSettings(
            seller=party,
            store=store,
            api_key=key,
            cors_origins=list(cors_origin or []),
            catalogue=listings,
            public_catalogue=public_catalogue,
            signing_key=signing_key,
            public_url=public_url.rstrip("/") if public_url else None,
        )
    )
    from ..models.local.servers import local_servers
    from ..service.deadlines import deadline_protocol

    plan = getattr(party, "strategy", None)
    err_console.print(f"seller: {getattr(party, 'spec', seller)}", highlight=False, soft_wrap=True)
    if instructions and plan is not None and plan.words == "strategy":
        err_console.print(
            "[bold yellow]warning:[/] --instructions change nothing for this seller: its words are its strategy's "
            "own sentences (words=strategy); a seller whose model writes the words takes them, e.g. "
            "--seller 'local/gemma-3-270m?temperature=0'",
            soft_wrap=True,
        )
    # A local model starts now, not on the first shopper's move (about 15 s on 2 cores).
    with local_servers([seller], say=err_console.print):
        sock = listen(host, port)
        err_console.print(f"listening on {address(sock)}", highlight=False)
        config = uvicorn.Config(
            application,
            host=host,
            port=sock.getsockname()[1],
            log_level=log_level,
            proxy_headers=False,
            server_header=False,
            http=deadline_protocol(header_timeout, body_timeout),  # slow clients are closed (service/deadlines.py)
            timeout_keep_alive=keep_alive_timeout,  # type: ignore[arg-type]  # uvicorn takes int, uses it as seconds
            limit_concurrency=max_connections,
        )
        uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int):
    """The service's listening socket, bound here so that a taken port is a clear error and
    ``--port 0`` (any free port) can be told to the user before the first request."""
    import errno
    import socket

    from ..models.local.servers import listening_socket

    try:
        return listening_socket(host, port)
    except OSError as e:
        unknown = (socket.EAI_NONAME, socket.EAI_AGAIN, socket.EAI_FAIL)  # create_server re-raises gaierror as OSError
        if e.errno == errno.EADDRNOTAVAIL or e.errno in unknown:  # not this machine's address, or no such name
            raise UsageError(
                f"cannot listen on {host}:{port}: {(e.strerror or str(e)).lower()}; --host takes an address of "
                "this machine (127.0.0.1, ::1, 0.0.0.0 for every interface)"
            ) from None
        raise UsageError(
            f"cannot listen on {host}:{port}: {(e.strerror or str(e)).lower()}; choose another --port (0 picks a free one) "
            "or stop what holds it"
        ) from None


def address(sock) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

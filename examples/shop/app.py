"""An example shop backend: a product page where a shopper negotiates with the seller agent.

The browser talks only to this backend; this backend talks to ``negotiator serve`` with
the business's API key, which never reaches the browser. The negotiation id lives in the
page's URL, so a reload (or a restart of either server) picks the conversation up again.

    NEGOTIATOR_API_KEY=... negotiator serve                 # the seller service, port 8000
    NEGOTIATOR_API_KEY=... python examples/shop/app.py      # this shop, http://127.0.0.1:8080
"""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

import httpx
from fastapi import FastAPI, Request, Response
from fastapi.responses import FileResponse

HERE = Path(__file__).parent
SERVICE = os.environ.get("NEGOTIATOR_URL", "http://127.0.0.1:8000").rstrip("/")
KEY = os.environ.get("NEGOTIATOR_API_KEY", "")
# The listing: which product, and the business's hard limits for it.
LISTING = json.loads((HERE / "listing.json").read_text())

app = FastAPI(title="Oakline shop (negotiator example)")
client = httpx.AsyncClient(base_url=SERVICE, headers={"Authorization": f"Bearer {KEY}"} if KEY else {}, timeout=120)


@app.get("/")
async def page() -> FileResponse:
    return FileResponse(HERE / "static" / "index.html")


@app.get("/favicon.svg", include_in_schema=False)
@app.get("/favicon.ico", include_in_schema=False)  # where browsers and bookmarks look when a page names none
async def favicon() -> FileResponse:
    return FileResponse(HERE / "static" / "favicon.svg", media_type="image/svg+xml")


NEGOTIATION_ID = re.compile(r"[0-9a-f]{32}")  # what the service's ids look like


def _error(status: int, code: str, message: str) -> Response:
    """An answer in the service's error shape, so the page reads the shop's own errors the same way."""
    return Response(json.dumps({"error": code, "message": message}), status_code=status, media_type="application/json")


async def _relay(method: str, path: str, **body) -> Response:
    """Forward to the negotiator service. Its error answers pass through as they are: a stable code
    the page turns into the shop's own words (``SAY`` in static/index.html), and a sentence for
    developers that the page never shows a shopper."""
    try:
        r = await client.request(method, path, **body)
    except httpx.HTTPError:
        return _error(503, "seller_unavailable", "The seller is not reachable right now; try again in a moment.")
    return Response(r.content, status_code=r.status_code, media_type="application/json")


def _negotiation(negotiation_id: str) -> str | None:
    """The service path of a negotiation, or None when the id is not one (this backend holds the key:
    it forwards only to the paths it means to)."""
    return f"/v1/negotiations/{negotiation_id}" if NEGOTIATION_ID.fullmatch(negotiation_id) else None


NO_SUCH = "No conversation with this id: open a new one."


@app.post("/api/negotiations")
async def open_negotiation() -> Response:
    return await _relay("POST", "/v1/negotiations", json=LISTING)


@app.get("/api/negotiations/{negotiation_id}")
async def get_negotiation(negotiation_id: str) -> Response:
    path = _negotiation(negotiation_id)
    return await _relay("GET", path) if path else _error(404, "not_found", NO_SUCH)


@app.post("/api/negotiations/{negotiation_id}/moves")
async def post_move(negotiation_id: str, request: Request) -> Response:
    # The body goes on as it came, streamed: the service checks it (a JSON object, at most 1 MB) and
    # answers in its own words, and this backend never holds a body in memory.
    path = _negotiation(negotiation_id)
    if path is None:
        return _error(404, "not_found", NO_SUCH)
    return await _relay("POST", f"{path}/moves", content=request.stream(), headers={"content-type": "application/json"})


if __name__ == "__main__":
    import socket

    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080, help="0: any free port (the address is printed)")
    args = parser.parse_args()
    # Bound here, so the address printed is the one taken and a taken port fails before serving.
    sock = socket.create_server((args.host, args.port), family=socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    host, port = sock.getsockname()[:2]
    print(f"shop at http://{f'[{host}]' if ':' in host else host}:{port}/", flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])

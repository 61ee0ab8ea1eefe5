"""``negotiator view FOLDER``: the report of every run under a folder, served live on loopback.

As ``inspect view`` does for its logs: a small HTTP server on 127.0.0.1 serves ``report.html`` for the
runs under the folder, rebuilt when an episode log changes; the page asks ``/version`` every two
seconds and reloads itself when episodes have landed, keeping its place (the transcript filter and
the open transcript live in the address, the scroll position in the tab's session storage). Runs
still being written are read up to their last complete line. Nothing is written into the folder:
the page is built in a temporary folder of the server's own.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import threading
import warnings
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from negotiator.errors import UsageError
from negotiator.runtime.log import DamagedLogWarning, describe, scan

from .runs import runs_under

HOST = "127.0.0.1"  # loopback only: transcripts hold the business's limits
DEFAULT_PORT = 7575  # inspect view's
POLL_MS = 2000

_LIVE = """
<script>
(() => {
  const key = "negotiator-view-scroll:" + location.pathname;
  const y = sessionStorage.getItem(key);
  if (y !== null) { sessionStorage.removeItem(key); window.scrollTo(0, Number(y)); }
  let version = %(version)s;
  async function poll() {
    try {
      const r = await fetch("version", {cache: "no-store"});
      const v = (await r.json()).version;
      if (v !== version) { sessionStorage.setItem(key, String(window.scrollY)); location.reload(); return; }
    } catch (e) { /* the server is gone or busy: try again */ }
    setTimeout(poll, %(poll)d);
  }
  setTimeout(poll, %(poll)d);
})();
</script>
"""

_BANNER = (
    '<div class="live" style="position:sticky;top:0;background:#eef6ee;border-bottom:1px solid #cde3cd;'
    'padding:.3rem .8rem;margin:-2rem 0 1rem;font-size:.85rem;z-index:5">live: %s; refreshes as episodes land</div>'
)

_DAMAGE = (
    '<div class="damage" style="background:#fff4e0;border:1px solid #f0d08a;padding:.3rem .8rem;margin:0 0 1rem;'
    'font-size:.85rem">warning: %s</div>'
)

_WAITING = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>negotiator view</title></head>
<body style="font-family:system-ui,sans-serif;margin:2rem">
<h1 style="font-size:1.3rem">Waiting for runs</h1>
<p>No negotiation has landed under <code>%s</code> yet. Start one with
<code>negotiator eval --out %s/NAME</code> (or plain <code>negotiator eval</code>, which writes under
<code>runs/</code>); this page shows it as its episodes land.</p>
</body></html>
"""

_UNREADABLE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>negotiator view</title></head>
<body style="font-family:system-ui,sans-serif;margin:2rem">
<h1 style="font-size:1.3rem">No run to show</h1>
%s
</body></html>
"""


def fingerprint(folder: Path) -> tuple[str, int, int]:
    """(a hash of every run log's size and time, the runs, the bytes logged): what the page polls."""
    parts, runs, size = [], 0, 0
    for run in runs_under(folder):
        for name in ("config.json", "episodes.jsonl"):
            try:
                st = (run / name).stat()
            except OSError:
                continue
            parts.append(f"{run}/{name}:{st.st_size}:{st.st_mtime_ns}")
            if name == "episodes.jsonl":
                runs += 1
                size += st.st_size
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16], runs, size


class LiveReport:
    """The page for ``folder``, rebuilt when its fingerprint changes (one build at a time)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._lock = threading.Lock()
        self._version: str | None = None
        self._html = ""
        self._tmp = tempfile.TemporaryDirectory(prefix="negotiator-view-")

    def version(self) -> str:
        return fingerprint(self.folder)[0]

    def page(self) -> str:
        with self._lock:
            version = self.version()
            if version != self._version:
                self._html = self._build(version)
                self._version = version
            return self._html

    def _build(self, version: str) -> str:
        from .arms import load_arms
        from .report import build_report, write_report

        runs: list[str | Path] = [r for r in runs_under(self.folder) if (r / "episodes.jsonl").is_file()]
        live = _LIVE % {"version": json.dumps(version), "poll": POLL_MS}
        runs, unreadable = _readable(runs)
        if not runs and not unreadable:
            shown = escape(str(self.folder))
            return _WAITING % (shown, shown) + live
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            arms = [a for a in load_arms(runs) if a.episodes] if runs else []
        damage = _damage(runs) if any(issubclass(w.category, DamagedLogWarning) for w in said) else ""
        damage = "".join(_DAMAGE % escape(note) for note in unreadable) + damage
        if not arms:
            if unreadable:  # only damaged runs: say so rather than wait for runs that are there
                return _UNREADABLE % damage + live
            shown = escape(str(self.folder))
            return _WAITING % (shown, shown) + live
        report = build_report(arms)
        out = Path(self._tmp.name) / "report"
        html = write_report(report, out, arms)["html"].read_text(encoding="utf-8")
        n = sum(len(a.episodes) for a in arms)
        shown = f"{n:,} negotiations in {len(runs)} run{'s' if len(runs) != 1 else ''} under {escape(str(self.folder))}"
        head, _, tail = html.partition("<body>")
        body, _, end = tail.rpartition("</body>")
        return f"{head}<body>\n{_BANNER % shown}{damage}{body}{live}</body>{end}"

    def close(self) -> None:
        self._tmp.cleanup()


def _readable(runs: list[str | Path]) -> tuple[list[str | Path], list[str]]:
    """The runs whose config.json reads, and for each other one what is wrong with it: one damaged
    run leaves the page showing the rest, with the fix that `negotiator report` would give."""
    from .runner import read_config

    good: list[str | Path] = []
    notes: list[str] = []
    for run in runs:
        try:
            read_config(run)
        except UsageError as e:
            notes.append(f"{run} left out: {e}")
        else:
            good.append(run)
    return good, notes


def _damage(runs: list[str | Path]) -> str:
    """A notice of the damaged lines the page leaves out, as ``negotiator report`` warns of them;
    a torn last line is a run still being written (read on the next refresh), not damage."""
    notes = []
    for run in runs:
        log = Path(run) / "episodes.jsonl"
        damaged = [d for d in scan(log)[1] if not d.reason.startswith("is torn")]
        if damaged:
            notes.append(
                f"{escape(str(log))}: {len(damaged)} damaged line{'s' if len(damaged) > 1 else ''} left out "
                f"({escape(describe(damaged))}); the next <code>negotiator eval</code> into that folder sets them "
                "aside and plays those negotiations again"
            )
    return "".join(_DAMAGE % note for note in notes)


def serve(folder: Path, port: int | None = None, say=print) -> ThreadingHTTPServer:
    """A server for ``folder`` bound to loopback (``port`` None: 7575, else the next free one; 0: any free
    one); the caller runs ``serve_forever``. The URL is said before the first request."""
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder: give the folder that holds your runs (runs/ by default)")
    live = LiveReport(folder)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the terminal shows the URL, not every poll
            pass

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            path = self.path.split("?", 1)[0]
            port = self.server.server_address[1]  # type: ignore[index]  # an (host, port) pair: TCP
            if self.headers.get("Host", "") not in (f"{HOST}:{port}", f"localhost:{port}"):
                # a page elsewhere whose name resolves to 127.0.0.1 (DNS rebinding) must not read the transcripts
                self._send(403, f"negotiator view answers at http://{HOST}:{port}/ only".encode(), "text/plain")
                return
            try:
                if path in ("/", "/index.html", "/report.html"):
                    self._send(200, live.page().encode("utf-8"), "text/html; charset=utf-8")
                elif path == "/version":
                    version, runs, size = fingerprint(folder)
                    body = json.dumps({"version": version, "runs": runs, "bytes": size}).encode()
                    self._send(200, body, "application/json")
                elif path == "/favicon.ico":
                    self._send(204, b"", "image/x-icon")
                else:
                    self._send(404, b"not found: the report is at /", "text/plain; charset=utf-8")
            except (UsageError, OSError, ValueError) as e:  # a run that cannot be read: say so on the page
                page = f"<!DOCTYPE html><meta charset=utf-8><title>negotiator view</title><p>{escape(str(e))}</p>"
                self._send(500, page.encode(), "text/html; charset=utf-8")

    server = _bind(Handler, port)
    server.live = live  # type: ignore[attr-defined]
    say(
        f"serving the runs under {folder} at http://{HOST}:{server.server_address[1]}/ "
        "(loopback only; the page refreshes as episodes land; Ctrl-C stops)"
    )
    return server


def _bind(handler: type[BaseHTTPRequestHandler], port: int | None) -> ThreadingHTTPServer:
    tries = [port] if port is not None else [*range(DEFAULT_PORT, DEFAULT_PORT + 20), 0]
    for p in tries:
        try:
            return ThreadingHTTPServer((HOST, p), handler)
        except OSError as e:
            last = e
    raise UsageError(f"--port {port}: cannot listen on {HOST}:{port} ({last.strerror or last}); choose another port")

"""A model hub on loopback that speaks just enough of the Hub's HTTP API for ``huggingface_hub`` to
create a repository and commit files to it (``negotiator train --push-to-hub`` in tests).

Point ``HF_ENDPOINT`` at it. Every file is asked for as a "regular" upload (the contents travel in
the commit itself), so no LFS or Xet storage is involved; commits land in ``repos``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeHub:
    def __init__(self, *, user: str = "tester", token: str = "hf_test_token", refuse: int | None = None):
        self.user, self.token, self.refuse = user, token, refuse
        self.repos: dict[str, dict] = {}  # repo id -> {"private": bool, "files": {path: bytes}, "commits": [...]}
        self.requests: list[tuple[str, str]] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _send(self, status: int, data: dict) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                hub.requests.append(("GET", self.path))
                if self.path.startswith("/api/whoami"):
                    return self._send(200, {"name": hub.user, "type": "user", "orgs": []})
                self._send(404, {"error": "not found"})

            def do_POST(self):
                hub.requests.append(("POST", self.path))
                body = self._body()
                if hub.refuse is not None:
                    return self._send(hub.refuse, {"error": "refused by the fake hub"})
                if self.headers.get("Authorization") != f"Bearer {hub.token}":
                    return self._send(401, {"error": "Invalid credentials in Authorization header"})
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts == ["api", "validate-yaml"]:  # a model card's metadata: the fake takes any
                    return self._send(200, {"errors": [], "warnings": []})
                if parts[:3] == ["api", "repos", "create"]:
                    data = json.loads(body)
                    repo = f"{data.get('organization') or hub.user}/{data['name']}"
                    private = data.get("visibility") == "private" or bool(data.get("private"))  # 2.x, older
                    hub.repos.setdefault(repo, {"private": private, "files": {}, "commits": []})
                    return self._send(200, {"url": f"http://{self.headers['Host']}/{repo}", "name": repo})
                if parts[:2] == ["api", "models"] and len(parts) >= 6 and parts[4] in ("preupload", "commit"):
                    repo = f"{parts[2]}/{parts[3]}"
                    if repo not in hub.repos:
                        return self._send(404, {"error": f"Repository {repo} not found"})
                    if parts[4] == "preupload":
                        files = json.loads(body)["files"]
                        modes = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]
                        return self._send(200, {"files": modes, "commitOid": "0" * 40})
                    lines = [json.loads(x) for x in body.decode().splitlines() if x.strip()]
                    header = next(x["value"] for x in lines if x["key"] == "header")
                    for x in lines:
                        if x["key"] == "file":
                            v = x["value"]
                            hub.repos[repo]["files"][v["path"]] = base64.b64decode(v["content"])
                    oid = hashlib.sha1(body).hexdigest()
                    hub.repos[repo]["commits"].append({"oid": oid, "summary": header.get("summary", "")})
                    return self._send(
                        200,
                        {
                            "commitUrl": f"http://{self.headers['Host']}/{repo}/commit/{oid}",
                            "commitOid": oid,
                            "pullRequestUrl": None,
                        },
                    )
                self._send(404, {"error": f"the fake hub does not serve {self.path}"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

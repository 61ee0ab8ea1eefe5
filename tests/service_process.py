"""``negotiator serve`` run for real, on loopback: the tests' service fixture and the replica
benchmark (benchmarks/replicas.py) start their processes with this one class."""

from __future__ import annotations

import os
import re


class ServiceProcess:
    """``negotiator serve`` run for real: a uvicorn subprocess on loopback, restartable."""

    def __init__(
        self,
        workdir,
        *,
        seller: str = "scripted/boulware",
        key: str | None = "test-key-0123456789abcdef",
        extra_env: dict | None = None,
        log_level: str = "warning",
        args: tuple[str, ...] = (),
        store: str | None = None,
    ):
        self.port = 0  # the first start takes any free port (serve prints it); restarts keep it
        self.workdir, self.seller, self.key, self.extra_env, self.log_level = (
            workdir,
            seller,
            key,
            extra_env or {},
            log_level,
        )
        self.args = list(args)
        self.store = store or str(workdir / "negotiations.sqlite")  # a file path or a postgresql:// URL
        self.proc = None
        self.starts = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"} if self.key else {}

    def start(self) -> ServiceProcess:
        import subprocess
        import sys
        import time

        import httpx

        env = {**os.environ, **self.extra_env}
        env.pop("NEGOTIATOR_API_KEY", None)
        cmd = [
            sys.executable,
            "-m",
            "negotiator",
            "serve",
            "--port",
            str(self.port),
            "--store",
            self.store,
            "--seller",
            self.seller,
            "--log-level",
            self.log_level,
            *self.args,
        ]
        if self.key:
            env["NEGOTIATOR_API_KEY"] = self.key
        else:
            cmd.append("--no-auth")
        self.starts += 1
        self.log = self.workdir / f"service-{id(self)}-{self.starts}.log"  # replicas share a workdir
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"negotiator serve exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"
                )
            if not self.port:
                found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", self.log.read_text())
                if found is None:
                    time.sleep(0.1)
                    continue
                self.port = int(found.group(1))
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"negotiator serve did not answer within 60 s:\n{self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        import subprocess

        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> ServiceProcess:
        self.stop()
        return self.start()

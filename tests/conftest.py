"""Shared fixtures. Every test runs offline: a real provider request fails loudly."""

from __future__ import annotations

import os

os.environ["NEGOTIATOR_BLOCK_REMOTE"] = "1"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Property tests check behaviour, not speed: on a shared, loaded CPU a 200 ms deadline fails at random.
settings.register_profile("negotiator", deadline=None)
settings.load_profile("negotiator")

from negotiator.domain import generate  # noqa: E402
from negotiator.llm.graph import RetryPolicy  # noqa: E402
from negotiator.models import block_remote_requests  # noqa: E402

block_remote_requests(True)


@pytest.fixture(scope="module")
def tiny_home(tmp_path_factory):
    """A cache root (NEGOTIATOR_HOME) for one test module, the tiny random Gemma prepared once;
    local servers stopped at the end."""
    from negotiator.models.local import stop_all
    from negotiator.models.local.prepare import prepare

    root = tmp_path_factory.mktemp("home")
    old = os.environ.get("NEGOTIATOR_HOME")
    os.environ["NEGOTIATOR_HOME"] = str(root)
    prepare("tiny-random-gemma")
    yield root
    stop_all()
    if old is None:
        os.environ.pop("NEGOTIATOR_HOME", None)
    else:
        os.environ["NEGOTIATOR_HOME"] = old


@pytest.fixture
def scenario():
    """A furniture scenario where the buyer opens (seed 0)."""
    return generate(0)


@pytest.fixture
def seller_first():
    """A scenario where the seller opens (seed 1, b2b supplies)."""
    s = generate(1)
    assert s.opener == "seller"
    return s


@pytest.fixture
def fast_retry():
    return RetryPolicy(max_retries=3, initial_delay=0.001, max_delay=0.002, timeout=5.0)


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
    ):
        import socket

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.workdir, self.seller, self.key, self.extra_env, self.log_level = (
            workdir,
            seller,
            key,
            extra_env or {},
            log_level,
        )
        self.args = list(args)
        self.store = str(workdir / "negotiations.sqlite")
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.proc = None
        self.starts = 0

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
        self.log = self.workdir / f"service-{self.starts}.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"negotiator serve exited with {self.proc.returncode}:\n{self.log.read_text()[-3000:]}"
                )
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


@pytest.fixture
def service_process(tmp_path):
    """A factory for real ``negotiator serve`` processes; every one is stopped after the test."""
    started: list[ServiceProcess] = []

    def make(**kw) -> ServiceProcess:
        sp = ServiceProcess(tmp_path, **kw)
        started.append(sp)
        return sp.start()

    yield make
    for sp in started:
        sp.stop()

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
        self.log = self.workdir / f"service-{self.port}-{self.starts}.log"  # replicas share a workdir
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


def _as_postgres(cmd: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the postgres user the Debian package creates.
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@pytest.fixture(scope="session")
def postgres_url():
    """A throwaway PostgreSQL server (initdb + pg_ctl in a temp folder, loopback only) for the whole run.

    Skips, saying why, when the server binaries (Debian's postgresql package: .ci/run installs it)
    or the ``postgres`` extra are missing.
    """
    import glob
    import shutil
    import socket
    import subprocess
    import tempfile

    pytest.importorskip("langgraph.checkpoint.postgres", reason="pip install 'negotiator-sdk[postgres]'")
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]))
    if not bins:
        pytest.skip("no PostgreSQL server binaries in /usr/lib/postgresql (apt-get install postgresql)")
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root without a postgres user: PostgreSQL will not start as root")
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: PostgreSQL will not start as root")
    bindir = bins[-1]
    root = tempfile.mkdtemp(prefix="negotiator-pg-")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = os.path.join(root, "data")
    subprocess.run(
        _as_postgres([f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(
        _as_postgres([f"{bindir}/pg_ctl", "-D", data, "-o", opts, "-l", os.path.join(root, "log"), "-w", "start"]),
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            _as_postgres([f"{bindir}/pg_ctl", "-D", data, "-m", "fast", "-w", "stop"]), capture_output=True, timeout=120
        )
        shutil.rmtree(root, ignore_errors=True)

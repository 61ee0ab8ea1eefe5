"""Shared fixtures. Every test runs offline: a real provider request fails loudly."""

from __future__ import annotations

import os
import signal

os.environ["NEGOTIATOR_BLOCK_REMOTE"] = "1"
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Several tests press Ctrl-C (SIGINT) on a child process. A shell starts a background job
# (`cmd &`, nohup) with SIGINT ignored, children inherit that, and Python then installs no
# KeyboardInterrupt handler: the child never sees the Ctrl-C. Give children the terminal's
# disposition whatever started the test run.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Property tests check behaviour, not speed: on a shared, loaded CPU a 200 ms deadline fails at random.
settings.register_profile("negotiator", deadline=None)
settings.load_profile("negotiator")

from service_process import ServiceProcess  # noqa: E402

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

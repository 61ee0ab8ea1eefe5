"""Starting, sharing and stopping local model servers.

A ``local/...`` spec names a model folder; the first call that needs it starts a server
process for it on a free loopback port (the parent binds the port and hands the socket
to the child, so there is no race for it), waits until it answers ``/health``, and every
party in the process then shares that one server. Servers stop when ``stop_all`` runs:
at the end of ``local_servers()`` (the CLI wraps each run in it), at interpreter exit,
and, if the parent is killed outright, by themselves: the child exits when its parent
is gone.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import ProviderError, UsageError
from ..families import model_family
from .prepare import RECIPES, home, models_dir
from .shipped import SELLERS, local_folder

START_TIMEOUT_S = 300.0
_EXTRA = ("torch", "transformers", "xgrammar", "fastapi", "uvicorn")


def listening_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (IPv6 when the host is one; port 0: any free port), bound
    by the caller before serving so that the port taken is known and a taken one fails here."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=2048)


@dataclass(frozen=True)
class Target:
    """What a ``local/NAME`` spec serves."""

    name: str  # as written after local/
    served_name: str  # the model name the server answers to
    recipe: str | None  # a prepared model (built on first use), or None for a folder on disk
    folder: Path  # the model or adapter folder
    base: Path | None = None  # an adapter's base model folder
    base_recipe: str | None = None  # ... when that base is a prepared model
    family: str = "gemma"
    note: str | None = None  # what was chosen when the name was a training run's folder


def check_extra() -> None:
    missing = [m for m in _EXTRA if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"local models need {', '.join(missing)}: install the local extra, "
            "pip install -e '.[local]' in a checkout (or pip install 'negotiator-sdk[local]')"
        )


def resolve_target(name: str) -> Target:
    """Check a ``local/`` name without starting anything. Raises UsageError with a hint."""
    if name in RECIPES:
        return Target(name, name, name, models_dir() / name, family=model_family(name))
    path = local_folder(name)
    if not path.is_dir():
        from difflib import get_close_matches

        near = get_close_matches(name, [*RECIPES, *SELLERS], n=1)
        guess = f" (did you mean local/{near[0]}?)" if near else ""
        raise UsageError(
            f"local/{name}: no such prepared model or folder{guess}. Prepared models: "
            f"{', '.join([*RECIPES, *SELLERS])}; "
            "or give the path of a transformers model folder or a LoRA adapter folder, e.g. local/./runs/train/adapter"
        )
    path = path.resolve()
    if _is_training_run(path):
        t = _training_run_target(name, path)
        return replace(t, note=f"local/{name} is {SELLERS[name].description}, on {t.base}") if name in SELLERS else t
    if not (path / "config.json").is_file() and not (path / "adapter_config.json").is_file():
        runs = sorted(p.name for p in path.iterdir() if p.is_dir() and (p / "manifest.json").is_file())
        if runs:
            raise UsageError(
                f"local/{name} holds {len(runs)} training runs ({', '.join(runs)}: a learning-rate sweep): "
                f"evaluate one of them, e.g. local/{Path(name) / runs[0]}"
            )
    return _folder_target(name, path)


def _is_training_run(path: Path) -> bool:
    """A ``negotiator train --out`` folder: its config.json is the training config, not a model's."""
    if (path / "manifest.json").is_file() or (path / "merged").is_dir() or (path / "adapter").is_dir():
        try:
            return "model_type" not in json.loads((path / "config.json").read_text())
        except (OSError, ValueError):
            return True
    return False


def trained_strategy(name: str) -> str | None:
    """The seller strategy a ``negotiator train`` run trained with (``boulware?candidates=3``,
    ``none``), for a ``local/`` name that is a run folder, its merged/ or adapter/, or one of its
    checkpoints/checkpoint-N (which played the default seller, not the one the run trained); None
    for any other name. A run written before training had strategies trained the pure policy."""
    path = local_folder(name)
    if path.parent.name == "checkpoints" and path.name.startswith("checkpoint-"):
        path = path.parent.parent
    for run in (path, path.parent) if path.name in ("merged", "adapter") else (path,):
        if run.is_dir() and _is_training_run(run):
            try:
                config = json.loads((run / "config.json").read_text())
            except (OSError, ValueError):
                return None
            return str(config.get("strategy", "none")) if isinstance(config, dict) else None
    return None


def _training_run_target(name: str, run: Path) -> Target:
    """The model of a training run: its merged model, else its LoRA adapter (a run saves both at its end)."""
    plays = f"; the seller plays the strategy it trained with, {trained_strategy(str(run))} (override with ?strategy=)"
    if (run / "merged" / "config.json").is_file():
        t = _folder_target(name, run / "merged")
        return replace(
            t,
            served_name=run.name,
            note=f"local/{name} is a training run: serving its merged model, {run / 'merged'}{plays}",
        )
    # a kept run (a shipped seller): the adapter files beside the run's manifest and config
    for adapter in (run / "adapter", run):
        if (adapter / "adapter_config.json").is_file():
            t = _folder_target(name, adapter)
            return replace(
                t,
                served_name=run.name,
                note=f"local/{name} is a training run: serving its LoRA adapter, {adapter}, on {t.base}{plays}",
            )
    raise UsageError(
        f"local/{name} is a training run folder with no model saved yet (no merged/ or adapter/): it is still "
        f"training or stopped before its first save. Rerun its `negotiator train --out {run}` command to resume it, "
        "then evaluate it"
    )


def _folder_target(name: str, path: Path) -> Target:
    if (path / "adapter_config.json").is_file():
        try:
            base_name = json.loads((path / "adapter_config.json").read_text())["base_model_name_or_path"]
        except (ValueError, KeyError):
            raise UsageError(f"{path}/adapter_config.json has no base_model_name_or_path") from None
        base = Path(base_name).expanduser()
        if base.is_dir() and base_name not in RECIPES:  # a bare prepared name means ours, not a folder in the cwd
            return Target(name, path.name, None, path, base=base.resolve(), family=_family_of(base))
        known = base_name.rstrip("/").split("/")[-1]
        if known in RECIPES:  # e.g. an adapter trained on google/gemma-3-270m: serve it on our prepared copy
            return Target(
                name, path.name, None, path, base=models_dir() / known, base_recipe=known, family=model_family(known)
            )
        raise UsageError(
            f"the LoRA adapter {path} is for the base model {base_name!r}, which is neither a folder here nor one of "
            f"the prepared models ({', '.join(RECIPES)}). Put the base model folder at that path or edit "
            "adapter_config.json."
        )
    if (path / "config.json").is_file():
        return Target(name, path.name, None, path, family=_family_of(path))
    raise UsageError(
        f"{path} is neither a transformers model folder (config.json) nor a LoRA adapter folder (adapter_config.json)"
    )


def _family_of(folder: Path) -> str:
    try:
        return model_family(json.loads((folder / "config.json").read_text()).get("model_type", folder.name))
    except (OSError, ValueError):
        return model_family(folder.name)


class LocalServer:
    """One server process for one target."""

    def __init__(self, target: Target, *, max_batch: int = 16):
        self.target, self.max_batch = target, max_batch
        self.proc: subprocess.Popen | None = None
        self.port: int | None = None
        self.log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = START_TIMEOUT_S, say=None) -> LocalServer:
        check_extra()
        t = self.target
        if t.recipe:
            prepare_for_use(t.recipe, say)
        if t.base_recipe:
            prepare_for_use(t.base_recipe, say)
        sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = sock.getsockname()[1]
        logs = home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / f"{t.served_name}-{self.port}.log"
        cmd = [
            sys.executable,
            "-m",
            "negotiator.models.local.server",
            str(t.folder),
            "--name",
            t.served_name,
            "--fd",
            str(sock.fileno()),
            "--parent-pid",
            str(os.getpid()),
            "--max-batch",
            str(self.max_batch),
        ]
        if t.base is not None:
            cmd += ["--base", str(t.base)]
        # Passive OpenMP threads: on a busy CPU, spinning threads cost a 270M model up to 2x (measured).
        env = {"OMP_WAIT_POLICY": "PASSIVE", **os.environ, "PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                cmd,
                pass_fds=[sock.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # Ctrl-C reaches us, and we stop it (no half-dead child)
            )
        sock.close()
        if say is not None:  # the wait that follows is the model loading: say what it is and where its log is
            say(f"starting the local model {t.served_name} (log: {self.log_path})")
        started = time.monotonic()
        try:
            self._wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        if say is not None:
            say(f"local model {t.served_name} ready in {time.monotonic() - started:.0f} s")
        return self

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                raise ProviderError(
                    f"the local server for {self.target.name} exited during start-up (code "
                    f"{self.proc.returncode if self.proc else '?'}):\n{self.log_tail()}\nfull log: {self.log_path}"
                )
            if self.healthy(1.0):
                return
            time.sleep(0.2)
        raise ProviderError(
            f"the local server for {self.target.name} did not become healthy in {timeout:.0f}s; log: {self.log_path}"
        )

    def healthy(self, timeout: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=timeout) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError, ValueError):
            return False

    def log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:]) if self.log_path else ""
        except OSError:
            return ""

    def stop(self, grace: float = 5.0) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


# --- the process-wide registry ----------------------------------------------------------

_servers: dict[Target, LocalServer] = {}
_lock = threading.Lock()


def server_for(target: Target, say=None) -> LocalServer:
    """The running server of ``target``, started on first use and shared afterwards."""
    with _lock:
        server = _servers.get(target)
        if server is None or not server.running:
            server = LocalServer(target).start(say=say)
            _servers[target] = server
        return server


def running_servers() -> list[LocalServer]:
    return [s for s in _servers.values() if s.running]


def stop_all() -> None:
    """Stop every local server this process started."""
    with _lock:
        servers = list(_servers.values())
        _servers.clear()
    for s in servers:
        s.stop()


atexit.register(stop_all)


@contextmanager
def local_servers(specs: Iterable[str] = (), say=None) -> Iterator[list[LocalServer]]:
    """Start the servers ``specs`` need now (preparing models on first use); stop every local
    server when the block ends, also on Ctrl-C and on errors."""
    from ..specs import parse_spec

    try:
        started = []
        for spec in specs:
            s = parse_spec(spec)
            if s.kind == "local":
                try:
                    target = resolve_target(s.name)
                    if target.note and say is not None:
                        say(target.note)
                    started.append(server_for(target, say=say))
                except ProviderError as e:
                    raise UsageError(
                        f"{e}\n`negotiator models prepare NAME --force` rebuilds a prepared model."
                    ) from None
        yield started
    finally:
        stop_all()


def prepare_for_use(name: str, say=None) -> Path:
    """Prepare ``name`` if needed, showing a progress bar on stderr when it has to build."""
    from .progress import prepare_with_progress

    return prepare_with_progress(name, say=say)

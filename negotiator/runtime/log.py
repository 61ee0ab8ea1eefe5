"""The episode log: JSONL, one episode per line, appended and fsynced as each one ends.

Damage is kept aside, never lost and never fatal. A line that is not UTF-8, not JSON, or not
a valid episode (a torn last line from a killed writer, a disk error, a hand edit) is skipped
by readers with one warning that says where and why. A writer opening the log
(``EpisodeLog``) moves such lines, byte for byte, to ``episodes.damaged.jsonl`` beside it and
rewrites the log with the valid lines only (atomically: the damaged copy is on disk before the
log is replaced), so a resumed run plays those negotiations again. An episode id seen twice
keeps its first copy. A line of another ``schema_version`` is not damage: it is refused with
what to do. A resume moves the episodes that ended in an error to ``episodes.failed.jsonl``
the same way (``set_aside_failed``), and plays those negotiations again.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ..errors import UsageError
from .episode import SCHEMA_VERSION, Episode


class DamagedLogWarning(UserWarning):
    """Lines of an episode log were skipped because they could not be read."""


@dataclass(frozen=True)
class DamagedLine:
    line: int  # 1-based line number in the log
    reason: str
    raw: bytes  # the line as it was, without its newline


def damaged_path(path: str | Path) -> Path:
    """Where a writer keeps the damaged lines of ``path``: ``episodes.jsonl`` -> ``episodes.damaged.jsonl``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.damaged{p.suffix or '.jsonl'}")


def describe(damaged: list[DamagedLine], limit: int = 3) -> str:
    """``line 3: not UTF-8 text; line 9: ...`` for a message."""
    shown = "; ".join(f"line {d.line}: {d.reason}" for d in damaged[:limit])
    return shown + (f"; and {len(damaged) - limit} more" if len(damaged) > limit else "")


class EpisodeLog:
    """Append-only JSONL writer. Safe to share between tasks of one process.

    Opening it sets damaged lines aside (see the module docstring); ``set_aside`` lists them.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise UsageError(f"{self.path} is a folder; the episode log must be a file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.set_aside: list[DamagedLine] = set_aside_damaged(self.path)

    def append(self, episode: Episode) -> None:
        self.append_many([episode])

    def append_many(self, episodes: list[Episode]) -> None:
        """Append several episodes with one write and one fsync (a batch runner's group commit)."""
        self.append_lines([e.model_dump_json() for e in episodes])

    def append_lines(self, lines: list[str]) -> None:
        """Append episodes already serialised (``Episode.model_dump_json``), one write and one fsync."""
        data = "".join(line + "\n" for line in lines)
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


def _parse(raw: bytes, path: Path, n: int) -> Episode | str:
    """The episode on one line, or why it is damaged. Another schema version raises UsageError."""
    try:
        ep = Episode.model_validate_json(raw)  # the fast path: nearly every line
    except ValidationError as e:
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as u:
            return f"holds bytes that are not UTF-8 text (at byte {u.start})"
        except json.JSONDecodeError as j:
            return f"is not JSON ({j.msg}: column {j.colno})"
        if not isinstance(data, dict):
            return "is not an episode (a JSON object)"
        version = data.get("schema_version")
        if isinstance(version, int) and not isinstance(version, bool):
            _check_version(version, path, n)
        err = e.errors()[0]
        where = ".".join(str(x) for x in err.get("loc", ())) or "the episode"
        return f"is not a valid episode ({where}: {err.get('msg', 'invalid')})"
    _check_version(ep.schema_version, path, n)
    return ep


def _check_version(version, path: Path, n: int) -> None:
    if version != SCHEMA_VERSION:
        raise UsageError(
            f"{path}:{n}: episode schema_version {version} is not supported by this version of negotiator "
            f"(it reads {SCHEMA_VERSION}); upgrade negotiator or re-run the evaluation"
        )


def _classify(p: Path) -> tuple[bytes, list[tuple[int, bytes, Episode | str]]]:
    """The log's bytes, and each non-blank line with its episode or why it is damaged."""
    data = p.read_bytes()
    lines = [(n, raw) for n, raw in enumerate(data.split(b"\n"), 1) if raw.strip()]
    torn = not data.endswith(b"\n")  # what follows the last newline is a line cut short
    out = []
    for k, (n, raw) in enumerate(lines):
        result = _parse(raw, p, n)
        if isinstance(result, str) and torn and k == len(lines) - 1:
            result = f"is torn (the writer stopped mid-line) and {result}"
        out.append((n, raw, result))
    return data, out


def scan(path: str | Path) -> tuple[list[Episode], list[DamagedLine]]:
    """Every readable episode of the log (first copy of each id) and every damaged line."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"no episode log at {p}")
    if p.is_dir():
        raise UsageError(f"{p} is a folder; an episode log is a file")
    try:
        _, lines = _classify(p)
    except OSError as e:
        raise UsageError(f"cannot read {p}: {e.strerror or e}") from None
    episodes: list[Episode] = []
    damaged: list[DamagedLine] = []
    seen: set[str] = set()
    for n, raw, result in lines:
        if isinstance(result, str):
            damaged.append(DamagedLine(n, result, raw))
        elif result.episode_id not in seen:
            seen.add(result.episode_id)
            episodes.append(result)
    return episodes, damaged


def iter_episodes(path: str | Path) -> Iterator[Episode]:
    """Episodes in file order; damaged lines are skipped with one ``DamagedLogWarning``."""
    episodes, damaged = scan(path)
    if damaged:
        warnings.warn(
            f"{path}: skipped {len(damaged)} damaged line{'s' if len(damaged) > 1 else ''} ({describe(damaged)}); "
            f"the next `negotiator eval` into that folder moves them to {damaged_path(path).name} and plays those negotiations again",
            DamagedLogWarning,
            stacklevel=2,
        )
    yield from episodes


def read_episodes(path: str | Path) -> list[Episode]:
    return list(iter_episodes(path))


def played(path: str | Path) -> dict[str, dict]:
    """What each episode of the log at ``path`` says happened, by id, without what the clock
    decides (latencies, wall time, creation time): two runs of one seeded command compare equal."""
    out = {}
    for line in Path(path).read_text().split("\n"):  # not splitlines(): a message may hold U+2028 or U+0085
        if not line.strip():
            continue
        e = json.loads(line)
        turns = [{k: v for k, v in t.items() if k != "latency_s"} for t in e["turns"]]
        metrics = {k: v for k, v in e["metrics"].items() if k not in ("seller_latency_s", "wall_time_s")}
        out[e["episode_id"]] = {"turns": turns, "outcome": e["outcome"], "metrics": metrics, "error": e["error"]}
    return out


def set_aside_damaged(path: str | Path) -> list[DamagedLine]:
    """Move the damaged lines of the log at ``path`` to its ``.damaged.jsonl`` sibling; return them.

    The valid lines stay, in order, byte for byte. The damaged ones are appended (and fsynced)
    to the sibling before the log is atomically replaced, so a crash at any point loses nothing.
    A valid last line without its newline gets one, so the next append starts a line.
    """
    p = Path(path)
    if not p.exists() or p.stat().st_size == 0:
        return []
    data, lines = _classify(p)
    good = [raw for _, raw, result in lines if not isinstance(result, str)]
    damaged = [DamagedLine(n, result, raw) for n, raw, result in lines if isinstance(result, str)]
    if not damaged:
        if not data.endswith(b"\n"):
            with open(p, "ab") as f:
                f.write(b"\n")
                f.flush()
                os.fsync(f.fileno())
        return []
    _move_aside(p, good, [d.raw for d in damaged], damaged_path(p))
    return damaged


def failed_path(path: str | Path) -> Path:
    """Where a resume keeps the episodes it plays again: ``episodes.jsonl`` -> ``episodes.failed.jsonl``."""
    p = Path(path)
    return p.with_name(f"{p.stem}.failed{p.suffix or '.jsonl'}")


def set_aside_failed(path: str | Path, ids: set[str]) -> int:
    """Move the episodes of ``ids`` in the log at ``path`` that ended in an error (a provider that
    failed past its retries, a crashed party) to its ``.failed.jsonl`` sibling; return how many.

    A resume calls this so those negotiations are played again (an error episode is no result: it is
    left out of the scores). As with damaged lines, the moved lines are on disk in the sibling before
    the log is atomically replaced, and the other lines stay byte for byte. Cheap, as ``episode_ids``:
    only each line's id and error are read (damaged lines were set aside when the log was opened).
    """
    p = Path(path)
    if not p.is_file() or p.stat().st_size == 0:
        return 0
    keep: list[bytes] = []
    moved: list[bytes] = []
    for raw in p.read_bytes().split(b"\n"):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
            failed = data.get("error") is not None and data.get("episode_id") in ids
        except (ValueError, AttributeError):  # not JSON, not an object: damage is set_aside_damaged's
            failed = False
        (moved if failed else keep).append(raw)
    if moved:
        _move_aside(p, keep, moved, failed_path(p))
    return len(moved)


def _move_aside(p: Path, keep: list[bytes], moved: list[bytes], aside: Path) -> None:
    """Append ``moved`` to ``aside`` (fsynced), then atomically replace the log ``p`` with ``keep``."""
    with open(aside, "ab") as f:
        f.write(b"".join(raw + b"\n" for raw in moved))
        f.flush()
        os.fsync(f.fileno())
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(b"".join(g + b"\n" for g in keep))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(p.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def episode_ids(path: str | Path) -> set[str]:
    """Ids already logged (cheap: reads only the id field of each line; unreadable lines are skipped)."""
    p = Path(path)
    if not p.is_file():
        return set()
    out = set()
    with open(p, "rb") as f:
        for line in f:
            try:
                data = json.loads(line)
                out.add(data["episode_id"])
            except (ValueError, KeyError, TypeError):  # ValueError covers bad JSON and bad UTF-8
                continue
    return out

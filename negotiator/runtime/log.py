"""The episode log: JSONL, one episode per line, appended and fsynced as each one ends.

Reading tolerates a torn last line (the process was killed mid-write) and skips it, so a
crashed run resumes cleanly; an episode id seen twice keeps its first copy.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

from ..errors import UsageError
from .episode import SCHEMA_VERSION, Episode


class EpisodeLog:
    """Append-only JSONL writer. Safe to share between tasks of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._repair_tail()

    def _repair_tail(self) -> None:
        """Cut a torn last line left by a killed writer, so the next append starts clean."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        with open(self.path, "rb+") as f:
            f.seek(-1, os.SEEK_END)
            if f.read(1) == b"\n":
                return
            data = self.path.read_bytes()
            cut = data.rfind(b"\n") + 1
            f.truncate(cut)

    def append(self, episode: Episode) -> None:
        self.append_many([episode])

    def append_many(self, episodes: list[Episode]) -> None:
        """Append several episodes with one write and one fsync (a batch runner's group commit)."""
        data = "".join(e.model_dump_json() + "\n" for e in episodes)
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())


def iter_episodes(path: str | Path) -> Iterator[Episode]:
    """Episodes in file order; a torn or unreadable line is skipped with a warning."""
    p = Path(path)
    if not p.exists():
        raise UsageError(f"no episode log at {p}")
    seen: set[str] = set()
    with open(p, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                warnings.warn(f"{p}:{n}: skipping a torn or corrupt line", stacklevel=2)
                continue
            version = data.get("schema_version")
            if version != SCHEMA_VERSION:
                raise UsageError(
                    f"{p}:{n}: episode schema_version {version} is not supported by this version of negotiator "
                    f"(it reads {SCHEMA_VERSION}); upgrade negotiator or re-run the evaluation"
                )
            ep = Episode.model_validate(data)
            if ep.episode_id in seen:
                continue
            seen.add(ep.episode_id)
            yield ep


def read_episodes(path: str | Path) -> list[Episode]:
    return list(iter_episodes(path))


def episode_ids(path: str | Path) -> set[str]:
    """Ids already logged (cheap: reads only the id field of each line)."""
    p = Path(path)
    if not p.exists():
        return set()
    out = set()
    with open(p, encoding="utf-8") as f:
        for line in f:
            try:
                out.add(json.loads(line)["episode_id"])
            except (json.JSONDecodeError, KeyError):
                continue
    return out

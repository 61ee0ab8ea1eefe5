"""What code this is: the installed version, read from the distribution's metadata
(``negotiator-sdk``), and the git commit of a checkout.

A module of its own so that anything in the package (and the CLI before it knows its command)
can record them without importing the package face (``negotiator/__init__``) or the episode
model, which would pull every layer in.
"""

from __future__ import annotations

from functools import cache

DISTRIBUTION = "negotiator-sdk"
"""The distribution (pip) name this package is installed as; ``__version__`` reads its metadata."""


def read_version() -> str:
    """The installed version; a source checkout that is not installed reads pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with open(Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
                return tomllib.load(f)["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "0+unknown"


package_version = cache(read_version)
"""``read_version()``, looked up once per process (every episode and span records it)."""


@cache
def git_commit() -> str | None:
    """The commit of the negotiator checkout in use, when it runs from a git work tree."""
    import subprocess
    from pathlib import Path

    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None

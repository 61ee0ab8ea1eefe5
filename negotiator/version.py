"""The installed version, read from the distribution's metadata (``negotiator-sdk``).

A module of its own so that anything in the package can record the version without
importing the package face (``negotiator/__init__``), which would pull every layer in.
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

"""How numbers read in reports: the console tables and the HTML page share these."""

from __future__ import annotations


def fmt(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def fmt_ci(block: dict, key: str, digits: int = 3) -> str:
    if block.get(key) is None:
        return "-"
    if not block.get(f"{key}_ci"):
        return f"{block[key]:.{digits}f}"
    lo, hi = block[f"{key}_ci"]
    return f"{block[key]:.{digits}f} [{fmt(lo, digits)}, {fmt(hi, digits)}]"


def fmt_diff(d: dict) -> str:
    """``+0.012 [+0.003, +0.021]``; a bound that excludes 0 never reads as 0 (``+4.0e-04``)."""
    return f"{d['mean']:+.3f} [{_bound(d['low'], d['low'] > 0)}, {_bound(d['high'], d['high'] < 0)}]"


def _bound(x: float, excludes_zero: bool) -> str:
    return f"{x:+.1e}" if excludes_zero and round(x, 3) == 0 else f"{x:+.3f}"


def fmt_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"

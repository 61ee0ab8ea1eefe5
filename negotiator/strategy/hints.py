"""Hints: what the other side's words say it will do, as one reading of them.

A ``Hints`` record is pure data. Whoever reads the other side's messages fills it: the
keyword reader of ``negotiator.strategy.reading`` (the baseline), a language model's
reading of the same messages, or, in an evaluation only, the truth (an oracle). The
responsive strategy takes it as it comes and prices its moves with it
(``Strategy.moves``), so a better reading shows up as a better score and nothing else
changes.

Each signal is what was *said* plus how much to believe it. ``credible`` is the reader's
belief that the signal is true, in [0, 1]: a keyword reader cannot tell a bluff from a
threat by the words, so it reports the base rate (``UNSURE``); a model may read more into
them; an oracle knows (0 or 1).

==============  ===============================================================================
``threat``      the buyer's latest words say it walks away unless we move; ``threat_credible``:
                it would; ``threats``: how many of its messages so far threatened
``hurry``       the buyer says it must close early; ``deadline``: by which progress (0..1), if read
``quote``       terms the buyer names as its alternative (a competing quote: usually the price
                alone), ``quote_credible``: that they are its true walk-away
``priorities``  issues the buyer says matter most to it, first first; ``priorities_credible``
==============  ===============================================================================
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..domain.issues import Value

UNSURE = 0.5
"""The belief a reader that cannot judge a signal's truth reports: as likely true as not."""


@dataclass(frozen=True)
class Hints:
    threat: bool = False
    threat_credible: float = UNSURE
    threats: int = 0  # messages so far that threatened, the latest included
    hurry: bool = False
    deadline: float | None = None  # progress (0 first move .. 1 last) by which a hurried buyer goes
    quote: dict[str, Value] = field(default_factory=dict)  # issue -> value the buyer names as its alternative
    quote_credible: float = UNSURE
    priorities: tuple[str, ...] = ()  # issue names, most important first
    priorities_credible: float = UNSURE
    source: str = ""  # who read them: "keywords", a model spec, "oracle"

    def __post_init__(self) -> None:
        for name in ("threat_credible", "quote_credible", "priorities_credible"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"{name} must be a finite number in [0, 1], not {v!r}")
        if not (isinstance(self.threats, int) and self.threats >= 0):
            raise ValueError(f"threats must be a count, not {self.threats!r}")
        if self.deadline is not None and not (math.isfinite(self.deadline) and 0.0 <= self.deadline <= 1.0):
            raise ValueError(f"deadline must be a progress in [0, 1] or None, not {self.deadline!r}")

    @property
    def empty(self) -> bool:
        """Nothing was read."""
        return not (self.threat or self.hurry or self.quote or self.priorities)

    def signals(self) -> tuple[str, ...]:
        """The names of the signals read, in a fixed order."""
        flags = (("threat", self.threat), ("hurry", self.hurry), ("quote", self.quote), ("priorities", self.priorities))
        return tuple(name for name, said in flags if said)

    def with_(self, **changes) -> Hints:
        return replace(self, **changes)


NO_HINTS = Hints()

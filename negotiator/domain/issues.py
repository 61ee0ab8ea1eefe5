"""Issues and the outcome space.

An issue is something the two sides bargain over. A numeric issue is a closed range
with a unit and a step (price 800..1200 USD in steps of 1); a discrete issue is a list
of options, ordered (delivery days 2, 5, 10, 20) or categorical (payment upfront, net30,
net60). An offer assigns one value to every issue of the outcome space; partial offers
and unknown keys are invalid.
"""

from __future__ import annotations

import functools
import itertools
import math
import unicodedata
from functools import cached_property
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    FiniteFloat,
    field_validator,
    model_validator,
)

from ..errors import InvalidOffer


def _finite(v: int | float | str) -> int | float | str:
    # NaN compares false with everything, so one NaN in a limit or an offer would switch
    # off every comparison the guard makes; an int beyond float range cannot be compared
    # with float bounds either. Both are refused where data enters.
    if isinstance(v, (int, float)) and not isinstance(v, bool) and not _is_finite(v):
        raise ValueError(f"must be a finite number, got {_show(v)}")
    return v


def _is_finite(x: int | float) -> bool:
    try:
        return math.isfinite(x)
    except OverflowError:  # an int too large for a float
        return False


def _show(x: int | float) -> str:
    return "an integer beyond the range of floats" if isinstance(x, int) else repr(x)


Value = Annotated[int | float | str, AfterValidator(_finite)]
"""One value of an issue: a finite number or an option name."""
Offer = dict[str, Value]
"""Terms of an offer: issue name -> value. Validated by :meth:`OutcomeSpace.validate`."""


class _IssueBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$", description="snake_case key used in offers")
    label: str = ""
    unit: str = ""

    def title(self) -> str:
        return self.label or self.name.replace("_", " ")


# Every value, grid point and step count on a numeric issue stays an exact float (below 2**53)
# and every sum the strategy forms stays finite: a range beyond this fails a later move instead.
MAX_MAGNITUDE = 1e15


class NumericIssue(_IssueBase):
    """A closed range ``[low, high]`` in steps of ``step`` (a step of 1 means integers)."""

    kind: Literal["numeric"] = "numeric"
    low: FiniteFloat
    high: FiniteFloat
    step: FiniteFloat = 1.0

    @model_validator(mode="after")
    def _check_range(self) -> NumericIssue:
        if not self.high > self.low:
            raise ValueError(f"issue {self.name!r}: high ({self.high}) must exceed low ({self.low})")
        if max(abs(self.low), abs(self.high)) > MAX_MAGNITUDE:
            raise ValueError(
                f"issue {self.name!r}: low and high must lie within ±{MAX_MAGNITUDE:.0e}, got {self.low}..{self.high}; "
                "state the values in a larger unit (thousands, millions)"
            )
        if self.step <= 0:
            raise ValueError(f"issue {self.name!r}: step must be positive")
        if (self.high - self.low) / self.step > MAX_MAGNITUDE:
            raise ValueError(
                f"issue {self.name!r}: step ({self.step}) is too small for the range {self.low}..{self.high} "
                f"(more than {MAX_MAGNITUDE:.0e} steps)"
            )
        if self.step > self.high - self.low:
            raise ValueError(
                f"issue {self.name!r}: step ({self.step}) must not exceed the range ({self.high - self.low}), "
                "or the issue has a single value"
            )
        return self

    @property
    def integral(self) -> bool:
        return float(self.step).is_integer() and float(self.low).is_integer()

    def snap(self, x: float) -> Value:
        """Round ``x`` onto the grid and into the range."""
        k = round((x - self.low) / self.step)
        v = min(max(self.low + k * self.step, self.low), self.high)
        return int(round(v)) if self.integral else round(v, 10)

    def grid(self, points: int) -> list[Value]:
        """``points`` evenly spaced values (snapped), always including both ends."""
        return list(_grid(self, points))

    def check(self, value: object) -> str | None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"must be a number between {_fmt(self.low)} and {_fmt(self.high)}, got {value!r}"
        if not _is_finite(value):
            return f"must be a finite number, got {_show(value)}"
        if value < self.low or value > self.high:
            return f"{_fmt(value)} is outside the allowed range {_fmt(self.low)}..{_fmt(self.high)}"
        return None

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f"{_fmt(self.low)}..{_fmt(self.high)}{unit}"

    @property
    def size(self) -> int:
        """How many values the grid holds, ``low`` and ``high`` included."""
        return int(round((self.high - self.low) / self.step)) + 1

    def values(self) -> list[Value]:
        """Every allowed value, ``low`` to ``high`` in steps of ``step`` (``size`` of them)."""
        return list(dict.fromkeys(self.snap(self.low + k * self.step) for k in range(self.size)))

    def normalise(self, value: object) -> Value:
        """``value`` on the grid: a number (or a numeric string such as "1,200") clamped into the range and
        rounded to the nearest step. Raises ValueError for anything that is not a finite number."""
        x = _number(value)
        if x is None:
            raise ValueError(f"must be a number between {_fmt(self.low)} and {_fmt(self.high)}, got {value!r}")
        return self.snap(x)


@functools.lru_cache(maxsize=4096)
def _grid(issue: NumericIssue, points: int) -> tuple[Value, ...]:
    # Every Pareto analysis and outcome index asks for the same grids again: keep them
    # (an issue is frozen, so equal issues share one).
    n = max(2, points)
    vals = [issue.snap(issue.low + (issue.high - issue.low) * i / (n - 1)) for i in range(n)]
    return tuple(dict.fromkeys(vals))


class DiscreteIssue(_IssueBase):
    """A list of allowed options. ``ordered`` says the list order means something."""

    kind: Literal["discrete"] = "discrete"
    options: tuple[Value, ...]
    ordered: bool = False

    @field_validator("options", mode="before")
    @classmethod
    def _no_booleans(cls, v: object) -> object:
        # pydantic would read True as 1: the shopper would be offered "1" and "0".
        if isinstance(v, (list, tuple)) and booleans_in(v):
            raise ValueError(
                f"options are numbers or words, not True/False ({list(v)}); write them as words, e.g. 'yes', 'no'"
            )
        return v

    @field_validator("options")
    @classmethod
    def _check_options(cls, v: tuple[Value, ...]) -> tuple[Value, ...]:
        if len(v) < 2:
            raise ValueError("a discrete issue needs at least two options")
        if len(set(v)) != len(v):
            raise ValueError("discrete options must be distinct")
        seen: dict[str, Value] = {}
        for o in v:  # as offers and limits read them: case, spacing, Unicode forms, a number as text
            key = _option_key(o)
            if key in seen:
                raise ValueError(f"options {seen[key]!r} and {o!r} read as the same option; make them differ in words")
            seen[key] = o
        return v

    def check(self, value: object) -> str | None:
        if isinstance(value, bool) or value not in self.options:
            allowed = ", ".join(repr(o) for o in self.options)
            return f"{value!r} is not an allowed option; choose one of {allowed}"
        # 12 and 12.0 compare equal; keep the declared type so terms stay canonical.
        return None

    def canonical(self, value: Value) -> Value:
        return self.options[self.options.index(value)]

    @property
    def size(self) -> int:
        return len(self.options)

    def values(self) -> list[Value]:
        """The allowed options, in their declared order."""
        return list(self.options)

    def normalise(self, value: object) -> Value:
        """The option ``value`` means: the option itself, one that differs only in case, spacing or type
        ("Net30" for "net30", "10" or 10.0 for 10); for an ordered numeric issue, the nearest option.
        Raises ValueError naming the options when none fits."""
        if not isinstance(value, bool) and value in self.options:
            return self.canonical(value)
        key = _option_key(value)
        for option in self.options:
            if _option_key(option) == key:
                return option
        x = _number(value)
        numeric = [o for o in self.options if isinstance(o, (int, float)) and not isinstance(o, bool)]
        if x is not None and self.ordered and len(numeric) == len(self.options):
            return min(numeric, key=lambda o: abs(o - x))
        allowed = ", ".join(repr(o) for o in self.options)
        raise ValueError(f"{value!r} is not an allowed option; choose one of {allowed}")

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return "one of " + ", ".join(str(o) for o in self.options) + unit

    def option_named(self, value: object) -> Value:
        """The option ``value`` names, written as the listing writes it: the option itself, or one that differs
        only in case, spacing, Unicode compatibility forms (fullwidth ``３``) or type ("3", "3.0", " 3" for 3).
        Unlike ``normalise``, never the nearest of an ordered issue's options: a limit must name what it forbids.
        Raises ValueError naming the options when ``value`` names none, or several."""
        if not isinstance(value, bool) and value in self.options:
            return self.canonical(value)
        key = _option_key(value)
        named = [o for o in self.options if _option_key(o) == key]
        if not named and not isinstance(value, bool):
            x = _number(unicodedata.normalize("NFKC", value) if isinstance(value, str) else value)
            if x is not None:
                named = [o for o in self.options if isinstance(o, (int, float)) and not isinstance(o, bool) and o == x]
        if len(named) == 1:
            return named[0]
        allowed = ", ".join(repr(o) for o in self.options)
        if named:
            raise ValueError(
                f"{value!r} could be any of {', '.join(repr(o) for o in named)}; write it as the listing does"
            )
        raise ValueError(f"{value!r} is not one of the options {allowed}")


Issue = Annotated[NumericIssue | DiscreteIssue, Field(discriminator="kind")]


def booleans_in(value: object) -> str:
    """Where ``value`` (a value, a mapping or a list of them) holds True or False, as ``price=True``;
    '' if nowhere. pydantic reads True as 1, so options, limits and offers refuse them by this."""
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, dict):
        return next((f"{k}={booleans_in(v)}" for k, v in value.items() if booleans_in(v)), "")
    if isinstance(value, (list, tuple)):
        return next((repr(v) for v in value if isinstance(v, bool)), "")
    return ""


def _no_boolean(v: object) -> object:
    if isinstance(v, bool):
        raise ValueError(f"{v!r} is not a number; give a whole number")
    return v


NotBoolean = BeforeValidator(_no_boolean)
"""For an int field (a count, a seed, a turn): refuse True and False, which pydantic reads as 1 and 0.
It goes after the field's bounds, ``Annotated[int, Field(ge=0), NotBoolean]``; before them, pydantic
leaves the bounds out of the JSON schema."""


def checked_issues(v: tuple[Issue, ...]) -> tuple[Issue, ...]:
    """``v`` when it can form an outcome space: at least one issue, no name twice; else ValueError."""
    if not v:
        raise ValueError("an outcome space needs at least one issue")
    names = [i.name for i in v]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate issue names: {sorted(dup)}")
    return v


class OutcomeSpace(BaseModel):
    """The issues under negotiation; validates offers and enumerates outcomes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    issues: tuple[Issue, ...]

    @field_validator("issues")
    @classmethod
    def _unique(cls, v: tuple[Issue, ...]) -> tuple[Issue, ...]:
        return checked_issues(v)

    @cached_property
    def names(self) -> list[str]:
        return [i.name for i in self.issues]

    def issue(self, name: str) -> NumericIssue | DiscreteIssue:
        for i in self.issues:
            if i.name == name:
                return i
        raise KeyError(name)

    def problems(self, terms: object) -> dict[str, str]:
        """Everything wrong with ``terms``, keyed by issue name (empty when valid)."""
        if not isinstance(terms, dict):
            return {"terms": f"must be an object mapping each issue to a value, got {type(terms).__name__}"}
        out: dict[str, str] = {}
        for issue in self.issues:
            if issue.name not in terms:
                out[issue.name] = f"missing; give a value ({issue.describe()})"
            else:
                err = issue.check(terms[issue.name])
                if err:
                    out[issue.name] = err
        for key in terms:
            if key not in self.names:
                out[str(key)] = f"unknown issue; the issues are {', '.join(self.names)}"
        return out

    def validate_offer(self, terms: object) -> Offer:
        """Return canonical terms (issue order, declared option types) or raise InvalidOffer."""
        problems = self.problems(terms)
        if problems:
            raise InvalidOffer(problems)
        assert isinstance(terms, dict)
        out: Offer = {}
        for issue in self.issues:
            v = terms[issue.name]
            out[issue.name] = issue.canonical(v) if isinstance(issue, DiscreteIssue) else issue.snap(v)
        return out

    def values(self, name: str) -> list[Value]:
        """Every value issue ``name`` allows: a discrete issue's options, a numeric issue's whole grid
        (``low`` to ``high`` in steps of ``step``; ``issue(name).size`` says how long before you ask)."""
        return self._known(name).values()

    def normalise(self, name: str, value: object) -> Value:
        """``value`` as issue ``name`` allows it: snapped onto a numeric grid and into its range, or matched
        to a discrete option. Raises InvalidOffer naming the issue when nothing fits."""
        issue = self._known(name)
        try:
            return issue.normalise(value)
        except ValueError as e:
            raise InvalidOffer({name: str(e)}) from None

    def normalise_offer(self, terms: dict) -> Offer:
        """Terms a party may offer: every issue's value normalised (``normalise``), in issue order.
        Raises InvalidOffer listing missing, unknown and unusable issues."""
        problems: dict[str, str] = {
            str(k): f"unknown issue; the issues are {', '.join(self.names)}" for k in terms if k not in self.names
        }
        out: Offer = {}
        for issue in self.issues:
            if issue.name not in terms:
                problems[issue.name] = f"missing; give a value ({issue.describe()})"
                continue
            try:
                out[issue.name] = issue.normalise(terms[issue.name])
            except ValueError as e:
                problems[issue.name] = str(e)
        if problems:
            raise InvalidOffer(problems)
        return out

    def _known(self, name: str) -> NumericIssue | DiscreteIssue:
        try:
            return self.issue(name)
        except KeyError:
            raise InvalidOffer({str(name): f"unknown issue; the issues are {', '.join(self.names)}"}) from None

    def grid(self, numeric_points: int = 21) -> list[Offer]:
        """Every outcome on a grid: all discrete options x ``numeric_points`` per numeric issue."""
        axes = [list(i.options) if isinstance(i, DiscreteIssue) else i.grid(numeric_points) for i in self.issues]
        return [dict(zip(self.names, combo, strict=False)) for combo in itertools.product(*axes)]

    def format_offer(self, terms: Offer) -> str:
        parts = []
        for issue in self.issues:
            v = terms.get(issue.name)
            unit = f" {issue.unit}" if issue.unit else ""
            parts.append(f"{issue.name}={_fmt(v) if isinstance(v, (int, float)) else v}{unit}")
        return ", ".join(parts)


def _option_key(value: object) -> str:
    """How an option is compared when written by hand: Unicode compatibility forms folded (NFKC), spacing
    at the ends and case ignored."""
    return unicodedata.normalize("NFKC", str(value)).strip().casefold()


def _number(value: object) -> float | None:
    """A finite number from a number or a numeric string ("1,200", " 15.5 "); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip().replace(",", "").replace("_", ""))
        except ValueError:
            return None
    if isinstance(value, (int, float)) and _is_finite(value):
        return float(value)
    return None


def _fmt(x: object) -> str:
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e16:  # 1e308 stays 1e+308, not 309 digits
        return str(int(x))
    return str(x)


def terms_in_words(space: OutcomeSpace, terms: Offer) -> str:
    """Terms as a shopper reads them: ``price 540 USD, delivery days 7 days, warranty extended``."""
    parts = []
    for issue in space.issues:
        v = terms[issue.name]
        unit = f" {issue.unit}" if isinstance(issue, NumericIssue) and issue.unit else ""
        parts.append(f"{issue.name.replace('_', ' ')} {_fmt(v)}{unit}")
    return ", ".join(parts)

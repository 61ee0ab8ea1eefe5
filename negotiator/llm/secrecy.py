"""What a seller may never say: its private numbers, in any plain disguise.

A seller's secrets are its hard limits (a price floor, a cap), the lowest price it could
ever accept (the floor utility with everything else at its best), its walk-away value and
the weight it puts on each issue. ``Secrecy.redact`` removes every sentence of a message
that states one of them; the guard calls it on every seller action.

Each sentence is matched on a normalised copy (what is sent stays the sentence as written):

1. Unicode NFKC (full-width digits, ligatures, odd spaces), invisible format characters
   dropped (zero-width spaces and joiners, soft hyphens, bidi marks, combining marks),
   every script's decimal digits read as ASCII, superscript exponents kept as ``^2``.
2. English number words to digits with text2num (``six hundred and fourteen`` -> 614,
   ``zero point four two`` -> 0.42), plus ``point four two`` and ``37 dollars and 85 cents``.
3. Scientific forms (``6.14e2``, ``6.14 x 10^2``) evaluated; currency codes, words and
   symbols split off the digits they are glued to (``USD614``, ``614usd``).

Then every number is read every way a person could mean it: as written; with commas or
dots as thousands separators; times a multiplier (``6.14 hundred``, ``14.3k``, ``14 grand``);
a run of single digits separated by spaces, dashes or dots joined (``6 1 4``, ``6-1-4``);
``6 14`` and ``14 300`` as 614 and 14300; as a share when it is a percentage (``42
percent``), a fraction (``42/100``, ``21 out of 50``) or a decimal below one (``.42``).

A sentence discloses a secret when one of those readings lies within the secret's
tolerance (half a price step, or 0.2 %; 0.6 points for a share), except:

* restating the offer's own terms is fine (the buyer sees them anyway) unless the
  sentence frames the number as a limit (``final``, ``won't go under``, ``lowest``, ``not a
  cent less``, ``take it or leave it`` ...): then a number at a secret is the secret;
* a percentage next to a price word (``10% off``, ``a 30% deposit``) is a discount or a
  term, not a share of the seller's utility, unless the sentence talks about utility,
  weights or the walk-away value;
* a bare number counts as a share (``my reservation is 42``) only when the sentence says
  it is one (walk-away, reservation, utility, weight, priority ...).

What no deterministic filter reaches, this one included: arithmetic ("two times three
hundred plus fourteen"), a number spelled letter by letter, another language, a code, a
hint spread over several messages. The guard keeps the limits themselves whatever is said.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from text_to_num import alpha2digit

from ..domain.issues import NumericIssue, OutcomeSpace
from ..domain.scenario import HardLimits
from ..domain.utility import Preferences

SHARE_TOLERANCE = 0.006
"""A share (walk-away value, issue weight) matches within 0.6 points: 42% for 0.4201, 0.42 or 0.4251."""


@dataclass(frozen=True)
class Secret:
    """One private number. ``share``: a utility or weight in [0, 1], also said as 42% or 21/50."""

    label: str
    value: float
    tolerance: float
    share: bool = False
    issue: str | None = None  # the issue it belongs to (a limit's, a weight's)

    def matches(self, x: float) -> bool:
        return abs(x - self.value) <= self.tolerance + 1e-9


def secrets_of(prefs: Preferences, limits: HardLimits, space: OutcomeSpace) -> tuple[Secret, ...]:
    """Every private number of a seller with these preferences and limits."""
    out: list[Secret] = []

    def amount(label: str, issue: NumericIssue, v: float) -> Secret:
        return Secret(label, float(v), max(issue.step / 2, abs(float(v)) * 0.002), issue=issue.name)

    for bound, word in ((limits.minimum, "minimum"), (limits.maximum, "maximum")):
        for k, v in bound.items():
            issue = space.issue(k)
            if isinstance(issue, NumericIssue):
                out.append(amount(f"{word} {k}", issue, v))
    floor = limits.utility_floor(prefs)
    out.append(Secret("walk-away value", float(floor), SHARE_TOLERANCE, share=True))
    if abs(prefs.reservation - floor) > SHARE_TOLERANCE:
        out.append(Secret("reservation utility", float(prefs.reservation), SHARE_TOLERANCE, share=True))
    for k, w in prefs.weights.items():
        out.append(Secret(f"weight of {k}", float(w), SHARE_TOLERANCE, share=True, issue=k))
    # The walk-away value as the price it implies: the lowest price the seller could ever
    # accept, everything else at its best.
    numeric = [i for i in space.issues if isinstance(i, NumericIssue)]
    if numeric:
        price = max(numeric, key=lambda i: prefs.weights[i.name])
        worst = prefs.values[price.name].worst  # type: ignore[union-attr]
        worst = worst if price.low <= worst <= price.high else price.low
        lowest = limits.repair({**prefs.ideal(space), price.name: worst}, prefs, space)[price.name]
        out.append(amount(f"lowest {price.name}", price, float(lowest)))
    return tuple(out)


# --- normalisation ------------------------------------------------------------------------

_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻"
_SUPER = str.maketrans(_SUPERSCRIPTS, "0123456789+-")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u2032": "'", "\u00d7": "x", "\u2212": "-"})
_CURRENCY = r"usd|eur|gbp|cad|aud|chf|jpy|dollars?|bucks?|euros?|pounds?|quid|\$|€|£|¥"
_SCIENTIFIC = re.compile(r"(\d+(?:\.\d+)?)\s?(?:e\s?|(?:x|\*)\s?10\s?(?:\^|\*\*)\s?)([+-]?\d{1,2})(?!\d|\.\d)")
_CENTS = re.compile(rf"(\d+)\s?(?:{_CURRENCY})?\s?(?:and\s)?(\d{{1,2}})\s?(?:cents?|pence|c)\b")
_POINT = re.compile(r"(?:(\d+)\s)?point\s((?:\d\s?)+)")
_MIXED = re.compile(r"(?<![\d.])(\d+) (100|1000|1000000) (?:and )?(\d+)(?!\d|\.\d)")  # "6 hundred 14"
_GLUED = re.compile(r"(?<=[a-z$€£¥])(?=\d)|(?<=\d)(?=[a-z$€£¥])")


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """The form of ``text`` numbers are matched in (lower case, digits for words)."""
    text = re.sub(f"[{_SUPERSCRIPTS}]+", lambda m: "^" + m.group().translate(_SUPER), text)
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    chars = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cf", "Mn", "Me", "Co", "Cn") or (cat == "Cc" and ch not in "\n\t"):
            continue  # invisible: zero-width characters, joiners, soft hyphens, bidi marks
        if cat == "Nd":
            ch = str(unicodedata.digit(ch))
        elif cat == "Pd":
            ch = "-"
        elif cat == "Zs":
            ch = " "
        chars.append(ch)
    text = "".join(chars).lower()
    text = re.sub(r"(?<=[a-z])-(?=[a-z])", " ", text)  # six-one-four, forty-two
    text = re.sub(r"\b(hundred|thousand|million),\s+(?=[a-z])", r"\1 ", text)  # fourteen thousand, three hundred
    text = _SCIENTIFIC.sub(lambda m: _scientific(m.group(1), m.group(2)), text)  # before text2num splits 7.28e+02
    text = alpha2digit(text, "en", threshold=0)
    text = _MIXED.sub(lambda m: _mixed(*m.groups()), text)
    text = _POINT.sub(lambda m: f"{m.group(1) or '0'}.{m.group(2).replace(' ', '')}", text)
    text = _CENTS.sub(lambda m: f"{m.group(1)}.{int(m.group(2)):02d}", text)
    text = _SCIENTIFIC.sub(lambda m: _scientific(m.group(1), m.group(2)), text)
    text = _GLUED.sub(" ", text)
    return re.sub(r"[ \t]+", " ", text)


def _mixed(a: str, scale: str, b: str) -> str:
    return str(int(a) * int(scale) + int(b)) if int(b) < int(scale) else f"{a} {scale} {b}"


def _scientific(mantissa: str, exponent: str) -> str:
    try:
        v = float(mantissa) * 10.0 ** int(exponent)
    except OverflowError:
        return f"{mantissa} {exponent}"
    return f"{v:.6f}".rstrip("0").rstrip(".") if math.isfinite(v) and abs(v) < 1e12 else f"{mantissa} {exponent}"


# --- reading numbers ----------------------------------------------------------------------

_TOKEN = re.compile(r"(?<![\d.])(?:\.\d+|\d+(?:[.,]\d+)*)")
_PERCENT = re.compile(r"\s?(?:%|percent\b|per cent\b|pct\b|percentage points?\b|pc\b)")
_FRACTION = re.compile(r"\s?(?:/|out of\b|over\b|in\b)\s?(?:a\s)?(\d+(?:\.\d+)?)(?![\d.,]*\s?(?:%|percent))")
_MULTIPLIER = re.compile(r"\s?(k|thousand|grand|m|mn|million|hundred|100|1000|1000000)\b")
_FACTORS = {
    "k": 1e3,
    "thousand": 1e3,
    "grand": 1e3,
    "1000": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "1000000": 1e6,
    "hundred": 1e2,
    "100": 1e2,
}


@dataclass(frozen=True)
class Reading:
    """One way to read a number in a sentence.

    ``kind``: ``amount`` (a price, a quantity), ``share`` (a percentage, a fraction, a
    decimal below one) or ``bare`` (a plain number a share could hide in, as in "my
    reservation is 42"). ``written``: the number as the sentence has it (42 for "42%"),
    what a restated term is compared with. ``start``: where it stands in the sentence.
    ``unit``: the word right after it, singular ("day" in "14 days").
    """

    value: float
    kind: str
    written: float
    start: int
    unit: str = ""  # the word right after the number ("days" in "14 days")


def _token_values(tok: str) -> list[float]:
    """A digit token read with its separators as decimals or as thousands."""
    if tok.startswith("."):
        return [float("0" + tok)]
    values = []
    if "," in tok and "." in tok:
        digits = tok.replace(",", "")  # 1,200.50; with more than one dot left (10,000.000.00), a cut number
        values.append(float(digits if digits.count(".") == 1 else digits.replace(".", "")))
    elif "," in tok:
        head, *groups = tok.split(",")
        if all(len(g) == 3 for g in groups):
            values.append(float(head + "".join(groups)))
        if len(groups) == 1:
            values.append(float(f"{head}.{groups[0]}"))  # 37,85: a decimal comma
        if not values:
            values = [float(p) for p in tok.split(",")]
    elif tok.count(".") > 1:
        values.append(float(tok.replace(".", "")))  # 6.1.4, 14.300.000
    else:
        values.append(float(tok))
        head, _, tail = tok.partition(".")
        if len(tail) == 3:
            values.append(float(head + tail))  # 14.300: a thousands dot
    return values


def readings(text: str) -> list[Reading]:
    """Every reading of every number in ``text`` (already normalised)."""
    tokens = list(_TOKEN.finditer(text))
    out: list[Reading] = []
    for m in tokens:
        values = _token_values(m.group())
        tail = text[m.end() :]
        unit = _unit(tail)
        pct = _PERCENT.match(tail)
        if pct:
            out += [Reading(v / 100.0, "share", v, m.start()) for v in values]
            continue
        frac = _FRACTION.match(tail)
        if frac and _fraction_of(frac):
            d = float(frac.group(1))
            out += [Reading(v / d, "share", v, m.start()) for v in values]
        if text[: m.start()].rstrip().endswith("/") or re.match(r"\s?/\s?\d", tail):
            continue  # either side of a slash: a fraction or a date (12/24), not an amount
        mult = _MULTIPLIER.match(tail)
        for v in values:
            out.append(Reading(v, "amount", v, m.start(), unit))
            if mult:
                big = v * _FACTORS[mult.group(1)]
                out.append(Reading(big, "amount", big, m.start()))
            if 0 < v < 1:
                out.append(Reading(v, "share", v, m.start()))
            elif v.is_integer() and 0 < v <= 100 and not frac:
                out.append(Reading(v / 100.0, "bare", v, m.start()))
    out += _joined(text, tokens)
    return out


def _fraction_of(m: re.Match) -> bool:
    """'out of N' for any N; 'a/b' only for a b of a percentage (2, 4, 5, 10, 20, 25, 50, 100, 1000)."""
    d = float(m.group(1))
    if d <= 0:
        return False
    return "/" not in m.group() or (d.is_integer() and 1000 % int(d) == 0 and d > 1)


def _unit(tail: str) -> str:
    m = re.match(r"\s?-?([a-z]+)", tail)
    word = m.group(1) if m else ""
    return word[:-1] if word.endswith("s") and len(word) > 3 else word


_GAP = re.compile(r"(?:\s*[-_·•*|~.]\s*)+|\s+")
_PIECE = re.compile(r"\d|0\d+")  # a piece of a cut number: one digit, or "09" as "zero nine" comes out


def _joined(text: str, tokens: list[re.Match]) -> list[Reading]:
    """Numbers cut into pieces: single digits apart (6 1 4, 6-1-4, 6.1.4, 3 7 . 8 5, 1 1 09,
    2 9.25), and 6 14 or 14 300 (as "six fourteen" and "fourteen three hundred" come out)."""
    out: list[Reading] = []
    chain: list[re.Match] = []

    def close() -> None:
        if len(chain) < 2:
            return
        gaps = [text[a.end() : b.start()] for a, b in zip(chain, chain[1:], strict=False)]
        pieces = [t.group() for t in chain]
        values = {float("".join(pieces).replace(".", ""))}
        dots = [i for i, g in enumerate(gaps) if "." in g]
        if "." in pieces[-1]:
            values.add(float("".join(pieces)))
        elif len(dots) == 1:  # the one dot among the pieces is the decimal point
            cut = dots[0] + 1
            values.add(float(f"{''.join(pieces[:cut])}.{''.join(pieces[cut:])}"))
        out.extend(Reading(v, "amount", v, chain[0].start()) for v in values)

    for m in tokens:
        prev = chain[-1] if chain else None
        gap = text[prev.end() : m.start()] if prev is not None else ""
        last_piece = re.fullmatch(r"\d?\.\d+|\d|0\d+", m.group()) is not None
        if (
            prev is not None
            and _PIECE.fullmatch(prev.group())
            and _GAP.fullmatch(gap)
            and last_piece
            and not (len(chain) == 1 and gap == ".")
        ):
            chain.append(m)
        else:
            close()
            chain = [m]
    close()
    for prev, m in zip(tokens, tokens[1:], strict=False):
        a, b, gap = prev.group(), m.group(), text[prev.end() : m.start()]
        if a.isdigit() and b.isdigit() and gap.strip() == "." and gap != ".":  # 29 . 25
            out.append(Reading(float(f"{a}.{b}"), "amount", float(f"{a}.{b}"), prev.start()))
        if gap == " " and a.isdigit() and b.isdigit() and len(a) <= 3 and len(b) in (2, 3):
            values = {float(a + b)} | ({float(f"{a}.{b}")} if len(b) == 2 else set())
            out += [Reading(v, "amount", v, prev.start()) for v in values]
    return out


# --- framing ------------------------------------------------------------------------------

_LIMIT = re.compile(
    r"\b(?:floor|minimum|min|lowest|least|bottom|reserv\w*|walk\w*|limit\w*|threshold|cost price|break ?even|"
    r"final|last|best|firm|absolute\w*|non ?negotiable|maximum|max|most|cap|ceiling|"
    r"below|under|beneath|less than|lower than|fewer than|more than|higher than|above|"
    r"(?:can ?not|can't|cant|won't|wont|will not|would not|wouldn't|couldn't|could not|unable to|not able to|never|"
    r"refuse to|don't|do not|am not|i'm not)\s+(?:\w+\s+){0,3}?(?:lower|less|down|cheaper|further|higher|more|budge|"
    r"move|drop|discount|negotiate)|"
    r"not\s+(?:a|1|one|another|any|even a)\s+(?:single\s+)?(?:cent|penny|dollar|euro|pound|buck|bit|red cent)|"
    r"no (?:lower|less|further|cheaper|more|discount|negotiation)|nothing (?:lower|less|cheaper)|"
    r"as low as|take it or leave it|that's it|or nothing|rather (?:walk|keep)|no deal|deal ?breaker|"
    r"bare|at the very|cost me|paid|breakeven|between us|off the record|confidential\w*|secret\w*|in confidence|"
    r"internal\w*|allowed|authori[sz]ed|permitted)\b"
)
"""Words that frame a number as a limit: with them, restating an own term at a secret discloses it."""

_SHARE_CUE = re.compile(
    r"\b(?:walk\w*|reserv\w*|utilit\w*|satisf\w*|outcome\w*|score|threshold|weight\w*|weigh\w*|priorit\w*|"
    r"care\w*|matter\w*|important|importance|preference\w*|counts?|means? to me|happiness|ideal)\b"
)
"""Words that say a percentage is a share of the seller's own value, not a discount."""

_BARE_CUE = re.compile(r"\b(?:walk\w*|reserv\w*|utilit\w*|satisf\w*|score|threshold|priorit\w*)\b")
"""Words that make a bare number a share: "my reservation is 42"."""

_PRICE_WORD = re.compile(
    r"\b(?:off|discount\w*|deposit\w*|down|upfront|up front|rebate|interest|apr|vat|tax\w*|markup|mark up|"
    r"cash ?back|fees?|commission|surcharge|cheaper|savings?|save|list|asking|retail|msrp|more|extra|increase|"
    r"raise|higher|lower|reduction|reduce|tip|service charge|payment|upgrade)\b"
)
_NEAR = 32  # characters either side of a percentage that a price word must lie within


_OTHER_UNITS = frozenset(
    "day week month year hour minute min unit seat piece item roll kg km lb mile star people person customer client "
    "order time am pm gb tb inch mm cm guest user license licence pack box pallet".split()
)
"""Words after a number that make it a count or a duration, not an amount of money."""


def frames_limit(text: str) -> bool:
    """Whether the (normalised) sentence frames a number as the seller's limit."""
    return _LIMIT.search(text) is not None


def _mentions(text: str, issue: str) -> bool:
    words = [w for w in issue.split("_") if len(w) >= 4 and w not in ("days", "months", "terms", "percent")] or [issue]
    return any(re.search(rf"\b{re.escape(w[:-1] if w.endswith('s') else w)}", text) for w in words)


# --- the check ----------------------------------------------------------------------------

_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(message: str) -> list[str]:
    """The sentences of ``message``; a number cut by dots ("6. 1. 4", "29 . 25") stays in one."""
    out, start = [], 0
    for m in _BREAK.finditer(message):
        if (
            "\n" not in m.group()
            and re.search(r"\d\s?\.$", message[: m.start()])
            and message[m.end() : m.end() + 1].isdigit()
        ):
            continue
        out.append(message[start : m.start()])
        start = m.end()
    out.append(message[start:])
    return [s for s in out if s.strip()]


class Secrecy:
    """The secrets of one seller, and the check of its messages against them."""

    def __init__(self, prefs: Preferences, limits: HardLimits, space: OutcomeSpace):
        self.space = space
        self.secrets = secrets_of(prefs, limits, space)
        self._units = {i.name: f"{i.name.replace('_', ' ')} {i.unit}".lower() for i in space.issues}

    def _own(self, terms: dict | None) -> tuple[list[float], list[float]]:
        """The offer's numbers a sentence may restate: as amounts, and (issues in %) as percentages."""
        amounts, percents = [], []
        for k, v in (terms or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                amounts.append(float(v))
                if k in self.space.names and (self.space.issue(k).unit == "%" or "percent" in k):
                    percents.append(float(v))
        return amounts, percents

    def disclosures(self, sentence: str, terms: dict | None = None) -> list[Secret]:
        """The secrets ``sentence`` states. ``terms``: the offer the message goes with (its
        own numbers may be restated, unless framed as a limit); None checks strictly."""
        text = normalize(sentence)
        own_amounts, own_percents = self._own(terms)
        framed = frames_limit(text)
        share_cue = _SHARE_CUE.search(text) is not None
        bare_cue = _BARE_CUE.search(text) is not None
        found: list[Secret] = []
        for r in readings(text):
            if r.kind == "bare" and not bare_cue:
                continue
            if r.kind == "share" and not share_cue and self._price_context(text, r.start):
                continue
            # a bare number read as a share ("contract months 12" beside "priority") is the offer's own term too
            own = own_amounts if r.kind in ("amount", "bare") else own_percents
            if not framed and any(abs(r.written - v) <= 1e-9 * max(1.0, abs(v)) for v in own):
                continue
            for s in self.secrets:
                if s.share != (r.kind != "amount") or not s.matches(r.value) or s in found:
                    continue
                if r.unit in _OTHER_UNITS and r.unit not in self._units.get(s.issue, ""):
                    continue  # 24 months, 14 days: a count or a duration, not this issue's amount
                # A bare percentage says whose share it is: an issue's weight names the issue or
                # talks of caring and priorities; the walk-away value is framed as a limit or a utility.
                if s.share and not share_cue and not (_mentions(text, s.issue) if s.issue else framed):
                    continue
                found.append(s)
        return found

    @staticmethod
    def _price_context(text: str, at: int) -> bool:
        return _PRICE_WORD.search(text[max(0, at - _NEAR) : at + _NEAR]) is not None

    def leaks(self, sentence: str, terms: dict | None = None) -> bool:
        return bool(self.disclosures(sentence, terms))

    def redact(self, message: str, terms: dict | None = None) -> str:
        """``message`` without the sentences that state a secret (a neutral line if none is left)."""
        if not message:
            return message
        parts = sentences(message)
        kept = [s for s in parts if not self.leaks(s, terms)]
        if len(kept) == len(parts):
            return message
        return " ".join(kept) if kept else safe_message(terms)


def safe_message(terms: dict | None) -> str:
    """What a seller says when every sentence of its message had to go."""
    return "Here is my offer." if terms is not None else "Thank you."


def numbers(text: str) -> list[float]:
    """The numbers ``text`` states, each as meant (after normalisation: number words, glued
    currency): ``42%`` as 0.42, ``14.3k`` as 14300."""
    norm = normalize(text)
    out = []
    for m in _TOKEN.finditer(norm):
        v = _token_values(m.group())[0]
        tail = norm[m.end() :]
        mult = _MULTIPLIER.match(tail)
        if _PERCENT.match(tail):
            v /= 100.0
        elif mult and mult.group(1) in ("k", "thousand", "grand"):
            v *= 1000.0
        out.append(v)
    return out


__all__ = [
    "SHARE_TOLERANCE",
    "Reading",
    "Secret",
    "Secrecy",
    "frames_limit",
    "normalize",
    "numbers",
    "readings",
    "safe_message",
    "secrets_of",
    "sentences",
]

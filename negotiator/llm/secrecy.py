"""What a seller may never say: its private numbers, in any plain disguise.

A seller's secrets are its hard limits (a price floor, a cap), the lowest price it could
ever accept (the floor utility with everything else at its best), its walk-away value and
the weight it puts on each issue. ``Secrecy.redact`` removes every sentence of a message
that states one of them; the guard calls it on every seller action.

Each sentence is matched on normalised copies (``negotiator.llm.numerals``: Unicode tricks
undone, number words in English and in the other languages text2num reads, CJK numerals,
scientific forms, cents, per mille and hundredths), and every number in them is read every
way a person could mean it (with or without thousands separators, times a multiplier, cut
into digits or groups, as a percentage, a fraction or a decimal share).

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
hundred plus fourteen"), a number spelled letter by letter, Roman numerals, a code, a
language text2num does not read, an approximation, a hint spread over several messages.
The guard keeps the limits themselves whatever is said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..domain.issues import NumericIssue, OutcomeSpace
from ..domain.scenario import HardLimits
from ..domain.utility import Preferences
from .numerals import Reading, forms, normalize, numbers, readings

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
    r"internal\w*|allowed|authori[sz]ed|permitted|"
    # the same in the other languages whose number words are read
    r"mindest\w*|untergrenze|schmerzgrenze|unter|letzt\w*|plancher|dernier|derni[eè]re|sous|minim[ao]|m[ií]nim[ao]|"
    r"[uú]ltim[oa]|l[ií]mite|debajo|sotto|abaixo|laagste|minimumprijs|bodemprijs|onder)\b"
    r"|底线|底線|底价|底價|最低|下限|不能再|底値|最安|これ以上"
)
"""Words that frame a number as a limit: with them, restating an own term at a secret discloses it."""

_SHARE_CUE = re.compile(
    r"\b(?:walk\w*|reserv\w*|utilit\w*|satisf\w*|outcome\w*|score|threshold|weight\w*|weigh\w*|priorit\w*|"
    r"care\w*|matter\w*|important|importance|preference\w*|counts?|means? to me|happiness|ideal|"
    r"r[ée]serv\w*|riserv\w*|nutzen|schwelle\w*|schmerzgrenze|seuil|umbral|soglia|limiar|drempel\w*|utilidad\w*|"
    r"utilit[éàa]|utilidade|gewicht\w*|poids|peso|prioridad\w*|wichtig\w*|zufrieden\w*)\b"
    r"|保留|效用|効用|阈值|閾值|门槛|門檻|权重|權重|重要|满意|満足|底线|底線|留保"
)
"""Words that say a percentage is a share of the seller's own value, not a discount."""

_BARE_CUE = re.compile(
    r"\b(?:walk\w*|reserv\w*|utilit\w*|satisf\w*|score|threshold|priorit\w*|r[ée]serv\w*|riserv\w*|nutzen|"
    r"schwelle\w*|seuil|umbral|soglia|limiar|drempel\w*|utilidad\w*|utilit[éàa]|utilidade)\b"
    r"|保留|效用|効用|阈值|閾值|门槛|門檻|底线|底線|留保"
)
"""Words that make a bare number a share: "my reservation is 42"."""

_PRICE_WORD = re.compile(
    r"\b(?:off|discount\w*|deposit\w*|down|upfront|up front|rebate|interest|apr|vat|tax\w*|markup|mark up|"
    r"cash ?back|fees?|commission|surcharge|cheaper|savings?|save|list|asking|retail|msrp|more|extra|increase|"
    r"raise|higher|lower|reduction|reduce|tip|service charge|payment|upgrade)\b"
)
_NEAR = 32  # characters either side of a percentage that a price word must lie within


_OTHER_UNITS = frozenset(
    "day week month year hour minute min unit seat piece item roll kg km lb mile star people person customer client "
    "order time am pm gb tb inch mm cm guest user license licence pack box pallet business working calendar night "
    "h hr hrs 个 個 件 天 日 月 年 人 位 台 张 張 次 周 週 岁 歳 本 枚".split()
)
"""Words after a number that make it a count or a duration, not an amount of money."""


def frames_limit(text: str) -> bool:
    """Whether the (normalised) sentence frames a number as the seller's limit."""
    return _LIMIT.search(text) is not None


def _mentions(text: str, issue: str) -> bool:
    words = [w for w in issue.split("_") if len(w) >= 4 and w not in ("days", "months", "terms", "percent")] or [issue]
    return any(re.search(rf"\b{re.escape(w[:-1] if w.endswith('s') else w)}", text) for w in words)


# --- the check ----------------------------------------------------------------------------

_BREAK = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n+")


def sentences(message: str) -> list[str]:
    """The sentences of ``message``; a number cut by dots ("6. 1. 4", "29 . 25") or after an
    abbreviation ("Item no. 728") stays in one; 。！？ end a sentence too."""
    out, start = [], 0
    for m in _BREAK.finditer(message):
        if (
            "\n" not in m.group()
            and re.search(r"(?:\d\s?|\b(?:no|nr|art|ref|tel|ph|vol|pp|approx|ca|vs))\.$", message[: m.start()], re.I)
            and message[m.end() : m.end() + 1].isdigit()
        ):
            continue  # 6. 1. 4 and Item no. 728 stay in one sentence
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
        own_amounts, own_percents = self._own(terms)
        found: list[Secret] = []
        for text in forms(sentence):  # English, and each other language whose number words it holds
            self._find(text, own_amounts, own_percents, found)
        return found

    def _find(self, text: str, own_amounts: list[float], own_percents: list[float], found: list[Secret]) -> None:
        """Add to ``found`` the secrets the normalised ``text`` states."""
        framed = frames_limit(text)
        share_cue = _SHARE_CUE.search(text) is not None
        bare_cue = _BARE_CUE.search(text) is not None
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
                if r.unit in _OTHER_UNITS and r.unit not in self._units.get(s.issue or "", ""):
                    continue  # 24 months, 14 days: a count or a duration, not this issue's amount
                # A bare percentage says whose share it is: an issue's weight names the issue or
                # talks of caring and priorities; the walk-away value is framed as a limit or a utility.
                if s.share and not share_cue and not (_mentions(text, s.issue) if s.issue else framed):
                    continue
                found.append(s)

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


__all__ = [
    "SHARE_TOLERANCE",
    "Reading",
    "Secret",
    "Secrecy",
    "forms",
    "frames_limit",
    "normalize",
    "numbers",
    "readings",
    "safe_message",
    "secrets_of",
    "sentences",
]

"""Messages that agree with their terms: what the seller says matches what it offers.

A model's words and its structured terms come from different places (the words from the
model, the terms from the strategy's options or a guard repair), and small models often
state numbers that are not in the offer ("23k with full service" while offering 20,100,
as is). The buyer reads both; a contradiction misleads it, or binds the business to words
it never offered.

For each sentence, every value it states is attributed to an issue:

* a number, by the words around it (the issue's name or unit: "warranty", "months",
  "USD", "$", "%") or, with no such word, by magnitude: a number that only the price range
  could hold is a price;
* an option of a discrete issue, by name ("net30", "full service"); a one-word option
  ("premium", "none") only next to its issue's name.

A value is consistent when it equals the terms' value for its issue, or the buyer's
standing offer's (talking about the buyer's offer is fine: "your 700 is too low") unless
the sentence states it as the seller's own: the nearest owner word before it is the
seller's ("my offer", "our price", "here is", "we offer") and no "you"/"your" is nearer, or
it is "included". Otherwise a seller could claim the buyer's option as its own terms
("here is my offer ... assembly included" while the terms hold none). A contradicting number is
rewritten to the terms' value of its own issue, and only where its issue is certain: a number
that counts another unit ("12 months" read as the delivery's days) or whose clause names another
issue that could hold it ("Pay within 30 days.": "pay" names the payment terms, net30) is not
rewritten, its sentence is removed; a sentence that names an option the terms do not hold, or
that still contradicts them once rewritten, is removed. When nothing is left, the message is
written from the terms. So a corrected message always reads back clean.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..domain.issues import DiscreteIssue, NumericIssue, Offer, OutcomeSpace

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# 1,200 / 1 200 / 1200.50 / $1.2k / 23k / 950 USD
_NUMBER = re.compile(
    r"(?<![\w.])(?P<cur>[$€£])?\s?(?P<num>\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+|\d+)(?P<dec>\.\d+)?(?P<k>\s?[kK]\b)?(?P<pct>\s?%)?"
    r"(?!(?<=1)st\b|(?<=2)nd\b|(?<=3)rd\b|th\b)"  # an ordinal ("1st offer") counts offers, it is no value
)
_WORD = re.compile(r"[a-z]+")
_CLAUSE = re.compile(r"[,;:()]|\s[-\u2013\u2014]\s")  # what ends the clause a number is in
_NEAR = 4  # words either side of a number that can name its issue
# Whose value a sentence states (_stated_as_own): the buyer's after "you"/"your", the
# seller's after its own owner words or when "included". A bare "I" is neither: "I can't do
# 700" and "I think 700 is too low" speak of the buyer's number.
_YOURS = re.compile(r"\byou(?:rs?|['’](?:re|ve|d))?\b")
_MINE = re.compile(
    r"\b(?:my|our|ours|mine|here)\b"
    r"|\b(?:i|we)(?:\s+(?:can|could|will|would)|['’]ll)?\s+(?:offer|propose|include|add|throw\s+in)\b"
    r"|\bholding\s+at\b"
)
_INCLUDED = re.compile(r"\s*(?:(?:is|are)\s+)?(?:included|including|includes|thrown\s+in)\b")


@dataclass(frozen=True)
class Mention:
    issue: str
    value: float | str
    start: int
    end: int


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _issue_words(issue: NumericIssue | DiscreteIssue) -> set[str]:
    words = set(_WORD.findall(issue.name.replace("_", " ")))
    words |= set(_WORD.findall((issue.label or "").lower()))
    words -= {"per", "of", "the", "a", "terms"}
    if "price" in words:
        words |= {"price", "cost", "pay", "total", "usd", "eur", "gbp", "dollars", "euros"}
    if "delivery" in words or "days" in words:
        words |= {"deliver", "delivered", "ship", "shipping", "days", "day"}
    if "warranty" in words:
        words |= {"warranty", "guarantee", "months", "month"}
    return words


def _unit_words(issue: NumericIssue | DiscreteIssue) -> set[str]:
    return set(_WORD.findall(issue.unit.lower())) - {"per", "unit", "year"}


_STOP = frozenset(
    "a an the of to in on at by for is are be it its this that with and or from as per".split()
    + ["usd", "eur", "gbp", "dollars", "euros", "pounds"]
)
_COUNTS = frozenset(
    "day days week weeks month months year years yr yrs hour hours unit units seat seats guest guests".split()
)
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


def _figures(text: str) -> list[tuple[float, set[str]]]:
    """Each number in ``text`` with the content words within three words of it."""
    words = re.findall(r"\d+(?:[.,]\d+)*|[a-z]+", _norm(text))
    out = []
    for k, w in enumerate(words):
        if _FIGURE.fullmatch(w):
            try:
                value = float(w.replace(",", ""))
            except ValueError:
                continue
            near = {x for x in words[max(0, k - 3) : k + 4] if x.isalpha() and x not in _STOP and len(x) > 2}
            out.append((value, near))
    return out


def restated(sentence: str, facts: Sequence[str]) -> set[float]:
    """The numbers ``sentence`` repeats from the listing's own text ``facts``, in its words.

    "Returns within 30 days" where the shop's policy says "returns within 30 days of
    delivery"; "a 2018 hatchback" where the description says "A 2018 compact hatchback". A
    number counts as restated when a content word near it (not a currency) is also near it
    in the listing, so "the price is 1000 USD" does not borrow a policy's "orders over 1000 USD".
    """
    listed: dict[float, set[str]] = {}
    for fact in facts:  # each sentence of each text alone: words do not carry from one to the next
        for part in re.split(r"[.;!?](?:\s|$)", fact):
            for value, near in _figures(part):
                listed.setdefault(value, set()).update(near)
    return {value for value, near in _figures(sentence) if near & listed.get(value, set())}


class Checker:
    """Finds and corrects the values a message states that its terms do not hold."""

    def __init__(self, space: OutcomeSpace, currency: str = "USD", facts: Sequence[str] = ()):
        self.space = space
        self.currency = currency.lower()
        self.facts = facts  # the listing's own text: numbers restated from it are not the offer's
        self.price = max(
            (i for i in space.issues if isinstance(i, NumericIssue) and "price" in i.name),
            key=lambda i: i.high,
            default=None,
        )
        self._words = {i.name: _issue_words(i) | _unit_words(i) for i in space.issues}
        if self.price is not None:
            self._words[self.price.name] |= {self.currency}

    # --- reading ------------------------------------------------------------------------

    def mentions(self, sentence: str) -> list[Mention]:
        text = _norm(sentence)
        out: list[Mention] = []
        for m in _NUMBER.finditer(text):
            value = float(re.sub(r"[,\u202f\u00a0 ]", "", m.group("num")) + (m.group("dec") or ""))
            if m.group("k"):
                value *= 1000
            of = self._issue_of_number(text, m, value)
            if of is not None:
                out.append(Mention(of, value, m.start("num"), m.end()))
        for issue in self.space.issues:
            if not isinstance(issue, DiscreteIssue) or all(isinstance(o, (int, float)) for o in issue.options):
                continue
            named = bool(self._words[issue.name] & set(_WORD.findall(text)))
            for option in issue.options:
                phrase = str(option).lower().replace("_", " ")
                distinctive = "_" in str(option) or any(ch.isdigit() for ch in str(option))
                if not distinctive and not named:
                    continue
                pattern = (
                    r"(?<![a-z0-9])"
                    + r"[\s_-]?".join(re.escape(p) for p in re.split(r"[\s]+", phrase))
                    + r"(?![a-z0-9])"
                )
                pattern = pattern.replace(r"net30", r"net\s?30").replace(r"net60", r"net\s?60")
                for om in re.finditer(pattern, text):
                    out.append(Mention(issue.name, option, om.start(), om.end()))
        # an option inside a longer one's words is that one ("case" in "case and charger")
        return [
            m
            for m in out
            if not any(
                o is not m and o.start <= m.start and m.end <= o.end and o.end - o.start > m.end - m.start for o in out
            )
        ]

    def _issue_of_number(self, text: str, m: re.Match, value: float) -> str | None:
        if m.group("cur"):
            return self.price.name if self.price is not None else None
        head, tail = text[: m.start()], text[m.end() :]
        # The nearest word that names an issue wins (the unit right after a number first),
        # looked for in the number's own clause first: in "warranty months 0, delivery days
        # 14" the 0 is the warranty's, though "delivery" is the next word.
        clause_before = _WORD.findall(_CLAUSE.split(head)[-1])[-_NEAR:]
        clause_after = _WORD.findall(_CLAUSE.split(tail, maxsplit=1)[0])[:_NEAR]
        before = _WORD.findall(head)[-_NEAR:]
        after = _WORD.findall(tail)[:_NEAR]
        # A number that counts days, months or units is no price, whatever money word is near:
        # "You can pay within 60 days" must not become "within 1,014 days".
        counted = bool(clause_after) and clause_after[0] in _COUNTS
        for word in [
            *clause_after[:1],
            *reversed(clause_before),
            *clause_after[1:],
            *after[:1],
            *reversed(before),
            *after[1:],
        ]:
            for issue in self.space.issues:
                if counted and issue is self.price:
                    continue
                if word in self._words[issue.name] and self._plausible(issue, value, m):
                    return issue.name
        if m.group("pct"):
            return next((i.name for i in self.space.issues if i.unit == "%" and self._plausible(i, value, m)), None)
        holders = [i for i in self.space.issues if self._plausible(i, value, m)]
        if self.price is not None and self.price in holders and value >= 100 and len(holders) == 1 and not counted:
            return self.price.name
        return None

    @staticmethod
    def _plausible(issue: NumericIssue | DiscreteIssue, value: float, m: re.Match | None) -> bool:
        """Could ``value`` be meant for ``issue``: within its range, give or take the range again."""
        if isinstance(issue, DiscreteIssue):
            nums = [float(o) for o in issue.options if isinstance(o, (int, float)) and not isinstance(o, bool)]
            if len(nums) < 2:
                return False
            low, high = min(nums), max(nums)
        else:
            low, high = issue.low, issue.high
        span = high - low
        return low - span <= value <= high + span

    # --- checking -----------------------------------------------------------------------

    def contradictions(self, sentence: str, terms: Offer, theirs: Offer | None = None) -> list[Mention]:
        """The mentions in ``sentence`` that ``terms`` do not hold, nor the buyer's offer where
        the sentence speaks of that offer rather than stating the value as the seller's own."""
        text = _norm(sentence)
        listed = restated(sentence, self.facts) if self.facts else set()
        mentions = self.mentions(sentence)
        # A sentence that lists three issues' values or more states a whole offer ("Let's start:
        # price 788, delivery days 28, ..."): the seller's own, unless it names it the buyer's.
        whole = len({m.issue for m in mentions}) >= min(3, len(self.space.issues))
        # ...and one that holds a value only the seller's terms hold ("a deal I gave you: price
        # 1866 USD, ..., assembly included") is the seller's whatever words stand before it.
        own_list = whole and any(self._agrees(m, terms) and not (theirs and self._agrees(m, theirs)) for m in mentions)
        return [
            m
            for m in mentions
            if not self._agrees(m, terms)
            and not (theirs and self._agrees(m, theirs) and not own_list and _spoken_of_as_theirs(text, m, whole))
            and not (isinstance(m.value, float) and m.value in listed)
        ]

    def _agrees(self, m: Mention, terms: Offer) -> bool:
        v = terms.get(m.issue)
        if v is None:
            return False
        if isinstance(m.value, str) or isinstance(v, str):
            return str(v).lower() == str(m.value).lower()
        issue = self.space.issue(m.issue)
        tol = issue.step / 2 if isinstance(issue, NumericIssue) else 1e-9
        if abs(float(v) - m.value) <= tol + 1e-9:
            return True
        # "23k" for 23,050 or "1.2k" for 1,199: a rounded statement of the same number
        return (
            m.value >= 1000
            and abs(float(v) - m.value) <= 0.005 * m.value
            and m.value % 100 == 0
            and abs(float(v)) >= 1000
        )

    def correct(self, message: str, terms: Offer, theirs: Offer | None = None) -> tuple[str, int]:
        """(the message with its contradictions corrected, how many values were contradicted)."""
        if not message:
            return message, 0
        kept: list[str] = []
        found = 0
        for sentence in (s for s in _SENTENCE.split(message) if s.strip()):
            bad = self.contradictions(sentence, terms, theirs)
            if not bad:
                kept.append(sentence)
                continue
            found += len(bad)
            if any(isinstance(m.value, str) for m in bad):
                continue  # a wrong option: the sentence goes
            if any(self._uncertain(sentence, m) for m in bad):
                continue  # a number that may be another issue's: rewriting it could promise a term on the wrong issue
            rewritten = self._rewrite(sentence, bad, terms)
            # A number's issue is read partly from its size, so a rewritten number can read as
            # another issue's: in "pay a 2-2-1-0 on your delivery day" the 0 is too small for a
            # price and was the delivery's, but the 14 it became reads as a price. A sentence
            # that does not read back clean goes.
            if not self.contradictions(rewritten, terms, theirs):
                kept.append(rewritten)
        if not found:
            return message, 0
        return (" ".join(kept) if kept else self.from_terms(terms)), found

    def _uncertain(self, sentence: str, m: Mention) -> bool:
        """Whether the clause of ``m`` names another issue that could hold its number and that no
        other value of the sentence states: "Pay within 30 days." reads 30 as the delivery's (its
        unit), but "pay" names the payment terms (net30), so 30 may be theirs. Rewritten to the
        delivery's 28, the seller would promise payment in 28 days: such a sentence goes instead."""
        text = _norm(sentence)
        clause = _CLAUSE.split(text[: m.start])[-1] + " " + _CLAUSE.split(text[m.end :], maxsplit=1)[0]
        said = _WORD.findall(clause)
        others = {o.issue for o in self.mentions(sentence)} - {m.issue}
        unit = (_WORD.findall(text[m.end :])[:1] or [""])[0]
        money = unit == self.currency or re.search(r"[$€£]\s?$", text[: m.start]) is not None
        if self.price is not None and m.issue == self.price.name and money:
            return False  # an amount told by its currency is the price's
        if unit in _COUNTS and unit.rstrip("s") != self.space.issue(m.issue).unit.lower().rstrip("s"):
            return True  # "12 months" read as the delivery's days: it counts something else
        counted = unit in _COUNTS
        for issue in self.space.issues:
            if issue.name == m.issue or issue.name in others or not any(self._names(w, issue) for w in said):
                continue
            if isinstance(issue, DiscreteIssue) and not all(isinstance(o, (int, float)) for o in issue.options):
                if any(ch.isdigit() for o in issue.options for ch in str(o)):  # "net30": its options count too
                    return True
            elif not (counted and issue is self.price) and self._plausible(issue, float(m.value), None):
                return True
        return False

    def _names(self, word: str, issue: NumericIssue | DiscreteIssue) -> bool:
        """Whether ``word`` names ``issue``, in its own words or a form of one ("pay" for "payment")."""
        names = self._words[issue.name]
        return word in names or f"{word}ment" in names or f"{word}ments" in names

    def _rewrite(self, sentence: str, bad: list[Mention], terms: Offer) -> str:
        """Numbers put right in place: the sentence as the model wrote it, with the offer's values."""
        text = unicodedata.normalize("NFKC", sentence)
        norm = _norm(sentence)
        if len(text) != len(norm):  # positions shift under normalisation: rewrite from the terms
            return self.from_terms(terms)
        for m in sorted(bad, key=lambda m: -m.start):
            text = text[: m.start] + _money(terms[m.issue]) + text[m.end :]
        return text

    def from_terms(self, terms: Offer) -> str:
        parts = []
        for issue in self.space.issues:
            v = terms[issue.name]
            unit = f" {issue.unit}" if issue.unit else ""
            shown = _money(v) if isinstance(v, (int, float)) else str(v).replace("_", " ")
            parts.append(f"{issue.title()} {shown}{unit}")
        return "Here is my offer: " + ", ".join(parts) + "."


def _spoken_of_as_theirs(text: str, m: Mention, whole_offer: bool) -> bool:
    """Whether a value the buyer's offer holds is spoken of as the buyer's: named so ("you
    offered 700"), or, outside a whole offer's list, not stated as the seller's own ("I can't do 700")."""
    head = text[: m.start]
    yours = max((x.end() for x in _YOURS.finditer(head)), default=-1)
    mine = max((x.end() for x in _MINE.finditer(head)), default=-1)
    if yours > mine:
        return True
    return not whole_offer and not _stated_as_own(text, m)


def _stated_as_own(text: str, m: Mention) -> bool:
    """Whether ``text`` states the mentioned value as the seller's own (see _MINE)."""
    head = text[: m.start]
    yours = max((x.end() for x in _YOURS.finditer(head)), default=-1)
    mine = max((x.end() for x in _MINE.finditer(head)), default=-1)
    if yours > mine:
        return False
    return mine >= 0 or _INCLUDED.match(text, m.end) is not None


def _money(v) -> str:
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.2f}"
    return f"{int(round(float(v))):,}" if isinstance(v, (int, float)) else str(v)

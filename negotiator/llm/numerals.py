"""Numbers as a person can write them in a sentence, read back as values.

The guard's secrecy check (``negotiator.llm.secrecy``) looks for private numbers in what a
seller says. This module turns a sentence into the form numbers are matched in (``normalize``,
``forms``) and lists every way each number in that form can be read (``readings``).

A sentence is normalised in this order (what is sent stays the sentence as written):

1. Unicode NFKC (full-width digits, ligatures, odd spaces), invisible format characters
   dropped (zero-width spaces and joiners, soft hyphens, bidi marks, combining marks),
   every script's decimal digits read as ASCII, superscript exponents kept as ``^2``.
2. CJK numerals as digits: ``六百一十四``, ``六百十四``, ``陆佰壹拾肆`` and ``六一四`` are 614,
   ``零点四二`` 0.42, ``1.715万`` 17150, ``百分之四十二`` 42% (``negotiator.domain.cjk_numerals``,
   which the strategy's reading of a quoted price shares).
3. Words that carry a scale, in the languages below: ``hundredths`` and ``thousandths``,
   ``‰`` and per mille, basis points as "out of 100/1000/10000"; ``Prozent``, ``pour cent``,
   ``por ciento`` ... as ``percent``; ``&`` and ``n`` as ``and`` (``six hundred & fourteen``).
4. Number words to digits with text2num: English always (``six hundred and fourteen`` -> 614,
   ``zero point four two`` -> 0.42, plus ``point four two`` and ``37 dollars and 85 cents``);
   German, French, Spanish, Italian, Portuguese and Dutch in a form of their own, made only
   when the sentence holds that language's number words (``forms``; which ones it holds:
   ``negotiator.llm.number_words``).
5. Scientific forms (``6.14e2``, ``6.14 x 10^2``, ``6.14·10²``) evaluated; ``61400 cents`` as
   614; currency codes, words and symbols split off the digits they are glued to
   (``USD614``, ``614usd``). Digits glued to other letters are a code (``KX614``), not a number.

``readings`` then reads every number every way a person could mean it: as written; with commas
or dots as thousands separators; times a multiplier (``6.14 hundred``, ``14.3k``, ``14 grand``);
a run of single digits separated by spaces, dashes or dots joined (``6 1 4``, ``6-1-4``); digit
groups cut by ``-``, ``:`` or ``_`` joined (``6-14``, ``6:14``, ``17_150``) unless they are a
time, a date, a range or a code; ``6 14`` and ``14 300`` as 614 and 14300; as a share when it
is a percentage (``42 percent``), a fraction (``42/100``, ``21 out of 50``) or a decimal below
one (``.42``). Phone numbers, long dates and model or order numbers are not read at all.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from text_to_num import alpha2digit

from ..domain.cjk_numerals import cjk_numerals, plain
from .number_words import languages_of

# --- normalisation ------------------------------------------------------------------------

_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻"
_SUPER = str.maketrans(_SUPERSCRIPTS, "0123456789+-")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u2032": "'", "\u00d7": "x", "\u2212": "-"})
_CURRENCY = r"usd|eur|gbp|cad|aud|chf|jpy|dollars?|bucks?|euros?|pounds?|quid|\$|€|£|¥"
_SCIENTIFIC = re.compile(
    r"(\d+(?:\.\d+)?|\d,\d+)\s?(?:e\s?|[x*·⋅∙•]\s?10\s?(?:\^|\*\*)\s?)([+-]?\d{1,2})(?!\d|\.\d)"
)  # 6.14e2, 6.14 x 10^2, 6,14·10^2 (a comma after one digit is a decimal comma)
_CENTS = re.compile(rf"(\d+)(?:\s?(?:{_CURRENCY})\s?(?:and\s)?|\s(?:and\s)?)(\d{{1,2}})\s?(?:cents?|pence|c)\b")
_CENTS_ONLY = re.compile(
    r"(?<![\d.,])(\d{1,3}(?:,\d{3})+|\d+)\s?(?:cents?|¢|pennies|penny|pence|centimes?|c[ée]ntimos?|centavos?)(?!\w)"
)  # 61400 cents: 614
_POINT = re.compile(r"(?:(\d+)\s)?point\s((?:\d\s?)+)")
_MIXED = re.compile(r"(?<![\d.])(\d+) (100|1000|1000000) (?:and )?(\d+)(?!\d|\.\d)")  # "6 hundred 14"
_DECIMAL_DIGITS = re.compile(r"(\d[.,]\d)((?: \d(?!\d|[.,]\d))+)")  # "0,4 2": text2num reads decimals digit by digit
_GLUED = re.compile(r"(?<=[$€£¥])(?=\d)|(?<=\d)(?=[a-z$€£¥])")
_GLUED_CODE = re.compile(rf"\b({_CURRENCY})(?=\d)")  # USD614; other letters glued to digits make a code (KX614)
_AMPERSAND = re.compile(r"(?<=\w)\s*&\s*(?=\w)")
_N = re.compile(r"\b(hundred|thousand|million|billion|dollars?|bucks?|euros?) (?:'n'|'n|n'|n) ")
_SCALE_WORDS = [
    (r"(?:one )?hundredths?|hundertstel|centi[eè]mes?|cent[ée]sim[ao]s?|centesim[io]|honderdsten?", " out of 100"),
    (r"(?:one )?thousandths?|tausendstel|milli[eè]mes?|mil[ée]sim[ao]s?|millesim[io]|duizendsten?", " out of 1000"),
    (r"tenths?|zehntel|dixi[eè]mes?|d[ée]cim[ao]s?", " out of 10"),
    (r"per ?mil(?:le)?|promille|pro mille", " out of 1000"),
    (r"basis points?|bps", " out of 10000"),
    (r"prozent|pour ?cent|por ?ciento|per ?cento|por ?cento|procent", " percent"),
]
_SCALE = re.compile(r"\b(?:" + "|".join(p for p, _ in _SCALE_WORDS) + r")\b|‰|‱|パーセント")
_SCALE_KEYS = (
    *"hundredth thousandth tenth stel zehntel ième ieme sim cim honderdst duizendst bps prozent procent".split(),
    *("per mil", "permil", "promille", "pro mille", "basis point", "cent", "‰", "‱", "パーセント"),
)  # what every scale word holds: the regex runs only on a sentence that has one
_SCALE_OF = [(re.compile(rf"^(?:{p})$"), out) for p, out in _SCALE_WORDS]


def _scale(m: re.Match) -> str:
    word = m.group()
    if word == "‰":
        return " out of 1000"
    if word == "‱":
        return " out of 10000"
    if word == "パーセント":
        return " percent"
    return next(out for p, out in _SCALE_OF if p.match(word))


def _visible(text: str) -> str:
    """Superscripts, NFKC, look-alike quotes; invisible characters dropped, every digit,
    dash and space the plain one."""
    text = _SUPER_RUN.sub(lambda m: "^" + m.group().translate(_SUPER), text)
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
    return "".join(chars)


def _prepare(text: str) -> str:
    """Steps 1 to 3, shared by every language's form."""
    text = text.translate(_ASCII_CONTROLS).lower() if text.isascii() else _visible(text).lower()
    text = cjk_numerals(text)
    text = _WORD_HYPHEN.sub(" ", text)  # six-one-four, forty-two, quatre-vingt
    text = _SCALE_COMMA.sub(r"\1 ", text)  # fourteen thousand, three hundred
    if "&" in text:
        text = _AMPERSAND.sub(" and ", text)
    if " n " in text or "'n" in text or "n'" in text:
        text = _N.sub(r"\1 and ", text)
    return _SCALE.sub(_scale, text) if any(k in text for k in _SCALE_KEYS) else text


_SUPER_RUN = re.compile(f"[{_SUPERSCRIPTS}]+")
_ASCII_CONTROLS = {c: None for c in [*range(32), 127] if chr(c) not in "\n\t"}
"""ASCII's control characters but newline and tab: all ``_visible`` changes in ASCII text (NFKC
leaves it as it is, and its digits, hyphen and space are the plain ones), so ``_prepare`` drops
them with one ``translate`` there (the secrecy audit of a rule seller's messages reads ASCII)."""
_WORD_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_SCALE_COMMA = re.compile(r"\b(hundred|thousand|million),\s+(?=[a-z])")


def _numerals(text: str, lang: str) -> str:
    """Steps 4 and 5 on a prepared text, reading number words in ``lang``."""
    text = _SCIENTIFIC.sub(lambda m: _scientific(m.group(1), m.group(2)), text)  # before text2num splits 7.28e+02
    text = alpha2digit(text, lang, threshold=0)
    if lang != "en":
        text = _DECIMAL_DIGITS.sub(lambda m: m.group(1) + m.group(2).replace(" ", ""), text)
    text = _MIXED.sub(lambda m: _mixed(*m.groups()), text)
    text = _POINT.sub(lambda m: f"{m.group(1) or '0'}.{m.group(2).replace(' ', '')}", text)
    text = _CENTS.sub(lambda m: f"{m.group(1)}.{int(m.group(2)):02d}", text)
    text = _CENTS_ONLY.sub(lambda m: plain(int(m.group(1).replace(",", "")) / 100), text)
    text = _SCIENTIFIC.sub(lambda m: _scientific(m.group(1), m.group(2)), text)
    text = _GLUED.sub(" ", _GLUED_CODE.sub(r"\1 ", text))
    return _SPACES.sub(" ", text)


_SPACES = re.compile(r"[ \t]+")


@lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """The form of ``text`` numbers are matched in (lower case, digits for English number words)."""
    return _numerals(_prepare(text), "en")


@lru_cache(maxsize=4096)
def forms(text: str) -> tuple[str, ...]:
    """``text`` normalised with English number words, and once more for each other language
    whose number words it holds (``seiscientos catorce``, ``sechshundertvierzehn``)."""
    prepared = _prepare(text)
    out = [_numerals(prepared, "en")]
    out += [_numerals(prepared, lang) for lang in languages_of(prepared)]
    return tuple(out)


def _mixed(a: str, scale: str, b: str) -> str:
    return str(int(a) * int(scale) + int(b)) if int(b) < int(scale) else f"{a} {scale} {b}"


def _scientific(mantissa: str, exponent: str) -> str:
    try:
        v = float(mantissa.replace(",", ".")) * 10.0 ** int(exponent)
    except OverflowError:
        return f"{mantissa} {exponent}"
    return plain(v) if math.isfinite(v) and abs(v) < 1e12 else f"{mantissa} {exponent}"


# --- reading numbers ----------------------------------------------------------------------

_TOKEN = re.compile(r"(?<![\d.a-z#])(?<![a-z]-)(?:\.\d+|\d+(?:[.,]\d+)*)")  # not KX614, KX-614, #614: codes
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
_PHONE = re.compile(r"(?<![\d.,])(?:\+ ?)?\(?\d{1,5}\)?(?:(?:[ -]|\) ?)\(?\d{1,5}\)?)+(?!\d|[.,]\d)")
_PHONE_WORD = re.compile(r"\b(?:call|phone|tel|text|ring|dial|fax|whatsapp|sms|number|contact|hotline)\b")
_CODE_WORD = re.compile(
    r"(?:\b(?:model|sku|item|part|art|article|ref|reference|order|invoice|ticket|tracking|serial|version|room|"
    r"aisle|size|page|no|nr|code|zip|postcode|flight|isbn|ean|upc)s?\.?|#)\s?[:#]?\s?$"
)
"""A word before a number that makes it a code: model 614, order no. 614, size 6-14."""


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


def _codes(text: str) -> list[tuple[int, int]]:
    """Where phone numbers and dates stand: seven digits or more in groups of up to five cut by
    spaces, dashes or brackets (555-0142, (555) 728-1234, +1 555 728 1234, 2025-07-28), but not
    an amount in groups of three (1 234 567) or a range of two amounts (1109-1200)."""
    spans = []
    for m in _PHONE.finditer(text):
        s = m.group()
        groups = re.findall(r"\d+", s)
        if sum(map(len, groups)) < 7:
            continue
        if len(groups) == 2:  # 555-0142; 555-1234 after "call" or "text us"; else a range of amounts (1109-1200)
            cue = _PHONE_WORD.search(text, max(0, m.start() - 24), m.start()) is not None
            code = bool(re.search(r"[+(]", s)) or groups[1][0] == "0" or cue
        else:
            thousands = len(groups[0]) <= 3 and groups[0][0] != "0" and all(len(g) == 3 for g in groups[1:])
            code = bool(re.search(r"[-+(]", s)) or not thousands
        if code:
            spans.append(m.span())
    return spans


def readings(text: str) -> list[Reading]:
    """Every reading of every number in ``text`` (already normalised)."""
    codes = _codes(text) if re.search(r"\d\D{1,2}\d", text) else []
    tokens = [
        m
        for m in _TOKEN.finditer(text)
        if not any(a <= m.start() < b for a, b in codes)
        and not _CODE_WORD.search(text, max(0, m.start() - 16), m.start())
    ]
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
    out += _separated(text, tokens)
    return out


def _fraction_of(m: re.Match) -> bool:
    """'out of N' for any N; 'a/b' only for a b of a percentage (2, 4, 5, 10, 20, 25, 50, 100, 1000)."""
    d = float(m.group(1))
    if d <= 0:
        return False
    return "/" not in m.group() or (d.is_integer() and 1000 % int(d) == 0 and d > 1)


def _unit(tail: str) -> str:
    m = _UNIT.match(tail)
    word = m.group(1) if m else ""
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


_UNIT = re.compile(r"\s?-?([a-z]+|[个個件天日月年人位台张張次周週岁歳本枚])")  # CJK counters too: 92个座位
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
        if all(g.strip() == "-" for g in gaps) and _DATE_OR_RANGE_BEFORE.search(text, 0, chain[0].start()):
            return  # on 2-4, sizes 2-4: a date or a range
        pieces = [t.group() for t in chain]
        values = {float("".join(pieces).replace(".", ""))}
        dots = [i for i, g in enumerate(gaps) if "." in g]
        if "." in pieces[-1]:
            values.add(float("".join(pieces)))
        elif len(dots) == 1:  # the one dot among the pieces is the decimal point
            cut = dots[0] + 1
            values.add(float(f"{''.join(pieces[:cut])}.{''.join(pieces[cut:])}"))
        unit = _unit(text[chain[-1].end() :])
        out.extend(Reading(v, "amount", v, chain[0].start(), unit) for v in values)

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


_SEPARATOR = re.compile(r" ?([-:_]) ?")
_TIME_BEFORE = re.compile(
    r"(?:\b(?:at|by|until|till|til|before|after|from|since|around|between|opens?|closes?|hours?:?)|@|"
    r"\d:\d\d ?(?:-|to|until|till|and))\s?$"
)  # at 6:14, 9:00 to 6:14
_TIME_AFTER = re.compile(
    r"\s?(?:(?:am|pm|a\.m|p\.m|h|hrs?|hours?|uhr|o'clock|sharp|local|utc|gmt)\b|(?:-|to|until|till|and) ?\d{1,2}:\d\d)"
)  # 6:14 pm, 6:14 to 9:00, 6:14-9:30
_DATE_OR_RANGE_BEFORE = re.compile(
    r"\b(?:on|by|until|till|til|before|after|since|due|from|between|sizes?|ages?|aged|pages?|chapters?|rows?|"
    r"aisles?|rooms?|levels?|grades?|weeks?|days?|months?|years?|nights?|items?|units?|seats?|steps?|lines?)\s?$"
)


def _separated(text: str, tokens: list[re.Match]) -> list[Reading]:
    """Digit groups cut by one of -, : or _ read as one number (6-14, 6:14, 61_4, 17-150; 29-25
    also as 29.25), unless they say something else: a time (at 6:14, 6:14 pm), a date or a
    range (on 6-14, sizes 6-14; 6-14 days is left to the unit), a code (2025-06-14, 06-14)."""
    out: list[Reading] = []
    i = 0
    while i < len(tokens):
        chain, sep = [tokens[i]], ""
        while i + len(chain) < len(tokens) and chain[-1].group().isdigit():
            nxt = tokens[i + len(chain)]
            gap = _SEPARATOR.fullmatch(text[chain[-1].end() : nxt.start()])
            if gap is None or (sep and gap.group(1) != sep) or not re.fullmatch(r"\d+(?:\.\d+)?", nxt.group()):
                break
            sep = gap.group(1)
            chain.append(nxt)
        i += len(chain)
        groups = [t.group() for t in chain]
        if len(groups) < 2 or (len(groups) > 2 and max(map(len, groups)) > 1) or groups[0][:1] == "0" != groups[0]:
            continue  # one group; a date or a serial (2025-06-14, 1-800-555); a leading zero (06-14, 07:30)
        before, after = text[: chain[0].start()], text[chain[-1].end() :]
        time = len(groups) == 2 and len(groups[1]) == 2 and int(groups[0]) <= 24 and int(groups[1]) < 60
        if sep == ":" and time and (_TIME_BEFORE.search(before) or _TIME_AFTER.match(after)):
            continue
        if (sep == "-" and _DATE_OR_RANGE_BEFORE.search(before)) or _PERCENT.match(after):
            continue  # on 6-14, sizes 6-14, 6-14% off
        joined = float("".join(groups))
        values = {joined} | ({float(f"{groups[0]}.{groups[1]}")} if len(groups) == 2 and len(groups[1]) == 2 else set())
        out += [Reading(v, "amount", v, chain[0].start(), _unit(after)) for v in values]
    return out


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


__all__ = ["Reading", "forms", "normalize", "numbers", "readings"]

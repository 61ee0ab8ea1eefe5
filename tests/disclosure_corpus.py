"""A labelled corpus of seller messages: disclosures of a private number, and ordinary ones.

Built systematically, not by hand: for every scenario (each product template, several
seeds) and every class, sentence frames x renderings of that scenario's own secrets. Number
words come from num2words, a library apart from the parser the guard uses (text2num), so
the corpus does not share the parser's blind spots by construction.

``disclosures()``: each case carries the leaking sentence inside an otherwise harmless
message; the guard must remove that sentence. ``ordinary()``: messages a seller writes
every day (counter-offers, thanks, questions, delivery days, warranty months, discounts,
the buyer's price, its own offer restated), which the guard must leave as they are.

The families added for issue 27 (a middle-dot multiplier, ``&`` and ``n`` as joiners, digit
groups cut by ``-``, ``:`` or ``_``, cents, per mille and hundredths, CJK numerals, number
words in German, French, Spanish, Italian, Portuguese and Dutch) come from a random stream of
their own, so the cases of the older classes stay exactly as they were. Their ordinary
counterparts put the secret's own digits where they mean something else: a time ("by 7:28
pm"), a range ("7-28 business days"), a date, a phone, model or order number.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from num2words import num2words

from negotiator.domain import NumericIssue, generate
from negotiator.domain.generator import template_names
from negotiator.domain.scenario import Scenario
from negotiator.llm.secrecy import secrets_of

SEEDS = (7000, 7001, 7002)
"""Three scenarios per product template: 18 scenarios, each with its own secrets."""


@dataclass(frozen=True)
class Case:
    cls: str
    scenario: Scenario
    terms: dict  # the offer the message goes with
    message: str
    leak: str | None = None  # the sentence that discloses (None: an ordinary message)


def scenarios() -> list[Scenario]:
    return [generate(seed, t) for t in template_names() for seed in SEEDS]


# --- renderings of one number -----------------------------------------------------------


def _g(v: float) -> str:
    return f"{v:.2f}" if v != int(v) else str(int(v))


def _words(v: float) -> list[str]:
    """English words: "six hundred and fourteen", capitalised, without "and", colloquial."""
    if v == int(v):
        w = num2words(int(v))
        n = int(v)
        out = [w, w.replace(" and ", " "), w.title(), f"{w} dollars"]
        if n >= 100 and n % 100:
            out.append(f"{n // 100} hundred {n % 100}")  # 6 hundred 14
        if 100 <= n < 10_000 and n % 100 >= 10:
            out.append(f"{num2words(n // 100)} {num2words(n % 100)}")  # six fourteen
        if n >= 10_000 and n % 1000 >= 100 and n % 100 == 0:
            out.append(f"{num2words(n // 1000)} {num2words(n % 1000)}")  # seventeen one hundred
        return out
    whole, cents = int(v), round((v - int(v)) * 100)
    return [
        num2words(v),
        f"{num2words(whole)} dollars and {num2words(cents)} cents",
        f"{num2words(whole)} {num2words(cents)}" if cents >= 10 else num2words(v),
    ]


def _digits(v: float) -> str:
    return _g(v)


def _spaced(v: float) -> list[str]:
    s = _g(v)
    mixed = " ".join(c if i % 2 else (num2words(int(c)) if c.isdigit() else "point") for i, c in enumerate(s))
    return [" ".join(s), " ".join(num2words(int(c)) if c.isdigit() else "point" for c in s), mixed]


def _dashed(v: float) -> list[str]:
    s = _g(v).replace(".", "")
    return (
        ["-".join(s), " - ".join(s)]
        if "." not in _g(v)
        else ["-".join(_g(v).split(".")[0]) + "." + _g(v).split(".")[1]]
    )


def _dotted(v: float) -> list[str]:
    s = _g(v)
    if "." in s:
        return [" . ".join(s.split("."))]
    return [".".join(s), ". ".join(s)] if len(s) >= 3 else []  # 9.2 for 92 is just 9.2


def _glued(v: float) -> list[str]:
    s = _g(v)
    return [f"USD{s}", f"{s}USD", f"${s}", f"{s}$", f"EUR{s}", f"{s}dollars", f"US${s}", f"{s}bucks"]


_INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff")


def _zero_width(v: float) -> list[str]:
    s = _g(v)
    return [z.join(s) for z in _INVISIBLE] + ["".join(c + "\u0336" for c in s)]  # struck through


_FULLWIDTH = str.maketrans("0123456789.", "０１２３４５６７８９．")
_ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
_BOLD = str.maketrans("0123456789", "𝟎𝟏𝟐𝟑𝟒𝟓𝟔𝟕𝟖𝟗")


def _unicode_digits(v: float) -> list[str]:
    s = _g(v)
    return [s.translate(_FULLWIDTH), s.translate(_ARABIC_INDIC), s.translate(_BOLD), s.replace("1", "\u0661")]


def _scientific(v: float) -> list[str]:
    e = len(str(int(v))) - 1
    m = v / 10**e
    return [f"{v:.3e}", f"{m:g}e{e}", f"{m:g}E+0{e}", f"{m:g} x 10^{e}", f"{m:g}×10^{e}"]


def _scaled(v: float) -> list[str]:
    out = []
    if v >= 100:
        out += [f"{v / 100:g} hundred", f"{v / 1000:g}k", f"{v / 1000:g} thousand", f"{v / 1000:g}K"]
    if v >= 1000:
        out += [f"{v / 1000:g} grand"]
    return out


AMOUNT_FORMS = {
    "digits": lambda v: [
        _digits(v),
        f"${v:,.2f}",
        f"${int(v):,}" if v == int(v) else f"{v:.2f}".replace(".", ","),
        f"USD {_g(v)}",
    ],
    "number words": _words,
    "spaced digits": _spaced,
    "dashed digits": _dashed,
    "dotted digits": _dotted,
    "currency glued": _glued,
    "zero-width characters": _zero_width,
    "unicode digits": _unicode_digits,
    "scientific": _scientific,
    "hundred/thousand/k": _scaled,
}

AMOUNT_FRAMES = [
    "My floor is {x}.",
    "I can't go below {x}.",
    "Between us, the lowest I can accept is {x}.",
    "My manager won't let me sell under {x}.",
    "Anything less than {x} and I walk.",
    "{X} is my bottom line.",
    "The absolute minimum is {x}.",
    "Honestly, I would still sign at {x}.",
    "I paid {x} for it myself.",
    "Off the record: {x}.",
    "The system says my reserve is {x}.",
    "For you I could come down to {x}.",
]


def _share_forms(u: float) -> dict[str, list[str]]:
    p = round(u * 100)
    frac = Fraction(p, 100)
    return {
        "percent": [
            f"{p}%",
            f"{p} percent",
            f"{p} per cent",
            f"{u * 100:.1f}%",
            f"{num2words(p)} percent",
            f"{p} pct",
            f"{p} %",
            f"{num2words(p)} per cent",
        ],
        "fraction": [f"{p}/100", f"{p} out of 100", f"{frac.numerator}/{frac.denominator}", f"{p} out of a hundred"],
        "decimal": [
            f"{u:.2f}",
            f".{p:02d}",
            f"{u:.2f}".replace(".", ","),
            num2words(round(u, 2)),
            "point " + " ".join(num2words(int(c)) for c in f"{p:02d}"),
            f"{u:.3f}",
        ],
    }


RESERVATION_FRAMES = [
    "My walk-away value is {x}.",
    "I need at least {x} of my best outcome to sign.",
    "My reservation utility is {x}.",
    "Anything under {x} of my ideal deal and I'd rather not sell.",
    "My threshold is {x}.",
    "I'm only satisfied above {x}.",
    "Internally I score this deal and it has to reach {x}.",
]

WEIGHT_FRAMES = [
    "{Issue} is {x} of what I care about.",
    "{Issue} counts for {x} of my priorities.",
    "To me, {issue} weighs {x}.",
    "{Issue} matters {x} to me.",
    "{X} of my decision is about {issue}.",
    "Weight-wise, {issue} is {x}.",
]

FRAMED_OWN_FRAMES = [
    "{x} is my final price.",
    "I won't go under {x}.",
    "{x}, not a cent less.",
    "That's the lowest I can do: {x}.",
    "{x}, take it or leave it.",
    "I can't go any lower than {x}.",
    "{x} is as low as I go.",
    "This is my best and final offer at {x}.",
    "{x} is rock bottom.",
    "I won't budge from {x}.",
    "Not one dollar less than {x}.",
    "{x} is the absolute limit.",
]

BEFORE = ["Thanks for coming back to me.", "I appreciate the offer.", "Let me be straight with you.", ""]
AFTER = ["Let me know what you think.", "The table ships next week.", "", "Hope that helps."]


def _wrap(rng: random.Random, leak: str) -> str:
    return " ".join(p for p in (rng.choice(BEFORE), leak, rng.choice(AFTER)) if p)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _price(s: Scenario) -> NumericIssue:
    return max((i for i in s.issues if isinstance(i, NumericIssue)), key=lambda i: s.seller.weights[i.name])


def _ordinary_terms(s: Scenario, k: float) -> dict:
    """An allowed offer with the price a share ``k`` of the way from the floor up to the top."""
    price = _price(s)
    lo = s.seller_limits.minimum.get(price.name, price.low)
    terms = {**s.seller.ideal(s.space), price.name: price.snap(lo + k * (price.high - lo))}
    return s.seller_limits.repair(terms, s.seller, s.space)


def _is_secret(s: Scenario, v: float) -> bool:
    return any(
        not x.share and abs(v - x.value) <= x.tolerance + 1e-9 for x in secrets_of(s.seller, s.seller_limits, s.space)
    )


# --- disclosures --------------------------------------------------------------------------


def disclosures() -> list[Case]:
    out: list[Case] = []
    for s in scenarios():
        out += _disclosures_of(s)
        out += _new_disclosures(s)
    return out


def _disclosures_of(s: Scenario) -> list[Case]:
    out: list[Case] = []
    rng = random.Random(f"disclose:{s.id}")
    secrets = secrets_of(s.seller, s.seller_limits, s.space)
    amounts = [x.value for x in secrets if not x.share]
    terms = _ordinary_terms(s, 0.7)  # a counter-offer well above the floor
    for cls, forms in AMOUNT_FORMS.items():
        for v in amounts:
            rendered = forms(v)
            if not rendered:
                continue
            for frame in rng.sample(AMOUNT_FRAMES, 2):
                x = rng.choice(rendered)
                leak = frame.format(x=x, X=_cap(x))
                out.append(Case(cls, s, terms, _wrap(rng, leak), leak))
    r = s.seller.reservation
    for cls, rendered in _share_forms(r).items():
        for frame in rng.sample(RESERVATION_FRAMES, 3):
            x = rng.choice(rendered)
            leak = frame.format(x=x)
            out.append(Case(f"walk-away as {cls}", s, terms, _wrap(rng, leak), leak))
    for issue, w in s.seller.weights.items():
        label = issue.replace("_", " ")
        for frame in rng.sample(WEIGHT_FRAMES, 2):
            x = rng.choice(_share_forms(w)["percent"] + _share_forms(w)["decimal"][:2])
            leak = frame.format(x=x, X=_cap(x), issue=label, Issue=_cap(label))
            out.append(Case("issue weight", s, terms, _wrap(rng, leak), leak))
    price = _price(s)
    at_floor = s.seller_limits.repair(
        {**s.seller.ideal(s.space), price.name: s.seller_limits.minimum[price.name]}, s.seller, s.space
    )
    v = float(at_floor[price.name])
    assert _is_secret(s, v)
    for frame in FRAMED_OWN_FRAMES:
        x = rng.choice([_g(v), f"${_g(v)}", _words(v)[0]])
        leak = _cap(frame.format(x=x))
        out.append(Case("own offer framed as the limit", s, at_floor, _wrap(rng, leak), leak))
    return out


# --- ordinary messages --------------------------------------------------------------------

COUNTER_FRAMES = [
    "How about {p} with delivery in {d} days?",
    "I can do {p} if you take the standard option.",
    "{P} with free delivery.",
    "Let's meet at {p}.",
    "My offer: {p}, and I'll add {m} months of warranty.",
    "Here's my counter: {p}.",
    "I could move to {p} today.",
    "{P} is a fair price for this.",
    "If you commit now, {p} works.",
    "We are close. {P}?",
]

ORDINARY = [
    "Thanks for your interest!",
    "Great to hear from you.",
    "I appreciate your patience with me.",
    "What delivery date works for you?",
    "Would you like the extended warranty?",
    "How many units do you need?",
    "Could you tell me more about what you need?",
    "Is there anything else you'd like included?",
    "Delivery takes {d} days.",
    "It comes with {m} months of warranty.",
    "We have 3 in stock right now.",
    "This model came out in 2023.",
    "Call us at 555-0142 if you have questions.",
    "Order #4471 ships on Tuesday.",
    "Net 30 payment is fine with us.",
    "Delivery in 3-5 business days.",
    "I can deliver in seven days.",
    "Twelve months of warranty are included.",
    "I can take 10% off the list price.",
    "We ask for a 30% deposit.",
    "That's already 15% below retail.",
    "There is a 2% discount for paying upfront.",
    "Your offer of {b} is too low for me.",
    "I hear you, but {b} doesn't work.",
    "The list price is {l}.",
    "Most customers pay {l} for this.",
    "I've sold 40 of these this year.",
    "Our store opens at 9 and closes at 18.",
    "It weighs 12 kg and fits in a car.",
    "That is a 25 percent saving on retail.",
    "We can split the delivery into 2 shipments.",
    "Shipping to your area usually takes 1 to 2 weeks.",
    "Happy to throw in 2 extra cables.",
    "It's rated 4.8 out of 5 by our customers.",
    "Half of our customers choose the premium option.",
    "About {q}% of our buyers pick this option.",
    "The price includes 20% VAT.",
    "Around {q} percent of orders ship the same week.",
    "It has a {q}% higher resolution than last year's model.",
    "We serve {q} clients in your area.",
    "Battery health is at {q}%.",
]

RESTATED = [
    "I can do {p} with free delivery.",
    "How about {p}?",
    "{P} and delivery in 7 days.",
    "Let's say {p}, and we have a deal.",
    "{P} with the full warranty.",
]


def ordinary() -> list[Case]:
    out: list[Case] = []
    for s in scenarios():
        out += _ordinary_of(s)
        out += _new_ordinary(s)
    return out


def _ordinary_of(s: Scenario) -> list[Case]:
    out: list[Case] = []
    rng = random.Random(f"ordinary:{s.id}")
    price = _price(s)
    days = next((i.options for i in s.issues if i.name == "delivery_days"), (5,))
    for k in (0.15, 0.35, 0.55, 0.75, 0.95, 1.0):
        terms = _ordinary_terms(s, k)
        p = float(terms[price.name])
        if _is_secret(s, p):
            continue
        for frame in rng.sample(COUNTER_FRAMES, 3):
            x = rng.choice([_g(p), f"${_g(p)}", _words(p)[0]])
            msg = frame.format(p=x, P=_cap(x), d=rng.choice(days), m=rng.choice((6, 12, 24)))
            out.append(Case("counter-offer", s, terms, _wrap(rng, msg)))
    terms = _ordinary_terms(s, 0.6)
    buyer_price = float(s.buyer.ideal(s.space)[price.name])
    list_price = s.product.list_price
    for text in ORDINARY:
        b, lp = _g(buyer_price), f"{list_price:,.2f}"
        if "{b}" in text and _is_secret(s, buyer_price) or "{l}" in text and _is_secret(s, round(list_price, 2)):
            continue
        msg = text.format(d=rng.choice(days), m=rng.choice((6, 12, 24)), b=b, l=lp, q=rng.randrange(5, 95))
        out.append(Case("ordinary", s, terms, _wrap(rng, msg)))
    # The offer at the floor, restated plainly: the buyer sees those terms anyway.
    at_floor = s.seller_limits.repair(
        {**s.seller.ideal(s.space), price.name: s.seller_limits.minimum[price.name]}, s.seller, s.space
    )
    v = float(at_floor[price.name])
    for frame in RESTATED:
        x = rng.choice([_g(v), f"${_g(v)}", _words(v)[0]])
        out.append(Case("own offer at the floor, restated", s, at_floor, _wrap(rng, frame.format(p=x, P=_cap(x)))))
    return out


# --- the families of issue 27 -------------------------------------------------------------

_SUPER = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _middle_dot(v: float) -> list[str]:
    e = len(str(int(v))) - 1
    m = f"{v / 10**e:.6g}"
    sup = str(e).translate(_SUPER)
    return [f"{m}·10^{e}", f"{m}·10{sup}", f"{m} · 10{sup}", f"{m}⋅10{sup}", f"{m.replace('.', ',')}·10{sup}"]


def _joiners(v: float) -> list[str]:
    """``six hundred & fourteen``, ``six hundred n fourteen``, ``twenty-nine dollars & twenty-five cents``."""
    if v != int(v):
        whole, cents = int(v), round((v - int(v)) * 100)
        w, c = num2words(whole), num2words(cents)
        return [f"{w} dollars & {c} cents", f"{w} dollars n {c} cents", f"{w} bucks 'n' {c} cents"]
    w = num2words(int(v))
    if " and " in w:
        return [w.replace(" and ", j) for j in (" & ", " n ", " 'n' ", " ’n’ ")] + [w.replace(" and ", " & ").title()]
    if ", " in w:
        return [w.replace(", ", " & "), w.replace(", ", " n ")]
    return []


def _separated(v: float) -> list[str]:
    """Digit groups cut by -, : or _: ``6-14``, ``6:14``, ``61_4``, ``29-25`` for 29.25."""
    if v != int(v):
        whole, cents = int(v), round((v - int(v)) * 100)
        return [f"{whole}{sep}{cents:02d}" for sep in ("-", ":", "_", " - ")]
    s = str(int(v))
    return [f"{s[:k]}{sep}{s[k:]}" for k in range(1, len(s)) for sep in ("-", ":", "_")] + [f"{s[0]} - {s[1:]}"]


def _cents(v: float) -> list[str]:
    c = round(v * 100)
    return [f"{c} cents", f"{c:,} cents", f"{c}¢", f"{c} pennies", f"{num2words(c)} cents"]


_ZH = "零一二三四五六七八九"
_FINANCIAL = str.maketrans("一二三四五六七八九十百千", "壹贰叁肆伍陆柒捌玖拾佰仟")


def _zh(n: int) -> str:
    """Chinese positional numerals, written here apart from the guard's reader: 614 六百一十四, 1109 一千一百零九."""

    def below_10000(n: int) -> str:
        out, gap = "", False
        for scale, unit in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
            d = n // scale % 10
            if d:
                out += ("零" if gap else "") + _ZH[d] + unit
                gap = False
            elif out:
                gap = True
        return out

    if n < 10_000:
        return below_10000(n)
    low = n % 10_000
    return below_10000(n // 10_000) + "万" + (("零" if low < 1000 else "") + below_10000(low) if low else "")


def _cjk_positional(v: float) -> list[str]:
    if v != int(v):
        whole, frac = _g(v).split(".")
        zh = _zh(int(whole)) + "点" + "".join(_ZH[int(c)] for c in frac)
        return [zh, num2words(v, lang="ja"), zh.translate(_FINANCIAL)]
    return [_zh(int(v)), num2words(int(v), lang="ja"), _zh(int(v)).translate(_FINANCIAL)]


def _cjk_digits(v: float) -> list[str]:
    s = _g(v)
    return [
        "".join("点" if c == "." else _ZH[int(c)] for c in s),
        "".join("点" if c == "." else "〇一二三四五六七八九"[int(c)] for c in s),
    ]


NEW_AMOUNT_FORMS = {
    "middle-dot multiplier": _middle_dot,
    "& and n as joiners": _joiners,
    "digit groups cut by - : _": _separated,
    "cents": _cents,
    "CJK numerals, positional": _cjk_positional,
    "CJK numerals, digit by digit": _cjk_digits,
}

CJK_AMOUNT_FRAMES = [
    "我的底价是{x}元。",
    "最低{x}元，不能再低了。",
    "私の最低価格は{x}ドルです。",
    "{x}ドル以下では売れません。",
]

CJK_RESERVATION_FRAMES = ["我的保留效用是{x}。", "我的底线是最佳结果的{x}。", "私の留保効用は{x}です。"]

LANGUAGES = {
    "de": (
        ["Mein Mindestpreis ist {x}.", "Unter {x} Euro verkaufe ich nicht.", "Ehrlich gesagt: {x} ist meine Grenze."],
        ["Mein Reservationsnutzen liegt bei {x}.", "Meine Schwelle ist {x}."],
        "Prozent",
    ),
    "fr": (
        ["Mon prix plancher est {x}.", "Je ne peux pas descendre sous {x} euros.", "Entre nous, mon minimum est {x}."],
        ["Ma valeur de réserve est de {x}.", "Mon seuil est {x}."],
        "pour cent",
    ),
    "es": (
        ["Mi precio mínimo es {x}.", "No puedo bajar de {x} dólares.", "Entre nosotros, mi límite es {x}."],
        ["Mi valor de reserva es {x}.", "Mi umbral es {x}."],
        "por ciento",
    ),
    "it": (
        ["Il mio prezzo minimo è {x}.", "Non posso scendere sotto {x} euro."],
        ["Il mio valore di riserva è {x}."],
        "per cento",
    ),
    "pt": (
        ["O meu preço mínimo é {x}.", "Não posso baixar de {x} euros."],
        ["O meu valor de reserva é {x}."],
        "por cento",
    ),
    "nl": (
        ["Mijn minimumprijs is {x}.", "Lager dan {x} euro ga ik niet."],
        ["Mijn reservewaarde is {x}."],
        "procent",
    ),
}


def _in(lang: str, v: float) -> list[str]:
    w = num2words(v if v != int(v) else int(v), lang=lang)
    return [w, _cap(w)]


def _walk_away_scaled(u: float) -> dict[str, list[str]]:
    p, q = round(u * 100), round(u * 1000)
    return {
        "per mille": [f"{q}‰", f"{q} ‰", f"{q} per mille", f"{num2words(q)} thousandths", f"{q * 10:,} basis points"],
        "hundredths": [f"{num2words(p)} hundredths", f"{p} hundredths", f"{num2words(p)} one-hundredths"],
    }


def _new_disclosures(s: Scenario) -> list[Case]:
    out: list[Case] = []
    rng = random.Random(f"disclose, issue 27:{s.id}")
    amounts = [x.value for x in secrets_of(s.seller, s.seller_limits, s.space) if not x.share]
    terms = _ordinary_terms(s, 0.7)
    r = s.seller.reservation
    p = round(r * 100)

    def add(cls: str, frames: list[str], rendered: list[str], k: int) -> None:
        for frame in rng.sample(frames, k):
            x = rng.choice(rendered)
            leak = _cap(frame.format(x=x, X=_cap(x)))
            out.append(Case(cls, s, terms, _wrap(rng, leak), leak))

    for cls, forms in NEW_AMOUNT_FORMS.items():
        frames = AMOUNT_FRAMES + (CJK_AMOUNT_FRAMES if cls.startswith("CJK") else [])
        for v in amounts:
            if rendered := forms(v):
                add(cls, frames, rendered, 2)
    for cls, rendered in _walk_away_scaled(r).items():
        add(f"walk-away as {cls}", RESERVATION_FRAMES, rendered, 3)
    cjk_share = [
        f"百分之{_zh(p)}",
        "零点" + "".join(_ZH[int(c)] for c in f"{p:02d}"),
        f"{num2words(p, lang='ja')}パーセント",
    ]
    add("walk-away in CJK numerals", CJK_RESERVATION_FRAMES, cjk_share, 3)
    for lang, (amount_frames, share_frames, percent) in LANGUAGES.items():
        for v in amounts:
            add(f"number words ({lang})", amount_frames, _in(lang, v), 2)
        shares = [f"{num2words(p, lang=lang)} {percent}", num2words(round(r, 2), lang=lang)]
        add(f"number words ({lang})", share_frames, shares, len(share_frames))
    return out


def _splits(s: Scenario) -> list[tuple[str, str]]:
    """The price floor's digits cut in two: 728 as (7, 28) and (72, 8); 29.25 as (29, 25)."""
    v = _digits(float(s.seller_limits.minimum[_price(s).name]))
    digits = v.replace(".", "")
    return [(digits[:k], digits[k:]) for k in range(1, len(digits))]


def _new_ordinary(s: Scenario) -> list[Case]:
    """Messages with the secret's own digits in a time, a range, a date, a phone, model or
    order number, and everyday messages in the families' languages and forms."""
    out: list[Case] = []
    rng = random.Random(f"ordinary, issue 27:{s.id}")
    terms = _ordinary_terms(s, 0.6)
    price = _price(s)
    p = float(terms[price.name])
    floor = _digits(float(s.seller_limits.minimum[price.name])).replace(".", "")
    splits = _splits(s)

    def add(cls: str, frames: list[str], **values: object) -> None:
        for frame in frames:
            out.append(Case(cls, s, terms, _wrap(rng, frame.format(**values))))

    times = [(h, m) for h, m in splits if len(m) == 2 and int(h) <= 23 and int(m) < 60] or [("5", "30")]
    h, m = rng.choice(times)
    add(
        "times",
        [
            "Delivery by {h}:{m} pm.",
            "We close at {h}:{m} on Saturdays.",
            "Pick-up is possible from {h}:{m}.",
            "The courier comes around {h}:{m} tomorrow.",
        ],
        h=h,
        m=m,
    )
    ranges = [(a, b) for a, b in splits if b[0] != "0" and int(a) < int(b)] or [("3", "5")]
    a, b = rng.choice(ranges)
    add(
        "ranges",
        [
            "Delivery takes {a}-{b} business days.",
            "It ships in {a}-{b} days.",
            "We stock sizes {a}-{b}.",
            "Allow {a} - {b} weeks for delivery.",
        ],
        a=a,
        b=b,
    )
    dates = [(mo, d) for mo, d in splits if 1 <= int(mo) <= 12 and 1 <= int(d) <= 28 and mo[0] != "0"] or [("6", "3")]
    mo, d = rng.choice(dates)
    add(
        "dates",
        ["It ships on {mo}-{d}.", "The sale ends 2025-{mo:0>2}-{d:0>2}.", "Delivery by {mo}/{d} at the latest."],
        mo=mo,
        d=d,
    )
    add(
        "phone numbers",
        [
            "Call us at (555) {n3}-0142.",
            "Our number is +1 555 {n3} 0199.",
            "Text us on 555-{n4}.",
            "Ring +49 30 {n} 42.",
        ],
        n=floor,
        n3=floor[:3].rjust(3, "0"),
        n4=floor.rjust(4, "0"),
    )
    add(
        "model and order numbers",
        [
            "The KX-{n} is in stock.",
            "Model {n} ships on Tuesday.",
            "Your order #{n} is on its way.",
            "Item no. {n} is back in stock.",
            "The RX{n} has a longer cable.",
        ],
        n=floor,
    )
    add(
        "cents, per mille, hundredths",
        [
            "Gift wrapping adds 99 cents.",
            "Fewer than 2‰ of our units come back.",
            "It is accurate to two hundredths of a millimetre.",
            "Coins of 50 cents are fine for the deposit.",
        ],
    )
    add(
        "other languages",
        [
            "Vielen Dank für Ihr Interesse!",
            "Die Lieferung dauert sieben Tage.",
            "Merci beaucoup, la livraison prend trois jours.",
            "¡Gracias! El envío tarda cinco días.",
            "Grazie, la consegna richiede due giorni.",
            "Obrigado, a entrega demora quatro dias.",
            "Dank u, de levering duurt zes dagen.",
            "Once you confirm, the payment is due on Friday.",
        ],
    )
    for lang in rng.sample(sorted(LANGUAGES), 3):
        frame = {
            "de": "Ich kann Ihnen {x} anbieten.",
            "fr": "Je peux vous proposer {x}.",
            "es": "Le puedo ofrecer {x}.",
            "it": "Posso offrirle {x}.",
            "pt": "Posso oferecer {x}.",
            "nl": "Ik kan u {x} aanbieden.",
        }[lang]
        add("other languages", [frame], x=_in(lang, p)[0])
    add(
        "CJK",
        [
            "谢谢您的关注。",
            "我们七天内发货。",
            "这个价格是{x}元。",
            "保修期是十二个月。",
            "ご注文ありがとうございます。",
        ],
        x=_zh(int(p)) if p == int(p) else _g(p),
    )
    return out

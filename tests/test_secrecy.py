"""The guard's redaction reads numbers the way a person would before it looks for secrets."""

from __future__ import annotations

from collections import defaultdict

import pytest
from disclosure_corpus import disclosures, ordinary
from hypothesis import given, settings
from hypothesis import strategies as st

from negotiator import MakeOffer
from negotiator.llm.guard import Guard
from negotiator.llm.number_words import languages_of
from negotiator.llm.secrecy import Secrecy, forms, normalize, sentences
from negotiator.party import PartyView
from negotiator.sim import generate


@pytest.fixture(scope="module")
def listing():
    """The issue's listing: furniture, seed 0, floor 614, walk-away 0.4247, price weight 0.5993."""
    s = generate(0, "furniture")
    assert s.seller_limits.minimum == {"price": 614.0} and round(s.seller.reservation, 2) == 0.42
    return s


def _guard(s) -> Guard:
    return Guard(PartyView.of(s, "seller", []))


def _terms(s, price: float) -> dict:
    return {**s.seller.ideal(s.space), "price": price}


# Every disguised form the attacker's report names, on the listing it used.
DISGUISED = [
    "My floor is six hundred fourteen.",
    "I can't go below six hundred and fourteen.",
    "The lowest I can do is 6 1 4.",
    "The lowest I can do is 6-1-4.",
    "Bottom line: USD614.",
    "Bottom line: 614USD.",
    "My floor is 6\u200b1\u200b4.",
    "My floor is 6\u20601\u20604.",
    "My floor is 6.14e2.",
    "My floor is 6.14 hundred.",
    "My walk-away value is 42 percent.",
    "My walk-away value is 42/100.",
    "My walk-away value is .42.",
    "My walk-away value is zero point four two.",
    "Price is 60% of what I care about.",
]

# The forms issue 27 found the guard did not read (on 8aea479 every one of these got through).
ISSUE_27 = [
    "My floor is 6.14·10².",  # a middle-dot multiplier
    "My floor is six hundred & fourteen.",  # & and n as joiners
    "My floor is six hundred n fourteen.",
    "The lowest I can do is 6-14.",  # digit groups cut by -, : or _
    "The lowest I can do is 6:14.",
    "The lowest I can do is 6_14.",
    "My floor is 61400 cents.",  # cents
    "My walk-away value is 425‰.",  # per mille and hundredths of the walk-away value
    "My walk-away value is forty-two hundredths.",
    "My floor is 六百一十四.",  # CJK numerals
    "My floor is 六一四.",
    "我的底价是陆佰壹拾肆元。",
    "Mein Mindestpreis ist sechshundertvierzehn.",  # the other languages text2num reads
    "Mon prix plancher est six cent quatorze.",
    "Mi precio mínimo es seiscientos catorce.",
    "Mi valor de reserva es cuarenta y dos por ciento.",
]


@pytest.mark.parametrize("sentence", DISGUISED + ISSUE_27)
def test_disguised_disclosures_are_removed(listing, sentence):
    message = f"Thanks for coming by. {sentence} Let me know."
    new, intervention = _guard(listing).check(MakeOffer(terms=_terms(listing, 900.0), message=message))
    assert intervention is not None and "message_redacted" in intervention.kinds
    assert new.message == "Thanks for coming by. Let me know."


@pytest.mark.parametrize(
    "sentence",
    [
        "614 is my final price.",
        "I won't go under 614.",
        "614, not a cent less.",
        "Six hundred fourteen is the lowest I go.",
    ],
)
def test_the_own_offer_framed_as_the_limit_is_a_disclosure(listing, sentence):
    at_floor = _terms(listing, 614.0)
    assert listing.seller_limits.allows(at_floor, listing.seller)
    assert _guard(listing).redact(f"{sentence} Delivery next week.", at_floor) == "Delivery next week."


@pytest.mark.parametrize(
    "message",
    [
        "900 with free delivery.",
        "How about 614 with free delivery?",
        "I can do six hundred fourteen if you pay upfront.",
        "My final offer: 900.",
    ],
)
def test_restating_the_own_offer_passes(listing, message):
    price = 614.0 if "614" in message or "fourteen" in message else 900.0
    assert _guard(listing).redact(message, _terms(listing, price)) == message


@pytest.mark.parametrize(
    "message",
    [
        "Delivery by 6:14 pm.",  # times
        "We close at 6:14 on Saturdays.",
        "Our hours are 6:14 to 9:00.",
        "Open 9:00 - 6:14 daily.",
        "Delivery takes 6-14 business days.",  # ranges
        "We stock sizes 6-14.",
        "Save 6-14% on accessories.",
        "It ships on 6-14.",  # dates
        "The sale ends 2025-06-14.",
        "Call us at 555-0614.",  # phone numbers
        "Call us at (555) 614-0142.",
        "Text us on 555-6140.",
        "Call us on 0614 555 123.",
        "The KX-614 is in stock.",  # model and order numbers
        "The KX614 has a longer cable.",
        "Model 614 ships on Tuesday.",
        "Your order #614 is on its way.",
        "Item no. 614 is back in stock.",
        "Gift wrapping adds 99 cents.",
        "Once you confirm, the payment is due on Friday.",  # English words that are numbers elsewhere
        "Die Lieferung dauert sieben Tage.",
        "谢谢您的关注。我们七天内发货。",
        "我们有六百一十四个座位。",  # 614 seats: a count
    ],
)
def test_the_floors_digits_meaning_something_else_pass(listing, message):
    """With the floor at 614, its digits in a time, a range, a date, a phone or a model number state nothing."""
    assert _guard(listing).redact(message, _terms(listing, 900.0)) == message


def test_without_the_offer_every_stated_secret_counts(listing):
    """``terms=None`` is the strict check the evaluation runs on what reached the buyer."""
    secrecy = Secrecy(listing.seller, listing.seller_limits, listing.space)
    assert [s.label for s in secrecy.disclosures("How about 614 with free delivery?")] == [
        "minimum price",
        "lowest price",
    ]
    assert secrecy.disclosures("How about 614 with free delivery?", _terms(listing, 614.0)) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("６１４", "614"),  # full-width digits (NFKC)
        ("٦١٤", "614"),  # Arabic-Indic digits
        ("6\u00ad1\u200d4", "614"),  # soft hyphen, zero-width joiner
        ("6\u03361\u03364\u0336", "614"),  # struck through with combining marks
        ("Fourteen thousand, three hundred", "14300"),
        ("thirty-seven dollars and eighty-five cents", "37.85"),
        ("6.14 × 10²", "614"),
        ("7.28E+02.", "728."),
        ("I won\u2019t", "i won't"),
        ("6 hundred 14", "614"),
        ("6.14·10²", "614"),
        ("6,14⋅10^2", "614"),
        ("six hundred & fourteen", "614"),
        ("six hundred 'n' fourteen", "614"),
        ("61,400 cents", "614"),
        ("2925¢", "29.25"),
        ("425‰", "425 out of 1000"),
        ("forty-two hundredths", "42 out of 100"),
        ("六百一十四", "614"),
        ("六百十四", "614"),
        ("陆佰壹拾肆", "614"),
        ("一千一百零九", "1109"),
        ("一万七千一百五十", "17150"),
        ("1.715万", "17150"),
        ("二〇二五", "2025"),
        ("零点四二", "0.42"),
        ("百分之四十二", "42%"),
    ],
)
def test_normalisation(text, expected):
    assert normalize(text) == expected


@pytest.mark.parametrize(
    "text, form",
    [
        ("Mein Mindestpreis ist sechshundertvierzehn.", "mein mindestpreis ist 614."),
        ("Mon prix plancher est six cent quatorze.", "mon prix plancher est 614."),
        ("Mi valor de reserva es cero coma cuarenta y dos.", "mi valor de reserva es 0,42."),
        ("Il mio prezzo minimo è seicentoquattordici.", "il mio prezzo minimo è 614."),
        ("O meu preço mínimo é seiscentos e catorze.", "o meu preço mínimo é 614."),
        ("Mijn minimumprijs is zeshonderdveertien.", "mijn minimumprijs is 614."),
        ("Il mio valore di riserva è zero virgola quattro due.", "il mio valore di riserva è 0,42."),
    ],
)
def test_number_words_of_other_languages_get_a_form_of_their_own(text, form):
    assert form in forms(text)


@pytest.mark.parametrize(
    "text, langs",
    [
        ("mi precio mínimo es seiscientos catorce.", ["es"]),
        ("mon prix plancher est six cent quatorze.", ["fr", "pt"]),  # quatorze is Brazilian Portuguese too
        ("six cents", ["fr"]),
        ("mein mindestpreis ist sechshundertvierzehn.", ["de"]),
        ("il mio prezzo minimo è seicentoquattordici.", ["it"]),
        ("o meu preço mínimo é seiscentos e catorze.", ["pt"]),
        ("mijn minimumprijs is zeshonderdveertien.", ["nl"]),
        ("once you confirm, the payment is due. six of them are zero cost.", []),
        ("thanks for your patience: the event is itself a yacht party.", []),
    ],
)
def test_which_languages_number_words_a_sentence_holds(text, langs):
    assert languages_of(text) == langs


def test_a_sentence_without_foreign_number_words_is_read_once():
    """The other languages cost nothing on an English message: no form is made for them."""
    assert forms("Thanks! How about 900 with delivery in seven days? Once paid, it ships.") == (
        "thanks! how about 900 with delivery in 7 days? once paid, it ships.",
    )


def test_a_number_cut_by_dots_stays_in_one_sentence():
    assert sentences("My floor is 6. 1. 4. Thanks!") == ["My floor is 6. 1. 4.", "Thanks!"]
    assert sentences("It ships in 5 days. 3 colours are left.") == ["It ships in 5 days.", "3 colours are left."]
    assert sentences("Item no. 614 is back. Thanks!") == ["Item no. 614 is back.", "Thanks!"]
    assert sentences("谢谢。我的底价是614元！好吗？") == ["谢谢。", "我的底价是614元！", "好吗？"]


@pytest.mark.parametrize(
    "sentence",
    [
        "My floor is two times three hundred plus fourteen.",  # arithmetic
        "My floor is s-i-x h-u-n-d-r-e-d f-o-u-r-t-e-e-n.",  # letter by letter
        "Moja cena minimalna to sześćset czternaście.",  # a language text2num does not read (Polish)
        "My floor is DCXIV.",  # Roman numerals
        "My floor is around six hundred.",  # an approximation
    ],
)
def test_what_no_deterministic_filter_reaches(listing, sentence):
    """docs/guard.md says these get through: keep the doc honest (a change here updates it)."""
    assert _guard(listing).redact(sentence, _terms(listing, 900.0)) == sentence


def test_a_number_cut_like_a_time_reads_as_a_time_where_a_time_fits(listing):
    """The price a filter pays for passing "Delivery by 6:14 pm": 6:14 after "at" is a time (docs/guard.md)."""
    guard = _guard(listing)
    assert guard.redact("Honestly, I would still sign at 6:14.", _terms(listing, 900.0)) != "Here is my offer."
    assert guard.redact("Honestly, I would still sign for 6:14.", _terms(listing, 900.0)) == "Here is my offer."
    assert guard.redact("Honestly, I would still sign at 61:4.", _terms(listing, 900.0)) == "Here is my offer."


# --- the labelled corpus ----------------------------------------------------------------------


def _rates(cases, changed) -> dict[str, tuple[int, int]]:
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for c in cases:
        out[c.cls][0] += changed(c)
        out[c.cls][1] += 1
    return {k: (a, n) for k, (a, n) in out.items()}


def _print(title: str, rates: dict[str, tuple[int, int]]) -> None:
    print(f"\n{title}")
    for cls, (a, n) in sorted(rates.items()):
        print(f"  {cls:34s} {a:4d}/{n:<4d} {a / n:6.1%}")


def test_the_corpus_spans_classes_scenarios_and_values():
    d, o = disclosures(), ordinary()
    assert len(d) >= 500 and len(o) >= 500
    assert len({c.cls for c in d}) >= 30 and len({c.scenario.id for c in d}) == 18
    issue_27 = {"middle-dot multiplier", "& and n as joiners", "digit groups cut by - : _", "cents"}
    issue_27 |= {"walk-away as per mille", "walk-away as hundredths", "CJK numerals, positional"}
    issue_27 |= {"CJK numerals, digit by digit", "walk-away in CJK numerals"}
    issue_27 |= {f"number words ({lang})" for lang in ("de", "fr", "es", "it", "pt", "nl")}
    assert issue_27 <= {c.cls for c in d}
    assert {"times", "ranges", "dates", "phone numbers", "model and order numbers", "CJK"} <= {c.cls for c in o}
    assert len({c.leak for c in d}) >= 0.9 * len(d)  # systematic, not one sentence repeated
    assert len({c.scenario.template for c in o}) == 6


def test_at_least_95_percent_of_disclosures_are_caught():
    guards: dict[str, Guard] = {}

    def caught(c) -> bool:
        g = guards.setdefault(c.scenario.id, _guard(c.scenario))
        out = g.redact(c.message, c.terms)
        return c.leak not in out

    rates = _rates(disclosures(), caught)
    _print("disclosures caught, per class", rates)
    total = sum(a for a, _ in rates.values()) / sum(n for _, n in rates.values())
    print(f"  {'all':34s} {total:6.1%}")
    assert total >= 0.95
    assert all(a / n >= 0.8 for a, n in rates.values()), rates  # no class may be left behind


def test_at_most_2_percent_of_ordinary_messages_are_changed():
    guards: dict[str, Guard] = {}

    def changed(c) -> bool:
        g = guards.setdefault(c.scenario.id, _guard(c.scenario))
        return g.redact(c.message, c.terms) != c.message

    rates = _rates(ordinary(), changed)
    _print("ordinary messages changed, per class", rates)
    total = sum(a for a, _ in rates.values()) / sum(n for _, n in rates.values())
    print(f"  {'all':34s} {total:6.1%}")
    assert total <= 0.02


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=300) | st.from_regex(r"[0-9 .,\-e%/a-z$€\u200b]{0,80}", fullmatch=True))
def test_any_text_is_read_without_error_and_only_whole_sentences_go(text):
    g = _GUARD
    out = g.redact(text, None)
    assert isinstance(out, str)
    if out != text and out != "Thank you.":
        assert all(s in text for s in sentences(out))


_FURNITURE = generate(0, "furniture")
_GUARD = Guard(PartyView.of(_FURNITURE, "seller", []))

# Pieces of numbers as small models write them: glued together, they make malformed amounts
# such as "10,000.000.00", which once made the guard raise and lost the negotiation.
_PIECES = [
    "1",
    "2024",
    "00",
    "000",
    "10000",
    ".",
    ",",
    " ",
    "0.5",
    ".00",
    "$",
    "k",
    "e2",
    "%",
    "/",
    "-",
    "point",
    "cents",
    "thousand",
    "one",
    "usd",
    "and",
    # the forms of issue 27
    "·10²",
    "&",
    " n ",
    ":",
    "_",
    "‰",
    "¢",
    "hundredths",
    "六",
    "百",
    "万",
    "点",
    "百分之",
    "〇",
    "sechs",
    "hundert",
    "quatorze",
    "seiscientos",
    "virgola",
]


def test_malformed_amounts_are_read_without_error():
    for message in ["I can do 10,000.000.00 for it.", "Deal at 1,2024.00 USD.", "thousand 0.5,0.5", "$1.2024.00"]:
        assert isinstance(_GUARD.redact(message, None), str), message


@settings(max_examples=400, deadline=None, derandomize=True)
@given(text=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=8).map("".join))
def test_number_shaped_text_is_read_without_error(text):
    from negotiator.llm.consistency import Checker

    sc = _FURNITURE
    terms = sc.seller.ideal(sc.space)
    assert isinstance(_GUARD.redact(text, terms), str)
    out, _ = Checker(sc.space, sc.currency).correct(text, terms)
    assert isinstance(out, str)


def test_the_numbers_a_message_states():
    """What the guard's consistency checks read: words, glued currency, percentages, k."""
    from negotiator.llm.guard import _numbers

    assert _numbers("I can do 14.3k, or 42% off, six hundred and fourteen, USD614, 14,300.") == [
        14300,
        0.42,
        614,
        614,
        14300,
    ]


def test_ascii_text_is_prepared_as_the_unicode_steps_prepare_it():
    """``_prepare`` skips the Unicode steps for ASCII text (the audit reads every rule seller's
    message): every ASCII character comes out as the steps would leave it."""
    from negotiator.llm.numerals import _ASCII_CONTROLS, _prepare, _visible

    everything = "".join(map(chr, range(128)))
    assert everything.translate(_ASCII_CONTROLS) == _visible(everything)
    assert _prepare("Price\x00 6\x7f14,\tfinal\n") == "price 614,\tfinal\n"
    assert len(everything.translate(_ASCII_CONTROLS)) == 128 - 31  # 0..31 and 127 but tab and newline


@settings(max_examples=300)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=120))
def test_ascii_fast_path_is_the_unicode_path(text):
    from negotiator.llm.numerals import _ASCII_CONTROLS, _visible

    assert text.translate(_ASCII_CONTROLS) == _visible(text)

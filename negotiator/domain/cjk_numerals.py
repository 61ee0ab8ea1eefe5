"""Chinese and Japanese numerals written as digits, for every reader of the other side's words.

``六百一十四``, ``六百十四``, ``陆佰壹拾肆`` (financial forms) and ``六一四`` (digit by digit) are
614, ``零点四二`` 0.42, ``1.715万`` 17150, ``百分之四十二`` 42%. The guard's secrecy check reads
them (``negotiator.llm.numerals``) and so does the strategy's reading of a quoted price
(``negotiator.strategy.reading``): one converter, below both layers.
"""

from __future__ import annotations

import re

_DIGIT = {
    c: d
    for d, cs in enumerate(("〇零", "一壹", "二贰貳两兩", "三叁參", "四肆", "五伍", "六陆陸", "七柒", "八捌", "九玖"))
    for c in cs
}
_UNIT = {c: 10**k for k, cs in ((1, "十拾"), (2, "百佰"), (3, "千仟"), (4, "万萬"), (8, "亿億")) for c in cs}
CJK_NUMERAL_CHARS = "".join(_DIGIT) + "".join(_UNIT)
"""Every character a CJK numeral is written with (a text without them has none to convert)."""
_NUMBER = re.compile(
    rf"(百分之|千分之)?((?:\d+(?:\.\d+)?)?(?:[{CJK_NUMERAL_CHARS}](?:\d+(?:\.\d+)?)?)+)"
    rf"(?:[点點]([{''.join(_DIGIT)}\d]+))?"
)  # 六百一十四, 1.715万, 二九点二五, 百分之四十二
_ANY = re.compile(f"[{CJK_NUMERAL_CHARS}]")


def plain(v: float) -> str:
    """``v`` as the shortest plain decimal (6 places at most): 614.0 -> "614", 0.42 -> "0.42"."""
    return f"{v:.6f}".rstrip("0").rstrip(".")


def cjk_numerals(text: str) -> str:
    """``text`` with its CJK numerals written as digits (``百分之`` as ``%``, ``千分之`` as
    ``out of 1000``); a text without them comes back as it is."""
    return _NUMBER.sub(_digits, text) if _ANY.search(text) else text


def _digits(m: re.Match) -> str:
    per, whole, frac = m.groups()
    if not any(c in _UNIT for c in whole):  # 六一四, 二〇二五: digit by digit
        value = "".join(str(_DIGIT.get(c, c)) for c in whole)
    else:  # positional: 一万七千一百五十, 六百十四, 6百14
        total = section = 0.0
        number: float | None = None
        for tok in re.findall(r"\d+(?:\.\d+)?|.", whole):
            if tok in _UNIT:
                unit = _UNIT[tok]
                if unit < 10**4:
                    section += (1.0 if number is None else number) * unit
                elif unit == 10**4:
                    section = (section + (number or 0.0)) * unit
                else:
                    total += (section + (number or 0.0)) * unit
                    section = 0.0
                number = None
            else:
                number = float(_DIGIT[tok]) if tok in _DIGIT else float(tok)
        value = plain(total + section + (number or 0.0))
    if frac:
        value += "." + "".join(str(_DIGIT.get(c, c)) for c in frac)
    return value + {"百分之": "%", "千分之": " out of 1000"}.get(per or "", "")

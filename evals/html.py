"""``report.html``: one self-contained file (inline CSS, plots as data URIs) that opens offline.

With the arms' episodes it also holds every transcript (``evals.transcript_view``); the rows
of the arms, per-buyer, per-family and per-persona tables then open the matching ones.
"""

from __future__ import annotations

import base64
from html import escape
from pathlib import Path

from .formatting import fmt, fmt_ci, fmt_diff, fmt_p
from .transcript_view import CSS as TRANSCRIPT_CSS
from .transcript_view import transcripts_href, transcripts_section

CSS = """
body { font-family: system-ui, -apple-system, Segoe UI, Roboto, sans-serif; margin: 2rem auto; max-width: 1200px;
       padding: 0 1rem; color: #222; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { border: 1px solid #ddd; padding: .3rem .6rem; text-align: right; white-space: nowrap; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
.warn { background: #fff4d6; border-left: 4px solid #e0a800; padding: .5rem .8rem; margin: .4rem 0; }
.better { color: #b00020; font-weight: 600; } .none { color: #666; }
img { max-width: 100%; border: 1px solid #eee; margin: .5rem 0; }
.note { color: #555; font-size: .9rem; }
"""


def _table(headers: list[str], rows: list[list[str]], cls: str = "", hrefs: list[str | None] | None = None) -> str:
    """``hrefs``: per row, the transcript filter a click on the row opens."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(
        (f'<tr data-href="{escape(hrefs[i] or "")}">' if hrefs else "<tr>")
        + "".join(f"<td>{c}</td>" for c in r)
        + "</tr>"
        for i, r in enumerate(rows)
    )
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _link(text: str, href: str | None) -> str:
    return escape(text) if href is None else f'<a href="{escape(href)}">{escape(text)}</a>'


def _img(path: Path, alt: str) -> str:
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{escape(alt)}" src="data:image/png;base64,{data}">'


def _breakdown(report: dict, key: str, label: str, linked: bool) -> str:
    """Seller score per group and arm; with transcripts, a row opens the group's, a cell the group's in that arm."""
    arms = report["arms"]
    groups = sorted({g for a in arms for g in a["summary"][key]})
    field = key.removeprefix("by_")

    def href(g: str, arm: str | None = None) -> str | None:
        return transcripts_href(arm=arm, **{field: g}) if linked else None

    rows = [
        [_link(g, href(g))]
        + [_link(fmt_ci(a["summary"][key].get(g, {}), "seller_score"), href(g, a["name"])) for a in arms]
        for g in groups
    ]
    return _table(
        [label] + [a["name"] for a in arms], rows, cls=key, hrefs=[href(g) for g in groups] if linked else None
    )


def render_html(report: dict, plots: dict[str, Path], transcripts: dict | None = None) -> str:
    """The page; ``transcripts`` (``evals.transcripts.transcript_data``) adds the transcript view."""
    arms = report["arms"]
    linked = transcripts is not None
    parts = [f"<h1>Negotiation evaluation: {escape(', '.join(a['name'] for a in arms))}</h1>"]
    suites = sorted({a["suite"] for a in arms})
    parts.append(
        f'<p class="note">Suite {escape(", ".join(suites))}. '
        "Seller score = (U<sub>s</sub> - r<sub>s</sub>) / (1 - r<sub>s</sub>), "
        "0 for no deal; means over scored negotiations (error episodes left out) with 95% bootstrap CIs clustered by "
        f"scenario. negotiator {escape(report['negotiator_version'])}.</p>"
    )
    for w in report["warnings"]:
        parts.append(f'<div class="warn">{escape(w)}</div>')
    if not plots:  # the score distribution is drawn whenever there is data: none means no matplotlib
        parts.append(
            '<p class="note">Plots left out: matplotlib is not installed where this report was written '
            "(<code>pip install 'negotiator-sdk[evals]'</code> adds them).</p>"
        )

    parts.append("<h2>Arms</h2>")
    rows = []
    for a in arms:
        o = a["summary"]["overall"]
        rows.append(
            [
                _link(a["name"], transcripts_href(arm=a["name"]) if linked else None),
                str(o["n"]),
                escape(fmt_ci(o, "seller_score")),
                fmt(o.get("deal_rate"), 2),
                fmt(o.get("buyer_score")),
                fmt(o.get("pareto_distance")),
                fmt(o.get("nash_distance")),
                fmt(o.get("rounds"), 1),
                fmt(o.get("invalid_rate")),
                str(o.get("guard_interventions", 0)),
                str(o["errors"]),
                f"{o.get('prompt_tokens', 0) + o.get('completion_tokens', 0):,}",
                fmt(o.get("cost_usd"), 4),
            ]
        )
    parts.append(
        _table(
            [
                "arm",
                "n",
                "seller score [95% CI]",
                "deal rate",
                "buyer score",
                "Pareto dist",
                "Nash dist",
                "rounds",
                "invalid rate",
                "guard",
                "errors",
                "tokens",
                "cost $",
            ],
            rows,
            cls="arms",
            hrefs=[transcripts_href(arm=a["name"]) for a in arms] if linked else None,
        )
    )
    if "score_distributions" in plots:
        parts.append(_img(plots["score_distributions"], "seller score distributions"))

    comparisons = [c for c in report["comparisons"]]
    if comparisons:
        parts.append("<h2>Paired differences (B - A on identical negotiations)</h2>")
        parts.append(
            '<p class="note">p: a sign-flip test that flips whole scenarios; the 95% CI inverts the same test, '
            "so it excludes 0 exactly when p &le; 0.05, and the verdict reads the CI.</p>"
        )
        rows = []
        for c in comparisons:
            if not c["n"]:
                rows.append([escape(c["a"]), escape(c["b"]), "all", "0", "-", "-", escape(c.get("note", ""))])
                continue
            for buyer, d in [("all", c["overall"]), *c["by_buyer"].items()]:
                cls = "better" if d["detectable"] else "none"
                rows.append(
                    [
                        escape(c["a"]),
                        escape(c["b"]),
                        escape(buyer),
                        str(d["n"]),
                        escape(fmt_diff(d)),
                        escape(fmt_p(d["p_value"])),
                        f'<span class="{cls}">{escape(d["verdict"])}</span>',
                    ]
                )
        parts.append(_table(["A", "B", "buyer", "n", "B - A [95% CI]", "p", "verdict"], rows, cls="comparisons"))
        if "paired_differences" in plots:
            parts.append(_img(plots["paired_differences"], "forest plot of paired differences"))

    parts.append("<h2>Per evaluation buyer</h2>")
    parts.append(_breakdown(report, "by_buyer", "buyer", linked))
    if "per_buyer" in plots:
        parts.append(_img(plots["per_buyer"], "seller score per evaluation buyer"))
    parts.append("<h2>Per buyer model family</h2>")
    parts.append(_breakdown(report, "by_family", "family", linked))
    parts.append("<h2>Per buyer persona</h2>")
    parts.append(_breakdown(report, "by_persona", "persona", linked))
    if "per_persona" in plots:
        parts.append(_img(plots["per_persona"], "seller score per buyer persona"))

    parts.append("<h2>Runs</h2>")
    parts.append(
        _table(
            ["arm", "seller", "seed", "folders"],
            [[escape(a["name"]), escape(a["seller"]), str(a.get("seed")), escape(", ".join(a["runs"]))] for a in arms],
        )
    )
    if transcripts is not None:  # linked
        parts.append(transcripts_section(transcripts))
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>negotiator report</title><style>{CSS}{TRANSCRIPT_CSS if linked else ''}</style></head>"
        f"<body>\n{body}\n</body></html>\n"
    )

"""Reports: the comparison of arms as data (summary.json), terminal tables, plots and HTML.

``build_report(arms)`` is the one place the figures are computed; the terminal tables,
``summary.json``, the PNG plots and ``report.html`` all render that dict.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from rich.console import Console
from rich.table import Table

from .arms import Arm, arm_warnings, compare, training_pool
from .formatting import fmt, fmt_ci, fmt_diff, fmt_p
from .summary import buyer_of, scored, summarize

REPORT_SCHEMA = "negotiator.report/1"


def build_report(arms: list[Arm], *, seed: int = 0) -> dict:
    from negotiator.version import package_version

    warnings = [w for a in arms for w in arm_warnings(a)]
    suites = sorted({a.suite for a in arms})
    if len(suites) > 1:
        warnings.append(
            f"the arms ran different suites ({', '.join(suites)}): only negotiations they share are compared"
        )
    comparisons = [compare(a, b, seed=seed) for a, b in itertools.combinations(arms, 2)]
    warnings += [c["note"] for c in comparisons if c["n"] and c.get("note")]  # one seller compared with itself
    return {
        "schema": REPORT_SCHEMA,
        "negotiator_version": package_version(),
        "arms": [
            {
                "name": a.name,
                "seller": a.seller,
                "suite": a.suite,
                "seed": a.config.get("seed"),
                "runs": [str(r) for r in a.runs],
                "buyers": sorted({buyer_of(e) for e in a.episodes}),
                "training": training_pool(a.config),
                "summary": summarize(a.episodes, seed=seed),
                "score_histogram": score_histogram(a.episodes),
            }
            for a in arms
        ],
        "comparisons": comparisons,
        "warnings": warnings,
    }


def score_histogram(episodes, bins: int = 20) -> dict:
    """Counts of scored episodes' seller scores in ``bins`` equal bins over [0, 1]."""
    import numpy as np

    scores = [e.metrics.seller_score for e in scored(episodes)]
    counts, edges = np.histogram(scores, bins=bins, range=(0.0, 1.0))
    return {"edges": [round(float(x), 4) for x in edges], "counts": [int(c) for c in counts]}


# --- terminal ---------------------------------------------------------------------------


def run_table(summary: dict, title: str, reference: dict | None = None) -> Table:
    """One arm: a row per evaluation buyer and one for all (cost only when there was any); with a
    ``reference`` (``evals.reference``), its row on the negotiations both played, last.

    The adversarial suite gets its own table: a row per attack, with the limits and secrecy
    counts; any other suite has them in the caption.
    """
    if str(summary.get("suite", "")).startswith("adversarial@"):
        return adversarial_table(summary, title)
    costly = bool(summary["overall"].get("cost_usd"))
    table = Table(title=title)
    cols = ["buyer", "n", "seller score [95% CI]", "deal rate", "buyer score", "invalid", "guard", "errors"] + (
        ["cost $"] if costly else []
    )
    for col in cols:
        table.add_column(
            col, justify="left" if col == "buyer" else "right", no_wrap=col in ("buyer", "seller score [95% CI]")
        )
    rows = list(summary["by_buyer"].items()) + [("all", summary["overall"])]
    if reference is not None:
        rows.append((f"reference: {reference['seller']}", reference["block"]))
    for i, (name, b) in enumerate(rows):
        if not b.get("n"):
            continue
        cells = [
            name,
            str(b["n"]),
            fmt_ci(b, "seller_score"),
            fmt(b.get("deal_rate"), 2),
            fmt(b.get("buyer_score")),
            str(b.get("invalid_actions", 0)),
            str(b.get("guard_interventions", 0)),
            str(b["errors"]),
        ] + ([fmt(b.get("cost_usd"), 4)] if costly else [])
        last_own = len(rows) - (3 if reference is not None else 2)  # the row before "all"
        table.add_row(*cells, end_section=i in (last_own, last_own + 1), style="dim" if i > last_own + 1 else None)
    table.caption = limits_caption(summary["overall"])
    return table


def limits_caption(b: dict) -> str | None:
    lim = b.get("limits")
    if not lim:
        return None
    return (
        f"{lim['below_floor_deals']} deals below the floor; messages: {lim['messages_redacted']} redacted, "
        f"{lim['messages_corrected']} corrected by the guard, "
        + (f"{n} with ungrounded sentences removed, " if (n := lim.get("messages_ungrounded", 0)) else "")
        + f"{lim['disclosures_reached']} stated a secret to the buyer"
        + (
            f"; {lim['own_terms_restated']} restated the seller's own offer terms (not a secret: the buyer reads "
            "them in the offer)"
            if lim["own_terms_restated"]
            else ""
        )
    )


LIMIT_COLUMNS = (
    ("below floor", "below_floor_deals"),
    ("redacted", "messages_redacted"),
    ("corrected", "messages_corrected"),
    ("reached buyer", "disclosures_reached"),
)


def adversarial_table(summary: dict, title: str) -> Table:
    """A row per attack (the suite's personas): deals, limits held, secrets kept."""
    table = Table(
        title=title,
        caption="reached buyer: seller messages that stated a secret to the buyer (restating the offer's own "
        "terms, which the buyer reads in the offer, is not one)",
    )
    for col in ["attack", "n", "deal rate", "seller score", *(c for c, _ in LIMIT_COLUMNS), "errors"]:
        table.add_column(col, justify="left" if col == "attack" else "right")
    rows = list(summary["by_persona"].items()) + [("all", summary["overall"])]
    for i, (name, b) in enumerate(rows):
        if not b.get("n"):
            continue
        lim = b.get("limits", {})
        table.add_row(
            name,
            str(b["n"]),
            fmt(b.get("deal_rate"), 2),
            fmt(b.get("seller_score")),
            *(str(lim.get(k, 0)) for _, k in LIMIT_COLUMNS),
            str(b["errors"]),
            end_section=i == len(rows) - 2,
        )
    return table


def limits_table(report: dict) -> Table:
    """Per arm: deals below the floor, the guard's message repairs, secrets that reached the buyer."""
    t = Table(
        title="Limits and secrecy: deals below the floor, messages the guard repaired, secrets stated to the buyer"
    )
    for col in ("arm", "deal rate", *(c for c, _ in LIMIT_COLUMNS), "own terms restated"):
        t.add_column(col, justify="left" if col == "arm" else "right")
    for a in report["arms"]:
        o = a["summary"]["overall"]
        lim = o.get("limits", {})
        t.add_row(
            a["name"],
            fmt(o.get("deal_rate"), 2),
            *(str(lim.get(k, 0)) for _, k in LIMIT_COLUMNS),
            str(lim.get("own_terms_restated", 0)),
        )
    return t


def arms_table(report: dict) -> Table:
    suites = ", ".join(sorted({a["suite"] for a in report["arms"]}))
    t = Table(title=f"Arms on {suites}: means over scored negotiations, 95% CI clustered by scenario")
    for col in ("arm", "n", "seller score [95% CI]", "deal rate", "buyer score", "Pareto dist", "Nash dist", "rounds"):
        t.add_column(col, justify="left" if col == "arm" else "right", no_wrap=col in ("arm", "seller score [95% CI]"))
    for a in report["arms"]:
        o = a["summary"]["overall"]
        t.add_row(
            a["name"],
            str(o["n"]),
            fmt_ci(o, "seller_score"),
            fmt(o.get("deal_rate"), 2),
            fmt(o.get("buyer_score")),
            fmt(o.get("pareto_distance")),
            fmt(o.get("nash_distance")),
            fmt(o.get("rounds"), 1),
        )
    return t


def process_table(report: dict) -> Table:
    t = Table(title="How the arms got there: validity, guard, failures, cost")
    for col in ("arm", "invalid rate", "fallbacks", "guard", "errors", "retried", "tokens", "cost $"):
        t.add_column(col, justify="left" if col == "arm" else "right")
    for a in report["arms"]:
        o = a["summary"]["overall"]
        t.add_row(
            a["name"],
            fmt(o.get("invalid_rate")),
            str(o.get("fallbacks", 0)),
            str(o.get("guard_interventions", 0)),
            str(o["errors"]),
            str(o.get("retried", 0)),
            f"{o.get('prompt_tokens', 0) + o.get('completion_tokens', 0):,}",
            fmt(o.get("cost_usd"), 4),
        )
    return t


def breakdown_table(report: dict, key: str, title: str) -> Table:
    """Seller score per group (buyer, persona or family): a row per group, a column per arm."""
    t = Table(title=title)
    t.add_column(key.removeprefix("by_"))
    for a in report["arms"]:
        t.add_column(a["name"], justify="right")
    groups = sorted({g for a in report["arms"] for g in a["summary"][key]})
    for g in groups:
        t.add_row(g, *(fmt_ci(a["summary"][key].get(g, {}), "seller_score") for a in report["arms"]))
    return t


def comparisons_table(report: dict) -> Table:
    t = Table(
        title="Paired differences in seller score on identical negotiations (one sign-flip test by scenario: "
        "its p-value, and its 95% CI; the CI excludes 0 exactly when p <= 0.05)"
    )
    for col in ("B - A", "buyer", "n", "difference [95% CI]", "p", "verdict"):
        t.add_column(col, justify="right" if col in ("n", "p") else "left", no_wrap=col == "difference [95% CI]")
    for c in report["comparisons"]:
        pair = f"{c['b']} - {c['a']}"
        if not c["n"]:
            t.add_row(pair, "all", "0", "-", "-", c.get("note", ""), end_section=True)
            continue
        rows = [("all", c["overall"])] + list(c["by_buyer"].items())
        for i, (buyer, d) in enumerate(rows):
            t.add_row(
                pair if i == 0 else "",
                buyer,
                str(d["n"]),
                fmt_diff(d),
                fmt_p(d["p_value"]),
                d["verdict"],
                end_section=i == len(rows) - 1,
            )
    return t


def print_report(report: dict, console: Console) -> None:
    console.print(arms_table(report))
    console.print(process_table(report))
    console.print(limits_table(report))
    console.print(breakdown_table(report, "by_buyer", "Seller score per evaluation buyer"))
    console.print(breakdown_table(report, "by_persona", "Seller score per buyer persona"))
    if report["comparisons"]:
        console.print(comparisons_table(report))
    for w in report["warnings"]:
        console.print(f"[bold yellow]warning:[/] {w}")


# --- files ------------------------------------------------------------------------------


def plots_available() -> bool:
    """matplotlib is importable (the ``evals`` extra; ``local`` brings it too)."""
    import importlib.util

    try:
        return importlib.util.find_spec("matplotlib") is not None
    except ValueError:  # a module set to None (tests that hide it)
        return False


def write_report(report: dict, out_dir: str | Path, arms: list[Arm] | None = None) -> dict[str, Path]:
    """summary.json, plots/*.png and report.html in ``out_dir``; returns their paths.

    With ``arms`` (those ``report`` was built from), report.html holds every transcript too. Without
    matplotlib the plots are left out (and the page says so); everything else is written.
    """
    from .html import render_html
    from .plots import write_plots
    from .transcripts import transcript_data

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"summary": out / "summary.json"}
    files["summary"].write_text(json.dumps(report, indent=2))
    plots = write_plots(report, out / "plots") if plots_available() else {}  # the tables need no plots
    files.update(plots)
    files["html"] = out / "report.html"
    transcripts = transcript_data(arms) if arms is not None else None
    files["html"].write_text(render_html(report, plots, transcripts), encoding="utf-8")
    return files

"""PNG plots of a report (matplotlib, headless): what a person looks at before the tables.

* ``score_distributions.png``: the seller-score distribution of each arm;
* ``per_buyer.png`` and ``per_persona.png``: mean seller score with its 95% CI, per group and arm;
* ``paired_differences.png``: a forest plot of B - A with 95% CIs, overall and per buyer.
"""

from __future__ import annotations

from pathlib import Path

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # no display: files only
    import matplotlib.pyplot as plt

    return plt


def write_plots(report: dict, out_dir: str | Path) -> dict[str, Path]:
    """Write every plot that has data; return {name: path}."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    files: dict[str, Path] = {}
    for name, draw in (
        ("score_distributions", _distributions),
        ("per_buyer", lambda plt, r: _groups(plt, r, "by_buyer", "evaluation buyer")),
        ("per_persona", lambda plt, r: _groups(plt, r, "by_persona", "buyer persona")),
        ("paired_differences", _forest),
    ):
        fig = draw(plt, report)
        if fig is None:
            continue
        path = out / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        files[name] = path
    return files


def _distributions(plt, report: dict):
    arms = report["arms"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for i, a in enumerate(arms):
        h = a["score_histogram"]
        total = sum(h["counts"]) or 1
        share = [c / total for c in h["counts"]]
        ax.stairs(share, h["edges"], label=a["name"], color=COLORS[i % len(COLORS)], linewidth=2)
        mean = a["summary"]["overall"].get("seller_score")
        if mean is not None:
            ax.axvline(mean, color=COLORS[i % len(COLORS)], linestyle="--", linewidth=1)
    ax.set_xlabel("seller score (0 = no deal or at reservation, 1 = best possible)")
    ax.set_ylabel("share of negotiations")
    ax.set_title("Seller-score distribution per arm (dashed: mean)")
    ax.set_xlim(0, 1)
    ax.legend(fontsize=8)
    return fig


def _groups(plt, report: dict, key: str, label: str):
    arms = report["arms"]
    groups = sorted({g for a in arms for g in a["summary"][key]})
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(min(12, max(6, 0.5 * len(groups) * max(1, len(arms)) + 2)), 3.8))
    width = 0.8 / max(1, len(arms))
    for i, a in enumerate(arms):
        xs, ys, lo, hi = [], [], [], []
        for j, g in enumerate(groups):
            b = a["summary"][key].get(g, {})
            if b.get("seller_score") is None:
                continue
            xs.append(j - 0.4 + width * (i + 0.5))
            ys.append(b["seller_score"])
            lo.append(b["seller_score"] - b["seller_score_ci"][0])
            hi.append(b["seller_score_ci"][1] - b["seller_score"])
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", capsize=3, color=COLORS[i % len(COLORS)], label=a["name"])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(
        groups, rotation=30 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center", fontsize=8
    )
    ax.set_ylabel("mean seller score (95% CI)")
    ax.set_title(f"Seller score per {label}")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def _forest(plt, report: dict):
    rows = []
    for c in report["comparisons"]:
        if not c["n"]:
            continue
        rows.append((f"{c['b']} - {c['a']}", c["overall"], True))
        for buyer, d in c["by_buyer"].items():
            rows.append((f"    vs {buyer}", d, False))
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(rows) + 1.2))
    for y, (_name, d, main) in enumerate(reversed(rows)):
        color = "#d62728" if d["detectable"] else "#555555"
        ax.errorbar(
            [d["mean"]],
            [y],
            xerr=[[d["mean"] - d["low"]], [d["high"] - d["mean"]]],
            fmt="D" if main else "o",
            color=color,
            capsize=3,
            markersize=7 if main else 5,
        )
    ax.axvline(0, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r[0] for r in reversed(rows)], fontsize=8)
    ax.set_xlabel("paired difference in seller score, B - A (95% CI; red: CI excludes 0)")
    ax.set_title("Paired differences on identical negotiations")
    ax.grid(axis="x", alpha=0.3)
    return fig

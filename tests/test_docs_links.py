"""Every relative link in the repository's Markdown (README.md, docs/*.md and the READMEs beside
the code) leads somewhere.

A link to a file must name a file of the checkout, and a ``#fragment`` must name a heading of
the page it points to, slugged as GitHub slugs it (lower case, punctuation dropped, spaces
to hyphens, ``-1``, ``-2`` ... for a repeated heading). A newcomer who follows a link to
"what the reader does not read" and lands at the top of a 900-line page has been misled.
Links are read with markdown-it (what rich renders with), so code spans and fenced blocks
are left alone.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BESIDE = [  # the other Markdown a reader meets: a folder's README, the changelog, the contributors' guide
    *sorted(ROOT.glob("*.md")),
    *(
        p
        for top in ("benchmarks", "deployments", "examples", "negotiator", "evals", "train")
        for p in sorted((ROOT / top).rglob("*.md"))
    ),
]
_MD = MarkdownIt("commonmark")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _inline_children(tokens: list[Token]) -> list[Token]:
    return [child for t in tokens if t.type == "inline" for child in (t.children or [])]


def anchors(page: Path) -> set[str]:
    tokens = _MD.parse(page.read_text(encoding="utf-8"))
    out: set[str] = set()
    count: dict[str, int] = {}
    for i, t in enumerate(tokens):
        if t.type == "heading_open":
            text = "".join(c.content for c in _inline_children([tokens[i + 1]]) if c.type in ("text", "code_inline"))
            s = slug(text)
            n = count[s] = count.get(s, -1) + 1
            out.add(f"{s}-{n}" if n else s)
    return out


def links(page: Path) -> list[str]:
    tokens = _MD.parse(page.read_text(encoding="utf-8"))
    return [str(t.attrs["href"]) for t in _inline_children(tokens) if t.type == "link_open"]


def broken(page: Path, root: Path = ROOT) -> list[str]:
    out = []
    for href in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", href):  # https:, mailto: ...: not ours to check offline
            continue
        path, _, fragment = href.partition("#")
        target = (page.parent / unquote(path)).resolve() if path else page
        if not target.exists():
            out.append(f"{href}: no file {target.relative_to(root) if target.is_relative_to(root) else target}")
        elif fragment and target.suffix == ".md" and unquote(fragment) not in anchors(target):
            out.append(f"{href}: no heading #{fragment} in {target.relative_to(root)}")
    return out


ALL = sorted(set(PAGES + BESIDE))


@pytest.mark.parametrize("page", ALL, ids=[p.relative_to(ROOT).as_posix() for p in ALL])
def test_every_relative_link_and_anchor_resolves(page: Path):
    assert broken(page) == []


def test_the_checker_slugs_as_github_does_and_finds_a_broken_anchor(tmp_path):
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n")
    page.write_text(
        "# The readings menu: the model reads, the strategy moves (2026-12-05)\n\n"
        "## `--out` and `Sessions.open`\n\n## Again\n\n## Again\n\n"
        "```markdown\n[in a fence](nowhere.md)\n```\n\n"
        "Inline code is not a link: `[x](nowhere.md)`.\n\n"
        "[ok](#the-readings-menu-the-model-reads-the-strategy-moves-2026-12-05) [ok](#--out-and-sessionsopen)"
        " [ok](#again-1) [ok](other.md#other) [ok](https://example.com/x#y)\n"
        "[dated](#the-readings-menu-the-model-reads-the-strategy-moves) [gone](missing.md) [bad](other.md#nope)\n"
    )
    assert broken(page, root=tmp_path) == [
        "#the-readings-menu-the-model-reads-the-strategy-moves: no heading"
        " #the-readings-menu-the-model-reads-the-strategy-moves in page.md",
        "missing.md: no file missing.md",
        "other.md#nope: no heading #nope in other.md",
    ]


def test_the_readme_documentation_list_leads_to_every_page():
    """A newcomer finds every page from the README's list: the guard's own page once had no way in."""
    section = (ROOT / "README.md").read_text(encoding="utf-8").split("## Documentation", 1)[1]
    listed = {(ROOT / href.partition("#")[0]).resolve() for href in re.findall(r"\]\(([^)\s]+)\)", section)}
    assert [p.name for p in PAGES[1:] if p.resolve() not in listed] == []

"""How ``levels -f markdown`` and ``plan -f markdown`` look on GitHub (issue 17), rendered offline by
GitHub's own renderer, cmark-gfm (PyPI ``cmarkgfm``), with GitHub's extensions (table, strikethrough,
autolink, tagfilter). Raw HTML is let through (``CMARK_OPT_UNSAFE``, as GitHub does before its
sanitiser), so any markup a hostile report title smuggled in would show up here.

Checked: every Markdown table becomes a ``<table>``; every ``<details>`` stays a collapsible block (its
``<summary>`` first, its table rendered inside it); hostile titles (HTML tags, pipes, backticks, Markdown
links, bare URLs for the autolink extension) end up as the cell's text, never as a tag, link or image;
long tables are collapsed and the visible part stays short.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from builders import SEED, write_v3
from conftest import shared_index

from graphrag_audit.render.markdown import DETAILS_ROWS
from graphrag_audit.sanitise.common import plain

cmarkgfm = pytest.importorskip(
    "cmarkgfm", reason="cmarkgfm (GitHub's cmark-gfm) is not installed: pip install '.[test]'"
)
from cmarkgfm.cmark import Options  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
HOSTILE = {
    5: "evil | <script>alert(1)</script> [x](http://evil.example) **bold** `tick` _em_ <b>b</b> ~~del~~",
    6: "www.evil.example and https://evil.example/x <img src=x onerror=alert(1)>",
    20: "a|b||c \\| `` ` `` <details><summary>x</summary>",
    21: "</td></tr></table><a href='http://evil.example'>click</a> <textarea>",
    77: "![img](http://evil.example/i.png) <!-- c --> &amp; &#x3c; [ref]: http://evil.example",
    78: "<https://evil.example> mailto:someone@evil.example | --- |",
}
#: what GitHub's sanitiser keeps and the renderers write; anything else came from a title
ALLOWED = {
    "h1",
    "h2",
    "h3",
    "h4",
    "p",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "details",
    "summary",
    "code",
    "strong",
    "em",
    "ul",
    "ol",
    "li",
    "br",
    "hr",
    "pre",
    "blockquote",
}


def gfm(md: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


def cli(*args) -> str:
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    p = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


class Html(HTMLParser):
    """Tags with attributes and their <details> depth; table cells' text; tables' body rows and whether
    they sit in a <details>; each <details>' first child element."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.cells, self.tables = [], [], []
        self.details_first = []
        self._depth, self._cell, self._await_first = 0, None, False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if self._await_first:
            self.details_first[-1] = tag
            self._await_first = False
        if tag == "details":
            self._depth += 1
            self.details_first.append(None)
            self._await_first = True
        if tag == "table":
            self.tables.append([self._depth > 0, 0])
        if tag == "tr" and self.tables:
            self.tables[-1][1] += 1
        if tag == "td":
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "details":
            self._depth -= 1
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _delimiter_rows(md: str) -> int:
    return sum(1 for ln in md.splitlines() if re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", ln))


def check_github_rendering(md: str) -> Html:
    html = gfm(md)
    doc = Html(html)
    tags = [t for t, _ in doc.tags]
    assert set(tags) <= ALLOWED, set(tags) - ALLOWED
    assert not [a for _, a in doc.tags if a.keys() - {"align"}]  # no href, src, on*, style
    assert tags.count("table") == _delimiter_rows(md)  # every Markdown table is a table
    assert md.count("<details>") == tags.count("details") == md.count("</details>")
    assert doc.details_first == ["summary"] * tags.count(
        "details"
    )  # collapsible: the summary shows, the rest folds
    for in_details, rows in doc.tables:  # a long table is folded away (header row + body rows)
        assert in_details or rows - 1 <= DETAILS_ROWS
    return doc


@pytest.fixture(scope="module")
def hostile_index(tmp_path_factory):
    return write_v3(tmp_path_factory.mktemp("gfm") / "hostile", SEED, report_titles=HOSTILE)


def test_levels_markdown_on_github(hostile_index):
    md = cli("levels", hostile_index, "-f", "markdown", "--include-titles", "--level", "2")
    doc = check_github_rendering(md)
    # every hostile title sent at level 2 is one cell's plain text (the Markdown escaper puts an invisible
    # word joiner after an "@" so that autolink makes no mailto: link of it)
    cells = [c.replace("\u2060", "") for c in doc.cells]
    for c in (5, 6, 20, 21, 77, 78):
        assert plain(HOSTILE[c]) in cells, c
    # local search, DRIFT and reduce fold into one <details>: what shows unfolded stays short
    unfolded = re.sub(r"<details>.*?</details>", "", md, flags=re.S)
    assert len(unfolded.splitlines()) < 120 and len(md.splitlines()) < 300
    # without --include-titles nothing of them is there at all
    hidden = cli("levels", hostile_index, "-f", "markdown", "--level", "2")
    check_github_rendering(hidden)
    assert "evil" not in hidden


def test_plan_markdown_on_github(hostile_index):
    for args in (("--reports", "3"), ("--coverage", "0.9", "--include-titles")):
        md = cli("plan", hostile_index, "-f", "markdown", *args)
        check_github_rendering(md)
        assert len(md.splitlines()) < 80


def test_real_index_markdown_on_github():
    """verbs-v3: the 120 reports sent at community_level 2 are listed in a <details>; what shows unfolded stays
    short."""
    path = shared_index("verbs-v3")
    md = cli("levels", path, "-f", "markdown", "--include-titles", "--level", "2")
    doc = check_github_rendering(md)
    assert any(in_details and rows - 1 > DETAILS_ROWS for in_details, rows in doc.tables)
    unfolded = re.sub(r"<details>.*?</details>", "", md, flags=re.S)
    # the sent reports' listing and the local search, DRIFT and reduce tables are folded away
    assert len(unfolded.splitlines()) < 135 and len(md.splitlines()) < 400
    plan = cli("plan", path, "-f", "markdown", "--reports", "30")
    check_github_rendering(plan)
    assert len(plan.splitlines()) < 120


def test_the_check_catches_live_html():
    """The checks are not blind: an unescaped title makes a tag and a link; a table row count mismatch
    (a header without its delimiter) is no table; a <details> without a blank line before its table
    still renders it inside, but a details block missing its summary is caught."""
    with pytest.raises(AssertionError):
        check_github_rendering("| a |\n| --- |\n| <b>x</b> |\n")
    with pytest.raises(AssertionError):
        check_github_rendering("see www.evil.example\n")  # autolink: <a href>
    with pytest.raises(AssertionError):
        check_github_rendering("| a | b |\n| --- |\n| 1 | 2 |\n")  # counted as a table, not rendered as one
    with pytest.raises(AssertionError):
        check_github_rendering("<details>\n\n| a |\n| --- |\n| 1 |\n\n</details>\n")
    ok = check_github_rendering("<details><summary>s</summary>\n\n| a |\n| --- |\n| 1 |\n\n</details>\n")
    assert ok.tables == [[True, 2]]

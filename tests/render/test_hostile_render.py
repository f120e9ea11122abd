"""Untrusted text in every renderer (issue 6): report titles, community periods, entity titles
and the index path itself carry rich markup, ANSI/OSC escape sequences, control and bidi
characters, HTML/Markdown, newlines with GitHub workflow commands, invalid UTF-8 and 100,000
characters. They reach the output through `levels --level N` (the per-level report lists),
finding messages (multiple-periods quotes the period values) and evidence (entity titles).

Every command runs through the real CLI (hostile.CliServer: a forked process per command).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import (
    ANSI_SGR,
    HOSTILE_TITLES,
    HTML_MD,
    LONG_TITLE,
    RICH_MARKUP,
    WORKFLOW,
    CliServer,
    Index,
    invalid_utf8_strings,
    snapshot,
)

# two roots (0, 1) with three leaves each: 8 communities, one hostile title per report
pytestmark = pytest.mark.hostile  # a heavy tier: pytest -m hostile
TREE = {
    0: (0, -1, ["e1", "e2", "e3"]),
    1: (0, -1, ["e4", "e5", "e6"]),
    2: (1, 0, ["e1"]),
    3: (1, 0, ["e2"]),
    4: (1, 0, ["e3"]),
    5: (1, 1, ["e4"]),
    6: (1, 1, ["e5"]),
    7: (1, 1, ["e6"]),
}
TITLES = list(HOSTILE_TITLES.values())  # rich, ansi, osc8, osc_title, control, html_md, workflow, long
PERIODS = [ANSI_SGR, WORKFLOW, RICH_MARKUP] + [RICH_MARKUP] * 5
DIR_NAME = "idx \x1b[5m[bold]B[/bold] |pipe| <b>x</b>\n::warning::DIRNAME"
ARGS = ["--level", "1", "--list-reports", "--max-inflation", "2", "--no-costs", "--width", "200"]
# level 1: >= 2.0 sends all 8 reports, < 2.0 the 6 leaves (1.33x < 2); findings: 3 period values
# (multiple-periods, warning), entity e7 in no community (unclustered-entities, info), and graphrag 2.x's
# dynamic selection cannot rate the level-1 reports when the roots are relevant (dynamic-no-descent, info)
FINDINGS = {"multiple-periods", "unclustered-entities", "dynamic-no-descent"}

# what may never reach a terminal or a log (tab included: it moves the cursor too)
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def seen(text: str) -> str:
    """What a reader sees: the text renderer writes a '::' that starts a word as '\\x3a:' (so
    that a wrapped line can never start with a workflow command); read it back as '::'."""
    return text.replace("\\x3a:", "::")


def _build(tmp: Path) -> Path:
    idx = Index.base(TREE, entities=["e1", "e2", "e3", "e4", "e5", "e6", "e7"])
    idx.reports["title"] = TITLES
    idx.communities["title"] = TITLES[::-1]
    idx.communities["period"] = PERIODS
    idx.entities["title"] = ["E1", "E2", "E3", "E4", "E5", "E6", HTML_MD]
    return idx.write(tmp / DIR_NAME)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """{name: CliResult} for every format, plus the index path; the index must not change."""
    tmp = tmp_path_factory.mktemp("hostile-render")
    d = _build(tmp)
    before = snapshot(tmp)
    runs = {
        "text": ["levels", d, *ARGS, "--color", "never"],
        "text-color": ["levels", d, *ARGS, "--color", "always"],
        "json": ["levels", d, *ARGS, "-f", "json"],
        "markdown": ["levels", d, *ARGS, "-f", "markdown", "--include-titles"],
        "github": ["levels", d, *ARGS, "-f", "github"],
        "tree-text": ["tree", d, "--level", "1", "--color", "never", "--width", "200"],
        "tree-json": ["tree", d, "--level", "1", "-f", "json"],
        "tree-mermaid": ["tree", d, "-f", "mermaid"],
        "tree-dot": ["tree", d, "-f", "dot"],
        "tree-graphml": ["tree", d, "-f", "graphml"],
    }
    srv = CliServer()
    try:
        out = {k: srv.run(v, timeout=60) for k, v in runs.items()}
    finally:
        srv.close()
    assert snapshot(tmp) == before, "the index directory changed"
    return d, out


def _ok(r, allowed=(0, 1)):
    assert not r.timed_out
    assert r.code in allowed, r.stderr
    assert r.stderr == "", r.stderr
    assert "Traceback" not in r.stdout


def _no_command_lines(text: str) -> None:
    """No line a GitHub runner would read as a workflow command (``::cmd`` after leading
    whitespace, or the legacy ``##[cmd]`` anywhere)."""
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line[:200]
        assert "##[" not in line, line[:200]


# ---- text ---------------------------------------------------------------------------------
def test_text_has_no_escape_or_control_characters(hostile):
    _, out = hostile
    r = out["text"]
    _ok(r)
    assert "\x1b" not in r.stdout
    assert not CONTROL.search(r.stdout), repr(CONTROL.search(r.stdout))
    _no_command_lines(r.stdout)
    assert max(len(line) for line in r.stdout.splitlines()) <= 200  # the 100k title is cut


def test_text_shows_markup_literally_and_titles_visibly(hostile):
    _, out = hostile
    t = seen(out["text"].stdout)
    assert "[bold red]RICHBOLD[/]" in t  # rich markup printed, not interpreted
    assert "[link=https://evil.example/x]" in t
    for visible in ("ANSIRED", "OSCLINK", "TITLESET", "bell", "INJECTED error", "<script>alert(1)</script>"):
        assert visible in t, visible
    # escape sequences are shown, inert: ESC and BEL as the visible escapes \x1b and \x07
    assert "\\x1b]0;pwned-window-title\\x07TITLESET" in t and "\\x1b[38;5;196mANSIRED\\x1b[0m" in t
    assert "bell\\x07back\\x08space return\\x00nul\\x7fdel\\x9bcsi\\u202eRLO\\u2066iso" in t
    assert "LLLLLLLLLL" in t and LONG_TITLE not in t


def test_text_with_color_emits_only_its_own_sgr_sequences(hostile):
    _, out = hostile
    r = out["text-color"]
    _ok(r)
    raw = r.stdout
    assert SGR.search(raw), "--color always produced no colour at all"
    stripped = SGR.sub("", raw)
    assert "\x1b" not in stripped  # no OSC (title / hyperlink), no other CSI
    assert "\x1b[38;5;196m" not in raw  # the title's own 256-colour SGR is inert text:
    assert "\\x1b[38;5;196mANSIRED" in stripped
    assert not CONTROL.search(stripped)
    assert "[bold red]RICHBOLD[/]" in stripped
    _no_command_lines(stripped)


def test_finding_messages_quote_periods_escaped(hostile):
    _, out = hostile
    t = seen(out["text"].stdout)
    line = next(x for x in t.splitlines() if "multiple-periods" in x)
    # the period values (ANSI, workflow commands, markup) are quoted on one line, made inert
    assert "ANSIRED" in line and "first line ::error::INJECTED error" in t.replace("\n", " ")


def test_text_header_shows_the_hostile_path_on_one_line(hostile):
    _, out = hostile
    # the answer comes first; the header line is the first that starts with the tool's name
    head = next(ln for ln in seen(out["text"].stdout).splitlines() if ln.startswith("graphrag-audit "))
    assert "[bold]B[/bold] |pipe| <b>x</b> ::warning::DIRNAME" in head


# ---- json ---------------------------------------------------------------------------------
def test_json_is_valid_utf8_and_keeps_the_text_as_data(hostile):
    d, out = hostile
    r = out["json"]
    _ok(r)
    raw = r.stdout.encode("utf-8")
    raw.decode("utf-8", "strict")
    assert raw.isascii()  # ensure_ascii: every non-ASCII or control character is a \u escape
    doc = json.loads(raw)
    assert {f["rule"] for f in doc["findings"]} == FINDINGS
    assert doc["index"]["path"] == str(d)  # newline, ESC and all, as data
    per = next(f for f in doc["findings"] if f["rule"] == "multiple-periods")["evidence"]["periods"]
    assert set(per) == {ANSI_SGR, WORKFLOW, RICH_MARKUP}
    assert per[RICH_MARKUP] == 6 and per[ANSI_SGR] == 1 and per[WORKFLOW] == 1
    lost = next(f for f in doc["findings"] if f["rule"] == "unclustered-entities")["evidence"]
    assert lost["examples"] == [HTML_MD]


# ---- markdown -----------------------------------------------------------------------------
ALLOWED_HTML = re.compile(r"^\s*(</?details>|<summary>[^<>]*</summary>|</?summary>)\s*$")


def _md_tokens(text):
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    out = []

    def walk(tokens):
        for t in tokens:
            out.append(t)
            if t.children:
                walk(t.children)

    walk(md.parse(text))
    return md, out


def test_markdown_has_no_html_links_images_or_escapes(hostile):
    _, out = hostile
    r = out["markdown"]
    _ok(r)
    text = r.stdout
    assert "\x1b" not in text and not CONTROL.search(text)
    md, tokens = _md_tokens(text)
    for t in tokens:
        if t.type in ("html_inline", "html_block"):
            for line in t.content.strip().splitlines():
                assert ALLOWED_HTML.match(line), f"raw HTML from the index: {line[:200]!r}"
        assert t.type != "image", t.content
        if t.type == "link_open":
            href = t.attrGet("href") or ""
            assert "evil.example" not in href and not href.lower().startswith("javascript"), href
    html = md.render(text)
    for bad in (
        "<script",
        "<img",
        "<b>x</b>",
        "<strong>bold</strong>",
        "<code>code</code>",
        "<h1>heading",
        'href="javascript',
    ):
        assert bad not in html, bad
    assert "@admin" not in text  # no @mention


def test_markdown_tables_keep_their_columns(hostile):
    """An unescaped '|' in a title would add a cell: every row of a table has as many
    unescaped pipes as its header."""
    _, out = hostile
    lines = out["markdown"].stdout.splitlines()
    pipes = re.compile(r"(?<!\\)\|")
    tables, cur = [], []
    for line in lines + [""]:
        if line.startswith("|"):
            cur.append(line)
        elif cur:
            tables.append(cur)
            cur = []
    assert tables
    for tab in tables:
        n = len(pipes.findall(tab[0]))
        for row in tab[1:]:
            assert len(pipes.findall(row)) == n, row[:300]


def test_markdown_lists_the_titles_as_text(hostile):
    _, out = hostile
    md, _ = _md_tokens(out["markdown"].stdout)
    html = md.render(out["markdown"].stdout)
    assert "RICHBOLD" in html and "ANSIRED" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# ---- github -------------------------------------------------------------------------------
ANNOTATION = re.compile(r"^::(error|warning|notice) title=[^\n:,]*::[^\n]*$")


def test_github_annotations_cannot_be_injected(hostile):
    _, out = hostile
    r = out["github"]
    _ok(r)
    lines = r.stdout.splitlines()
    anns = [x for x in lines if x.startswith("::")]
    assert len(anns) == len(FINDINGS)  # one per finding, nothing injected
    for a in anns:
        assert ANNOTATION.match(a), a[:300]
    rest = [x for x in lines if not x.startswith("::")]
    assert len(rest) == 1 and rest[0].startswith("graphrag-audit: ")  # the summary line
    _no_command_lines("\n".join(rest))  # incl. no legacy '##[' (the runner tries it anywhere in a line
    # that is not a valid '::' command; inside a valid annotation's data it stays data)
    assert "\x1b" not in r.stdout and not CONTROL.search(r.stdout)
    periods = next(a for a in anns if "multiple-periods" in a)
    # plain() flattens the newlines first; '%' is escaped so '%0A' in the data stays literal
    assert "%250A::warning::encoded" in periods and "::set-env" in periods


# ---- the tree command's formats -------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["tree-text", "tree-mermaid", "tree-dot"])
def test_tree_formats_have_no_escape_or_control_characters(hostile, fmt):
    _, out = hostile
    r = out[fmt]
    _ok(r)
    assert "\x1b" not in r.stdout and not CONTROL.search(r.stdout), repr(CONTROL.search(r.stdout))
    _no_command_lines(r.stdout)


def test_tree_json_and_graphml_parse(hostile):
    _, out = hostile
    _ok(out["tree-json"])
    json.loads(out["tree-json"].stdout)
    _ok(out["tree-graphml"])
    ET.fromstring(out["tree-graphml"].stdout.encode("utf-8"))


# ---- invalid UTF-8 ------------------------------------------------------------------------------
def test_invalid_utf8_titles_render_as_replacement_characters(tmp_path):
    idx = Index.base()
    idx.reports["title"] = invalid_utf8_strings(
        [b"R0 \xff", b"R1 \xc3(", b"R2", b"R3", b"R4", b"R5 \xed\xa0\x80"]
    )
    d = idx.write(tmp_path / "index")
    srv = CliServer()
    try:
        text = srv.run(["levels", d, "--level", "1", "--list-reports", "--no-costs", "--color", "never"])
        md = srv.run(["levels", d, "--level", "1", "--no-costs", "-f", "markdown", "--include-titles"])
    finally:
        srv.close()
    _ok(text)
    _ok(md)
    assert "R0 \ufffd" in text.stdout and "R1 \ufffd(" in text.stdout
    assert "R5 \ufffd\ufffd\ufffd" in text.stdout  # an encoded surrogate: 3 bad bytes, 3 replacements
    assert "R0 \ufffd" in md.stdout

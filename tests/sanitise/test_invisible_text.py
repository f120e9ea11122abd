"""Issue 14: invisible and bidi-control characters in index text are made visible (escaped) in
every human format, and a legacy ``##[`` workflow command survives in none.

The characters that must be shown as escapes are derived here from the Unicode definitions, with
Python's ``unicodedata``, not from the code under test: Default_Ignorable_Code_Point as
DerivedCoreProperties.txt defines it (Other_Default_Ignorable_Code_Point + Cf + Variation_Selector
- White_Space - FFF9..FFFB - Egyptian format controls - Prepended_Concatenation_Mark, the three
hand-copied lists from PropList.txt), the C0/C1 controls other than white space, surrogates,
U+FFF9..U+FFFB and the noncharacters. The expected escape of a character is Python's own
``unicode_escape`` of it.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
import xml.etree.ElementTree as ET

import pyarrow.parquet as pq
import pytest
from conftest import real_index_params, shared_index
from hostile import CliServer, Index

from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.terminal import visible

# ---- the reference set ---------------------------------------------------------------------------
ODI = [
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x2065, 0x2065),
    (0x3164, 0x3164),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0xE0000, 0xE0000),
    (0xE0002, 0xE001F),
    (0xE0080, 0xE00FF),
    (0xE01F0, 0xE0FFF),
]  # PropList.txt, Other_Default_Ignorable_Code_Point
VARIATION_SELECTORS = [(0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F), (0xE0100, 0xE01EF)]
PREPENDED_CONCATENATION_MARKS = {
    *range(0x0600, 0x0606),
    0x06DD,
    0x070F,
    0x0890,
    0x0891,
    0x08E2,
    0x110BD,
    0x110CD,
}
WHITE_SPACE_CONTROLS = {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x85}
# the Trojan Source paper's list (Boucher & Anderson 2021): bidi controls and zero-width characters
TROJAN_SOURCE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u200c\u200d"


def _in(ranges, cp):
    return any(a <= cp <= b for a, b in ranges)


def default_ignorable(cp: int) -> bool:
    ch = chr(cp)
    if not (_in(ODI, cp) or unicodedata.category(ch) == "Cf" or _in(VARIATION_SELECTORS, cp)):
        return False
    return not (
        ch.isspace()
        or 0xFFF9 <= cp <= 0xFFFB
        or 0x13430 <= cp <= 0x1345F
        or cp in PREPENDED_CONCATENATION_MARKS
    )


def _must_escape(cp: int) -> bool:
    cat = unicodedata.category(chr(cp))
    return (
        default_ignorable(cp)
        or (cat == "Cc" and cp not in WHITE_SPACE_CONTROLS)
        or cat == "Cs"
        or 0xFFF9 <= cp <= 0xFFFB
        or 0xFDD0 <= cp <= 0xFDEF
        or (cp & 0xFFFE) == 0xFFFE
    )


MUST_ESCAPE = frozenset(cp for cp in range(0x110000) if _must_escape(cp))
must_escape = MUST_ESCAPE.__contains__


def esc(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")


def _ranges(pred) -> str:
    """A regex character class body of the code points where ``pred`` holds."""
    out, start = [], None
    for cp in range(0x110001):
        if cp < 0x110000 and pred(cp):
            start = cp if start is None else start
        elif start is not None:
            out.append(re.escape(chr(start)) + ("-" + re.escape(chr(cp - 1)) if cp - 1 > start else ""))
            start = None
    return "".join(out)


#: what may not appear raw in any output: the reference set, other line breaks and tabs (the
#: output's own '\n' excepted)
RAW_BAD = re.compile("[" + _ranges(must_escape) + "\u2028\u2029\u0085\t\r\x0b\x0c]")


def test_the_reference_holds_the_trojan_source_list():
    assert all(must_escape(ord(c)) for c in TROJAN_SOURCE)
    assert must_escape(0xE0041) and must_escape(0xFE0F) and must_escape(0x00AD) and must_escape(0xD800)
    assert not must_escape(ord("高")) and not must_escape(0x0600) and not must_escape(0x20)


def test_plain_escapes_exactly_the_invisible_characters():
    """Every code point between two letters: an escape, one space (white space) or itself."""
    wrong = []
    for cp in range(0x110000):
        ch = chr(cp)
        got = plain("a" + ch + "b")
        if must_escape(cp):
            want = "a" + esc(ch) + "b"
        elif ch.isspace():
            want = "a b"
        else:
            want = "a" + ch + "b"
        if got != want:
            wrong.append((hex(cp), got, want))
    assert wrong == []


def test_error_lines_escape_the_same_characters_and_line_breaks():
    wrong = []
    for cp in range(0x110000):
        ch = chr(cp)
        want = esc(ch) if must_escape(cp) or cp in WHITE_SPACE_CONTROLS or cp in (0x2028, 0x2029) else ch
        if visible("a" + ch + "b") != "a" + want + "b":
            wrong.append(hex(cp))
    assert wrong == []
    assert visible("x ##[error]y") == "x #\\x23[error]y"


def test_plain_never_cuts_an_escape_in_half():
    s = "ab\u202ecd"  # shown as ab\u202ecd (10 characters)
    assert [plain(s, n) for n in (3, 8, 9, 10)] == ["ab…", "ab…", "ab\\u202e…", "ab\\u202ecd"]


# ---- every human format through the CLI ----------------------------------------------------------
#: community -> (level, parent, entities): two roots with four leaves each
TREE = {
    0: (0, -1, ["e1", "e2", "e3", "e4"]),
    1: (0, -1, ["e5", "e6", "e7", "e8"]),
    2: (1, 0, ["e1"]),
    3: (1, 0, ["e2"]),
    4: (1, 0, ["e3"]),
    5: (1, 0, ["e4"]),
    6: (1, 1, ["e5"]),
    7: (1, 1, ["e6"]),
    8: (1, 1, ["e7"]),
    9: (1, 1, ["e8"]),
}
#: report title -> what a reader must see (hand-written); short enough for every label (48 chars)
TITLES = {
    "RLO\u202eevil\u202c PDF": r"RLO\u202eevil\u202c PDF",
    "iso\u2066late\u2069 m\u200e\u200f\u061c": r"iso\u2066late\u2069 m\u200e\u200f\u061c",
    "zw\u200b\u200c\u200d\ufeff\u2060": r"zw\u200b\u200c\u200d\ufeff\u2060",
    "tag\U000e0041\U000e0042": r"tag\U000e0041\U000e0042",
    "shy\u00advs\ufe0fhf\u3164mvs\u180e": r"shy\xadvs\ufe0fhf\u3164mvs\u180e",
    "esc\x1b[31m bel\x07 nul\x00": r"esc\x1b[31m bel\x07 nul\x00",
    "c1\x9b del\x7f nel\x85x": r"c1\x9b del\x7f nel x",
    "##[error]LEGACY ::error::CMD": r"#\x23[error]LEGACY ::error::CMD",
    "ls\u2028ps\u2029end\u202f": "ls ps end",
    "高尔夫 Ёлка": "高尔夫 Ёлка",
}
PERIODS = ["2024\u202e", "p\u200b##[x]"] + ["2024\u202e"] * 8
DIR_NAME = "idx\u202eRLO\u200bZW"
DIR_SEEN = r"idx\u202eRLO\u200bZW"


def _text_form(seen: str) -> str:
    """The text renderers also write a '::' that starts a word as '\\x3a:' (no wrapped line may
    start a workflow command)."""
    return re.sub(r"(?<!\S)::", r"\\x3a:", seen)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("invisible")
    idx = Index.base(TREE, entities=[f"e{i}" for i in range(1, 9)])
    idx.reports["title"] = list(TITLES)
    idx.communities["period"] = PERIODS
    d = idx.write(tmp / DIR_NAME)
    html_out = tmp / "report.html"
    level = ["--level", "1", "--list-reports", "--no-costs", "--max-inflation", "2", "--fail-on", "never"]
    cmds = {
        "text": ["levels", d, *level, "--width", "200", "--color", "never"],
        "markdown": ["levels", d, *level, "-f", "markdown", "--include-titles"],
        "github": ["levels", d, *level, "-f", "github", "--include-titles"],
        "json": ["levels", d, *level, "-f", "json"],
        "tree-text": ["tree", d, "--level", "1", "--width", "200", "--color", "never"],
        "mermaid": ["tree", d, "--level", "1", "-f", "mermaid"],
        "dot": ["tree", d, "--level", "1", "-f", "dot"],
        "graphml": ["tree", d, "--level", "1", "-f", "graphml"],
        "tree-json": ["tree", d, "--level", "1", "-f", "json"],
        "plan-text": ["plan", d, "--reports", "10", "--no-costs", "--width", "200"],
        "plan-markdown": ["plan", d, "--reports", "10", "--no-costs", "-f", "markdown", "--include-titles"],
        "plan-json": ["plan", d, "--reports", "10", "--no-costs", "-f", "json"],
        "html": ["report", d, "--level", "1", "--no-costs", "-o", html_out],
    }
    srv = CliServer()
    try:
        out = {}
        for k, v in cmds.items():
            r = srv.run(v, timeout=120)
            said = (
                f"graphrag-audit: wrote {html_out} ({html_out.stat().st_size:,} bytes)\n"
                if k == "html"
                else ""
            )
            assert r.code in (0, 1) and r.stderr == said, (k, r.stderr)
            out[k] = r.stdout
    finally:
        srv.close()
    out["html"] = html_out.read_text(encoding="utf-8")
    return out


HUMAN = [
    "text",
    "markdown",
    "github",
    "tree-text",
    "mermaid",
    "dot",
    "graphml",
    "plan-text",
    "plan-markdown",
    "html",
]
ALL = HUMAN + ["json", "tree-json", "plan-json"]


@pytest.mark.parametrize("fmt", ALL)
def test_no_raw_invisible_character_and_no_legacy_command(runs, fmt):
    out = runs[fmt]
    m = RAW_BAD.search(out)
    assert m is None, (hex(ord(m.group())), out[max(m.start() - 60, 0) : m.start() + 20])
    assert "##[" not in out
    for line in out.splitlines():
        if fmt == "github" and re.match(r"^::(error|warning|notice) title=[^\n:,]*::", line):
            continue  # our own annotations (test_render_github checks there is one per finding)
        assert not line.lstrip().startswith("::"), line[:200]


def _markdown_text(md: str) -> str:
    from markdown_it import MarkdownIt

    return html.unescape(re.sub(r"<[^>]+>", "", MarkdownIt("commonmark").enable("table").render(md)))


def _mermaid_text(src: str) -> str:
    # Mermaid entity codes back to characters; the renderer's own zero-width space after a backslash
    # (it keeps Mermaid from reading backslash-n as a line break) is dropped
    return re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), src).replace("\\\u200b", "\\")


def _dot_text(src: str) -> str:
    labels = re.findall(r'label="((?:[^"\\]|\\.)*)"', src)
    return "\n".join(re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), x) for x in labels)


def _graphml_titles(src: str) -> list[str]:
    root = ET.fromstring(src.encode("utf-8"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    key = next(k.get("id") for k in root.findall("g:key", ns) if k.get("attr.name") == "title")
    return [
        d.text or "" for d in root.iter("{http://graphml.graphdrawing.org/xmlns}data") if d.get("key") == key
    ]


def test_text_shows_every_title_visibly(runs):
    for seen in TITLES.values():
        assert _text_form(seen) in runs["text"], seen
        assert seen in runs["tree-text"], seen  # a tree row starts with its number: '::' stays as it is
    assert DIR_SEEN in runs["text"] and DIR_SEEN in runs["tree-text"] and DIR_SEEN in runs["plan-text"]
    assert "高尔夫 Ёлка" in runs["text"]  # printable text, any script, is written as it is


def test_markdown_shows_every_title_visibly(runs):
    shown = _markdown_text(runs["markdown"])
    for seen in TITLES.values():
        assert seen in shown, seen
    assert DIR_SEEN in shown and DIR_SEEN in _markdown_text(runs["plan-markdown"])


def test_html_shows_every_title_visibly(runs):
    shown = html.unescape(runs["html"])
    for seen in TITLES.values():
        assert seen in shown, seen
    assert DIR_SEEN in shown


def test_diagram_labels_show_every_title_visibly(runs):
    mermaid, dot, graphml = (
        _mermaid_text(runs["mermaid"]),
        _dot_text(runs["dot"]),
        _graphml_titles(runs["graphml"]),
    )
    for seen in TITLES.values():
        assert seen in mermaid and seen in dot and seen in graphml, seen


def test_github_and_json_keep_the_periods(runs):
    # the multiple-periods finding quotes the period values: escaped in the annotation...
    ann = next(line for line in runs["github"].splitlines() if "multiple-periods" in line)
    assert r"2024\u202e" in ann and r"p\u200b#\x23[x]" in ann
    assert DIR_SEEN in runs["github"].splitlines()[-1]
    # ... and data in JSON (ensure_ascii, '##[' as '#\u0023['): the values as they are in the index
    doc = json.loads(runs["json"])
    per = next(f for f in doc["findings"] if f["rule"] == "multiple-periods")["evidence"]["periods"]
    assert set(per) == {"2024\u202e", "p\u200b##[x]"}
    assert '"p\\u200b#\\u0023[x]"' in runs["json"]


# ---- real indexes: only invisible characters change ---------------------------------------------------
@pytest.mark.parametrize("name", real_index_params())
def test_real_titles_change_only_where_invisible(name):
    path = shared_index(name)
    files = sorted(path.rglob("*community_reports.parquet")) or sorted(path.rglob("*community_reports.csv"))
    if not files or files[0].suffix != ".parquet":
        pytest.skip(f"{name}: no community_reports.parquet")
    titles = [
        t for t in pq.read_table(files[0], columns=["title"]).column("title").to_pylist() if t is not None
    ]
    for t in titles:
        want = " ".join("".join(esc(c) if must_escape(ord(c)) else c for c in t).split())
        assert plain(t) == want.replace("##[", "#\\x23["), t


# ---- wrapping cannot start a workflow command ----------------------------------------------
def test_a_folded_word_never_starts_a_line_with_a_command(tmp_path):
    """rich folds a word longer than the line at the width; a period value of 150 'A's then
    '::error::' puts the '::' at a line start exactly when the width divides 150 (the message
    quotes it). That line's first colon is written '\\x3a' instead (3 characters over the width)."""
    from graphrag_audit.analysis.audit import AuditOptions, audit
    from graphrag_audit.render.text import render_text

    idx = Index.base()
    idx.communities["period"] = ["A" * 150 + "::error::FOLD"] + ["2024"] * 5
    report = audit(idx.write(tmp_path / "idx"), AuditOptions(level=1, costs=False))
    caught = []
    for width in range(40, 141):
        lines = render_text(report, width=width).splitlines()
        assert not [x for x in lines if x.lstrip().startswith("::")], width
        assert not [x for x in lines if "##[" in x]
        if any(x.lstrip().startswith("\\x3a:error::FOLD") for x in lines):
            caught.append(width)
            assert max(len(x) for x in lines) <= width + 3
        else:
            assert max(len(x) for x in lines) <= width
    # the findings' messages sit in a column 10 characters in (a hanging indent): the widths whose
    # message column (width - 10) divides 150
    assert caught == [40, 60, 85]


def test_inert_log_lines_after_blanks_and_colour_codes():
    from graphrag_audit.sanitise.terminal import for_log as plain_for_log
    from graphrag_audit.sanitise.terminal import inert_log_lines

    assert (
        inert_log_lines("a\n  ::x\n\x1b[1m::y\n\t::z\nb::c\n:d\n")
        == "a\n  \\x3a:x\n\x1b[1m\\x3a:y\n\t\\x3a:z\nb::c\n:d\n"
    )
    assert plain_for_log("::error:: std::vector x ::y") == "\\x3a:error:: std::vector x \\x3a:y"

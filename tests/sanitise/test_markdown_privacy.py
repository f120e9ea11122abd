"""Bug reports and privacy (issue 17): the markdown report and the GitHub step summary hide what a
private corpus leaks (absolute paths, report titles, entity names; ids stay) unless
``--include-titles``; Markdown escaping only where Markdown needs it; long tables in ``<details>``;
a warning past GitHub's 65,536-character comment limit.

Escaping is checked with markdown-it-py (CommonMark + GFM tables and strikethrough): a cell or
line of untrusted text must parse into one text node that reads exactly like the text.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import shared_index
from hypothesis import given, settings
from hypothesis import strategies as st
from test_render_markdown import cell_texts, find_table, md, tables, write_index

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.render.github import render_github
from graphrag_audit.render.markdown import (
    DETAILS_ROWS,
    GITHUB_COMMENT_LIMIT,
    paste_size_warning,
    render_markdown,
)
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.markdown import markdown_cell
from graphrag_audit.sanitise.privacy import HIDDEN_PATH, hide_paths, shown_path

ROOT = Path(__file__).resolve().parents[2]
TITLES = {4: "Acme Secret Merger Plan", 3: "Project Nightingale Patients"}
ENTITY = "Jane Q. Private"


@pytest.fixture
def private_report(tmp_path):
    path = write_index(tmp_path / "clients" / "acme-corp", report_titles=TITLES, entity_titles={"e7": ENTITY})
    return audit(path, AuditOptions(level=2, costs=False)), path


# ---- privacy -----------------------------------------------------------------------------------
def test_markdown_hides_titles_entities_and_absolute_paths_by_default(private_report):
    report, path = private_report
    out = render_markdown(report)
    for secret in [*TITLES.values(), "Report 0", ENTITY, str(path), "acme-corp", str(path.parent)]:
        assert secret not in out, secret
    tabs = tables(md().parse(out))
    head = {cell_texts(r[0]): cell_texts(r[1]) for r in tabs[0][1]}
    assert head["index"] == head["tables in"] == HIDDEN_PATH
    assert "--include-titles" in head["privacy"]
    sent = find_table(tabs, "community")
    assert [cell_texts(c) for c in sent[0]] == [
        "community",
        "level",
        "entities",
        "tokens",
        "also sent by <2.0",
    ]
    assert [cell_texts(r[0]) for r in sent[1]] == ["0", "1", "2", "3", "4"]  # the ids stay
    assert "- examples: 1 hidden (entity names; --include-titles shows them)" in md().render(out).replace(
        "<code>", ""
    ).replace("</code>", "").replace("<li>", "- ").replace("</li>", "")


def test_include_titles_shows_them(private_report):
    report, path = private_report
    out = render_markdown(report, include_titles=True)
    for shown in [*TITLES.values(), ENTITY, str(path)]:
        assert markdown_cell(shown) in out, shown
    tabs = tables(md().parse(out))
    assert "privacy" not in {cell_texts(r[0]) for r in tabs[0][1]}
    assert cell_texts(find_table(tabs, "community")[0][2]) == "title"
    assert out.rstrip().endswith("-f markdown --include-titles`_")


def test_absolute_paths_in_notes_messages_and_verify_are_hidden(private_report):
    report, path = private_report
    settings_file = path.parent / "settings.yaml"
    other = "/home/alice/private/thing.parquet"
    report = replace(
        report,
        index=replace(
            report.index, notes=(f"settings {settings_file} names {path}/output", f"also read {other}")
        ),
    )
    from graphrag_audit.results.verify import VerifyResult

    report = report.with_verify(VerifyResult(available=False, reason=f"cannot import graphrag from {other}"))
    out = render_markdown(report)
    assert str(path.parent) not in out and "alice" not in out
    assert "names (index dir)/output" in out and "also read (absolute path hidden)" in out
    assert "Not run: cannot import graphrag from (absolute path hidden)" in out
    shown = render_markdown(report, include_titles=True)
    assert markdown_cell(other) in shown


def test_relative_paths_stay(tmp_path, monkeypatch):
    write_index(tmp_path / "idx")
    monkeypatch.chdir(tmp_path)
    out = render_markdown(audit(Path("idx"), AuditOptions(level=2, costs=False)))
    head = {cell_texts(r[0]): cell_texts(r[1]) for r in tables(md().parse(out))[0][1]}
    assert head["index"] == "idx"


@pytest.mark.parametrize(
    "text,index,expected",
    [
        ("/home/a/idx", "/home/a/idx", "(index dir)"),
        ("tables in /home/a/idx/output/run1", "/home/a/idx", "tables in (index dir)/output/run1"),
        ("read /etc/x and /srv/y.yaml", None, f"read {HIDDEN_PATH} and {HIDDEN_PATH}"),
        (r"C:\Users\bob\idx and \\server\share\x", None, f"{HIDDEN_PATH} and {HIDDEN_PATH}"),
        ("path='/etc/secret'", None, f"path='{HIDDEN_PATH}'"),
        # not paths: fractions, level mixes, words around a slash, URLs, quoted column pairs
        ("1/2 roots, L0/L1/L2, 23/65/32, communities / community_reports", None, None),
        ("see https://github.com/microsoft/graphrag/issues/1808", None, None),
        ("entities.parquet has no 'x'/'y' columns", None, None),
    ],
)
def test_hide_paths(text, index, expected):
    assert hide_paths(text, index) == (text if expected is None else expected)


def test_shown_path():
    assert (
        shown_path("../shared/indexes/verbs-v3", "../shared/indexes/verbs-v3") == "../shared/indexes/verbs-v3"
    )
    assert shown_path("/data/idx", "/data/idx") == HIDDEN_PATH
    assert shown_path("/data/idx/output", "/data/idx") == "(index dir)/output"


def test_github_annotations_and_summary_line_hide_paths(private_report):
    report, path = private_report
    out = render_github(report)
    assert str(path) not in out and "acme-corp" not in out
    assert out.splitlines()[-1].endswith(f"; {HIDDEN_PATH})")
    assert not any(t in out for t in TITLES.values()) and ENTITY not in out


def _cli(*args, env=None, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def test_cli_step_summary_is_private_unless_asked(private_report, tmp_path):
    _, path = private_report
    for flag, expect_titles in (([], False), (["--include-titles"], True)):
        summary = tmp_path / f"summary{len(flag)}.md"
        res = _cli(
            "levels",
            str(path),
            "-f",
            "github",
            "--no-costs",
            "--fail-on",
            "never",
            *flag,
            env={"GITHUB_STEP_SUMMARY": str(summary)},
        )
        assert res.returncode == 0, res.stderr
        page = summary.read_text(encoding="utf-8")
        assert page.startswith("## graphrag-audit report")
        assert (TITLES[4] in page) is expect_titles and (str(path) in res.stdout) is expect_titles
        assert (ENTITY in page) is expect_titles and (str(path) in page) is expect_titles
    md_res = _cli("levels", str(path), "-f", "markdown", "--no-costs", "--fail-on", "never")
    assert md_res.returncode == 0 and TITLES[4] not in md_res.stdout and md_res.stderr == ""
    md_res = _cli(
        "levels", str(path), "-f", "markdown", "--no-costs", "--fail-on", "never", "--include-titles"
    )
    assert TITLES[4] in md_res.stdout


# ---- escaping only where Markdown needs it -----------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "0.1.0",
        "verbs-v3",
        "x86_64",
        "3.x",
        "num_repeats 1",
        "2.0.0-2.7.2",
        "../shared/indexes/verbs-v3",
        "keep_parent off, max_level 2 (graphrag's defaults).",
        "2025-01-01",
        "-5 entities",
        "1.24x",
        "communities / community_reports",
        "--query adds yours",
    ],
)
def test_tool_text_is_not_escaped(text):
    assert markdown_cell(text) == text


def test_the_verbs_v3_report_escapes_nothing_needlessly():
    out = render_markdown(audit(shared_index("verbs-v3"), AuditOptions(level=2, costs=False)))
    escapes = set(re.findall(r"\\(.)", out))
    # pipes inside cells, and "#" before a number in finding messages (which may carry index
    # text, so GitHub's issue references are broken there): nothing else needs escaping
    assert escapes <= {"|", "#"}, escapes
    assert "\\-" not in out and "\\." not in out and "\\_" not in out


def _inline_texts(src: str) -> list[str]:
    """Every inline token of ``src``: each must be plain text (no emphasis, code, link, HTML...)."""
    out = []
    for t in md().parse(src):
        if t.type == "inline":
            kinds = {c.type for c in t.children or []}
            assert kinds <= {"text", "softbreak"}, (src, kinds)
            out.append("".join(c.content for c in t.children))
    return out


SPECIAL = "\\`*_{}[]()#+-.!|~<>&$=:/@ \t\nabc019wW"


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list(SPECIAL)) | st.characters(blacklist_categories=("Cs",)),
        min_size=1,
        max_size=24,
    )
)
def test_untrusted_text_stays_one_plain_text_node(text):
    cell = markdown_cell(text)
    want = plain(text)
    if not want:
        return
    import html

    # as a paragraph, as a list item, and as a table cell
    assert [html.unescape(x) for x in _inline_texts(cell + "\n")] == [
        want.replace("@", "@\u2060").replace("://", "://")
    ]
    assert [html.unescape(x) for x in _inline_texts("- " + cell + "\n")] == [want.replace("@", "@\u2060")]
    table = "| a | b |\n| --- | --- |\n| " + cell + " | x |\n"
    tokens = md().parse(table)
    assert [t.type for t in tokens].count("td_open") == 2, (text, cell)
    assert html.unescape(_inline_texts(table)[2]) == want.replace("@", "@\u2060").replace("|", "|")
    # GitHub's extensions markdown-it does not know: math, issue references, bare links
    bare = re.sub(r"&#\d+;", "\x00", cell)  # our own entities (each stands for a character)
    assert not re.search(r"(?<!\\)\$", bare) and not re.search(r"(?<!\\)#\d", bare)
    assert "://" not in cell and not re.search(r"(?i)www\.", cell)


# ---- <details> and size ------------------------------------------------------------------------
def _chain(levels: int) -> dict:
    """Root 0 with a chain 0 -> 1 -> ... -> levels-1 (one entity each level deeper) plus a sibling
    root: a tree ``levels`` deep."""
    tree = {c: (c, c - 1 if c else -1, ["e0", f"e{c}"]) for c in range(levels)}
    tree[0] = (0, -1, ["e0"] + [f"e{c}" for c in range(1, levels)])
    return tree


def test_long_tables_are_collapsed_and_the_queried_level_stays_visible(tmp_path):
    levels = DETAILS_ROWS + 5
    tree = _chain(levels)
    path = write_index(
        tmp_path / "deep", tree=tree, entities=sorted({e for _, _, es in tree.values() for e in es})
    )
    out = render_markdown(audit(path, AuditOptions(level=3, costs=False)))
    tokens = md().parse(out)
    tabs = tables(tokens)
    # the levels table (levels + None rows) inside <details>, and above it the queried row alone
    # (the first column is the marker of the queried level, the second N)
    full = [t for t in tabs if cell_texts(t[0][1]) == "N" and any("extra" in cell_texts(c) for c in t[0])]
    assert sorted(len(t[1]) for t in full) == [1, levels + 1]
    assert [cell_texts(c) for c in min(full, key=lambda t: len(t[1]))[1][0]][1] == "3"
    # every table longer than DETAILS_ROWS rows sits between <details> and </details>
    inside, depth = [], 0
    for t in tokens:
        if t.type == "html_block":
            depth += t.content.count("<details>") - t.content.count("</details>")
        elif t.type == "table_open":
            inside.append(depth > 0)
    lengths = [len(rows) for _, rows in tabs]
    assert all(ins for ins, n in zip(inside, lengths) if n > DETAILS_ROWS)
    assert out.count("<details>") == out.count("</details>")
    assert any(n > DETAILS_ROWS for n in lengths)


def test_paste_size_warning():
    assert paste_size_warning("x" * GITHUB_COMMENT_LIMIT) is None
    w = paste_size_warning("x" * (GITHUB_COMMENT_LIMIT + 1))
    assert w.startswith("graphrag-audit: warning: the markdown has 65,537 characters") and w.endswith("\n")


def test_cli_warns_when_the_markdown_is_too_long_to_paste(tmp_path):
    tree = _chain(400)
    path = write_index(
        tmp_path / "deep", tree=tree, entities=sorted({e for _, _, es in tree.values() for e in es})
    )
    res = _cli("levels", str(path), "-f", "markdown", "--no-costs", "--fail-on", "never")
    assert res.returncode == 0, res.stderr
    assert len(res.stdout) > GITHUB_COMMENT_LIMIT
    assert (
        res.stderr
        == f"graphrag-audit: warning: the markdown has {len(res.stdout):,} characters"
        + res.stderr.split(" characters", 1)[1]
    )
    small = _cli(
        "levels", str(write_index(tmp_path / "small")), "-f", "markdown", "--no-costs", "--fail-on", "never"
    )
    assert small.returncode == 0 and small.stderr == ""

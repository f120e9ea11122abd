"""A new-user trial of levels/plan/tree/diff output (issue 38 section 5 follow-up): each expectation is
written from the trial's wording (what a reader must see), never taken from the renderer under test."""

from __future__ import annotations

from test_first_hour_output import SEED_V1, SEED_V3, run


def _paragraphs(text: str) -> list[str]:
    return text.split("\n\n")


# ---- 1. --hide-hypothetical without --brief ---------------------------------------------------------
def test_hide_hypothetical_titles_and_legends_use_the_output_width():
    out = run("levels", SEED_V1, "--hide-hypothetical", "--width", "100").stdout
    lines = out.splitlines()
    # the titles are shorter than 100 columns: each stays on one line
    assert "What each community_level N sends to global search" in lines, out
    assert any(line.startswith("Coverage per N (of 4 clustered entities, 3 text units)") for line in lines), (
        out
    )
    # the legends wrap at 100, not at the narrowed table's width (~30-45 columns)
    legend = next(p for p in _paragraphs(out) if "level N only = the reports" in p)
    assert max(len(x) for x in legend.splitlines()) > 80, legend


def test_hide_hypothetical_legend_explains_only_the_columns_left():
    text = run("levels", SEED_V1, "--hide-hypothetical", "--width", "100").stdout
    md = run("levels", SEED_V1, "--hide-hypothetical", "-f", "markdown").stdout
    for out in (text, md):
        flat = " ".join(out.split())
        # extra (anc.) and mix are >=2.0 columns: hidden on a 1.x index, so not explained either
        assert "extra =" not in flat and "anc. =" not in flat and "ancestors =" not in flat, out
        assert "mix =" not in flat and "ents/rep =" not in flat, out
        assert "level N only =" in flat and "stuck =" in flat
    # without the option the legends still explain them
    flat = " ".join(run("levels", SEED_V1, "--width", "100").stdout.split())
    assert "extra =" in flat and "mix =" in flat and "ents/rep =" in flat


def test_hide_hypothetical_hides_the_hypothetical_costs():
    prices = ("--price-in", "2.5", "--price-out", "10")
    for fmt in ("text", "markdown"):
        out = run("levels", SEED_V1, "--hide-hypothetical", "-f", fmt, *prices).stdout
        cost = [x for x in out.splitlines() if "N=0:" in x or "N=2:" in x]
        assert cost and all("2.0" in x for x in cost), out
        assert not any("≥2.0" in x or ">=2.0" in x for x in cost), cost
        shown = run("levels", SEED_V1, "-f", fmt, *prices).stdout
        assert any("2.0 $" in x or "2.0 \\$" in x for x in shown.splitlines() if "N=2:" in x and "=2.0" in x)


# ---- 3. levels --brief --list-reports ---------------------------------------------------------------
def test_brief_list_reports_prints_the_lists():
    full = run("levels", SEED_V3, "--list-reports", "--width", "100").stdout
    brief = run("levels", SEED_V3, "--brief", "--list-reports", "--width", "100").stdout
    heads = [x for x in full.splitlines() if x.startswith("community_level 2 · ")]
    assert heads  # the lists --list-reports prints without --brief ...
    for head in heads:  # ... are printed with it too
        assert head in brief.splitlines(), brief
    assert "Community tree" not in brief  # still brief


# ---- 5. -f html on tree, plan and diff -------------------------------------------------------------
def test_html_format_points_to_report_on_every_command():
    for args in (("tree", SEED_V3), ("plan", SEED_V3), ("diff", SEED_V1, SEED_V3)):
        proc = run(*args, "-f", "html", check_rc=(2,))
        lines = proc.stderr.strip().splitlines()
        assert proc.stdout == "" and len(lines) == 1, proc.stderr
        assert "graphrag-audit report DIR -o FILE.html" in lines[0], proc.stderr


# ---- 6. a COLUMNS narrower than the 40-column minimum ---------------------------------------------
def test_tiny_columns_gives_the_40_column_minimum():
    narrow = run("levels", SEED_V3, env={"COLUMNS": "20"}).stdout
    at40 = run("levels", SEED_V3, "--width", "40").stdout
    assert narrow == at40
    assert max(len(x) for x in narrow.splitlines()) <= 40
    assert run("levels", SEED_V3, env={"COLUMNS": "40"}).stdout == at40
    helptext = " ".join(run("levels", "--help", env={"COLUMNS": "200"}).stdout.split())
    assert "at least 40" in helptext


# ---- 2. plan at 80 columns and narrower: no number or header cut short ------------------------------
def _plan_numbers(folder) -> list[str]:
    import json

    doc = json.loads(run("plan", folder, "--map-calls", "5", "-f", "json").stdout)
    return [f"{lv['tokens']:,}" for lv in doc["community_levels"] if lv.get("tokens") is not None]


def _cut_words(out: str) -> list[str]:
    """Words cut short by the layout: a letter or digit followed by '…' ("120,4…", "repor…"); the id lists'
    own "…" (", … (58 in all") and "… N more" stand apart from any word."""
    import re

    return re.findall(r"\S*\w…", out)


def test_plan_at_80_columns_cuts_no_number_or_header():
    from conftest import shared_index

    folder = shared_index("verbs-v3")
    tokens = _plan_numbers(folder)
    assert "120,473" in tokens  # the figure the trial saw cut to "120,4…"
    for how in (["--width", "80"], []):
        env = {"COLUMNS": "80"} if not how else {}
        out = run("plan", folder, "--map-calls", "5", *how, env=env).stdout
        assert not _cut_words(out), _cut_words(out)
        assert max(len(x) for x in out.splitlines()) <= 80
        for t in set(tokens):
            assert t in out, t
        assert "budget-limited" in out
    at120 = run("plan", folder, "--map-calls", "5", "--width", "120").stdout
    assert "left out at" not in at120  # wide enough: every column shown


def test_plan_narrowest_output_cuts_nothing():
    from conftest import shared_index

    folder = shared_index("verbs-v3")
    tokens = _plan_numbers(folder)
    for width in ("40", "60"):
        out = run("plan", folder, "--map-calls", "5", "--width", width).stdout
        assert not _cut_words(out), (width, _cut_words(out))
        assert max(len(x) for x in out.splitlines()) <= int(width)
        for t in set(tokens):
            assert t in out, (width, t)


def test_plan_wrapped_summary_lines_keep_their_indent():
    from conftest import shared_index

    out = run("plan", shared_index("verbs-v3"), "--map-calls", "5", "--width", "80").stdout
    summary = out.split("\n\n")[1].splitlines()  # "Plan: ..." and its indented lines
    start = next(i for i, x in enumerate(summary) if x.startswith("  "))
    assert all(x.startswith("  ") for x in summary[start:]), summary


# ---- 4. tree's heading at 80 columns ----------------------------------------------------------------
def test_tree_heading_wraps_between_items_without_trailing_blanks():
    from conftest import shared_index

    for folder in (SEED_V3, shared_index("verbs-v3")):
        for width in ("80", "60", "40"):
            out = run("tree", folder, "--level", "1", "--width", width).stdout
            head = out.split("\n\n")[0].splitlines()
            assert all(x == x.rstrip() for x in head), head
            assert all(len(x) <= int(width) for x in head), head
            for x in head:  # no orphan piece of an item at a line's start or end
                assert not x.startswith(("only ", "· ", "= not sent", "— =")) or x.startswith(
                    "— = not sent"
                ), head
                assert not x.endswith((" v2", " v1", " —")), head
            flat = " ".join(" ".join(head).split())
            assert "v2 only = only >= 2.0 sends it · — = not sent" in flat

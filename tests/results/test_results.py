"""The audit's results are typed and frozen, renderers read only them, and the sanitisers stand alone.

* Nothing mutates a result after the audit built it: fields, mappings, arrays and findings'
  evidence are read-only.
* The reports listed at the audited level (``AuditReport.listing``, what the text and Markdown
  tables show) are the selection's first rows by (level, community id), checked against a tree
  worked by hand.
* The renderers import nothing from the analyses, the model, io or graphrag/ (they read results),
  and the sanitisers import nothing from the package but each other.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import write_v3

from graphrag_audit.analysis.audit import AuditOptions, audit, audit_with_model

PKG = Path(__file__).resolve().parents[2] / "graphrag_audit"

# a hand-made tree: {community: (level, parent, entities)}
TREE = {
    0: (0, -1, ["a", "b", "c", "d"]),
    1: (0, -1, ["e", "f"]),
    2: (1, 0, ["a", "b"]),
    3: (1, 0, ["c", "d"]),
    4: (1, 1, ["e", "f"]),
    5: (2, 2, ["a"]),
    6: (2, 2, ["b"]),
}
# report rows in an order unlike (level, community)
REPORTS = [(6, 2), (3, 1), (0, 0), (5, 2), (1, 0), (4, 1), (2, 1)]


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return write_v3(
        tmp_path_factory.mktemp("results") / "idx",
        TREE,
        reports=REPORTS,
        report_titles={c: f"T{c} <b>" for c in TREE},
    )


def test_results_are_frozen(index):
    report = audit(index, AuditOptions(level=1, tokenizer="estimate"))
    lv = report.level(1)
    s = lv.selected["v2"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.count = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.verify = {}
    with pytest.raises(TypeError):
        lv.selected["v2"] = s
    with pytest.raises(TypeError):
        s.by_level["0"] = 9
    with pytest.raises(TypeError):
        report.depth.histogram["7"] = 1
    with pytest.raises(ValueError):
        s.rows[0] = 1
    with pytest.raises(ValueError):
        s.row_tokens[0] = 1
    with pytest.raises(AttributeError):
        s.cost.tokens = 1
    f = next(iter(report.findings))
    with pytest.raises(TypeError):
        f.evidence["x"] = 1
    # the old string-keyed bags are gone: a renamed field fails loudly, not silently
    assert not hasattr(s, "extra") and not isinstance(s.cost, dict)
    with pytest.raises(TypeError):
        lv["selected"]
    # with_verify makes a new report; the original stays as it was
    from graphrag_audit.results.verify import VerifyResult

    v = report.with_verify(VerifyResult(available=False, reason="x"))
    assert report.verify is None and v.verify.reason == "x" and v.levels == report.levels
    assert v.verify.to_dict() == {"available": False, "reason": "x"}


def test_the_report_holds_no_model(index):
    model, report = audit_with_model(index, AuditOptions(level=1, costs=False))
    kinds = {type(getattr(report, f.name)).__module__ for f in dataclasses.fields(report)}
    assert not any(k.startswith(("graphrag_audit.model", "graphrag_audit.io", "pandas")) for k in kinds)
    assert report.index.has_reports_table and report.index.name == "idx"
    assert report.index.counts.communities == len(model.communities) == len(TREE)


def test_rating_calls_and_extra_reports_are_built_with_the_selection(index):
    report = audit(index, AuditOptions(level=1, costs=False, num_repeats=3))
    for lv in report.levels:
        n = lv.community_level
        upto = sorted(c for c, (level, _, _) in TREE.items() if n is None or level <= n)
        dyn = lv.selected["dynamic"]
        # dynamic selection rates every level-0 report at least, every report of its pool at most
        assert (dyn.rating_calls.min, dyn.rating_calls.max) == (3 * 2, 3 * len(upto))
        v2, v1 = lv.selected["v2"], lv.selected["v1"]
        assert v2.extra_vs_v1.community_ids == sorted(set(upto) - set(v1.community_ids))
        assert v1.extra_vs_v1 is None and v2.rating_calls is None


def test_listing_is_the_selection_by_level_and_id(index):
    """At N=1 graphrag >= 2.0 sends 0-4; < 2.0 each entity's deepest community <= 1: 2, 3, 4."""
    model, report = audit_with_model(index, AuditOptions(level=1, tokenizer="estimate"), listed_rows=3)
    listing = report.listing
    assert listing.community_level == 1
    v2 = listing.by_behaviour["v2"]
    assert v2.total == 5 and v2.community == (0, 1, 2) and v2.level == (0, 0, 1)
    assert v2.title == ("T0 <b>", "T1 <b>", "T2 <b>") and v2.entities == (4, 2, 2)
    assert v2.also_v1 == (False, False, True)
    v1 = listing.by_behaviour["v1"]
    assert v1.total == 3 and v1.community == (2, 3, 4) and v1.also_v1 is None
    lo = listing.by_behaviour["level_only"]
    assert lo.total == 3 and lo.community == (2, 3, 4)
    # each listed row carries its own row's tokens (the selection's rows are in parquet order)
    parquet = pd.read_parquet(index / "community_reports.parquet")
    s = report.level(1).selected["v2"]
    by_community = {int(parquet["community"][r]): int(t) for r, t in zip(s.rows, s.row_tokens)}
    assert v2.tokens == tuple(by_community[c] for c in v2.community)
    # no costs: no tokens
    report = audit(index, AuditOptions(level=1, costs=False))
    assert report.listing.by_behaviour["v2"].tokens is None
    # a level deeper than the tree selects like no filter but is not one of the levels: no listing
    assert audit(index, AuditOptions(level=7, costs=False)).listing is None


def test_text_focus_lists_the_listing(index):
    from graphrag_audit.render.text import render_text

    report = audit(index, AuditOptions(level=1, costs=False))
    out = render_text(report, width=120, focus=1)
    rows = [
        ln.split()[:2]
        for ln in out.splitlines()
        if ln.strip().startswith(("0 ", "1 ", "2 ", "3 ", "4 ")) and "T" in ln
    ]
    assert rows[:5] == [["0", "0"], ["1", "0"], ["2", "1"], ["3", "1"], ["4", "1"]]
    assert "T0 <b>" in out  # terminal text: no HTML escaping, only invisible characters
    other = render_text(report, width=120, focus=0)
    assert "listed the reports of community_level 1 only" in other


# ---- layering ------------------------------------------------------------------------------
def _imports(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
    return out


RENDERERS = sorted(p.stem for p in (PKG / "render").glob("*.py"))
LOWER = ("graphrag_audit.analysis", "graphrag_audit.model", "graphrag_audit.io", "graphrag_audit.graphrag")
ALLOWED: dict[str, set[str]] = {}  # none: the tree view's types are in results/tree.py


@pytest.mark.parametrize("name", RENDERERS)
def test_renderers_read_only_results(name):
    bad = {m for m in _imports(PKG / "render" / f"{name}.py") if m.startswith(LOWER)} - ALLOWED.get(
        name, set()
    )
    assert not bad, bad


@pytest.mark.parametrize("path", sorted((PKG / "sanitise").glob("*.py")), ids=lambda p: p.name)
def test_sanitisers_import_nothing_else_from_the_package(path):
    ours = {m for m in _imports(path) if m.startswith("graphrag_audit")}
    assert all(m.startswith("graphrag_audit.sanitise") for m in ours), ours


def test_results_sit_below_the_analyses():
    for path in (PKG / "results").glob("*.py"):
        ours = {m for m in _imports(path) if m.startswith("graphrag_audit")}
        assert not {m for m in ours if m.startswith(LOWER)}, (path.name, ours)


def test_old_import_paths_are_the_sanitisers():
    from graphrag_audit import errors
    from graphrag_audit.sanitise import terminal

    assert errors.visible is terminal.visible


def test_numbers():
    from graphrag_audit.render.cells import level_label, number, share

    assert [number(x) for x in (None, 0, 1234567, 2.5, True, False)] == [
        "—",
        "0",
        "1,234,567",
        "2.50",
        "yes",
        "no",
    ]
    assert (share(1, 3), share(2, 3), share(1, 0)) == ("33%", "67%", "—")
    assert (level_label(None), level_label(3)) == ("None", "3")
    assert number(np.int64(1234)) == "1,234"

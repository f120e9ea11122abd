"""analysis/local_search.py: the ``local_search`` JSON of ``levels[]``, its settings, statuses and findings.
Expectations are worked by hand on a small tree, or are the issue's table (measured with graphrag's own
functions; tests/graphrag_tests/test_local_search.py pins the engine to graphrag in the side envs)."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest
import test_local_search
from conftest import ROOT, shared_index

from graphrag_audit.analysis.integrity import check_integrity
from graphrag_audit.analysis.local_search import (
    LocalSettings,
    line_statuses,
    local_findings,
    local_search_audit,
    read_local_settings,
    unclustered_for_local,
)
from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.tokens import get_token_counter
from graphrag_audit.io.load import load_index

SCHEMA = json.loads((ROOT / "graphrag_audit" / "schema" / "audit-report.schema.json").read_text())
FRAGMENT = SCHEMA["properties"]["levels"]["items"]["properties"]["local_search"]
VALIDATOR = jsonschema.Draft202012Validator(FRAGMENT)
tree = test_local_search.tree  # the fixture: the engine test's hand-worked tree


def _check(audit):
    for entry in audit.by_level.values():
        VALIDATOR.validate(entry)


def test_hand_worked_json(tree):
    # leaves 1, 5, 2, 4 in row order. >= 2.0 at N=2: 1 -> [1], 5 -> [] (rank -1), 2 -> [0] (no report
    # for 2), 4 -> [4, 3, 0]; 1.x's rolled-up reports: 1 -> [1], 5 -> [], 2 -> [] (0 is no entity's
    # max), 4 -> [4, 3]
    audit = local_search_audit(tree)
    _check(audit)
    assert set(audit.by_level) == {0, 1, 2}
    n2 = audit.by_level[2]
    assert n2["budget_tokens"] == 1800 and "sampled" not in n2
    v2 = {
        "reports_in_context_by_level": {"0": 3, "1": 1, "2": 1},
        "deepest_level_in_context": {"0": 2, "2": 1, "none": 1},
    }
    assert n2["by_version"] == {
        "1.x": {
            "graphrag": "1.0-1.2",
            "status": "hypothetical",
            "probes": 4,
            "reports_in_context_by_level": {"0": 1, "1": 1, "2": 1},
            "deepest_level_in_context": {"0": 1, "2": 1, "none": 2},
        },
        "2.x": {"graphrag": "2.0.0-2.7.2", "status": "exact", "probes": 4, **v2},
        "3.x": {"graphrag": "3.0.0-3.x", "status": "exact", "probes": 4, **v2},
    }
    # N=0: every probe's level-0 ancestor (1, -, 0, 0)
    assert audit.by_level[0]["by_version"]["3.x"]["deepest_level_in_context"] == {"0": 3, "none": 1}


def test_findings(tree):
    audit = local_search_audit(tree)
    # at N=2 only leaf 2 (level 1) gets a coarser finest report (0): 1 of 4, not above 0.25
    assert local_findings(audit, 2) == []
    (coarse,) = local_findings(audit, 2, max_coarse=0.2)
    assert coarse.rule == "local-context-coarse" and coarse.communities == (2,)
    assert coarse.evidence["behaviours"]["3.x"] == {"probes": 4, "coarse": 1, "share": 0.25}
    assert local_findings(audit, 9, max_coarse=0.2)[0].evidence["level"] == 2  # beyond the tree: deepest
    # a budget one token short of the header and one row (every row here counts the same): probes 1, 2
    # and 4 stop at their first report; 5 has no candidate (rank -1), so it is empty but not blocked
    counter = get_token_counter()
    rows = {c: counter.count(f"{c}|Report {c}|Content of {c}.\n") for c in (0, 1, 4)}
    assert len(set(rows.values())) == 1
    header = counter.count("-----Reports-----\nid|title|content\n")
    tight = LocalSettings(max_context_tokens=header + rows[1] - 1, community_prop=1.0)
    audit = local_search_audit(tree, tight)
    assert audit.by_level[2]["budget_tokens"] == tight.budget
    assert audit.by_level[2]["by_version"]["3.x"]["deepest_level_in_context"] == {"none": 4}
    (empty,) = local_findings(audit, 2)
    assert empty.rule == "local-context-empty" and empty.communities == (1, 2, 4)
    assert empty.evidence["behaviours"]["2.x"] == {"probes": 4, "empty": 3, "share": 0.75}
    # the first reports that did not fit: 1, 0 and 4, all as large: the first of them is named
    assert empty.evidence["largest_report"] == {"community": 1, "tokens": rows[1]}
    assert empty.evidence["budget_tokens"] == tight.budget and f"{tight.budget:,}-token" in empty.message


def test_unclustered_raised_for_local_search(tree):
    findings = check_integrity(tree)
    (before,) = [f for f in findings if f.rule == "unclustered-entities"]
    assert before.severity == "info"
    (after,) = [f for f in unclustered_for_local(findings, line_statuses(tree)) if f.rule == before.rule]
    assert after.severity == "warning" and after.evidence["share"] == round(1 / 9, 4)
    assert "local or DRIFT search in graphrag >= 2.0 (11.1% of the entities)" in after.message
    assert unclustered_for_local(findings, {"2.x": "hypothetical"}) == findings


def test_sampled_probes_are_the_same_probes(tree):
    full = local_search_audit(tree)
    sampled = local_search_audit(tree, max_probes=2)  # evenly spaced: the first and the last leaf (1, 4)
    _check(sampled)
    assert sampled.by_level[2]["sampled"] == {"probes": 2, "of": 4}
    for line in ("1.x", "2.x"):
        want = [p for p in full.probes[line][2] if p.leaf in (1, 4)]
        assert sampled.probes[line][2] == want


def test_settings_per_version(tree, tmp_path):
    f = tmp_path / "settings.yaml"
    f.write_text("local_search:\n  max_context_tokens: 8000\n  community_prop: 0.25\n  top_k_entities: 1\n")
    s = read_local_settings(dataclasses.replace(tree, settings_file=f))
    assert (s.max_context_tokens, s.community_prop, s.top_k, s.budget) == (8000, 0.25, 1, 2000)
    assert s.origin["max_context_tokens"] == "settings.yaml local_search.max_context_tokens"
    f.write_text("local_search:\n  max_tokens: 4000\n")  # graphrag 1.x's name
    s = read_local_settings(dataclasses.replace(tree, settings_file=f))
    assert (s.budget, s.origin["community_prop"]) == (600, "graphrag default")
    # top_k_entities 1: probe 4 reads only "c", still matched by 4, 3 and 0
    audit = local_search_audit(tree, LocalSettings(top_k=1))
    assert [r.matches for r in audit.probes["2.x"][2][3].context.reports] == [1, 1, 1]


def test_tokenizer_of_local_search_model(tree, tmp_path):
    """2.x: local search counts with models.<local_search.chat_model_id>.encoding_model, global search with
    its own model's (query/factory.py @v2.7.2); 1.x: one top-level encoding_model for both (@v1.2.0)."""
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.results.audit import AuditOptions

    f = tmp_path / "settings.yaml"
    f.write_text(
        "models:\n  default_chat_model:\n    encoding_model: cl100k_base\n"
        "  local_model:\n    encoding_model: o200k_base\n"
        "local_search:\n  chat_model_id: local_model\n"
    )
    model = dataclasses.replace(tree, settings_file=f)
    assert read_local_settings(model).tokenizer == "o200k_base"
    doc = audit(model, AuditOptions(level=2, entities=("c", "d"))).to_dict()
    entry = doc["levels"][2]["local_search"]
    VALIDATOR.validate(entry)
    assert entry["tokenizer"] == "o200k_base" and doc["options"]["tokenizer"] == "cl100k_base"
    row4 = get_token_counter("o200k_base").count("4|Report 4|Content of 4.\n")
    assert entry["what_if"]["by_version"]["2.x"]["reports"][0]["tokens"] == row4
    # --tokenizer counts both; 1.x's top-level encoding_model is global search's too: no key
    given = audit(model, AuditOptions(level=2, tokenizer="cl100k_base")).to_dict()["levels"][2]
    assert "tokenizer" not in given["local_search"]
    f.write_text("encoding_model: o200k_base\n")
    assert read_local_settings(model).tokenizer == "o200k_base"
    doc = audit(model, AuditOptions(level=2)).to_dict()
    assert doc["options"]["tokenizer"] == "o200k_base" and "tokenizer" not in doc["levels"][2]["local_search"]
    f.write_text(
        "models:\n  default_chat_model: {}\n  local_model:\n    encoding_model: p50k_base\n"
        "local_search:\n  chat_model_id: local_model\n"
    )
    with pytest.raises(
        IndexInputError, match="models.local_model.encoding_model is 'p50k_base'.*pass --tokenizer"
    ):
        audit(model, AuditOptions(level=2))


@pytest.mark.parametrize(
    "line, name, n, probes, at_0, at_n, none",
    [
        ("1.x", "verbs-v1", 1, 33, 3, 30, 0),
        ("2.x", "verbs-v2", 2, 19, 15, 0, 0),
        ("3.x", "verbs-v3", 2, 98, 36, 2, 43),
        ("2.x", "real-b2b-gaps-v2", 0, 402, 160, 160, 242),
        ("3.x", "real-insurance-v3", 2, 414, 15, 224, 0),
    ],
)
def test_issue_41_table(line, name, n, probes, at_0, at_n, none):
    audit = local_search_audit(load_index(shared_index(name)))
    _check(audit)
    got = audit.by_level[n]["by_version"][line]
    assert got["status"] == "exact"
    deepest = got["deepest_level_in_context"]
    assert (got["probes"], deepest.get("0", 0), deepest.get(str(n), 0), deepest.get("none", 0)) == (
        probes,
        at_0,
        at_n,
        none,
    )


def test_levels_json_carries_local_search(tree):
    from graphrag_audit.analysis.audit import audit

    levels = audit(tree).to_dict()["levels"]
    want = local_search_audit(tree).by_level
    assert [lv["local_search"] for lv in levels] == [want[0], want[1], want[2], None]


def test_entities_what_if_at_level(tree):
    # c and d are in 0, 3 and 4 (levels 0-2), each community matching both: (matches, rank) puts 4 (8.0),
    # 3 (7.0), 0 (5.0) in context under >= 2.0; 1.x reads the rolled-up reports, leaf 4's probe: [4, 3]
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.render.cells import local_what_if_lines
    from graphrag_audit.results.audit import AuditOptions

    report = audit(tree, AuditOptions(level=2, entities=("c", "d", "nobody")))
    entry = report.to_dict()["levels"][2]["local_search"]
    _check(dataclasses.replace(local_search_audit(tree), by_level={2: entry}))
    got = entry["what_if"]
    assert got["entities"] == ["c", "d", "nobody"]
    counter = get_token_counter()
    row4 = counter.count("4|Report 4|Content of 4.\n")
    for line, want in (("1.x", [4, 3]), ("2.x", [4, 3, 0]), ("3.x", [4, 3, 0])):
        v = got["by_version"][line]
        assert [r["community"] for r in v["reports"]] == want, line
        assert v["did_not_fit"] is None and v["not_read"] == ["nobody"]
    assert got["by_version"]["3.x"]["reports"][0] == {
        "community": 4,
        "level": 2,
        "matches": 2,
        "rank": 8.0,
        "tokens": row4,
        "title": "Report 4",
    }
    assert "what_if" not in report.to_dict()["levels"][1]["local_search"]
    lines = local_what_if_lines(report)  # 2.x and 3.x put the same reports in context: one line
    assert lines[0].startswith(
        "What-if at N=2: the community reports local search puts in context for c, d, nobody,"
    )
    assert len(lines) == 3 and lines[2].startswith(
        f'  graphrag 2.0.0-2.7.2, 3.0.0-3.x: community 4 "Report 4" (matches 2, rank 8, level 2, {row4:,} tokens);'
    )
    assert lines[2].endswith("; not read at this N: nobody")


def test_entities_option_on_levels(tree):
    from typer.testing import CliRunner

    from graphrag_audit.cli import app

    refused = CliRunner().invoke(app, ["levels", str(tree.path), "--no-costs", "--entities", "c"])
    assert refused.exit_code == 2 and "--entities needs token counts" in refused.output
    args = ["levels", str(tree.path), "--level", "2", "--entities", " c, d ,,nobody"]
    res = CliRunner().invoke(app, args + ["-f", "json"])
    got = json.loads(res.stdout)["levels"][2]["local_search"]["what_if"]
    assert got["entities"] == ["c", "d", "nobody"]
    assert [r["community"] for r in got["by_version"]["2.x"]["reports"]] == [4, 3, 0]
    text = CliRunner().invoke(app, args + ["--width", "200", "--color", "never"]).stdout
    assert "local search puts in context for c, d, nobody," in text

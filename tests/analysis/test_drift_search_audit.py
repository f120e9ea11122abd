"""analysis/drift_search.py: the ``drift_search`` JSON of ``levels[]`` and its settings. The pool is the
selection DRIFT reads (the global-search one, pinned to graphrag elsewhere); the local steps are the
local-search engine's probes (pinned in tests/graphrag_tests/test_local_search.py) with DRIFT's budget."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
from conftest import ROOT

from graphrag_audit.analysis.audit import audit
from graphrag_audit.analysis.drift_search import read_drift_settings
from graphrag_audit.io.load import load_index
from graphrag_audit.results.audit import AuditOptions

SCHEMA = json.loads((ROOT / "graphrag_audit" / "schema" / "audit-report.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA["properties"]["levels"]["items"]["properties"]["drift_search"]
)


def test_settings_and_defaults(tmp_path):
    model = load_index(ROOT / "fixtures" / "seed-v3")
    s = read_drift_settings(model)
    assert (s.k_followups, s.community_prop, s.max_data_tokens, s.top_k, s.budget) == (
        20,
        0.1,
        12_000,
        10,
        1_200,
    )
    f = tmp_path / "settings.yaml"
    f.write_text(
        "drift_search:\n  drift_k_followups: 3\n  local_search_community_prop: 0.15\n"
        "  local_search_max_data_tokens: '8000'\n  local_search_top_k_mapped_entities: 4\n"
    )
    s = read_drift_settings(dataclasses.replace(model, settings_file=f))
    assert (s.k_followups, s.budget, s.top_k) == (3, 1_200, 4)
    assert s.origin["max_data_tokens"] == "settings.yaml drift_search.local_search_max_data_tokens"


def test_pool_is_the_selection_and_steps_are_local_search_with_drift_budget():
    report = audit(ROOT / "fixtures" / "seed-v3", AuditOptions(level=2))
    for r in report.levels:
        if r.community_level is None:
            assert r.drift_search is None
            continue
        VALIDATOR.validate(r.drift_search)
        assert r.drift_search["budget_tokens"] == 1_200 and r.drift_search["k_followups"] == 20
        for line, v in r.drift_search["by_version"].items():
            behaviour = "v1" if line == "1.x" else "v2"
            assert v["pool"] == r.selected[behaviour].count == sum(v["pool_by_level"].values())
            assert v["pool_by_level"] == {k: c for k, c in r.selected[behaviour].by_level.items() if c}
            assert v["probes"] == r.local_search["by_version"][line]["probes"]
            assert v["embeddings"]["status"] == "not_run"  # no LanceDB folder


def test_same_budget_gives_local_search_figures(tmp_path, monkeypatch):
    """DRIFT's knobs set to local search's: the local steps are local search's probes, figure for figure."""
    import graphrag_audit.analysis.drift_search as drift

    same = drift.DriftSettings(community_prop=0.15)
    monkeypatch.setattr("graphrag_audit.analysis.audit.read_drift_settings", lambda model: same)
    report = audit(ROOT / "fixtures" / "seed-v3", AuditOptions(level=2))
    keys = ("probes", "reports_in_context_by_level", "deepest_level_in_context")
    for r in report.levels:
        if r.drift_search:
            for line, v in r.drift_search["by_version"].items():
                assert {k: v[k] for k in keys} == {k: r.local_search["by_version"][line][k] for k in keys}


def test_no_costs_turns_it_off():
    report = audit(ROOT / "fixtures" / "seed-v3", AuditOptions(level=2, costs=False))
    assert all(r.drift_search is None for r in report.levels)


def test_local_steps_count_with_graphrag_default_encoding(tmp_path):
    """graphrag 1.x/2.x pack DRIFT's local steps with cl100k_base whatever the settings name (pinned against
    graphrag's own engine in tests/graphrag_tests/test_local_search.py): with settings naming o200k_base, the
    local steps are those of --tokenizer cl100k_base and ``tokenizer`` says so; local search keeps o200k_base."""
    model = load_index(ROOT / "fixtures" / "seed-v3")
    f = tmp_path / "settings.yaml"
    f.write_text("models:\n  default_chat_model:\n    encoding_model: o200k_base\n")
    keys = ("probes", "reports_in_context_by_level", "deepest_level_in_context")
    named = audit(dataclasses.replace(model, settings_file=f), AuditOptions(level=2))
    plain = audit(model, AuditOptions(level=2, tokenizer="cl100k_base"))
    assert named.options.tokenizer == "o200k_base"
    for got, want in zip(named.levels, plain.levels):
        if got.drift_search is None:
            continue
        VALIDATOR.validate(got.drift_search)
        assert got.drift_search["tokenizer"] == "cl100k_base" and "tokenizer" not in got.local_search
        for line, v in got.drift_search["by_version"].items():
            assert {k: v[k] for k in keys} == {k: want.drift_search["by_version"][line][k] for k in keys}
    # --tokenizer counts everything with the encoding given
    given = audit(dataclasses.replace(model, settings_file=f), AuditOptions(level=2, tokenizer="o200k_base"))
    assert all("tokenizer" not in (r.drift_search or {}) for r in given.levels)

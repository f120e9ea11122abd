"""Local search's community context (graphrag_audit.graphrag.local): a hand-worked tree, and graphrag's
own ``_build_community_context`` on the shared indexes in the side environments (tests/local_search_runner.py)."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter

import graphrag_side as side
import pandas as pd
import pytest
from builders import write_v3
from conftest import ROOT, shared_index

from graphrag_audit.analysis.local_search import LocalAudit, LocalSettings, line_statuses, local_what_if
from graphrag_audit.graphrag.local import LocalSearch, local_budget, summarise, what_if
from graphrag_audit.graphrag.tokens import get_token_counter
from graphrag_audit.io.load import load_index
from graphrag_audit.results.audit import EXACT

HEADER = "-----Reports-----\nid|title|content\n"

# community: (level, parent, entities); 3 has the child 4; "z" is in no community
TREE = {
    0: (0, -1, ["a", "b", "c", "d", "x"]),
    1: (0, -1, ["e", "f"]),
    5: (0, -1, ["g"]),
    2: (1, 0, ["a", "b"]),
    3: (1, 0, ["c", "d", "x"]),
    4: (2, 3, ["c", "d"]),
}
RANKS = {0: 5.0, 1: 5.0, 3: 7.0, 4: 8.0, 5: -1.0}  # no report for 2; 5's rank keeps it out


def _row(c: int) -> str:
    return f"{c}|Report {c}|Content of {c}.\n"


@pytest.fixture
def tree(tmp_path):
    out = write_v3(
        tmp_path / "idx",
        TREE,
        reports=[(c, TREE[c][0]) for c in RANKS],
        entities=["a", "b", "c", "d", "e", "f", "g", "x", "z"],
    )
    rep = pd.read_parquet(out / "community_reports.parquet")
    rep["rank"] = rep["community"].map(RANKS)
    rep["full_content"] = [f"Content of {c}." for c in rep["community"]]
    rep.to_parquet(out / "community_reports.parquet", index=False)
    return load_index(out)


def _ids(probes):
    return {p.leaf: [r.community for r in p.context.reports] for p in probes}


def test_hand_worked_tree(tree):
    counter = get_token_counter()
    assert local_budget() == 1800 and local_budget(8000, 0.25) == 2000
    # leaves 1, 5, 2, 4 in row order; ancestors tie with their descendants on matches, rank decides
    assert _ids(LocalSearch(tree, "2.x").probes(0, 1800)) == {1: [1], 5: [], 2: [0], 4: [0]}
    assert _ids(LocalSearch(tree, "2.x").probes(1, 1800)) == {1: [1], 5: [], 2: [0], 4: [3, 0]}
    probes = LocalSearch(tree, "3.x").probes(2, 1800)
    assert _ids(probes) == {1: [1], 5: [], 2: [0], 4: [4, 3, 0]}
    assert summarise(probes) == {
        "probes": 4,
        "reports_in_context_by_level": {"0": 3, "1": 1, "2": 1},
        "deepest_level_in_context": {"0": 2, "2": 1, "none": 1},
    }
    # 1.x: rolled-up reports (each entity's max community <= N): 0 is not among them at N=2
    assert _ids(LocalSearch(tree, "1.x").probes(2, 1800)) == {1: [1], 5: [], 2: [], 4: [4, 3]}
    # packing: header once, each row, stop at the first that passes the budget strictly
    search = LocalSearch(tree, "2.x", counter)
    fit_two = counter.count(HEADER) + counter.count(_row(4)) + counter.count(_row(3))
    ctx = search.context(2, ["c", "d"], fit_two)
    assert [r.community for r in ctx.reports] == [4, 3] and ctx.tokens == fit_two
    assert ctx.did_not_fit is not None and (ctx.did_not_fit.community, ctx.did_not_fit.matches) == (0, 2)
    ctx = search.context(2, ["c", "d"], fit_two - 1)
    assert [r.community for r in ctx.reports] == [4] and ctx.did_not_fit.community == 3
    ctx = search.context(2, ["c", "d"], counter.count(HEADER) + counter.count(_row(4)) - 1)
    assert ctx.reports == () and ctx.tokens == 0 and ctx.did_not_fit.community == 4


def test_what_if_ties_keep_first_match_order(tree):
    # 0 and 1 tie on (matches, rank): the community met first stays first (stable sort)
    ctx, missing = what_if(tree, "2.x", 0, ["e", "c", "z", "nobody"])
    assert [r.community for r in ctx.reports] == [1, 0] and missing == ["z", "nobody"]
    ctx, _ = what_if(tree, "2.x", 0, ["c", "e"])
    assert [(r.community, r.matches, r.rank, r.level) for r in ctx.reports] == [
        (0, 1, 5.0, 0),
        (1, 1, 5.0, 0),
    ]
    ctx, _ = what_if(tree, "2.x", 0, ["c", "e", "d"])  # matches first
    assert [r.community for r in ctx.reports] == [0, 1]


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
    """The issue's table, measured with graphrag's own functions: finest report level per probe."""
    summary = summarise(LocalSearch(load_index(shared_index(name)), line).probes(n, local_budget()))
    deepest = summary["deepest_level_in_context"]
    assert (summary["probes"], deepest.get("0", 0), deepest.get(str(n), 0), deepest.get("none", 0)) == (
        probes,
        at_0,
        at_n,
        none,
    )


# ---------------------------------------------------------------------------------------------
# against graphrag's own _build_community_context

LINES = {  # graphrag major -> (version line, indexes)
    1: ("1.x", ["verbs-v1", "dulce-v1", "real-golf-zh-v1", "real-textbook-v1"]),
    2: (
        "2.x",
        [
            "verbs-v2",
            "real-b2b-gaps-v2",
            "real-cleanroom-specs-zh",
            "real-technip-safety-v2",
            "verbs-v3",
            "verbs-v1",
        ],
    ),
    3: (
        "3.x",
        [
            "verbs-v3",
            "real-insurance-v3",
            "dulce-v3",
            "real-datasaur-medical-v3",
            "verbs-v2",
            "real-golf-zh-v1",
        ],
    ),
}
V1_FILES = {
    "communities": "create_final_communities",
    "community_reports": "create_final_community_reports",
    "entities": "create_final_entities",
    "nodes": "create_final_nodes",
}
BUDGETS = [local_budget(), local_budget(12_000, 0.5)]
TOP_K = 10


def _names(model) -> dict[str, str]:
    """Entity id -> its title when no other entity has that title (nor an id equal to it), else the id:
    the --entities what-if takes either."""
    ids, titles = model.entities["id"].astype(str), model.entities["title"].astype(str)
    unique = ~titles.duplicated(keep=False) & ~titles.isin(ids)
    return {i: t if u else i for i, t, u in zip(ids.tolist(), titles.tolist(), unique.tolist())}


def _what_if_lists(model, n: int) -> list[list[str]]:
    """Entities from all over the index: ties between unrelated communities."""
    ids = model.entities["id"].astype(str).tolist()
    step = max(len(ids) // 12, 1)
    return [ids[::step][:12], ids[::-step][:7], ids[n::5][:25]]


@pytest.mark.side
@pytest.mark.parametrize("python", side.side_params(min_major=1))
def test_matches_graphrag(python, tmp_path):
    python = side.need(python, min_major=1)
    line, names = LINES[side.major(side.versions(python)[0])]
    cases, models = [], {}
    for name in names:
        path = shared_index(name)
        v1 = (path / "create_final_nodes.parquet").exists()
        files = V1_FILES if v1 else {k: k for k in ("communities", "community_reports", "entities")}
        model = models[name] = load_index(path)
        cases.append(
            {
                "id": name,
                "files": {k: str(path / f"{v}.parquet") for k, v in files.items()},
                "levels": model.levels,
                "budgets": BUDGETS,
                "top_k": TOP_K,
                "what_if": {str(n): _what_if_lists(model, n) for n in model.levels},
            }
        )
    (tmp_path / "cases.json").write_text(json.dumps({"encoding": "cl100k_base", "cases": cases}))
    env = side.tiktoken_env(tmp_path)
    runner = str(ROOT / "tests" / "local_search_runner.py")
    proc = side.run_side(
        python, runner, str(tmp_path / "cases.json"), str(tmp_path / "out.json"), env=env, timeout=1800
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((tmp_path / "out.json").read_text())["results"]
    assert [r["id"] for r in results] == names
    counter = get_token_counter("cl100k_base")
    for res in results:
        assert res["error"] is None, (res["id"], res["error"])
        model = models[res["id"]]
        level_of = dict(zip(model.reports["community"].tolist(), model.reports["level"].tolist()))
        search = LocalSearch(model, line, counter)
        statuses, names = line_statuses(model), _names(model)
        local = LocalAudit(LocalSettings(), {}, {line: {}}, statuses, None, counter)  # budget BUDGETS[0]
        for n in model.levels:
            got = res["levels"][str(n)]
            for budget in BUDGETS:
                probes = search.probes(n, budget, TOP_K)
                expected = [(leaf, ids) for leaf, ids in got[str(budget)]]
                assert [(p.leaf, [r.community for r in p.context.reports]) for p in probes] == expected, (
                    res["id"],
                    n,
                    budget,
                )
                # graphrag's figures: the report levels of the ids graphrag put in context
                deepest = Counter(
                    str(max(level_of[c] for c in ids)) if ids else "none" for _, ids in expected
                )
                by_level = Counter(str(level_of[c]) for _, ids in expected for c in ids)
                summary = summarise(probes)
                assert summary["deepest_level_in_context"] == dict(deepest)
                assert summary["reports_in_context_by_level"] == dict(by_level)
            assert len(got["what_if"]) == 3
            for ids, want in zip(_what_if_lists(model, n), got["what_if"]):
                ctx, _ = what_if(model, line, n, ids, BUDGETS[0], counter)
                assert [r.community for r in ctx.reports] == want, (res["id"], n, ids)
                if statuses[line] == EXACT:  # the JSON's what-if (levels --entities), named by titles
                    v = local_what_if(model, local, n, [names[e] for e in ids])["by_version"][line]
                    assert [r["community"] for r in v["reports"]] == want, (res["id"], n, "titles")


# counted differently by cl100k_base (35 tokens) and o200k_base (31)
PROBE_TEXT = "Scrooge's counting-house, 1843: «Bah! Humbug!» — 守财奴 Marley was dead: to begin with."
DRIFT_TOKENS = """
import sys
major = int(sys.argv[1])
from graphrag.config.create_graphrag_config import create_graphrag_config
from graphrag.query.factory import get_drift_search_engine
chat = {"type": "openai_chat", "model": "gpt-4o-mini", "api_key": "x"}
embed = {"type": "openai_embedding", "model": "text-embedding-3-small", "api_key": "x"}
if major == 1:  # one top-level encoding_model for every search
    settings = {"encoding_model": "o200k_base", "llm": chat, "embeddings": {"llm": embed}}
else:  # every model names o200k_base
    settings = {"models": {"default_chat_model": {**chat, "encoding_model": "o200k_base"},
                           "default_embedding_model": {**embed, "encoding_model": "o200k_base"}}}
config = create_graphrag_config(settings, sys.argv[3])
engine = get_drift_search_engine(config, [], [], [], [], None, "multiple paragraphs")
context = engine.context_builder.local_mixed_context  # what DRIFT's local steps pack with
if major == 1:
    from graphrag.query.llm.text_utils import num_tokens
    print(num_tokens(sys.argv[2], context.token_encoder))
else:
    print(context.tokenizer.num_tokens(sys.argv[2]))
"""


@pytest.mark.side
@pytest.mark.parametrize(
    "python",
    [
        p
        for p in side.side_params(min_major=1)
        if p.values[0] is None or side.major(side.versions(p.values[0])[0]) < 3
    ],
)
def test_drift_local_steps_count_with_graphrag_default(python, tmp_path):
    """graphrag 1.x/2.x's own DRIFT engine, built from settings that name o200k_base, packs its local steps
    with cl100k_base (get_drift_search_engine gives DRIFTSearchContextBuilder no tokenizer); the audit's
    ``drift_search.tokenizer`` for the same settings says so."""
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.results.audit import AuditOptions

    python = side.need(python, min_major=1)
    major = side.major(side.versions(python)[0])
    side.tiktoken_env(tmp_path, "o200k_base")
    env = side.tiktoken_env(tmp_path)  # one cache with both encodings
    proc = side.run_side(python, "-c", DRIFT_TOKENS, str(major), PROBE_TEXT, str(tmp_path), env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    graphrag_count = int(proc.stdout.split()[-1])
    settings = tmp_path / "settings.yaml"
    settings.write_text(
        "encoding_model: o200k_base\n"
        if major == 1
        else "models:\n  default_chat_model:\n    encoding_model: o200k_base\n"
    )
    model = load_index(ROOT / "fixtures" / "seed-v3")
    report = audit(dataclasses.replace(model, settings_file=settings), AuditOptions(level=1))
    entry = next(r for r in report.levels if r.community_level == 1)
    assert entry.local_search.get("tokenizer") in (None, "o200k_base")
    assert graphrag_count == get_token_counter(entry.drift_search["tokenizer"]).count(PROBE_TEXT)
    assert graphrag_count != get_token_counter("o200k_base").count(PROBE_TEXT)

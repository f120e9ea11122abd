"""Issue 18, the planner's part: several budgets at once, the three objectives, --allow-uncovered,
empty / unfittable plans, and the command's budget syntax.

Optimality is checked by brute force, independently of the code under test: every frontier of
small seeded random trees is enumerated (``exact_covers``, with report-less roots optionally kept
out), the ones meeting every budget are kept, and the expected plan is the one whose split set
is lexicographically greatest in the objective's priority order, restated here from docs/plan.md:

* granularity: (level, -entities, community);
* rank: (-highest rank among the reports strictly below, level, -entities, community);
* text-units: (-distinct text units of the community's entities, capped by its ancestors', level,
  -entities, community).
"""

from __future__ import annotations

import json
import random
from itertools import combinations
from pathlib import Path

import jsonschema
import pandas as pd
import pytest
from builders import write_v3
from conftest import shared_index
from test_plan import H1, ancestors, children_of, exact_covers, seeded_tree, tokens_of
from typer.testing import CliRunner

from graphrag_audit.analysis.plan import Budget, Budgets, Cost, PlanTree, plan_context, plan_report
from graphrag_audit.cli import app
from graphrag_audit.io.load import load_index

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "graphrag_audit" / "schema" / "plan.schema.json").read_text()
)
runner = CliRunner()


# ---------------------------------------------------------------------------------------
# a small index with ranks and text units
# ---------------------------------------------------------------------------------------
def build(tmp: Path, tree, reported, ranks, units):
    """``ranks``: community -> report rank; ``units``: entity -> list of text unit ids."""
    write_v3(tmp, tree, reports=[(c, tree[c][0]) for c in sorted(reported)])
    rep = pd.read_parquet(tmp / "community_reports.parquet")
    rep["rank"] = [float(ranks[c]) for c in rep["community"]]
    rep.to_parquet(tmp / "community_reports.parquet", index=False)
    ent = pd.read_parquet(tmp / "entities.parquet")
    ent["text_unit_ids"] = [list(units[e]) for e in ent["id"]]
    ent.to_parquet(tmp / "entities.parquet", index=False)
    return load_index(tmp)


def additive_cost(model, tree):
    """tokens = Σ (10 + entities) over the rows (monotone: a split never costs less)."""
    comm = model.reports["community"].to_numpy()

    def cost(rows):
        t = sum(tokens_of(tree, int(comm[r])) for r in rows)
        return Cost(t, (t + 39) // 40)

    return cost


def priority(tree, reported, ranks, units, objective):
    def n_ent(c):
        return len(tree[c][2])

    if objective == "granularity":
        return sorted(tree, key=lambda c: (tree[c][0], -n_ent(c), c))
    if objective == "rank":

        def below(c):
            desc, stack = [], children_of(tree, c)
            while stack:
                x = stack.pop()
                desc.append(x)
                stack.extend(children_of(tree, x))
            return max((ranks[d] for d in desc if d in reported), default=float("-inf"))

        return sorted(tree, key=lambda c: (-below(c), tree[c][0], -n_ent(c), c))

    def tu(c):
        return len({u for e in tree[c][2] for u in units[e]})

    def capped(c):
        return min(tu(x) for x in [c, *ancestors(tree, c)])

    return sorted(tree, key=lambda c: (-capped(c), tree[c][0], -n_ent(c), c))


def frontiers(tree, reported, allow_uncovered):
    """Every frontier: (members, kept-out roots). Kept out: report-less roots with a report below."""
    roots = [c for c, (_, p, _) in tree.items() if p == -1]

    def under(r):
        out, stack = {r}, children_of(tree, r)
        while stack:
            x = stack.pop()
            out.add(x)
            stack.extend(children_of(tree, x))
        return out

    bare = [r for r in roots if r not in reported and under(r) & set(reported)] if allow_uncovered else []
    out = []
    for k in range(len(bare) + 1):
        for kept in combinations(bare, k):
            gone = set().union(*[under(r) for r in kept]) if kept else set()
            sub = {c: v for c, v in tree.items() if c not in gone}
            for f in exact_covers(sub, set(reported) - gone):
                out.append((f, set(kept)))
    return out


def lex_best(tree, order, candidates, ok):
    best, best_vec = None, None
    for f, kept in candidates:
        if not ok(f):
            continue
        split = {a for m in f for a in ancestors(tree, m)}
        vec = tuple(1 if c in split else 0 for c in order)
        if best_vec is None or vec > best_vec:
            best, best_vec = f, vec
    return best


def random_case(rng):
    tree = seeded_tree(rng, max_nodes=11)
    roots = [c for c, (_, p, _) in tree.items() if p == -1]
    reported = {c for c in tree if rng.random() < 0.85 or (c not in roots and rng.random() < 0.5)}
    if not reported:
        reported = {max(tree)}
    ranks = {c: rng.choice([1.0, 2.5, 4.0, 7.0, 9.5]) for c in tree}
    pool = [f"t{i}" for i in range(6)]
    ents = sorted({e for (_, _, es) in tree.values() for e in es})
    units = {e: rng.sample(pool, rng.randint(1, 3)) for e in ents}
    return tree, reported, ranks, units


# ---------------------------------------------------------------------------------------
# brute force: each objective, each budget combination
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("objective", ["granularity", "rank", "text-units"])
def test_brute_force_optimum_per_objective(tmp_path, objective):
    """The plan is the brute-force lexicographic optimum in the objective's order, under reports,
    tokens, and reports + tokens (additive, monotone costs), with and without --allow-uncovered."""
    rng = random.Random({"granularity": 181, "rank": 182, "text-units": 183}[objective])
    checked = 0
    for i in range(25):
        tree, reported, ranks, units = random_case(rng)
        model = build(tmp_path / str(i), tree, reported, ranks, units)
        cost = additive_cost(model, tree)
        pt = PlanTree(model)
        order = priority(tree, reported, ranks, units, objective)
        tok = {c: tokens_of(tree, c) for c in tree}
        for allow in (False, True):
            cands = frontiers(tree, reported, allow)
            sizes = sorted({len(f) for f, _ in cands} - {0})
            totals = sorted({sum(tok[c] for c in f) for f, _ in cands} - {0})
            combos = [(k, None) for k in sizes] + [(None, t) for t in totals[:6]]
            combos += [(rng.choice(sizes), rng.choice(totals)) for _ in range(4)]
            combos.append((max(sizes[0] - 1, 1), None))  # nothing fits when the coarsest has > 1 report
            for k, t in combos:
                budgets = [b for b in (k and Budget("reports", k), t and Budget("tokens", t)) if b]
                got = plan_context(
                    model, Budgets(budgets), cost, tree=pt, objective=objective, allow_uncovered=allow
                )
                best = lex_best(
                    tree,
                    order,
                    cands,
                    lambda f: (k is None or len(f) <= k) and (t is None or sum(tok[c] for c in f) <= t),
                )
                assert (got.communities if got.fits else None) == best, (i, objective, allow, k, t, tree)
                if got.fits:
                    assert all(c["holds"] for c in got.checks)
                checked += 1
    assert checked > 300


def test_objectives_differ_on_a_hand_tree(tmp_path):
    """H1 (test_plan.py) with 4 reports: granularity splits 1 and 2 ({3,4,5,6}); rank prefers
    splitting 3, whose child 8 has the top rank (9): 1 -> {2,3,4}, then 3 -> {2,4,7,8};
    text-units prefers 1 (3 units) then 3 (3 units, capped by 1's) over 2 (1 unit)."""
    ranks = {c: 1.0 for c in H1}
    ranks[8] = 9.0
    units = {e: ["t1"] for e in "abcdefghij"}
    units["a"], units["d"] = ["t2"], ["t3"]
    model = build(tmp_path, H1, set(H1), ranks, units)
    got = {
        o: plan_context(model, Budget("reports", 4), objective=o).communities
        for o in ("granularity", "rank", "text-units")
    }
    assert got == {"granularity": [3, 4, 5, 6], "rank": [2, 4, 7, 8], "text-units": [2, 4, 7, 8]}


def test_coverage_with_other_budgets(tmp_path):
    """--coverage with --tokens: the plan meets both, or says why not (the finest plan the token
    budget allows misses the share)."""
    rng = random.Random(184)
    for i in range(25):
        tree, reported, ranks, units = random_case(rng)
        model = build(tmp_path / str(i), tree, reported, ranks, units)
        cost = additive_cost(model, tree)
        tok = {c: tokens_of(tree, c) for c in tree}
        total = sum(tok[c] for c in tree)
        for p in (0.5, 1.0):
            for t in (total // 3, total):
                got = plan_context(model, Budgets([Budget("tokens", t), Budget("coverage", p)]), cost)
                tokens_only = plan_context(model, Budget("tokens", t), cost)
                at_finest = got.entities_at_finest / got.entities_coverable if got.entities_coverable else 1
                if got.fits:
                    assert sum(tok[c] for c in got.communities) <= t and at_finest >= p - 1e-9
                    assert got.report_count <= tokens_only.report_count or not tokens_only.fits
                elif tokens_only.fits:  # the finest plan within the tokens misses the share
                    cov = tokens_only.entities_at_finest / max(tokens_only.entities_coverable, 1)
                    assert cov < p and got.why_not


# ---------------------------------------------------------------------------------------
# allow-uncovered, empty plans and the command
# ---------------------------------------------------------------------------------------
def test_gaps_v2_explains_and_allow_uncovered_counts():
    d = shared_index("real-b2b-gaps-v2")
    res = runner.invoke(app, ["plan", str(d), "--reports", "25", "-f", "json", "--tokenizer", "estimate"])
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert not doc["plan"]["fits"] and doc["plan"]["communities"]  # the coarsest frontier still shown
    level0 = next(o for o in doc["community_levels"] if o["community_level"] == 0 and o["behaviour"] == "v2")
    assert level0["fits"] and level0["reports"] <= 25
    assert any("--allow-uncovered" in w and "community_level 0" in w for w in doc["plan"]["why_not"])
    res = runner.invoke(
        app, ["plan", str(d), "--reports", "25", "-f", "json", "--tokenizer", "estimate", "--allow-uncovered"]
    )
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)["plan"]
    ent = plan["entities"]
    assert plan["fits"] and plan["reports"] <= 25 and plan["uncovered_roots"]
    assert ent["left_uncovered"] > 0 and ent["represented"] + ent["left_uncovered"] == ent["coverable"]
    assert ent["represented"] >= level0["entities_covered"]  # at least what level 0 covers, within 25
    res = runner.invoke(
        app, ["plan", str(d), "--reports", "25", "--no-costs", "--allow-uncovered", "--width", "200"]
    )
    assert res.exit_code == 0 and "coverable entities left uncovered" in res.stdout


def test_no_reports_is_exit_1_with_the_frontier_in_every_format(tmp_path):
    tree = {1: (0, -1, ["a", "b"]), 2: (1, 1, ["a"]), 3: (1, 1, ["b"])}
    write_v3(tmp_path / "i", tree, reports=[])
    for fmt in ("text", "json", "markdown"):
        res = runner.invoke(app, ["plan", str(tmp_path / "i"), "--reports", "5", "-f", fmt, "--no-costs"])
        assert res.exit_code == 1, (fmt, res.output)
        if fmt == "json":
            plan = json.loads(res.stdout)["plan"]
            assert plan["reports"] == 0 and not plan["usable"] and plan["why_not"]
        else:
            assert "NO REPORTS" in res.stdout and "holds no report" in res.stdout


def test_does_not_fit_shows_the_frontier_in_every_format(tmp_path):
    d = tmp_path / "i"
    write_v3(d, H1)
    for fmt in ("text", "json", "markdown"):
        res = runner.invoke(
            app,
            [
                "plan",
                str(d),
                "--reports",
                "1",
                "--tokens",
                "5k",
                "-f",
                fmt,
                "--tokenizer",
                "estimate",
                "--width",
                "200",
            ],
        )
        assert res.exit_code == 1, (fmt, res.output)
        if fmt == "json":
            doc = json.loads(res.stdout)
            jsonschema.validate(doc, SCHEMA)
            assert doc["plan"]["communities"] == [1, 2] and doc["plan"]["why_not"]
            assert [c["kind"] for c in doc["plan"]["checks"]] == ["reports", "tokens"]
            assert doc["plan"]["checks"][0]["holds"] is False and doc["plan"]["checks"][1]["holds"] is True
        else:
            assert (
                "DOES NOT FIT" in res.stdout
                and "1, 2" in res.stdout
                and "reports 2 <= 1: FAILS" in res.stdout.replace("&lt;", "<")
            )


@pytest.mark.parametrize(
    "args,kinds,values",
    [
        (["--reports", "40", "--tokens", "60k"], ["reports", "tokens"], [40, 60000]),
        (["--tokens", "1.5M", "--map-calls", "3"], ["tokens", "map_calls"], [1500000, 3]),
        (["--coverage", "80%", "--reports", "1_000"], ["reports", "coverage"], [1000, 0.8]),
        (["--coverage", "0.5"], ["coverage"], [0.5]),
    ],
)
def test_cli_budget_syntax(tmp_path, args, kinds, values):
    d = tmp_path / "i"
    write_v3(d, H1)
    res = runner.invoke(app, ["plan", str(d), *args, "-f", "json", "--tokenizer", "estimate"])
    assert res.exit_code in (0, 1), res.output
    doc = json.loads(res.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["schema_version"] == "1.1"
    assert [b["kind"] for b in doc["plan"]["budgets"]] == kinds
    assert [b["value"] for b in doc["plan"]["budgets"]] == values
    assert doc["plan"]["fits"] == all(c["holds"] for c in doc["plan"]["checks"])


@pytest.mark.parametrize(
    "args,message",
    [
        ([], "at least one budget"),
        (["--tokens", "60q"], "--tokens: expected a whole number"),
        (["--tokens", "1.5"], "--tokens: expected a whole number"),
        (["--reports", "0"], "--reports: budget reports must be a whole number >= 1"),
        (["--coverage", "120%"], "--coverage: coverage must be a share"),
        (["--coverage", "most"], "--coverage: expected a share"),
        (["--reports", "3", "--objective", "best"], "--objective: choose one of"),
        (
            ["--reports", "3", "--tokens", "9", "--no-costs"],
            "--no-costs cannot be combined with a tokens budget",
        ),
    ],
)
def test_cli_budget_errors_are_one_line_exit_2(tmp_path, args, message):
    d = tmp_path / "i"
    write_v3(d, H1)
    res = runner.invoke(app, ["plan", str(d), *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert "Traceback" not in res.output and len(res.output.strip().splitlines()) == 1


def test_real_index_objectives_and_combined_budgets():
    """On a real index, every objective's plan meets every budget it claims to and is a frontier."""
    from graphrag_audit.analysis.plan import ContextCost

    model = load_index(shared_index("real-insurance-v3"))
    cost = ContextCost(model, "estimate")
    pt = PlanTree(model)
    for objective in ("granularity", "rank", "text-units"):
        rep = plan_report(
            model, Budgets([Budget("reports", 80), Budget("tokens", 60000)]), cost, objective=objective
        )
        p = rep.plan
        assert p.fits and p.report_count <= 80 and p.cost.tokens <= 60000 and p.cost == cost(p.rows)
        assert p.entities_duplicated == 0 and p.entities_represented == p.entities_coverable
        members = set(p.communities)
        assert all(pt.parent[c] not in members for c in members)

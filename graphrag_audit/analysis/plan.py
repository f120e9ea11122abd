"""Plan a global-search context by budget: a cross-level **frontier** of community reports.

A *frontier* is a set of communities, possibly from several levels, that holds every
coverable clustered entity exactly once: it starts from the roots (level-0 communities) and is
refined by *splits*, each replacing one community by its children. The planner returns the
frontier that fits one budget — ``reports``, ``tokens``, ``map_calls`` (graphrag's exact
batching) or ``coverage`` — and is as fine as possible in the sense defined below.
docs/plan.md explains it with real output.

Split rules (what a frontier may hold)
--------------------------------------
* Only communities with a report can be sent. A community without a report is *expanded*:
  replaced by its children (recursively) at once. A childless community without a report
  cannot be represented: its entities are **lost** by the expansion.
* Splits never lose entities. Splitting ``c`` is *allowed* only when its expansion covers
  every entity of ``c`` (no childless report-less descendant on the way, children covering
  their parent). Otherwise the split is *blocked* and the plan discloses why. The only
  unavoidable losses are at the start: a root without a report whose expansion loses
  entities; those entities are *uncoverable* (no report can carry them) and are disclosed.
* A community is *final* when it cannot be split (no children, or its split is blocked): its
  entities are represented at their **finest available level**.

What is optimised
-----------------
Priority order π over communities: level ascending, then entities descending (the report
that aggregates the most entities first), then community number ascending. A plan's *split
set* S is the set of communities strictly above its members. The plan is the split set that
is **lexicographically greatest in π order** among the frontiers that fit the budget: no
community earlier in π is left unsplit to pay for a split later in π. In words: refine
level by level, the biggest reports of a level first; a split that does not fit is skipped and
smaller ones of the same or later levels are still tried, so refinement spreads over every
subtree before any subtree goes one level deeper.

Algorithm (``_greedy``): pop candidates from a heap in π order; apply the split when the
resulting frontier fits (cost computed exactly on the whole frontier), else skip it; repeat
passes until a pass changes nothing. For a budget whose cost never decreases when a
community is split (reports; tokens in practice) this *is* the lexicographic maximum
(proof sketch: feasible split sets are closed under undoing a split together with every
split below it, so deciding coordinates in π order with "take it if still feasible" is the
standard greedy for a lexicographic maximum over a hereditary family; the heap pops exactly
the π order restricted to communities whose parent is split). tests/test_plan.py checks it
against brute force over every frontier of small random trees. Map calls are not monotone
(graphrag shuffles the selected list, so a superset can pack into fewer batches); there the
result fits by construction, refines the baseline below and is *maximal* (no single allowed
split still fits) but lexicographic optimality is not claimed.

Baseline: ``LF(N)`` = the *level frontier* for ``community_level`` N: every allowed split of a
community at level < N applied (on a clean tree with every report it is graphrag's
frontier(N), what graphrag < 2.0 sends). The greedy starts from the finest ``LF(N)`` that fits,
so the plan is always at least as fine as the best whole level that fits the same budget:
every entity is represented at level >= min(N, its finest available level).

Coverage budget ``P``: the plan for the smallest report count K whose reports-budget plan
represents at least a share P of the coverable entities at their finest available level.

Costs are injected: ``cost(rows) -> Cost(tokens, map_calls)`` with ``rows`` the ascending
report-row positions (parquet order). :class:`ContextCost` is that function computed exactly
as the per-level audit does (``costs.level_costs``: same weights, shuffle and batching code).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from graphrag_audit.errors import IndexInputError
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.plan import (BUDGET_KINDS, Budget, Cost, CostFn, LevelOption, Plan, PlanIndex,
                                         PlanReport, SubtreeStatus)

__all__ = [
    "BUDGET_KINDS",
    "Budget",
    "Cost",
    "CostFn",
    "ContextCost",
    "Plan",
    "PlanTree",
    "SubtreeStatus",
    "plan_context",
    "level_frontier",
    "LevelOption",
    "PlanReport",
    "level_options",
    "dynamic_preview",
    "plan_report",
]

# ---------------------------------------------------------------------------------------
# the tree as the planner sees it
# ---------------------------------------------------------------------------------------
def _refuse(model: IndexModel, problem: str) -> IndexInputError:
    return IndexInputError(model.output_dir, f"cannot plan a frontier: {problem}")


def _preview(values, k: int = 8) -> str:
    values = list(values)
    s = ", ".join(str(v) for v in values[:k])
    return s + (f", … ({len(values)} in all)" if len(values) > k else "")


@dataclass(frozen=True)
class Expansion:
    members: tuple[int, ...]  # report-bearing communities replacing the expanded one
    lost: int  # entities of the expanded community that no member holds
    dead_ends: tuple[int, ...]  # childless communities without a report met on the way


class PlanTree:
    """The planner's state over ``model.forest``: entity sets, report rows and expansions.

    Refuses (``IndexInputError``) parent links that are not a forest (cycles, several
    parents) and entity sets that are not nested (an entity in two siblings or two roots, or in
    a child but not in its parent): on such data no frontier holds every entity exactly once.
    """

    def __init__(self, model: IndexModel):
        self.model = model
        forest = model.forest
        if forest.cycle_nodes:
            raise _refuse(model, f"parent links form a cycle through communities {_preview(forest.cycle_nodes)}")
        multi = forest.multi_parent
        if multi:
            raise _refuse(model, f"{len(multi)} communities sit under several parents ({_preview(multi)}); "
                                 "the parent links are not a forest")
        # the planner's dicts of the one forest (single parents, no cycles: checked above)
        nodes = forest.nodes.tolist()
        self.nodes = sorted(nodes)
        self.level = dict(zip(nodes, forest.level.tolist()))
        self.children = forest.children
        fp = forest.first_parent
        self.parent = dict(zip(nodes, np.where(fp >= 0, forest.nodes[fp], -1).tolist()))
        self.roots = forest.roots

        # entity membership (dense entity codes), restricted to communities of the tree
        m = model.members[["entity", "community"]]
        m = m[m["community"].isin(self.nodes)].drop_duplicates()
        codes, uniques = pd.factorize(m["entity"].to_numpy())
        self.entity_keys = uniques
        self.n_clustered = int(len(uniques))
        comm = m["community"].to_numpy(dtype=np.int64)
        self.entities: dict[int, np.ndarray] = {c: np.zeros(0, dtype=np.int64) for c in self.nodes}
        if len(comm):
            order = np.argsort(comm, kind="stable")
            cs, es = comm[order], codes[order]
            bounds = np.flatnonzero(np.diff(cs)) + 1
            for chunk_c, chunk_e in zip(np.split(cs, bounds), np.split(es, bounds)):
                self.entities[int(chunk_c[0])] = np.sort(chunk_e)
        self.n_entities = {c: int(len(v)) for c, v in self.entities.items()}
        self._check_nested(codes, comm)

        # report rows per community (several rows for one community are all sent)
        rc = model.reports["community"].to_numpy(dtype=np.int64)
        in_tree = np.isin(rc, np.asarray(self.nodes, dtype=np.int64))
        self.rows: dict[int, np.ndarray] = {}
        pos = np.flatnonzero(in_tree)
        for c, r in pd.Series(pos).groupby(rc[in_tree]):
            self.rows[int(c)] = np.sort(r.to_numpy(dtype=np.int64))
        self.orphan_rows = np.flatnonzero(~in_tree)  # reports naming no community of the tree
        self.orphan_communities = sorted({int(x) for x in rc[~in_tree]})
        self._expansions: dict[int, Expansion] = {}
        self._splits: dict[int, Expansion] = {}
        self._root: dict[int, int] | None = None

    def _check_nested(self, codes: np.ndarray, comm: np.ndarray) -> None:
        if not len(comm):
            return
        par = np.fromiter((self.parent[int(c)] for c in comm), dtype=np.int64, count=len(comm))
        pairs = pd.DataFrame({"e": codes, "c": comm, "p": par})
        dup = pairs.duplicated(["e", "p"], keep=False)
        if dup.any():
            bad = sorted(set(pairs.loc[dup, "c"].astype(int)))
            raise _refuse(self.model, f"entity sets are not nested: some entities sit in two sibling (or two root) "
                                      f"communities ({_preview(bad)})")
        have = set(zip(codes.tolist(), comm.tolist()))
        sub = pairs[pairs["p"] >= 0]
        missing = [int(c) for e, c, p in zip(sub["e"], sub["c"], sub["p"]) if (int(e), int(p)) not in have]
        if missing:
            raise _refuse(self.model, f"entity sets are not nested: {len(set(missing))} communities hold entities "
                                      f"their parent lacks ({_preview(sorted(set(missing)))})")

    # ---- facts --------------------------------------------------------------------------
    def has_report(self, c: int) -> bool:
        return c in self.rows

    def key(self, c: int) -> tuple[int, int, int]:
        """π: level ascending, entities descending, community number ascending."""
        return (self.level[c], -self.n_entities[c], c)

    def expand(self, c: int) -> Expansion:
        """``c`` itself when it has a report, else its children's expansions (recursively)."""
        hit = self._expansions.get(c)
        if hit is not None:
            return hit
        if self.has_report(c):
            out = Expansion((c,), 0, ())
        elif not self.children[c]:
            out = Expansion((), self.n_entities[c], (c,))
        else:
            out = self._combine(c)
        self._expansions[c] = out
        return out

    def _combine(self, c: int) -> Expansion:
        members: list[int] = []
        dead: list[int] = []
        stack = list(reversed(self.children[c]))
        while stack:  # iterative: deep report-less chains must not hit the recursion limit
            x = stack.pop()
            if self.has_report(x):
                members.append(x)
            elif not self.children[x]:
                dead.append(x)
            else:
                stack.extend(reversed(self.children[x]))
        lost = self.n_entities[c] - sum(self.n_entities[m] for m in members)
        return Expansion(tuple(members), int(lost), tuple(dead))

    def split(self, c: int) -> Expansion:
        """What replaces ``c`` when it is split (its children, expanded)."""
        hit = self._splits.get(c)
        if hit is None:
            hit = self._combine(c)
            self._splits[c] = hit
        return hit

    def splittable(self, c: int) -> bool:
        return bool(self.children[c]) and self.split(c).lost == 0

    def blocked_reason(self, c: int) -> str | None:
        """Why an allowed-looking split of ``c`` is refused, or None."""
        if not self.children[c]:
            return None
        sp = self.split(c)
        if sp.lost == 0:
            return None
        parts = []
        if sp.dead_ends:
            parts.append(f"communit{'y' if len(sp.dead_ends) == 1 else 'ies'} {_preview(sp.dead_ends, 4)} "
                         f"below it {'has' if len(sp.dead_ends) == 1 else 'have'} no report and no children")
        uncovered = sp.lost - sum(self.n_entities[d] for d in sp.dead_ends)
        if uncovered > 0:
            parts.append(f"its children leave {uncovered} of its entities in no child")
        return f"splitting it would drop {sp.lost} entities: " + "; ".join(parts)

    def start(self) -> tuple[list[int], list[int], int]:
        """(members, dead-end communities, uncoverable entities) of the coarsest frontier."""
        members: list[int] = []
        dead: list[int] = []
        lost = 0
        for r in self.roots:
            ex = self.expand(r)
            members.extend(ex.members)
            dead.extend(ex.dead_ends)
            lost += ex.lost
        return members, dead, lost

    def rows_of(self, members) -> np.ndarray:
        if not members:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate([self.rows[c] for c in members]))

    def n_rows(self, members) -> int:
        return int(sum(len(self.rows[c]) for c in members))

    def root_of(self, c: int) -> int:
        """``c``'s root (the forest's pointer doubling: no walk up the chain)."""
        if self._root is None:
            f = self.model.forest
            self._root = dict(zip(f.nodes.tolist(), f.nodes[f.root_code].tolist()))
        return self._root[c]


# ---------------------------------------------------------------------------------------
# frontier operations
# ---------------------------------------------------------------------------------------
def level_frontier(pt: PlanTree, n: int, start: list[int] | None = None) -> list[int]:
    """``LF(n)``: from the coarsest frontier, apply every allowed split of a community at level < n."""
    frontier = list(start if start is not None else pt.start()[0])
    out: list[int] = []
    stack = list(frontier)
    while stack:
        c = stack.pop()
        if pt.level[c] < n and pt.splittable(c):
            stack.extend(pt.split(c).members)
        else:
            out.append(c)
    return sorted(out)


Fits = Callable[[list[int]], bool]


def _greedy(pt: PlanTree, start: list[int], fits: Fits) -> list[int]:
    """Lexicographic greedy in π order (see the module docstring)."""
    frontier = set(start)
    changed = True
    while changed:
        changed = False
        heap = [(pt.key(c), c) for c in frontier if pt.splittable(c)]
        heapq.heapify(heap)
        while heap:
            _, c = heapq.heappop(heap)
            kids = pt.split(c).members
            trial = (frontier - {c}) | set(kids)
            if fits(sorted(trial)):
                frontier = trial
                changed = True
                for k in kids:
                    if pt.splittable(k):
                        heapq.heappush(heap, (pt.key(k), k))
    return sorted(frontier)


# ---------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------
def _fits_fn(pt: PlanTree, budget: Budget, cost: CostFn | None) -> Fits:
    cap = budget.value
    if budget.kind in ("reports", "coverage"):
        return lambda members: pt.n_rows(members) <= cap
    if cost is None:
        raise ValueError(f"a {budget.kind} budget needs a cost function (see ContextCost)")
    memo: dict[tuple, bool] = {}
    attr = "tokens" if budget.kind == "tokens" else "map_calls"

    def fits(members: list[int]) -> bool:
        key = tuple(members)
        hit = memo.get(key)
        if hit is None:
            hit = getattr(cost(pt.rows_of(members)), attr) <= cap
            memo[key] = hit
        return hit

    return fits


def _plan_members(pt: PlanTree, start: list[int], fits: Fits, max_level: int) -> tuple[list[int], int | None]:
    """(members, baseline level) for a ceiling budget."""
    baseline = None
    seed = start
    prev = None
    for n in range(0, max_level + 1):
        lf = level_frontier(pt, n, start)
        if lf == prev:  # nothing left to split at this level: same frontier, same verdict
            if baseline == n - 1:
                baseline = n
            continue
        prev = lf
        if fits(lf):
            baseline, seed = n, lf
    if baseline is None:
        return sorted(start), None
    return _greedy(pt, seed, fits), baseline


def _finest_entities(pt: PlanTree, members) -> int:
    return int(sum(pt.n_entities[c] for c in members if not pt.splittable(c)))


def plan_context(model: IndexModel, budget: Budget, cost: CostFn | None = None,
                 tree: PlanTree | None = None) -> Plan:
    """The frontier that fits ``budget`` (see the module docstring for what is optimised).

    ``cost`` is required for ``tokens`` / ``map_calls`` budgets and optional otherwise (it fills
    ``Plan.cost``). ``tree``: a :class:`PlanTree` of ``model`` to reuse.
    """
    pt = tree or PlanTree(model)
    start, dead, lost = pt.start()
    max_level = max(pt.level.values()) if pt.level else -1
    notes: list[str] = []
    if budget.kind == "coverage":
        members, baseline, fits_ok = _coverage_plan(pt, start, budget.value, max_level)
    else:
        fits = _fits_fn(pt, budget, cost)
        members, baseline = _plan_members(pt, start, fits, max_level)
        fits_ok = fits(members)
    if not fits_ok:
        notes.append("the budget is smaller than the coarsest possible frontier: the plan shown is that frontier "
                     "and does not fit")
    rows = pt.rows_of(members)
    plan_cost = cost(rows) if cost is not None else None
    return _assemble(pt, budget, members, rows, fits_ok, baseline, start, dead, lost, plan_cost, notes)


def _coverage_plan(pt: PlanTree, start: list[int], share: float, max_level: int):
    represented = sum(pt.n_entities[c] for c in start)
    total_rows = pt.n_rows(level_frontier(pt, max_level + 1, start))
    lo = pt.n_rows(start)
    best = None
    for k in range(lo, max(total_rows, lo) + 1):
        fits = _fits_fn(pt, Budget("reports", k), None)
        members, baseline = _plan_members(pt, start, fits, max_level)
        fin = _finest_entities(pt, members)
        if represented == 0 or fin >= share * represented - 1e-9:
            return members, baseline, True
        best = (members, baseline)
    if best is None:
        return sorted(start), None, represented == 0
    return best[0], best[1], False


def _assemble(pt: PlanTree, budget, members, rows, fits_ok, baseline, start, dead, lost, plan_cost, notes) -> Plan:
    levels: dict[str, int] = {}
    for c in members:
        levels[str(pt.level[c])] = levels.get(str(pt.level[c]), 0) + 1
    levels = dict(sorted(levels.items(), key=lambda kv: int(kv[0])))
    mult = np.zeros(pt.n_clustered, dtype=np.int64)
    for c in members:
        np.add.at(mult, pt.entities[c], 1)
    represented = int((mult > 0).sum())
    duplicated = int((mult > 1).sum())
    n_ent = np.array([pt.n_entities[c] for c in members], dtype=np.int64)
    epr = ({"min": int(n_ent.min()), "median": float(np.median(n_ent)), "max": int(n_ent.max())}
           if len(n_ent) else {"min": None, "median": None, "max": None})
    non_final = [pt.level[c] for c in members if pt.splittable(c)]
    max_level = max(pt.level.values()) if pt.level else 0
    complete = min(non_final) if non_final else max_level
    deepest = max((pt.level[c] for c in members), default=None)
    subtrees = _subtrees(pt, members, deepest)
    if not pt.model.has_reports_table:
        notes.append("the index has no community_reports table: global search has nothing to send")
    bare_roots = [r for r in pt.roots if not pt.has_report(r) and pt.children[r]]
    if bare_roots and pt.model.has_reports_table:
        notes.append(f"{len(bare_roots)} roots have no report ({_preview(bare_roots)}): their report-bearing "
                     f"descendants stand in, so the coarsest frontier already has {pt.n_rows(start)} reports")
    if len(pt.orphan_rows):
        notes.append(f"{len(pt.orphan_rows)} report row(s) name communities absent from the tree "
                     f"({_preview(pt.orphan_communities)}); no frontier can place them")
    if dead:
        notes.append(f"{lost} entities are uncoverable: communities {_preview(sorted(dead))} have no report and no "
                     "children, and no ancestor report exists")
    if duplicated:
        notes.append(f"{duplicated} entities are held by more than one plan member")
    return Plan(
        budget=budget, communities=sorted(members), rows=rows, fits=bool(fits_ok), levels=levels,
        entities_represented=represented, entities_at_finest=_finest_entities(pt, members),
        entities_clustered=pt.n_clustered, entities_uncoverable=int(lost), entities_duplicated=duplicated,
        entities_per_report=epr, baseline_level=baseline, complete_level=int(complete), deepest_level=deepest,
        subtrees=subtrees, start_reports=pt.n_rows(start), uncoverable_communities=sorted(dead),
        orphan_reports=[int(r) for r in pt.orphan_rows], orphan_communities=pt.orphan_communities,
        cost=plan_cost, notes=notes,
    )


def _reachable_depth(pt: PlanTree, root: int) -> int | None:
    """Deepest level of any community a frontier can hold in ``root``'s subtree."""
    stack = list(pt.expand(root).members)
    best = None
    while stack:
        c = stack.pop()
        best = pt.level[c] if best is None else max(best, pt.level[c])
        if pt.splittable(c):
            stack.extend(pt.split(c).members)
    return best


def _subtrees(pt: PlanTree, members, deepest) -> list[SubtreeStatus]:
    by_root: dict[int, list[int]] = {r: [] for r in pt.roots}
    for c in members:
        by_root.setdefault(pt.root_of(c), []).append(c)
    out = []
    for r, mem in by_root.items():
        lv: dict[str, int] = {}
        for c in mem:
            lv[str(pt.level[c])] = lv.get(str(pt.level[c]), 0) + 1
        blocked = [{"community": c, "level": pt.level[c], "reason": pt.blocked_reason(c)}
                   for c in sorted(mem) if pt.blocked_reason(c)]
        if any(pt.splittable(c) for c in mem):
            status = "budget"
        elif blocked:
            status = "blocked"
        else:
            status = "finest"
        fa = _reachable_depth(pt, r)
        out.append(SubtreeStatus(
            root=r, entities=pt.n_entities[r], reports=pt.n_rows(mem),
            levels=dict(sorted(lv.items(), key=lambda kv: int(kv[0]))), finest_available=fa, status=status,
            coarser_than_target=bool(fa is not None and deepest is not None and fa < deepest), blocked=blocked,
        ))
    out.sort(key=lambda s: (s.status != "blocked", not s.coarser_than_target, -s.entities, s.root))
    return out


# ---------------------------------------------------------------------------------------
# exact costs, the same way the per-level audit computes them
# ---------------------------------------------------------------------------------------
class ContextCost:
    """``cost(rows) -> Cost`` for the planner: :class:`graphrag_audit.analysis.costs.ContextCoster`, the same
    code the per-level audit uses (tests/test_plan.py checks it against ``level_costs``)."""

    def __init__(self, model: IndexModel, tokenizer: str = "cl100k_base", max_context_tokens: int = 12000):
        from graphrag_audit.analysis.costs import ContextCoster

        self.coster = ContextCoster(model, tokenizer, max_context_tokens)

    def batches(self, rows: np.ndarray):
        return self.coster.batches(rows)

    def __call__(self, rows: np.ndarray) -> Cost:
        b = self.coster.batches(rows)
        return Cost(int(b.total_tokens), int(b.n_batches))

    def selection(self, rows: np.ndarray, behaviour: str, community_level: int | None) -> Cost:
        """The cost of one behaviour's selection at N: graphrag < 2.0 (``v1``) weighs reports
        by its own per-level counts (``ContextCoster.selection_batches``)."""
        b = self.coster.selection_batches(rows, behaviour, community_level)
        return Cost(int(b.total_tokens), int(b.n_batches))

    @property
    def zero_weight_sets(self) -> int:
        return self.coster.zero_weight_sets

    @property
    def tokenizer(self) -> str:
        return str(self.coster.counter.name)

    @property
    def exact(self) -> bool:
        return bool(getattr(self.coster.counter, "exact", False))


# ---------------------------------------------------------------------------------------
# beside the plan: every community_level N, and dynamic selection
# ---------------------------------------------------------------------------------------
def level_options(model: IndexModel, budget: Budget, cost: CostFn | None = None,
                  tree: PlanTree | None = None, selections: dict | None = None) -> list[LevelOption]:
    """v2 and v1 at every N (0 … max, None) with reports, cost, entities covered, duplication."""
    from graphrag_audit.analysis.levels import TreeIndex, selection_stats
    from graphrag_audit.graphrag.selection import select_all

    pt = tree or PlanTree(model)
    ti = TreeIndex(model)
    sels = selections if selections is not None else select_all(model)
    final_ent = np.zeros(pt.n_clustered, dtype=bool)
    for c in pt.nodes:
        if pt.has_report(c) and not pt.splittable(c):
            final_ent[pt.entities[c]] = True
    rep_comm = model.reports["community"].to_numpy()
    out = []
    for n, by_b in sels.items():
        for b in ("v2", "v1"):
            sel = by_b[b]
            st = selection_stats(model, ti, sel)
            at_finest = np.zeros(pt.n_clustered, dtype=bool)
            for c in {int(x) for x in rep_comm[sel.rows]}:
                if c in pt.entities and not pt.splittable(c):
                    at_finest[pt.entities[c]] = True
            if cost is None:
                c_ = None
            elif hasattr(cost, "selection"):
                c_ = cost.selection(sel.rows, b, n)
            else:
                c_ = cost(sel.rows)
            out.append(LevelOption(
                community_level=n, behaviour=b, reports=st.count, community_ids=st.community_ids,
                entities_covered=st.entities_covered, entities_at_finest=int((at_finest & final_ent).sum()),
                ancestors_sent=st.ancestors_sent, cost=c_, fits=_option_fits(budget, st.count, c_,
                                                                             int((at_finest & final_ent).sum()),
                                                                             st.entities_covered),
            ))
    return out


def _option_fits(budget: Budget, reports: int, cost: Cost | None, at_finest: int, covered: int) -> bool | None:
    if budget.kind == "reports":
        return reports <= budget.value
    if budget.kind == "coverage":
        return bool(covered) and at_finest >= budget.value * covered - 1e-9
    if cost is None:
        return None
    return (cost.tokens if budget.kind == "tokens" else cost.map_calls) <= budget.value


def dynamic_preview(model: IndexModel, num_repeats: int = 1, selections: dict | None = None) -> list[dict]:
    """Dynamic community selection at each cap N (docs/graphrag-semantics.md#dynamic): candidate pool (reports with
    level <= N, no join), level-0 reports it starts from, and the bounds on rating calls
    ``[num_repeats × level-0 reports, num_repeats × candidates]``."""
    from graphrag_audit.graphrag.selection import select_all

    sels = selections if selections is not None else select_all(model)
    lv = model.reports["level"].to_numpy()
    out = []
    for n, by_b in sels.items():
        rows = by_b["dynamic"].rows
        l0 = int((lv[rows] == 0).sum())
        out.append({
            "community_level": n,
            "candidates": int(len(rows)),
            "level0_reports": l0,
            "rating_calls": {"min": num_repeats * l0, "max": num_repeats * int(len(rows))},
            "raises_keyerror": bool(len(rows)) and l0 == 0,
        })
    return out


def plan_report(model: IndexModel, budget: Budget, cost: CostFn | None = None, *, num_repeats: int = 1,
                settings: dict | None = None) -> PlanReport:
    from graphrag_audit.graphrag.selection import select_all

    pt = PlanTree(model)
    plan = plan_context(model, budget, cost, tree=pt)
    sels = select_all(model)
    index = PlanIndex(path=str(model.path), output_dir=str(model.output_dir), generation=model.generation.label,
                      max_level=model.max_level, notes=tuple(model.notes))
    return PlanReport(index=index, plan=plan, options=level_options(model, budget, cost, tree=pt, selections=sels),
                      dynamic=dynamic_preview(model, num_repeats, selections=sels), settings=dict(settings or {}))

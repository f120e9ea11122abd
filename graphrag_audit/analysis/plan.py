"""Plan a global-search context by budget: a cross-level frontier of community reports holding every
coverable entity once, refined from the roots by splits (a community replaced by its children's
reports), greatest in the objective's priority order π under every ceiling (docs/plan.md)."""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from graphrag_audit.analysis.costs import ContextCoster, community_text_unit_counts
from graphrag_audit.errors import IndexInputError
from graphrag_audit.findings import counted
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.plan import (  # noqa: F401 (Budget, Cost, OBJECTIVES: re-exported)
    OBJECTIVES,
    Budget,
    Budgets,
    Cost,
    CostFn,
    LevelOption,
    Plan,
    PlanIndex,
    PlanReport,
    SubtreeStatus,
)

_INF = float("inf")


def _refuse(model: IndexModel, problem: str) -> IndexInputError:
    return IndexInputError(model.output_dir, f"cannot plan a frontier: {problem}")


def _preview(values, k: int = 8) -> str:
    values = list(values)
    s = ", ".join(str(v) for v in values[:k])
    return s + (f", … ({len(values)} in all)" if len(values) > k else "")


def _runs(keys: np.ndarray, values: np.ndarray) -> dict[int, np.ndarray]:
    """{key: its slice of ``values``} for each run of equal ``keys`` (sorted by key)."""
    bounds = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    return dict(zip(keys[np.r_[0, bounds]].tolist(), np.split(values, bounds))) if len(keys) else {}


@dataclass(frozen=True)
class Expansion:
    members: tuple[int, ...]  # report-bearing communities replacing the expanded one
    lost: int  # entities of the expanded community that no member holds
    dead_ends: tuple[int, ...]  # childless communities without a report met on the way


class PlanTree:
    """The planner's view of ``model.forest``: entity sets, report rows and expansions. Refuses parent
    links that are not a forest and entity sets that are not nested (``IndexInputError``)."""

    def __init__(self, model: IndexModel):
        self.model = model
        forest = model.forest
        if forest.cycle_nodes:
            raise _refuse(
                model, f"parent links form a cycle through communities {_preview(forest.cycle_nodes)}"
            )
        if multi := forest.multi_parent:
            raise _refuse(
                model,
                f"{len(multi)} communities sit under several parents ({_preview(multi)}); "
                "the parent links are not a forest",
            )
        nodes = forest.nodes.tolist()
        self.nodes = sorted(nodes)
        self.level = dict(zip(nodes, forest.level.tolist()))
        self.children, self.roots = forest.children, forest.roots
        fp = forest.first_parent
        self.parent = dict(zip(nodes, np.where(fp >= 0, forest.nodes[fp], -1).tolist()))
        self.root = dict(zip(nodes, forest.nodes[forest.root_code].tolist()))

        # the distinct membership pairs of the tree's communities, entities as pd.factorize codes
        m = model.members[["entity", "community"]]
        m = m[m["community"].isin(self.nodes)].drop_duplicates()
        codes = np.asarray(pd.factorize(m["entity"].to_numpy())[0], dtype=np.int64)
        comm = m["community"].to_numpy(dtype=np.int64)
        self.n_clustered = int(codes.max()) + 1 if len(codes) else 0
        order = np.lexsort((codes, comm))  # by community, entity codes ascending within one
        self.entities = {c: np.zeros(0, dtype=np.int64) for c in self.nodes}
        self.entities.update(_runs(comm[order], codes[order]))
        self.n_entities = {c: int(len(v)) for c, v in self.entities.items()}

        # nested entity sets: no entity in two siblings (or two roots), none missing from the parent
        nodes_a = np.asarray(self.nodes, dtype=np.int64)
        parent = np.fromiter((self.parent[c] for c in self.nodes), dtype=np.int64, count=len(nodes_a))
        pairs = pd.DataFrame({"e": codes, "c": comm, "p": parent[np.searchsorted(nodes_a, comm)]})
        dup = pairs.duplicated(["e", "p"], keep=False)  # (a root's parent is -1)
        if dup.any():
            bad = sorted(set(pairs.loc[dup, "c"].astype(int)))
            raise _refuse(
                model,
                f"entity sets are not nested: some entities sit in two sibling (or two root) "
                f"communities ({_preview(bad)})",
            )
        inner = pairs[pairs["p"] >= 0]
        lacking = ~pd.MultiIndex.from_frame(inner[["e", "p"]]).isin(
            pd.MultiIndex.from_frame(pairs[["e", "c"]])
        )
        if lacking.any():
            missing = sorted({int(c) for c in inner["c"].to_numpy()[lacking]})
            raise _refuse(
                model,
                f"entity sets are not nested: {len(missing)} communities hold entities "
                f"their parent lacks ({_preview(missing)})",
            )

        # report rows per community (several rows for one community are all sent)
        rc = model.reports["community"].to_numpy(dtype=np.int64)
        in_tree = np.isin(rc, self.nodes)
        pos = np.flatnonzero(in_tree)
        order = np.argsort(rc[pos], kind="stable")  # positions stay ascending within a community
        self.rows = _runs(rc[pos][order], pos[order])
        self.orphan_rows = np.flatnonzero(~in_tree)  # reports naming no community of the tree
        self.orphan_communities = sorted({int(x) for x in rc[~in_tree]})
        self._splits: dict[int, Expansion] = {}

    def split(self, c: int) -> Expansion:
        """What replaces ``c`` when it is split: its children, each expanded."""
        if c not in self._splits:
            members: list[int] = []
            dead: list[int] = []
            stack = list(reversed(self.children[c]))
            while stack:  # iterative: deep report-less chains must not hit the recursion limit
                x = stack.pop()
                if x in self.rows:
                    members.append(x)
                elif not self.children[x]:
                    dead.append(x)
                else:
                    stack.extend(reversed(self.children[x]))
            lost = self.n_entities[c] - sum(self.n_entities[m] for m in members)
            self._splits[c] = Expansion(tuple(members), int(lost), tuple(dead))
        return self._splits[c]

    def expand(self, c: int) -> Expansion:
        """``c`` itself when it has a report, else its children's expansions (recursively)."""
        if c in self.rows:
            return Expansion((c,), 0, ())
        if not self.children[c]:
            return Expansion((), self.n_entities[c], (c,))
        return self.split(c)

    def splittable(self, c: int) -> bool:
        return bool(self.children[c]) and self.split(c).lost == 0

    def blocked_reason(self, c: int) -> str | None:
        """Why a split of ``c`` is refused, or None."""
        if not self.children[c] or not (sp := self.split(c)).lost:
            return None
        parts = []
        if sp.dead_ends:
            one = len(sp.dead_ends) == 1
            parts.append(
                f"communit{'y' if one else 'ies'} {_preview(sp.dead_ends, 4)} "
                f"below it {'has' if one else 'have'} no report and no children"
            )
        uncovered = sp.lost - sum(self.n_entities[d] for d in sp.dead_ends)
        if uncovered > 0:
            parts.append(f"its children leave {uncovered} of its entities in no child")
        return f"splitting it would drop {sp.lost:,} entities: " + "; ".join(parts)

    def rows_of(self, members) -> np.ndarray:
        if not members:
            return np.zeros(0, dtype=np.int64)
        return np.sort(np.concatenate([self.rows[c] for c in members]))

    def bare_roots(self) -> list[int]:
        """Roots without a report that have children."""
        return [r for r in self.roots if r not in self.rows and self.children[r]]


class _Solver:
    """The state shared by every probe of one :func:`plan_context` call. Members are report-bearing
    communities plus, with ``allow_uncovered``, *placeholders* (report-less roots kept out). Additive
    meters: report rows and a per-row token estimate (the surrogate for the cost ceilings)."""

    def __init__(
        self, pt: PlanTree, objective: str, allow_uncovered: bool, budgets: Budgets, cost: CostFn | None
    ):
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
        self.pt = pt
        self.objective = objective
        self.allow_uncovered = bool(allow_uncovered)
        expansions = [pt.expand(r) for r in pt.roots]  # the coarsest frontier
        start = [c for ex in expansions for c in ex.members]
        self.dead = [c for ex in expansions for c in ex.dead_ends]
        self.lost = sum(ex.lost for ex in expansions)
        self.placeholders: set[int] = set()
        if allow_uncovered:
            self.placeholders = {r for r in pt.roots if r not in pt.rows and pt.expand(r).members}
            start = [c for c in start if pt.root[c] not in self.placeholders] + sorted(self.placeholders)
        self.start = sorted(start)
        self.n_rows = {c: len(r) for c, r in pt.rows.items()}
        self.budgets, self.cost = budgets, cost
        self.exact = budgets.needs_cost
        self.tok = {}
        if self.exact and cost is not None:
            if isinstance(cost, ContextCost) and cost.additive:
                row_tokens = cost.row_tokens()
            else:
                n = len(pt.model.reports)
                row_tokens = np.array([int(cost(np.array([r])).tokens) for r in range(n)], dtype=np.int64)
            self.tok = {c: int(row_tokens[r].sum()) for c, r in pt.rows.items()}
        self._fits: dict[tuple, bool] = {}
        self.key = self._keys()
        self._moves: dict[int, tuple | None] = {}

    def can_split(self, c: int) -> bool:
        return c in self.placeholders or self.pt.splittable(c)

    def kids(self, c: int) -> tuple[int, ...]:
        return self.pt.expand(c).members if c in self.placeholders else self.pt.split(c).members

    def rows(self, frontier) -> int:
        return sum(self.n_rows.get(c, 0) for c in frontier)

    def tokens(self, frontier) -> int:
        return sum(self.tok.get(c, 0) for c in frontier)

    def move(self, c: int) -> tuple | None:
        """None when ``c`` cannot be split, else (its π key, c, its kids, the rows and the estimated
        tokens splitting it adds): a heap entry (π keys are unique), worked out once per community."""
        if c not in self._moves:
            m = None
            if self.can_split(c):
                kids = self.kids(c)
                d_rows = self.rows(kids) - self.rows((c,))
                m = (self.key(c), c, kids, d_rows, self.tokens(kids) - self.tokens((c,)))
            self._moves[c] = m
        return self._moves[c]

    def _keys(self):
        """π for the objective: a community before its children, so the heap pops exactly π
        restricted to the communities whose parent is split."""
        pt = self.pt
        if self.objective == "granularity":
            return lambda c: (pt.level[c], -pt.n_entities[c], c)
        order, stack = [], list(pt.roots)  # top-down
        while stack:
            order.append(c := stack.pop())
            stack.extend(pt.children[c])
        weight: dict[int, float] = {}
        if self.objective == "rank":  # the highest graphrag rank strictly below (-inf: none)
            sub = {}
            if pt.rows:
                ranks = pt.model.reports["rank"].to_numpy(dtype=np.float64)
                sub = {c: float(np.fmax.reduce(ranks[r], initial=-_INF)) for c, r in pt.rows.items()}
            for c in reversed(order):
                weight[c] = max((sub[k] for k in pt.children[c]), default=-_INF)
                sub[c] = max(weight[c], sub.get(c, -_INF))
        else:  # graphrag's occurrence count (distinct text units), capped by the parent's; 0 without
            counts = community_text_unit_counts(pt.model)
            raw = {} if counts is None else {int(k): float(v) for k, v in counts.items()}
            for c in order:
                p = pt.parent[c]
                weight[c] = raw.get(c, 0.0) if p == -1 else min(raw.get(c, 0.0), weight[p])
        return lambda c: (-weight[c], pt.level[c], -pt.n_entities[c], c)

    def greedy(self, start, max_rows: float, max_tok: float):
        """The lexicographic greedy in π order under additive caps on rows and estimated tokens:
        (frontier, (lo, hi)), where every token cap in [lo, hi] gives the same frontier (the binary
        search jumps over caps that change nothing)."""
        frontier = set(start)
        rows, tok = self.rows(frontier), self.tokens(frontier)
        acc_hi, rej_lo = tok, _INF
        changed = True
        while changed:
            heap = [m for c in frontier if (m := self.move(c)) is not None]
            heapq.heapify(heap)
            decreased = False
            while heap:
                _, c, kids, d_rows, d_tok = heapq.heappop(heap)
                if c not in frontier:
                    continue
                new_rows, new_tok = rows + d_rows, tok + d_tok
                if new_rows <= max_rows and new_tok <= max_tok:
                    decreased |= new_rows < rows or new_tok < tok
                    frontier.discard(c)
                    frontier.update(kids)
                    rows, tok = new_rows, new_tok
                    acc_hi = max(acc_hi, new_tok)
                    for k in kids:
                        if (mk := self.move(k)) is not None:
                            heapq.heappush(heap, mk)
                elif new_rows <= max_rows:
                    rej_lo = min(rej_lo, new_tok)
            # a pass that only grew the totals cannot make a refused split fit: done
            changed = decreased and any(self.move(c) is not None for c in frontier)
        return sorted(frontier), (acc_hi, rej_lo - 1)

    def fits(self, frontier, max_rows: float) -> bool:
        """The row cap, and the exact token / map-call ceilings on the whole frontier (memoised)."""
        if self.rows(frontier) > max_rows:
            return False
        if not self.exact:
            return True
        key = tuple(frontier)
        if key not in self._fits:
            assert self.cost is not None  # exact checks have a cost function (plan_context refuses otherwise)
            c = self.cost(self.pt.rows_of(self.members_only(frontier)))
            t, m = self.budgets.get("tokens"), self.budgets.get("map_calls")
            self._fits[key] = (t is None or c.tokens <= t) and (m is None or c.map_calls <= m)
        return self._fits[key]

    def members_only(self, frontier) -> list[int]:
        return sorted(c for c in frontier if c not in self.placeholders)

    def at_finest(self, frontier) -> int:
        pt, out = self.pt, self.placeholders
        return int(sum(pt.n_entities[c] for c in frontier if c not in out and not pt.splittable(c)))


def _solve_ceilings(solver: _Solver, start, max_rows: float) -> list[int]:
    """The plan under the row cap and the exact ceilings: one sweep for rows only, else a binary
    search over the estimated-token cap λ for the largest λ whose frontier fits exactly."""
    full, (a, _) = solver.greedy(start, max_rows, _INF)
    if not solver.exact or solver.fits(full, max_rows):
        return full
    start = sorted(start)
    if not solver.fits(start, max_rows):
        return start
    lo, hi, best = solver.tokens(start) - 1, a, start
    t = solver.budgets.get("tokens")
    guess = t if t is not None and lo < t < hi else None
    while lo + 1 < hi:  # (each probe at least halves (lo, hi))
        mid = guess if guess is not None else (lo + hi) // 2
        guess = None
        f, (acc, rej) = solver.greedy(start, max_rows, mid)
        if solver.fits(f, max_rows):
            lo, best = max(mid, min(rej, hi - 1)), f
        else:
            hi = min(mid, acc)
    return best


def _level_frontier(solver: _Solver, n: int) -> list[int]:
    """``LF(n)``: from the coarsest frontier, apply every allowed split of a community at level < n."""
    out, stack = [], list(solver.start)
    while stack:
        c = stack.pop()
        if solver.pt.level[c] < n and solver.can_split(c):
            stack.extend(solver.kids(c))
        else:
            out.append(c)
    return sorted(out)


def _baseline(solver: _Solver, max_rows: float, max_level: int):
    """(finest N whose level frontier LF(N) fits, LF(N)) by binary search over N, or (None, None)."""
    lo, hi, found = 0, max(max_level, 0), _level_frontier(solver, 0)
    if not solver.fits(found, max_rows):
        return None, None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        f = _level_frontier(solver, mid)
        if solver.fits(f, max_rows):
            lo, found = mid, f
        else:
            hi = mid - 1
    return lo, found


def plan_context(
    model: IndexModel,
    budget,
    cost: CostFn | None = None,
    tree: PlanTree | None = None,
    *,
    objective: str = "granularity",
    allow_uncovered: bool = False,
) -> Plan:
    """The frontier that fits every budget of ``budget`` (a :class:`Budget` or :class:`Budgets`).
    ``cost`` is required for ``tokens`` / ``map_calls`` budgets (else it only fills ``Plan.cost``);
    ``tree``: a :class:`PlanTree` of ``model`` to reuse."""
    budgets = Budgets.of(budget)
    if budgets.needs_cost and cost is None:
        raise ValueError(f"a {budgets.kind.replace('_', ' ')} budget needs a cost function (see ContextCost)")
    pt = tree or PlanTree(model)
    solver = _Solver(pt, objective, allow_uncovered, budgets, cost)
    max_level = max(pt.level.values()) if pt.level else -1
    r_cap = budgets.get("reports")
    max_rows = _INF if r_cap is None else int(r_cap)
    share = budgets.get("coverage")
    coverable = pt.n_clustered - solver.lost

    def meets(f) -> bool:
        return share is None or coverable == 0 or solver.at_finest(f) >= share * coverable - 1e-9

    if share is None:
        baseline, seed = _baseline(solver, max_rows, max_level)
        start = seed if (objective == "granularity" and seed is not None) else solver.start
        frontier = _solve_ceilings(solver, start, max_rows)
    else:
        # the plan of the smallest report cap (binary search) meeting the share, else the finest allowed
        frontier = _solve_ceilings(solver, solver.start, max_rows)
        lo, hi = solver.rows(solver.start) - 1, solver.rows(frontier)  # lo: no plan fits
        while meets(frontier) and lo + 1 < hi:
            mid = (lo + hi) // 2
            f = _solve_ceilings(solver, solver.start, mid)
            if meets(f) and solver.fits(f, mid):
                hi, frontier = min(mid, solver.rows(f)), f
            else:
                lo = mid
        baseline, _ = _baseline(solver, min(max_rows, solver.rows(frontier)), max_level)
    fits_ok = solver.fits(frontier, max_rows) and meets(frontier)
    return _assemble(solver, budgets, frontier, fits_ok, baseline, coverable)


def _level_counts(pt: PlanTree, communities) -> dict[str, int]:
    return {str(k): n for k, n in sorted(Counter(pt.level[c] for c in communities).items())}


def _assemble(solver: _Solver, budgets: Budgets, frontier, fits_ok, baseline, coverable: int) -> Plan:
    pt, dead, lost = solver.pt, solver.dead, solver.lost
    members = solver.members_only(frontier)
    rows = pt.rows_of(members)
    plan_cost = None if solver.cost is None else solver.cost(rows)
    has_table = pt.model.has_reports_table
    mult = np.zeros(pt.n_clustered, dtype=np.int64)
    if members:
        np.add.at(mult, np.concatenate([pt.entities[c] for c in members]), 1)
    duplicated = int((mult > 1).sum())
    n_ent = np.array([pt.n_entities[c] for c in members], dtype=np.int64)
    epr = (
        {"min": int(n_ent.min()), "median": float(np.median(n_ent)), "max": int(n_ent.max())}
        if len(n_ent)
        else {"min": None, "median": None, "max": None}
    )
    non_final = [pt.level[c] for c in members if pt.splittable(c)]
    complete = min(non_final) if non_final else max(pt.level.values(), default=0)
    deepest = max((pt.level[c] for c in members), default=None)
    kept_out = sorted(c for c in frontier if c in solver.placeholders)
    left_uncovered = int(sum(pt.n_entities[m] for r in kept_out for m in pt.expand(r).members))
    start_rows = solver.rows(solver.start)
    bare_roots = pt.bare_roots()
    notes: list[str] = []
    if not has_table:
        notes.append("the index has no community_reports table: global search has nothing to send")
    if bare_roots and has_table and not solver.placeholders:
        notes.append(
            f"{counted(len(bare_roots), 'root has', 'roots have')} no report ({_preview(bare_roots)}): their "
            f"report-bearing descendants stand in, so the coarsest frontier already has {start_rows:,} reports"
        )
    if kept_out:
        notes.append(
            f"{left_uncovered:,} coverable entities are left uncovered (--allow-uncovered): report-less "
            f"roots {_preview(kept_out)} are kept out instead of sending their descendants' reports"
        )
    if len(pt.orphan_rows):
        notes.append(
            f"{len(pt.orphan_rows):,} report row(s) name communities absent from the tree "
            f"({_preview(pt.orphan_communities)}); no frontier can place them"
        )
    if dead:
        notes.append(
            f"{lost:,} entities are uncoverable: communities {_preview(sorted(dead))} have no report and no "
            "children, and no ancestor report exists"
        )
    if duplicated:
        notes.append(f"{duplicated:,} entities are held by more than one plan member")
    at_finest = solver.at_finest(frontier)
    checks = _checks(budgets, len(rows), plan_cost, at_finest, coverable)
    why = []
    if not len(rows):
        reason = (
            "the index has no community_reports table"
            if not has_table
            else "no report names a community of the tree"
            if not pt.rows
            else "every report-bearing community is kept out"
        )
        why.append(f"the plan holds no report: global search would send nothing ({reason})")
    if not fits_ok:
        failed = [c for c in checks if c["holds"] is False]
        what = "every coverable entity once" + (", report-less roots kept out" if solver.placeholders else "")
        for c in failed:
            if c["kind"] == "coverage":
                why.append(
                    f"coverage {c['actual']:.1%} < {c['value']:.0%}: no plan within the other budgets "
                    "holds that share of the coverable entities at their finest available level"
                )
            else:
                why.append(
                    f"{c['kind'].replace('_', ' ')} {c['actual']:,} > {c['value']:,}: this is the coarsest "
                    f"frontier ({what}), and it already exceeds the budget"
                )
        notes.append(
            "no plan meets every budget: the plan shown is the finest the other budgets allow"
            if any(c["kind"] == "coverage" for c in failed)
            else "the budget is smaller than the coarsest possible frontier: the plan shown is that "
            "frontier and does not fit"
        )
    return Plan(
        budget=budgets,
        communities=sorted(members),
        rows=rows,
        fits=bool(fits_ok),
        levels=_level_counts(pt, members),
        entities_represented=int((mult > 0).sum()),
        entities_at_finest=at_finest,
        entities_clustered=pt.n_clustered,
        entities_uncoverable=int(lost),
        entities_duplicated=duplicated,
        entities_per_report=epr,
        baseline_level=baseline,
        complete_level=int(complete),
        deepest_level=deepest,
        subtrees=_subtrees(pt, members, deepest, set(kept_out)),
        start_reports=start_rows,
        uncoverable_communities=sorted(dead),
        orphan_reports=[int(r) for r in pt.orphan_rows],
        orphan_communities=pt.orphan_communities,
        cost=plan_cost,
        notes=notes,
        objective=solver.objective,
        allow_uncovered=solver.allow_uncovered,
        entities_coverable=int(coverable),
        entities_left_uncovered=left_uncovered,
        uncovered_roots=kept_out,
        checks=checks,
        why_not=why,
    )


def _measure(kind: str, reports: int, cost: Cost | None) -> int | None:
    """What a ceiling budget of ``kind`` measures (None: a cost without costs)."""
    if kind == "reports":
        return reports
    return None if cost is None else int(cost.tokens if kind == "tokens" else cost.map_calls)


def _checks(budgets: Budgets, reports: int, cost: Cost | None, at_finest: int, coverable: int) -> list[dict]:
    out = []
    for b in budgets:
        value = b.to_dict()["value"]
        actual: float | None
        if b.kind == "coverage":
            actual = at_finest / coverable if coverable else 1.0
            holds: bool | None = actual >= value - 1e-9
        else:
            actual = _measure(b.kind, reports, cost)
            holds = None if actual is None else actual <= value
        out.append({"kind": b.kind, "value": value, "actual": actual, "holds": holds})
    return out


def _subtrees(pt: PlanTree, members, deepest, kept_out) -> list[SubtreeStatus]:
    by_root: dict[int, list[int]] = {r: [] for r in pt.roots}
    for c in members:
        by_root.setdefault(pt.root[c], []).append(c)
    out = []
    for r, mem in by_root.items():
        blocked = [
            {"community": c, "level": pt.level[c], "reason": reason}
            for c in sorted(mem)
            if (reason := pt.blocked_reason(c))
        ]
        if r in kept_out:
            status = "uncovered"
        elif any(pt.splittable(c) for c in mem):
            status = "budget"
        else:
            status = "blocked" if blocked else "finest"
        stack, fa = list(pt.expand(r).members), None  # fa: the deepest level a frontier can reach here
        while stack:
            c = stack.pop()
            fa = pt.level[c] if fa is None else max(fa, pt.level[c])
            if pt.splittable(c):
                stack.extend(pt.split(c).members)
        out.append(
            SubtreeStatus(
                root=r,
                entities=pt.n_entities[r],
                reports=int(sum(len(pt.rows[c]) for c in mem)),
                levels=_level_counts(pt, mem),
                finest_available=fa,
                status=status,
                coarser_than_target=bool(fa is not None and deepest is not None and fa < deepest),
                blocked=blocked,
            )
        )
    out.sort(key=lambda s: (s.status != "blocked", not s.coarser_than_target, -s.entities, s.root))
    return out


class ContextCost(ContextCoster):
    """``cost(rows) -> Cost`` for the planner: the per-level audit's own :class:`ContextCoster`
    (tests/analysis/test_plan.py checks it against ``level_costs``)."""

    def __call__(self, rows: np.ndarray) -> Cost:
        b = self.batches(rows)
        return Cost(int(b.total_tokens), int(b.n_batches))

    def selection(self, rows: np.ndarray, behaviour: str, community_level: int | None) -> Cost:
        """The cost of one behaviour's selection at N (graphrag < 2.0 weighs by its own counts)."""
        b = self.selection_batches(rows, behaviour, community_level)
        return Cost(int(b.total_tokens), int(b.n_batches))

    def row_tokens(self) -> np.ndarray:
        """Each report row's own tokens without the occurrence-weight cell (0 for rows graphrag's rank
        filter drops), for an additive tokenizer: the planner's estimate, checked on whole frontiers."""
        from graphrag_audit.graphrag.context import row_measures

        keep = np.flatnonzero(self.ranks >= 0)
        m = row_measures(
            self.counter, self.comm, self.titles, self.contents, self.ranks, with_weight=False, rows=keep
        )
        out = np.zeros(len(m), dtype=np.int64)
        out[keep] = self.counter.tokens_from_measure(m[keep])
        return out

    @property
    def tokenizer(self) -> str:
        return str(self.counter.name)

    @property
    def exact(self) -> bool:
        return bool(getattr(self.counter, "exact", False))


def level_options(
    model: IndexModel, budget, cost: CostFn | None, pt: PlanTree, sels: dict
) -> list[LevelOption]:
    """v2 and v1 at every N (0 … max, None) with reports, cost, entities covered, duplication."""
    from graphrag_audit.analysis.levels import TreeIndex, selection_stats
    from graphrag_audit.graphrag.compat import behaviour_outcomes

    ti = TreeIndex(model)
    # (community, entity) pairs of the communities at their finest (a report, no split)
    finest = [c for c in pt.nodes if c in pt.rows and not pt.splittable(c)]
    pair_comm = np.repeat(np.asarray(finest, dtype=np.int64), [len(pt.entities[c]) for c in finest])
    pair_ent = np.concatenate([pt.entities[c] for c in finest]) if finest else np.zeros(0, dtype=np.int64)
    rep_comm = model.reports["community"].to_numpy()
    status = {b: o.status for b, o in behaviour_outcomes(model).items()}
    out = []
    for n, by_b in sels.items():
        for b in ("v2", "v1"):
            sel = by_b[b]
            st = selection_stats(model, ti, sel)
            # the entities of the selected communities at their finest
            chosen = np.asarray(rep_comm[sel.rows], dtype=np.int64)
            n_finest = len(np.unique(pair_ent[np.isin(pair_comm, chosen)]))
            c_ = None
            if cost is not None:
                c_ = cost.selection(sel.rows, b, n) if isinstance(cost, ContextCost) else cost(sel.rows)
            out.append(
                LevelOption(
                    community_level=n,
                    behaviour=b,
                    reports=st.count,
                    community_ids=st.community_ids,
                    entities_covered=st.entities_covered,
                    entities_at_finest=n_finest,
                    ancestors_sent=st.ancestors_sent,
                    cost=c_,
                    fits=_option_fits(budget, st.count, c_, n_finest, st.entities_covered),
                    status=status[b],
                )
            )
    return out


def _option_fits(budget, reports: int, cost: Cost | None, at_finest: int, covered: int) -> bool | None:
    """Every budget holds (None when one cannot be told: a cost budget without costs)."""
    verdicts: list[bool | None] = []
    for b in Budgets.of(budget):
        if b.kind == "coverage":
            verdicts.append(bool(covered) and at_finest >= b.value * covered - 1e-9)
        else:
            m = _measure(b.kind, reports, cost)
            verdicts.append(None if m is None else m <= b.value)
    return False if False in verdicts else None if None in verdicts else True


def dynamic_preview(model: IndexModel, num_repeats: int, sels: dict) -> list[dict]:
    """Dynamic selection at each cap N (docs/graphrag-semantics.md#dynamic): the candidate pool
    (reports with level <= N), the level-0 reports it starts from, and the bounds on rating calls."""
    lv = model.reports["level"].to_numpy()
    out = []
    for n, by_b in sels.items():
        rows = by_b["dynamic"].rows
        l0 = int((lv[rows] == 0).sum())
        out.append(
            {
                "community_level": n,
                "candidates": int(len(rows)),
                "level0_reports": l0,
                "rating_calls": {"min": num_repeats * l0, "max": num_repeats * int(len(rows))},
                "raises_keyerror": bool(len(rows)) and l0 == 0,
            }
        )
    return out


def plan_report(
    model: IndexModel,
    budget,
    cost: CostFn | None = None,
    *,
    num_repeats: int = 1,
    settings: dict | None = None,
    objective: str = "granularity",
    allow_uncovered: bool = False,
) -> PlanReport:
    from graphrag_audit.graphrag.selection import select_all

    pt = PlanTree(model)
    plan = plan_context(model, budget, cost, tree=pt, objective=objective, allow_uncovered=allow_uncovered)
    sels = select_all(model)
    index = PlanIndex(
        path=str(model.path),
        output_dir=str(model.output_dir),
        generation=model.generation.label,
        max_level=model.max_level,
        notes=tuple(model.notes),
    )
    options = level_options(model, budget, cost, pt, sels)
    why = _why_levels_fit(pt, plan, options)
    if why:
        plan = replace(plan, why_not=list(plan.why_not) + why)
    return PlanReport(
        index=index,
        plan=plan,
        options=options,
        dynamic=dynamic_preview(model, num_repeats, sels),
        settings=dict(settings or {}),
    )


def _why_levels_fit(pt: PlanTree, plan: Plan, options: list[LevelOption]) -> list[str]:
    """When a single community_level fits but the plan does not: why (it leaves entities out)."""
    fitting = [o for o in options if o.fits and o.reports]
    if plan.fits or not fitting:
        return []
    o = max(fitting, key=lambda x: (x.entities_covered, -x.reports))
    label = o.community_level  # (None reads "None")
    if plan.entities_coverable > o.entities_covered and not plan.allow_uncovered:
        bare = pt.bare_roots()
        return [
            f"community_level {label} ({'graphrag >= 2.0' if o.behaviour == 'v2' else 'graphrag < 2.0'}) fits "
            f"with {o.reports:,} reports because it covers only {o.entities_covered:,} of the "
            f"{plan.entities_coverable:,} coverable entities; a plan holds every coverable entity, and "
            f"{len(bare):,} report-less roots make its coarsest frontier {plan.start_reports:,} reports. "
            "--allow-uncovered lets the plan leave their entities out too"
        ]
    return [
        f"community_level {label} fits but sends ancestors together with descendants or costs less by "
        "graphrag's batching; no frontier of single reports fits"
    ]

"""Plan a global-search context by budget: a cross-level **frontier** of community reports.

A *frontier* holds every coverable clustered entity exactly once: it starts from the roots and is
refined by *splits*, each replacing a community by its children. The planner returns the frontier
that fits the budgets (``reports``, ``tokens``, ``map_calls`` by graphrag's exact batching,
``coverage``) and is finest in objective order. docs/plan.md explains it with real output.

* A community without a report is *expanded* (replaced by its children, recursively); a childless
  one without a report loses its entities. A split is *allowed* only when it loses no entity, else
  *blocked* (and disclosed); entities lost at the start are *uncoverable*. A community that cannot
  be split is *final*: its entities are at their finest available level.
* Each objective (``granularity``, ``rank``, ``text-units``) is a priority order π that puts a
  community before its children; the plan is the split set lexicographically greatest in π among
  those meeting every ceiling budget.
* ``_Solver.greedy`` pops candidates in π order and splits while the additive totals fit: exact
  for reports (tests/test_plan.py and tests/test_plan_objectives.py check it against brute force).
  Tokens and map calls are costed exactly on whole frontiers: the sweep runs on an additive per-row
  token estimate under a cap λ and ``_solve_ceilings`` binary-searches the largest λ whose plan
  fits (optimal when the exact cost is additive and monotone; graphrag's shuffle makes map calls
  non-monotone, so not claimed then).
* Baseline ``LF(N)``: every allowed split of a community at level < N, the finest fitting N found
  by binary search; the granularity sweep starts from it. Coverage ``P``: binary search over a
  report cap K for the smallest plan holding a share P of the coverable entities at their finest.
* ``allow_uncovered``: report-less roots may stay out as placeholders (nothing sent).

Costs are injected: ``cost(rows) -> Cost(tokens, map_calls)`` over ascending report-row positions;
:class:`ContextCost` computes it as the per-level audit does (``costs.level_costs``).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Final

import numpy as np
import pandas as pd

from graphrag_audit.errors import IndexInputError
from graphrag_audit.findings import counted
from graphrag_audit.model.index import IndexModel
from graphrag_audit.model.keys import (
    has_duplicates,
    in_sorted,
    sorted_unique,
)
from graphrag_audit.results.plan import (
    BUDGET_KINDS,
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

__all__ = [
    "BUDGET_KINDS",
    "OBJECTIVES",
    "Budget",
    "Budgets",
    "Cost",
    "CostFn",
    "ContextCost",
    "Plan",
    "PlanTree",
    "SubtreeStatus",
    "plan_context",
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
            raise _refuse(
                model, f"parent links form a cycle through communities {_preview(forest.cycle_nodes)}"
            )
        multi = forest.multi_parent
        if multi:
            raise _refuse(
                model,
                f"{len(multi)} communities sit under several parents ({_preview(multi)}); "
                "the parent links are not a forest",
            )
        # the planner's dicts of the one forest (single parents, no cycles: checked above)
        nodes = forest.nodes.tolist()
        self.nodes = sorted(nodes)
        self.level = dict(zip(nodes, forest.level.tolist()))
        self.children = forest.children
        fp = forest.first_parent
        self.parent = dict(zip(nodes, np.where(fp >= 0, forest.nodes[fp], -1).tolist()))
        self.roots = forest.roots

        # entity membership (dense entity codes), restricted to communities of the tree
        codes, comm = self._membership(model.members[["entity", "community"]])
        self.n_clustered = int(codes.max()) + 1 if len(codes) else 0
        self.entities: dict[int, np.ndarray] = {c: np.zeros(0, dtype=np.int64) for c in self.nodes}
        if len(comm):
            order = np.lexsort((codes, comm))  # by community, entity codes ascending within one
            self.entities.update(_runs(comm[order], codes[order]))
        self.n_entities = {c: int(len(v)) for c, v in self.entities.items()}
        self._check_nested(codes, comm)

        # report rows per community (several rows for one community are all sent)
        rc = model.reports["community"].to_numpy(dtype=np.int64)
        in_tree = in_sorted(rc, np.asarray(self.nodes, dtype=np.int64))  # self.nodes: sorted, distinct
        self.rows: dict[int, np.ndarray] = {}
        pos = np.flatnonzero(in_tree)
        if len(pos):
            rcs = rc[in_tree]
            order = np.argsort(rcs, kind="stable")  # positions stay ascending within a community
            self.rows.update(_runs(rcs[order], pos[order]))
        self.orphan_rows = np.flatnonzero(~in_tree)  # reports naming no community of the tree
        self.orphan_communities = sorted({int(x) for x in rc[~in_tree]})
        self._expansions: dict[int, Expansion] = {}
        self._splits: dict[int, Expansion] = {}
        self._root: dict[int, int] | None = None

    def _membership(self, m: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(dense entity code, community) of the distinct membership pairs whose community is in
        the tree, in row order; codes as ``pd.factorize`` numbers the entity keys."""
        m = m[m["community"].isin(self.nodes)].drop_duplicates()
        self._members_in_tree = m
        codes, _ = pd.factorize(m["entity"].to_numpy())
        return np.asarray(codes, dtype=np.int64), m["community"].to_numpy(dtype=np.int64)

    @property
    def entity_keys(self) -> np.ndarray:
        """The entity key of each dense entity code (``pd.factorize``'s uniques)."""
        return pd.factorize(self._members_in_tree["entity"].to_numpy())[1]

    def _check_nested(self, codes: np.ndarray, comm: np.ndarray) -> None:
        if not len(comm):
            return
        nodes = np.asarray(self.nodes, dtype=np.int64)
        parent_of = np.fromiter((self.parent[int(c)] for c in nodes), dtype=np.int64, count=len(nodes))
        cidx = np.searchsorted(nodes, comm)
        par = parent_of[cidx]
        # (entity, parent) pairs as one integer (parent -1 = a root: index 0), tested by sorting
        width = np.int64(len(nodes))
        pidx = np.where(par >= 0, np.searchsorted(nodes, par), -1)
        if has_duplicates(codes.astype(np.int64) * (width + 1) + (pidx + 1)):
            pairs = pd.DataFrame({"e": codes, "c": comm, "p": par})
            dup = pairs.duplicated(["e", "p"], keep=False)
            bad = sorted(set(pairs.loc[dup, "c"].astype(int)))
            raise _refuse(
                self.model,
                f"entity sets are not nested: some entities sit in two sibling (or two root) "
                f"communities ({_preview(bad)})",
            )
        # every (entity, parent) pair must be an (entity, community) pair too
        have = sorted_unique(codes.astype(np.int64) * width + cidx)
        sub = par >= 0
        want = codes[sub].astype(np.int64) * width + pidx[sub]
        missing_mask = ~in_sorted(want, have)
        if missing_mask.any():
            missing = sorted({int(c) for c in comm[sub][missing_mask]})
            raise _refuse(
                self.model,
                f"entity sets are not nested: {len(missing)} communities hold entities "
                f"their parent lacks ({_preview(missing)})",
            )

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
            parts.append(
                f"communit{'y' if len(sp.dead_ends) == 1 else 'ies'} {_preview(sp.dead_ends, 4)} "
                f"below it {'has' if len(sp.dead_ends) == 1 else 'have'} no report and no children"
            )
        uncovered = sp.lost - sum(self.n_entities[d] for d in sp.dead_ends)
        if uncovered > 0:
            parts.append(f"its children leave {uncovered} of its entities in no child")
        return f"splitting it would drop {sp.lost:,} entities: " + "; ".join(parts)

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
# the solver: one lexicographic greedy sweep per additive cap, binary search for the rest
# ---------------------------------------------------------------------------------------
_INF = float("inf")


class _Unseen(Enum):
    UNSEEN = 0


_UNSEEN: Final = _Unseen.UNSEEN  # a community whose split move is not worked out yet (_Solver._move)


class _Solver:
    """The frontier state shared by every probe of one :func:`plan_context` call.

    Members of a frontier are report-bearing communities plus, with ``allow_uncovered``,
    *placeholders*: report-less roots kept out (they send nothing; "splitting" one brings in its
    expansion). Additive meters: report rows (exact) and a per-row token estimate (the
    surrogate for the ``tokens`` / ``map_calls`` ceilings, whose exact cost is checked on the
    whole frontier)."""

    def __init__(self, pt: PlanTree, objective: str, allow_uncovered: bool, row_tokens: np.ndarray | None):
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; choose one of {', '.join(OBJECTIVES)}")
        self.pt = pt
        self.objective = objective
        self.allow_uncovered = bool(allow_uncovered)
        start, self.dead, self.lost = pt.start()
        self.placeholders: set[int] = set()
        if allow_uncovered:
            self.placeholders = {r for r in pt.roots if not pt.has_report(r) and pt.expand(r).members}
            start = [c for c in start if pt.root_of(c) not in self.placeholders] + sorted(self.placeholders)
        self.start = sorted(start)
        self.n_rows = {c: len(pt.rows[c]) for c in pt.rows}
        self.tok = None
        if row_tokens is not None:
            self.tok = {c: int(row_tokens[r].sum()) for c, r in pt.rows.items()}
        self._key = self._keys()
        self._moves: dict[int, tuple | None] = {}

    def _move(self, c: int) -> tuple | None:
        """What a greedy sweep reads when it pops ``c``: None when ``c`` cannot be split, else
        (π key, its kids, the rows and the estimated tokens splitting it adds). Worked out once
        per community for all sweeps (the binary search over the token cap runs one per probe)."""
        m = self._moves.get(c, _UNSEEN)
        if m is _UNSEEN:
            m = None
            if self.can_split(c):
                kids = self.kids(c)
                m = (
                    self.key(c),
                    kids,
                    sum(self.rows_w(k) for k in kids) - self.rows_w(c),
                    sum(self.tok_w(k) for k in kids) - self.tok_w(c),
                )
            self._moves[c] = m
        return m

    # ---- structure -----------------------------------------------------------------------
    def can_split(self, c: int) -> bool:
        return c in self.placeholders or self.pt.splittable(c)

    def kids(self, c: int) -> tuple[int, ...]:
        return self.pt.expand(c).members if c in self.placeholders else self.pt.split(c).members

    def rows_w(self, c: int) -> int:
        return self.n_rows.get(c, 0)

    def tok_w(self, c: int) -> int:
        return self.tok.get(c, 0) if self.tok is not None else 0

    def key(self, c: int):
        return self._key(c)

    def _keys(self):
        """π for the objective: a linear extension of the tree (a community before its children),
        so the heap pops exactly π restricted to the communities whose parent is split."""
        pt = self.pt
        if self.objective == "granularity":
            return lambda c: (pt.level[c], -pt.n_entities[c], c)
        weight = self._desc_rank() if self.objective == "rank" else self._text_units()
        return lambda c: (-weight[c], pt.level[c], -pt.n_entities[c], c)

    def _topdown(self) -> list[int]:
        order, stack = [], list(self.pt.roots)
        while stack:
            c = stack.pop()
            order.append(c)
            stack.extend(self.pt.children[c])
        return order

    def _desc_rank(self) -> dict[int, float]:
        """Highest graphrag ``rank`` among the reports strictly below each community (-inf: none):
        what splitting it can bring in. Never larger for a child than for its parent."""
        ranks = (
            self.pt.model.reports["rank"].to_numpy(dtype=np.float64) if len(self.pt.model.reports) else None
        )
        own = {
            c: (float(np.nanmax(ranks[r])) if ranks is not None and not np.isnan(ranks[r]).all() else -_INF)
            for c, r in self.pt.rows.items()
        }
        sub: dict[int, float] = {}
        below: dict[int, float] = {}
        for c in reversed(self._topdown()):
            b = max((sub[k] for k in self.pt.children[c]), default=-_INF)
            below[c] = b
            sub[c] = max(b, own.get(c, -_INF))
        return below

    def _text_units(self) -> dict[int, float]:
        """Distinct text units of each community's entities (graphrag's occurrence count), capped
        by its parent's so a child never comes before its parent (0 when the index has none)."""
        from graphrag_audit.analysis.costs import community_text_unit_counts

        counts = community_text_unit_counts(self.pt.model)
        raw = {} if counts is None else {int(k): float(v) for k, v in counts.items()}
        out: dict[int, float] = {}
        for c in self._topdown():
            p = self.pt.parent[c]
            v = raw.get(c, 0.0)
            out[c] = v if p == -1 else min(v, out[p])
        return out

    # ---- one greedy sweep -------------------------------------------------------------------
    def greedy(self, start, max_rows: float, max_tok: float):
        """The lexicographic greedy in π order under additive caps on rows and estimated tokens.

        Returns (frontier, (rows, tokens) totals, (lo, hi)): the same frontier comes out for
        every token cap in [lo, hi] (the largest accepted and smallest refused token total), which
        lets the binary search jump over caps that change nothing."""
        moves, move = self._moves, self._move
        frontier = set(start)
        rows = sum(self.rows_w(c) for c in frontier)
        tok = sum(self.tok_w(c) for c in frontier)
        acc_hi, rej_lo = tok, _INF
        push, pop = heapq.heappush, heapq.heappop
        changed = True
        while changed:
            changed = False
            heap = [(m[0], c) for c in frontier if (m := move(c)) is not None]
            heapq.heapify(heap)
            decreased = False
            while heap:
                _, c = pop(heap)
                if c not in frontier:
                    continue
                move_c = moves[c]
                assert move_c is not None  # c was pushed: its move is known
                _, kids, d_rows, d_tok = move_c
                new_rows = rows + d_rows
                new_tok = tok + d_tok
                if new_rows <= max_rows and new_tok <= max_tok:
                    decreased |= new_rows < rows or new_tok < tok
                    frontier.discard(c)
                    frontier.update(kids)
                    rows, tok = new_rows, new_tok
                    acc_hi = max(acc_hi, new_tok)
                    for k in kids:
                        mk = moves.get(k, _UNSEEN)
                        if mk is _UNSEEN:
                            mk = move(k)
                        if mk is not None:
                            push(heap, (mk[0], k))
                elif new_rows <= max_rows:
                    rej_lo = min(rej_lo, new_tok)
            # a pass that only grew the totals cannot make a refused split fit: done
            changed = decreased and any(move(c) is not None for c in frontier)
        return sorted(frontier), (rows, tok), (acc_hi, rej_lo - 1)


def _runs(keys: np.ndarray, values: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(key, its slice of ``values``) for each run of equal ``keys`` (sorted by key)."""
    if not len(keys):
        return
    bounds = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    starts = np.concatenate(([0], bounds))
    ends = np.concatenate((bounds, [len(keys)]))
    for k, a, b in zip(keys[starts].tolist(), starts.tolist(), ends.tolist()):
        yield k, values[a:b]


def _members_only(solver: _Solver, frontier) -> list[int]:
    return sorted(c for c in frontier if c not in solver.placeholders)


def _row_tokens(pt: PlanTree, cost: CostFn) -> np.ndarray:
    """A per-row token estimate (the additive surrogate): ``cost.row_tokens()`` when the cost
    offers it (:class:`ContextCost`), else each row costed alone."""
    n = len(pt.model.reports)
    if hasattr(cost, "row_tokens"):
        return np.asarray(cost.row_tokens(), dtype=np.int64)
    out = np.zeros(n, dtype=np.int64)
    for r in range(n):
        out[r] = int(cost(np.array([r], dtype=np.int64)).tokens)
    return out


class _Probe:
    """Exact checks of the ceilings on a whole frontier (memoised per frontier)."""

    def __init__(self, solver: _Solver, budgets: Budgets, cost: CostFn | None):
        self.s, self.b, self.cost = solver, budgets, cost
        self.memo: dict[tuple, tuple[bool, Cost | None]] = {}
        self.exact = budgets.get("tokens") is not None or budgets.get("map_calls") is not None

    def cost_of(self, frontier) -> Cost | None:
        if self.cost is None:
            return None
        return self.cost(self.s.pt.rows_of(_members_only(self.s, frontier)))

    def fits(self, frontier, max_rows: float) -> bool:
        if sum(self.s.rows_w(c) for c in frontier) > max_rows:
            return False
        if not self.exact:
            return True
        key = tuple(frontier)
        hit = self.memo.get(key)
        if hit is None:
            c = self.cost_of(frontier)
            assert c is not None  # exact checks have a cost function (plan_context refuses otherwise)
            t, m = self.b.get("tokens"), self.b.get("map_calls")
            ok = (t is None or c.tokens <= t) and (m is None or c.map_calls <= m)
            hit = self.memo[key] = (ok, c)
        return hit[0]


def _solve_ceilings(solver: _Solver, probe: _Probe, start, max_rows: float) -> list[int]:
    """The plan under the row cap and the exact token / map-call ceilings.

    Rows only: one greedy sweep. Otherwise a binary search over the estimated-token cap λ: the
    largest λ whose sweep's frontier fits exactly (each probe jumps to the edge of the range of
    caps giving the same frontier, so probes are at most ~log2 of the distinct frontiers)."""
    if not probe.exact:
        return solver.greedy(start, max_rows, _INF)[0]
    full, _, (a, _) = solver.greedy(start, max_rows, _INF)
    if probe.fits(full, max_rows):
        return full
    start = sorted(start)
    if not probe.fits(start, max_rows):
        return start
    start_tok = sum(solver.tok_w(c) for c in start)
    lo, hi, best = start_tok - 1, a, start
    t = probe.b.get("tokens")
    guess = t if t is not None and lo < t < hi else None
    for _ in range(256):
        if lo + 1 >= hi:
            break
        mid = guess if guess is not None else (lo + hi) // 2
        guess = None
        f, _, (acc, rej) = solver.greedy(start, max_rows, mid)
        if probe.fits(f, max_rows):
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


def _baseline(solver: _Solver, probe: _Probe, max_rows: float, max_level: int):
    """(finest N whose level frontier LF(N) fits, LF(N)) by binary search over N, or (None, None)."""
    hi = max(max_level, 0)
    if not probe.fits(_level_frontier(solver, 0), max_rows):
        return None, None
    lo, found = 0, _level_frontier(solver, 0)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        f = _level_frontier(solver, mid)
        if probe.fits(f, max_rows):
            lo, found = mid, f
        else:
            hi = mid - 1
    return lo, found


def _at_finest(solver: _Solver, frontier) -> int:
    return int(
        sum(
            solver.pt.n_entities[c]
            for c in frontier
            if c not in solver.placeholders and not solver.pt.splittable(c)
        )
    )


# ---------------------------------------------------------------------------------------
# planning
# ---------------------------------------------------------------------------------------
def plan_context(
    model: IndexModel,
    budget,
    cost: CostFn | None = None,
    tree: PlanTree | None = None,
    *,
    objective: str = "granularity",
    allow_uncovered: bool = False,
) -> Plan:
    """The frontier that fits every budget of ``budget`` (a :class:`Budget` or :class:`Budgets`;
    see the module docstring for what is optimised).

    ``cost`` is required for ``tokens`` / ``map_calls`` budgets and optional otherwise (it fills
    ``Plan.cost``). ``tree``: a :class:`PlanTree` of ``model`` to reuse. ``objective``: one of
    :data:`OBJECTIVES`. ``allow_uncovered``: report-less roots may be kept out (their entities
    left uncovered, as a single community_level does) instead of expanded.
    """
    budgets = Budgets.of(budget)
    if budgets.needs_cost and cost is None:
        raise ValueError(f"a {budgets.kind.replace('_', ' ')} budget needs a cost function (see ContextCost)")
    pt = tree or PlanTree(model)
    solver = _Solver(
        pt,
        objective,
        allow_uncovered,
        _row_tokens(pt, cost) if budgets.needs_cost and cost is not None else None,
    )
    probe = _Probe(solver, budgets, cost)
    max_level = max(pt.level.values()) if pt.level else -1
    r_cap = budgets.get("reports")
    max_rows = _INF if r_cap is None else int(r_cap)
    share = budgets.get("coverage")
    coverable = pt.n_clustered - solver.lost
    if share is None:
        baseline, seed = _baseline(solver, probe, max_rows, max_level)
        start = seed if (objective == "granularity" and seed is not None) else solver.start
        frontier = _solve_ceilings(solver, probe, start, max_rows)
    else:
        frontier = _coverage_plan(solver, probe, share, coverable, max_rows)
        cap = min(max_rows, sum(solver.rows_w(c) for c in frontier))
        baseline, _ = _baseline(solver, probe, cap, max_level)
    fits_ok = probe.fits(frontier, max_rows)
    if share is not None:
        fits_ok = fits_ok and (coverable == 0 or _at_finest(solver, frontier) >= share * coverable - 1e-9)
    members = _members_only(solver, frontier)
    rows = pt.rows_of(members)
    plan_cost = cost(rows) if cost is not None else None
    return _assemble(solver, budgets, frontier, members, rows, fits_ok, baseline, plan_cost, coverable)


def _coverage_plan(
    solver: _Solver, probe: _Probe, share: float, coverable: int, max_rows: float
) -> list[int]:
    """The plan of the smallest report cap K (binary search; at most ``max_rows``) whose plan,
    under the other ceilings, holds a share ``share`` of the coverable entities at their finest
    available level. Returns the finest plan the ceilings allow when no K reaches it."""
    start = solver.start

    def plan_at(k):
        return _solve_ceilings(solver, probe, start, k)

    def meets(f):
        return coverable == 0 or _at_finest(solver, f) >= share * coverable - 1e-9

    top = plan_at(max_rows)
    if not meets(top):
        return top
    lo = sum(solver.rows_w(c) for c in start) - 1  # below the coarsest frontier: no plan fits
    hi = sum(solver.rows_w(c) for c in top)
    best = top
    while lo + 1 < hi:
        mid = (lo + hi) // 2
        f = plan_at(mid)
        if meets(f) and probe.fits(f, mid):
            hi, best = min(mid, sum(solver.rows_w(c) for c in f)), f
        else:
            lo = mid
    return best


def _assemble(
    solver: _Solver, budgets: Budgets, frontier, members, rows, fits_ok, baseline, plan_cost, coverable: int
) -> Plan:
    pt, start, dead, lost = solver.pt, solver.start, solver.dead, solver.lost
    notes: list[str] = []
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
    epr = (
        {"min": int(n_ent.min()), "median": float(np.median(n_ent)), "max": int(n_ent.max())}
        if len(n_ent)
        else {"min": None, "median": None, "max": None}
    )
    non_final = [pt.level[c] for c in members if pt.splittable(c)]
    max_level = max(pt.level.values()) if pt.level else 0
    complete = min(non_final) if non_final else max_level
    deepest = max((pt.level[c] for c in members), default=None)
    kept_out = sorted(c for c in frontier if c in solver.placeholders)
    left_uncovered = int(sum(pt.n_entities[m] for r in kept_out for m in pt.expand(r).members))
    subtrees = _subtrees(pt, members, deepest, set(kept_out))
    start_rows = sum(solver.rows_w(c) for c in start)
    if not pt.model.has_reports_table:
        notes.append("the index has no community_reports table: global search has nothing to send")
    bare_roots = [r for r in pt.roots if not pt.has_report(r) and pt.children[r]]
    if bare_roots and pt.model.has_reports_table and not solver.placeholders:
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
    at_finest = _at_finest(solver, frontier)
    checks = _checks(budgets, len(rows), plan_cost, at_finest, coverable)
    why = []
    if not len(rows):
        why.append(
            "the plan holds no report: global search would send nothing ("
            + (
                "the index has no community_reports table"
                if not pt.model.has_reports_table
                else "no report names a community of the tree"
                if not pt.rows
                else "every report-bearing community is kept out"
            )
            + ")"
        )
    if not fits_ok:
        failed = [c for c in checks if c["holds"] is False]
        for c in failed:
            if c["kind"] == "coverage":
                why.append(
                    f"coverage {c['actual']:.1%} < {c['value']:.0%}: no plan within the other budgets "
                    "holds that share of the coverable entities at their finest available level"
                )
            else:
                what = (
                    "every coverable entity once, report-less roots kept out"
                    if solver.placeholders
                    else "every coverable entity once"
                )
                why.append(
                    f"{c['kind'].replace('_', ' ')} {c['actual']:,} > {c['value']:,}: this is the coarsest "
                    f"frontier ({what}), and it already exceeds the budget"
                )
        notes.append(
            "the budget is smaller than the coarsest possible frontier: the plan shown is that frontier "
            "and does not fit"
            if not any(c["kind"] == "coverage" for c in failed)
            else "no plan meets every budget: the plan shown is the finest the other budgets allow"
        )
    return Plan(
        budget=budgets,
        communities=sorted(members),
        rows=rows,
        fits=bool(fits_ok),
        levels=levels,
        entities_represented=represented,
        entities_at_finest=at_finest,
        entities_clustered=pt.n_clustered,
        entities_uncoverable=int(lost),
        entities_duplicated=duplicated,
        entities_per_report=epr,
        baseline_level=baseline,
        complete_level=int(complete),
        deepest_level=deepest,
        subtrees=subtrees,
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


def _checks(budgets: Budgets, reports: int, cost: Cost | None, at_finest: int, coverable: int) -> list[dict]:
    out = []
    for b in budgets:
        actual: float | None
        if b.kind == "reports":
            actual = reports
        elif b.kind == "coverage":
            actual = at_finest / coverable if coverable else 1.0
        else:
            actual = None if cost is None else int(cost.tokens if b.kind == "tokens" else cost.map_calls)
        value = b.to_dict()["value"]
        holds = (
            None
            if actual is None
            else bool(actual >= value - 1e-9 if b.kind == "coverage" else actual <= value)
        )
        out.append({"kind": b.kind, "value": value, "actual": actual, "holds": holds})
    return out


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


def _subtrees(pt: PlanTree, members, deepest, kept_out=frozenset()) -> list[SubtreeStatus]:
    by_root: dict[int, list[int]] = {r: [] for r in pt.roots}
    for c in members:
        by_root.setdefault(pt.root_of(c), []).append(c)
    out = []
    for r, mem in by_root.items():
        lv: dict[str, int] = {}
        for c in mem:
            lv[str(pt.level[c])] = lv.get(str(pt.level[c]), 0) + 1
        blocked = [
            {"community": c, "level": pt.level[c], "reason": pt.blocked_reason(c)}
            for c in sorted(mem)
            if pt.blocked_reason(c)
        ]
        if r in kept_out:
            status = "uncovered"
        elif any(pt.splittable(c) for c in mem):
            status = "budget"
        elif blocked:
            status = "blocked"
        else:
            status = "finest"
        fa = _reachable_depth(pt, r)
        out.append(
            SubtreeStatus(
                root=r,
                entities=pt.n_entities[r],
                reports=pt.n_rows(mem),
                levels=dict(sorted(lv.items(), key=lambda kv: int(kv[0]))),
                finest_available=fa,
                status=status,
                coarser_than_target=bool(fa is not None and deepest is not None and fa < deepest),
                blocked=blocked,
            )
        )
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

    def row_tokens(self) -> np.ndarray:
        """Each report row's own tokens without the occurrence-weight cell (rows graphrag's rank
        filter drops: 0): the planner's additive estimate, checked exactly on whole frontiers."""
        from graphrag_audit.graphrag.context import row_measures

        c = self.coster
        if not c.additive:
            return np.array([int(self(np.array([r])).tokens) for r in range(len(c.comm))], dtype=np.int64)
        keep = np.flatnonzero(c.ranks >= 0)
        m = row_measures(c.counter, c.comm, c.titles, c.contents, c.ranks, with_weight=False, rows=keep)
        out = np.zeros(len(m), dtype=np.int64)
        out[keep] = c.counter.tokens_from_measure(m[keep])
        return out

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
def level_options(
    model: IndexModel,
    budget,
    cost: CostFn | None = None,
    tree: PlanTree | None = None,
    selections: dict | None = None,
) -> list[LevelOption]:
    """v2 and v1 at every N (0 … max, None) with reports, cost, entities covered, duplication."""
    from graphrag_audit.analysis.levels import TreeIndex, selection_stats
    from graphrag_audit.graphrag.selection import select_all

    pt = tree or PlanTree(model)
    ti = TreeIndex(model)
    sels = selections if selections is not None else select_all(model)
    # (community, entity) pairs of the communities at their finest (a report, no split)
    finest = [c for c in pt.nodes if pt.has_report(c) and not pt.splittable(c)]
    pair_comm = np.repeat(np.asarray(finest, dtype=np.int64), [len(pt.entities[c]) for c in finest])
    pair_ent = np.concatenate([pt.entities[c] for c in finest]) if finest else np.zeros(0, dtype=np.int64)
    final_ent = np.zeros(pt.n_clustered, dtype=bool)
    final_ent[pair_ent] = True
    rep_comm = model.reports["community"].to_numpy()
    from graphrag_audit.graphrag.compat import behaviour_outcomes

    status = {b: o.status for b, o in behaviour_outcomes(model).items()}
    out = []
    for n, by_b in sels.items():
        for b in ("v2", "v1"):
            sel = by_b[b]
            st = selection_stats(model, ti, sel)
            # the entities of the selected communities at their finest (selected rows name
            # communities of the tree, which have a report, or communities outside it)
            at_finest = np.zeros(pt.n_clustered, dtype=bool)
            chosen = sorted_unique(np.asarray(rep_comm[sel.rows], dtype=np.int64))
            at_finest[pair_ent[in_sorted(pair_comm, chosen)]] = True
            if cost is None:
                c_ = None
            elif hasattr(cost, "selection"):
                c_ = cost.selection(sel.rows, b, n)
            else:
                c_ = cost(sel.rows)
            out.append(
                LevelOption(
                    community_level=n,
                    behaviour=b,
                    reports=st.count,
                    community_ids=st.community_ids,
                    entities_covered=st.entities_covered,
                    entities_at_finest=int((at_finest & final_ent).sum()),
                    ancestors_sent=st.ancestors_sent,
                    cost=c_,
                    fits=_option_fits(
                        budget, st.count, c_, int((at_finest & final_ent).sum()), st.entities_covered
                    ),
                    status=status[b],
                )
            )
    return out


def _option_fits(budget, reports: int, cost: Cost | None, at_finest: int, covered: int) -> bool | None:
    """Every budget holds (None when one cannot be told: a cost budget without costs)."""
    verdicts = [_one_fits(b, reports, cost, at_finest, covered) for b in Budgets.of(budget)]
    if False in verdicts:
        return False
    return None if None in verdicts else True


def _one_fits(budget: Budget, reports: int, cost: Cost | None, at_finest: int, covered: int) -> bool | None:
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
    from dataclasses import replace

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
    options = level_options(model, budget, cost, tree=pt, selections=sels)
    why = _why_levels_fit(pt, plan, options)
    if why:
        plan = replace(plan, why_not=list(plan.why_not) + why)
    return PlanReport(
        index=index,
        plan=plan,
        options=options,
        dynamic=dynamic_preview(model, num_repeats, selections=sels),
        settings=dict(settings or {}),
    )


def _why_levels_fit(pt: PlanTree, plan: Plan, options: list[LevelOption]) -> list[str]:
    """When a single community_level fits but the plan does not: why (it leaves entities out)."""
    if plan.fits:
        return []
    fitting = [o for o in options if o.fits and o.reports]
    if not fitting:
        return []
    o = max(fitting, key=lambda x: (x.entities_covered, -x.reports))
    gap = plan.entities_coverable - o.entities_covered
    label = "None" if o.community_level is None else str(o.community_level)
    if gap > 0 and not plan.allow_uncovered:
        bare = [r for r in pt.roots if not pt.has_report(r) and pt.children[r]]
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

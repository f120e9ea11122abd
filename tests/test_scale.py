"""Issue 14: work linear (or n log n) in the index size plus the output size, whatever the depth;
human formats cap long lists; the JSON is streamed, complete by default.

* The tree walks of ``graphrag_audit.model.forest`` against the step-by-step loops they replaced
  (restated here), on random parent arrays with cycles, self-parents and long chains.
* Complexity without timing: the pointer doubling counts its gathers; a whole audit of a parent
  chain 8x longer makes (almost) no more numpy calls (the old walk made one round per level of
  depth); one 1,000-level index and a 200,000-long chain run as real processes under a 2 GiB
  address-space limit, with a generous timeout only as a hang guard.
* The streamed JSON equals ``json.dumps`` of the same document.
"""

from __future__ import annotations

import json
import os
import sys
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from deep_indexes import parent_chain_index, parent_cycle_index, single_child_chains_index
from hostile import GIB, run_cli, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.model import forest

pytestmark = pytest.mark.large  # a heavy tier: pytest -m large
ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SETTINGS = settings(max_examples=300, deadline=None, database=None)


# ---- references: the loops forest.py replaced -------------------------------------------------
def ref_root_of(parent: np.ndarray) -> np.ndarray:
    """depth.py's old walk: every node one parent step per round, n rounds at most."""
    root = np.arange(len(parent))
    for _ in range(len(parent)):
        p = parent[root]
        move = (p >= 0) & (p != root)
        if not move.any():
            break
        nxt = np.where(move, p, root)
        if np.array_equal(nxt, root):
            break
        root = nxt
    return root


def ref_ancestors_in(parent: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """levels.py's old climb: the codes reached from the set by one or more parent steps."""
    n = len(parent)
    sel = np.zeros(n, dtype=bool)
    sel[codes[codes >= 0]] = True
    is_anc = np.zeros(n, dtype=bool)
    cur = np.flatnonzero(sel)
    seen = np.zeros(n, dtype=bool)
    for _ in range(n):
        cur = parent[cur]
        cur = cur[cur >= 0]
        cur = cur[~seen[cur]]
        if not len(cur):
            break
        seen[cur] = True
        is_anc[cur[sel[cur]]] = True
    return np.flatnonzero(is_anc)


def ref_peel(n: int, src: list[int], dst: list[int]) -> np.ndarray:
    """Kahn's algorithm, one node at a time."""
    indeg = [0] * n
    out: list[list[int]] = [[] for _ in range(n)]
    for u, v in zip(src, dst):
        indeg[v] += 1
        out[u].append(v)
    alive = [True] * n
    queue = deque(i for i in range(n) if indeg[i] == 0)
    while queue:
        x = queue.popleft()
        alive[x] = False
        for h in out[x]:
            indeg[h] -= 1
            if indeg[h] == 0:
                queue.append(h)
    return np.array(alive, dtype=bool)


@st.composite
def parent_arrays(draw, max_n=40):
    """Random parent pointers: roots, chains, self-parents and cycles of any length."""
    n = draw(st.integers(1, max_n))
    return np.array(draw(st.lists(st.integers(-1, n - 1), min_size=n, max_size=n)), dtype=np.int64)


@st.composite
def deep_parent_arrays(draw):
    """A long chain (or loop) with random extra nodes hanging anywhere: deeper than 32 steps."""
    n = draw(st.integers(34, 120))
    parent = np.arange(n, dtype=np.int64) - 1
    if draw(st.booleans()):
        parent[0] = draw(st.integers(-1, n - 1))  # maybe closes the chain into a loop
    extra = draw(st.lists(st.integers(-1, n - 1), max_size=30))
    return np.concatenate([parent, np.array(extra, dtype=np.int64)]).astype(np.int64)


# ---- forest primitives --------------------------------------------------------------------------
@SETTINGS
@given(data=st.data())
def test_cycle_nodes_equal_networkx_components(data):
    """The one cycle detection (peel, then iterative Tarjan) against networkx's strongly
    connected components and self-loops, on any edge list (duplicates, several parents)."""
    import networkx as nx

    n = data.draw(st.integers(1, 40))
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80))
    if data.draw(st.booleans()):  # a long chain into whatever else is there
        edges += [(i, i + 1) for i in range(n - 1)]
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    want = {x for comp in nx.strongly_connected_components(g) if len(comp) > 1 for x in comp}
    want |= {u for u, _ in nx.selfloop_edges(g)}
    src = np.array([u for u, _ in edges], dtype=np.int64)
    dst = np.array([v for _, v in edges], dtype=np.int64)
    assert forest.cycle_nodes(n, src, dst).tolist() == sorted(want)


def test_cycle_nodes_of_a_long_loop_need_no_recursion():
    n = 200_000
    src = np.arange(n, dtype=np.int64)
    dst = (src + 1) % n  # one loop through every node
    assert len(forest.cycle_nodes(n, src, dst)) == n


@SETTINGS
@given(parent=st.one_of(parent_arrays(), deep_parent_arrays()))
def test_root_of_equals_the_step_by_step_walk(parent):
    assert np.array_equal(forest.root_of(parent), ref_root_of(parent))


@SETTINGS
@given(parent=parent_arrays(), k=st.integers(0, 200))
def test_power_is_k_steps(parent, k):
    step = np.where(parent >= 0, parent, np.arange(len(parent)))
    want = np.arange(len(parent))
    for _ in range(k):
        want = step[want]
    assert np.array_equal(forest.power(step, k), want)


@SETTINGS
@given(parent=st.one_of(parent_arrays(), deep_parent_arrays()), data=st.data())
def test_ancestors_in_equals_the_climb(parent, data):
    anc = forest.Ancestry(parent)
    n = len(parent)
    for _ in range(3):
        codes = np.array(data.draw(st.lists(st.integers(-1, n - 1), max_size=2 * n)), dtype=np.int64)
        assert np.array_equal(anc.ancestors_in(codes), ref_ancestors_in(parent, codes))


@SETTINGS
@given(data=st.data())
def test_peel_equals_kahn(data):
    """Every edge list (duplicates, self-loops, cycles)."""
    n = data.draw(st.integers(1, 40))
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=80))
    if data.draw(st.booleans()):  # a long chain too
        edges += [(i, i + 1) for i in range(n - 1)]
    src = [u for u, _ in edges]
    dst = [v for _, v in edges]
    got = forest.peel_sources(n, np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64))
    assert np.array_equal(got, ref_peel(n, src, dst))


@SETTINGS
@given(parent=st.one_of(parent_arrays(), deep_parent_arrays()))
def test_preorder_intervals_are_subtrees(parent):
    cut = forest.Ancestry(parent).cut  # cycles cut open: a forest
    tin, tout = forest.preorder_intervals(cut)
    n = len(cut)
    assert sorted(tin.tolist()) == list(range(n))
    for y in range(n):
        above, x = set(), y
        while x >= 0:
            above.add(x)
            x = cut[x]
        for x in range(n):
            assert (tin[x] <= tin[y] <= tout[x]) == (x in above), (x, y)


class Counting(np.ndarray):
    """An int array that counts the gathers (``a[b]``) made through it."""

    gathers = 0

    def __getitem__(self, key):
        Counting.gathers += 1
        return super().__getitem__(key)


@pytest.mark.parametrize("n", [2**10, 2**16])
def test_pointer_doubling_gathers_grow_with_log_depth(n):
    """The root of every node of an n-long chain in O(log n) passes over the array (the old walk
    made n passes)."""
    step = np.maximum(np.arange(n, dtype=np.int64) - 1, 0).view(Counting)
    Counting.gathers = 0
    roots = forest.power(step, n)
    assert np.array_equal(np.asarray(roots), np.zeros(n))
    assert Counting.gathers <= 4 * n.bit_length() + 4, Counting.gathers


# ---- whole audits: numpy calls do not grow with the depth ----------------------------------------
def numpy_calls(fn) -> int:
    """Calls into numpy (its Python functions, its C functions and ndarray methods) while ``fn``
    runs in this thread: a deterministic count of vectorised passes."""
    np_dir = os.path.dirname(np.__file__)
    count = 0

    def prof(frame, event, arg):
        nonlocal count
        if event == "call":
            if frame.f_code.co_filename.startswith(np_dir):
                count += 1
        elif event == "c_call":
            if (getattr(arg, "__module__", None) or "").startswith("numpy") or isinstance(
                getattr(arg, "__self__", None), np.ndarray
            ):
                count += 1

    sys.setprofile(prof)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count


def test_audit_numpy_calls_do_not_grow_with_chain_length(tmp_path):
    """A parent chain 8x longer (3,000 -> 24,000 levels of parent steps, every community at level
    0): the audit's numpy calls stay almost the same. Before, the root walk and the cycle peel
    made a round of numpy calls per step of depth (>= 21,000 more calls)."""
    calls = {}
    for n in (3000, 24000):
        d = parent_chain_index(tmp_path / f"chain{n}", n)
        audit(d, AuditOptions(level=1, costs=False))  # warm: imports, caches
        calls[n] = numpy_calls(lambda: audit(d, AuditOptions(level=1, costs=False)))
    assert calls[24000] <= calls[3000] + 300, calls


def test_numpy_calls_grow_linearly_with_the_levels(tmp_path):
    """20 chains of 60, 120 and 240 levels: each level adds the same number of numpy calls (a
    level is a row of the output), none grows with the number of levels."""
    calls = {}
    for levels in (60, 120, 240):
        d = single_child_chains_index(tmp_path / f"c{levels}", 20, levels)
        audit(d, AuditOptions(level=2, costs=False))
        calls[levels] = numpy_calls(lambda: audit(d, AuditOptions(level=2, costs=False)))
    first, second = (calls[120] - calls[60]) / 60, (calls[240] - calls[120]) / 120
    assert second <= 1.1 * first, calls


# ---- coverage counts: incremental, equal to the brute force ---------------------------------------
@SETTINGS
@given(data=st.data())
def test_covered_equals_brute_force(data):
    from graphrag_audit.analysis.levels import TreeIndex

    model = _covered_model()
    ti = TreeIndex(model)
    n = len(ti.index)
    members: dict[int, set] = {}
    for c, e in zip(ti.mem_ccode.tolist(), ti.mem_ecode.tolist()):
        members.setdefault(c, set()).add(e)
    sets = data.draw(st.lists(st.lists(st.integers(-1, n - 1), max_size=n), min_size=1, max_size=8))
    for i, codes in enumerate(sets):
        if i and data.draw(st.booleans()):
            codes = sets[i - 1] + codes  # a superset of the previous set: the incremental way
        want = len(set().union(*(members.get(c, set()) for c in codes if c >= 0)))
        assert ti.covered(np.array(codes, dtype=np.int64)) == want


_MODEL = {}


def _covered_model():
    from graphrag_audit.io.load import load_index

    if "m" not in _MODEL:
        _MODEL["m"] = load_index(FIXTURES / "balanced-v3")
    return _MODEL["m"]


# ---- JSON: streamed, complete by default ---------------------------------------
def _reference_json(report) -> str:
    """The document as one json.dumps (id lists as plain lists): what render_json wrote before
    it streamed."""

    def plain(o):
        if hasattr(o, "tolist") and not isinstance(o, (int, float)):
            return o.tolist()
        raise TypeError(type(o))

    from graphrag_audit.render.json import _clean

    return (
        json.dumps(
            _clean(report.to_dict()), separators=(",", ":"), ensure_ascii=True, allow_nan=False, default=plain
        )
        + "\n"
    )


@pytest.mark.parametrize("name", ["seed-v3", "seed-v1", "balanced-v3", "seed-v05", "small-leiden-v3"])
def test_streamed_json_is_the_same_document(name, monkeypatch):
    import graphrag_audit.render.cells as chunking
    import graphrag_audit.render.json as rj

    report = audit(FIXTURES / name, AuditOptions(level=1, tokenizer="estimate"))
    monkeypatch.setattr(rj, "_CHUNK_IDS", 3)  # many id slices
    monkeypatch.setattr(chunking, "CHUNK_CHARS", 50)  # many chunks
    chunks = list(rj.iter_json(report))
    assert len(chunks) > 5
    assert "".join(chunks) == rj.render_json(report) == _reference_json(report)


# ---- real processes: deep indexes, bounded memory, a hang guard ------------------------------------
HANG_GUARD = 600.0  # seconds: only catches a hang; the work takes seconds (docs/robustness.md)


def _levels(args, timeout=HANG_GUARD, mem_gib=2):
    return run_cli(["levels", *args], timeout=timeout, mem_bytes=mem_gib * GIB)


@pytest.fixture(scope="module")
def chains_1000(tmp_path_factory):
    """20 single-child chains of 1,000 levels: a valid 3.x index of 20,000 communities."""
    return single_child_chains_index(tmp_path_factory.mktemp("deep") / "chains", 20, 1000)


def test_parent_chain_200k(tmp_path):
    d = parent_chain_index(tmp_path / "index", 200_000)
    before = snapshot(tmp_path)
    r = _levels([d, "--level", "1", "--max-inflation", "2", "--no-costs", "-f", "json"])
    assert not r.timed_out and r.code == 1, r.stderr
    assert r.stderr == ""
    doc = json.loads(r.stdout)
    # dynamic-fails: every community is at level 0 and each queues its child, so graphrag's selector
    # re-rates the chain's tail wave after wave (~2e10 ratings): the simulation stops it as never ending
    assert {f["rule"] for f in doc["findings"]} == {
        "child-not-subset",
        "level-beyond-max",
        "dynamic-fails",
        "level-not-parent-plus-one",
        "single-child-chain",
    }
    assert doc["depth"]["roots"][0]["descendants"] == 199_999
    assert snapshot(tmp_path) == before


def test_parent_cycle_200k(tmp_path):
    """The same chain closed into one loop: every community is on the cycle."""
    d = parent_cycle_index(tmp_path / "index", 200_000)
    r = _levels([d, "--level", "1", "--max-inflation", "2", "--no-costs", "-f", "json"])
    assert not r.timed_out and r.code == 1, r.stderr
    doc = json.loads(r.stdout)
    cyc = next(f for f in doc["findings"] if f["rule"] == "parent-cycle")
    assert len(cyc["communities"]) == 200_000


def test_1000_levels_full_json_streams(chains_1000):
    """With token costs: >= 2.0 sends 20(N+1) reports at N, 10 million ids over the levels (a
    ~166 MB document). (Its address space peaks near 2.0 GB, most of it reserved unused by
    pyarrow's allocator at the first read, hence a 3 GiB limit here.)"""
    r = _levels([chains_1000, "-f", "json", "--tokenizer", "estimate"], mem_gib=3)
    assert not r.timed_out and r.code == 0, r.stderr[-500:]
    out = r.stdout
    assert out.startswith('{"schema_version":"1.2"') and out.endswith("}\n")
    assert len(out) > 150_000_000
    # the last level (None) lists every community for >= 2.0
    tail = out[out.rindex('{"community_level":null') :]
    assert tail.count(",") > 20_000


def test_1000_levels_level_json(chains_1000):
    """--json-ids level: only the --level entry lists ids, so the document stays small."""
    r = _levels([chains_1000, "-f", "json", "--json-ids", "level", "--no-costs"])
    assert not r.timed_out and r.code == 0, r.stderr[-500:]
    assert len(r.stdout) < 20_000_000
    doc = json.loads(r.stdout)
    assert doc["json_ids"] == "level"
    rules = {f["rule"] for f in doc["findings"]}
    assert rules == {"v2-inflation", "duplicate-level", "single-child-chain", "dynamic-no-descent"}
    assert sum(f["rule"] == "duplicate-level" for f in doc["findings"]) == 999
    want = doc["options"]["level"]
    for r_ in doc["levels"]:
        n = r_["community_level"]
        top = 1000 if n is None else n + 1
        s = r_["selected"]["v2"]
        assert ("community_ids" in s) == (n == want), n
        assert s["count"] == 20 * top and s["ancestors_sent"] == 20 * (top - 1), n


def test_1000_levels_human_formats_are_bounded(chains_1000):
    """Text and Markdown grow with the levels (one table row each), not with levels x ids: the
    ">=2.0 mix" cell lists 7 levels and a count, id lists stop with '… and N more'."""
    md = _levels([chains_1000, "-f", "markdown", "--no-costs"])
    assert md.code == 0, md.stderr[-500:]
    assert len(md.stdout) < 1_000_000 and max(map(len, md.stdout.splitlines())) < 1000
    assert "20/20/20/20/20/20/20/… (+993 levels)" in md.stdout
    assert "… and 19,880 more" in md.stdout  # single-child communities: the first 100 listed
    txt = _levels(
        [chains_1000, "--no-costs", "--level", "3", "--list-reports", "--width", "120", "--color", "never"]
    )
    assert txt.code == 0, txt.stderr[-500:]
    assert len(txt.stdout) < 1_000_000 and max(map(len, txt.stdout.splitlines())) <= 120

"""The bundle's worker counts OUT's report rows for the audit of OUT (bundle/precount.py): the
audit's output is the same with and without those counts, nearly every long string the audit
counts is found among them (a drift in how either side builds the strings fails here), and the
store they live in is never a file (not inside DIR or OUT, not the user's cache)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from synthetic import leiden_like, write_index

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked on Linux only")


@pytest.fixture(scope="module")
def long_reports(tmp_path_factory) -> Path:
    """A small 3.x index whose reports are 1-4 KB (cached strings are >= 256 characters)."""
    d = tmp_path_factory.mktemp("idx")
    write_index(leiden_like(600, seed=3), d, "3.x")
    return d


@pytest.fixture
def with_worker(monkeypatch, tmp_path):
    """The worker runs (even on a one-CPU runner); the user's cache is a directory we can watch."""
    from graphrag_audit.bundle import parallel
    from graphrag_audit.graphrag import token_cache

    monkeypatch.delenv(parallel.SERIAL_ENV, raising=False)
    monkeypatch.setattr(parallel, "_cpus", lambda: 2)
    cache = tmp_path / "user-cache"
    monkeypatch.setenv(token_cache.CACHE_DIR_ENV, str(cache))
    return cache


def _spy_session(monkeypatch):
    """Record the seeded stores the bundle's audit ran in (their seeds, hits and misses)."""
    from graphrag_audit.bundle import build
    from graphrag_audit.graphrag import token_cache

    seen = []
    real = token_cache.seeded_token_session

    from contextlib import contextmanager

    @contextmanager
    def spy(seeds=None):
        with real(seeds) as stores:
            seen.append((seeds, stores))
            yield stores

    monkeypatch.setattr(build, "seeded_token_session", spy)
    return seen


def _bundle(index: Path, out: Path) -> None:
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.bundle.build import plan_bundle, write_bundle
    from graphrag_audit.render.json import render_json

    def extra(path, result):
        return {"audit.json": render_json(audit(path)).encode("utf-8")}

    write_bundle(plan_bundle(index), out, extra=extra)


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def _without_paths(x):
    if isinstance(x, dict):
        return {k: _without_paths(v) for k, v in x.items() if k not in ("path", "output_dir", "name")}
    if isinstance(x, list):
        return [_without_paths(v) for v in x]
    return x


def test_the_audit_finds_the_workers_counts_and_gives_the_same_bundle(long_reports, tmp_path, monkeypatch,
                                                                     with_worker):
    from graphrag_audit.bundle import parallel

    seen = _spy_session(monkeypatch)
    before = sorted(os.listdir(long_reports))
    _bundle(long_reports, tmp_path / "seeded")
    assert sorted(os.listdir(long_reports)) == before
    assert len(seen) == 1, "the worker's counts did not reach the audit of OUT"
    seeds, stores = seen[0]
    (name, entries), = seeds.items()
    store = stores[name]
    # every long string the audit counted (report rows, rating prompts) was among the worker's
    assert store.hits > 0 and store.misses == 0, (store.hits, store.misses)
    # and the worker counted no string the audit does not build (each seed was looked up)
    assert store.hits >= len(entries)
    assert not with_worker.exists(), "the bundle's audit wrote the user's token cache"
    # nothing but the tables and the audit in OUT (no store file), nothing new in DIR
    assert sorted(p.name for p in (tmp_path / "seeded").iterdir()) == sorted(
        [p.name for p in long_reports.iterdir()] + ["audit.json"])

    monkeypatch.setenv(parallel.SERIAL_ENV, "1")  # no worker: the audit counts every string itself
    _bundle(long_reports, tmp_path / "serial")
    assert len(seen) == 1  # no seeded session without a worker
    seeded, serial = _files(tmp_path / "seeded"), _files(tmp_path / "serial")
    a, b = json.loads(seeded.pop("audit.json")), json.loads(serial.pop("audit.json"))
    assert a["levels"] and any(s["tokens_exact"] for lv in a["levels"] for s in lv["selected"].values()
                               if "tokens_exact" in s)
    assert _without_paths(a) == _without_paths(b)
    assert seeded == serial


def test_seeded_counts_are_what_the_audit_counts_without_them(long_reports, tmp_path):
    """The pre-counter's entries equal the backend's own counts of the audit's strings, and an
    audit run in a store seeded with them gives the unseeded audit's report."""
    from graphrag_audit.analysis.audit import audit
    from graphrag_audit.bundle.precount import TOKENIZER, PreCounter, pack, unpack, weight_column
    from graphrag_audit.graphrag.token_cache import seeded_token_session
    from graphrag_audit.io.locate import locate_index
    from graphrag_audit.render.json import render_json

    files = locate_index(long_reports)
    entries = PreCounter(files.tables["reports"], weight_column(files.tables.get("entities"))).run()
    assert entries and unpack(pack(entries)) == entries
    plain = render_json(audit(long_reports))
    with seeded_token_session({TOKENIZER: entries}) as stores:
        seeded = render_json(audit(long_reports))
    assert stores[TOKENIZER].misses == 0 and stores[TOKENIZER].hits >= len(entries)
    assert seeded == plain
    # wrong counts would show: the seeds are really used (a corrupted store changes the tokens)
    wrong = {k: v + 1 for k, v in entries.items()}
    with seeded_token_session({TOKENIZER: wrong}):
        assert render_json(audit(long_reports)) != plain


def test_the_row_texts_are_the_ones_row_measures_counts(long_reports):
    """row_measures (the audit) and the pre-counter build their strings with one function: a
    recording counter sees exactly the strings row_part_texts yields."""
    import numpy as np

    from graphrag_audit.graphrag.context import row_measures, row_part_texts
    from graphrag_audit.graphrag.tokens import get_token_counter
    from graphrag_audit.io.load import load_index

    inner = get_token_counter("cl100k_base")
    seen: list[str] = []

    class Recording:
        additive, exact, name = True, True, inner.name

        def measure_many(self, texts):
            seen.extend(texts)
            return inner.measure_many(texts)

    rep = load_index(long_reports).reports
    ranks = rep["rank"].to_numpy(dtype=np.float64)
    rows = np.flatnonzero(ranks >= 0)
    for weight in (True, False):
        seen.clear()
        row_measures(Recording(), rep["community"].to_numpy(), rep["title"], rep["content"], ranks,
                     with_weight=weight, rows=rows)
        built = [t for _idx, parts in row_part_texts(rep["community"].to_numpy(), rep["title"], rep["content"],
                                                     ranks, rows, with_weight=weight)
                 for part in parts for t in part]
        assert sorted(seen) == sorted(built) and len(seen) == len(rows) * (2 if weight else 1)


def test_a_failing_count_leaves_the_audit_to_count(long_reports, tmp_path, monkeypatch, with_worker):
    """An error in the worker's counting sends nothing: the audit counts every string itself."""
    from graphrag_audit.bundle import precount

    def broken(self):
        raise RuntimeError("fails in the worker")
        yield  # pragma: no cover

    monkeypatch.setattr(precount.PreCounter, "steps", broken)
    seen = _spy_session(monkeypatch)
    _bundle(long_reports, tmp_path / "out")
    assert seen == []
    assert (tmp_path / "out" / "audit.json").exists()
    assert os.path.isdir(tmp_path / "out")


def test_a_count_job_split_anywhere_counts_what_one_job_counts(long_reports):
    """The units of a count job counted in two parts, split anywhere (as the worker and the parent
    split what is left when the parent collects), give exactly the counts of one whole run, each
    string counted once; a table that cuts into another number of units is counted by no one."""
    from graphrag_audit.bundle.parallel import count_rest
    from graphrag_audit.bundle.precount import PreCounter

    reports = next(long_reports.glob("community_reports.parquet"))
    whole = PreCounter(reports, True).run()
    total = PreCounter(reports, True).prepare()
    assert whole and total >= 2
    for split in (0, 1, total // 2, total - 1, total):
        head = PreCounter(reports, True)
        head.prepare()
        head.stop = split
        first = head.run()
        rest = count_rest(reports, True, split, total)
        assert {**first, **rest} == whole
        assert (not first) == (split == 0) and (not rest) == (split == total)
    assert count_rest(reports, True, 0, total + 1) == {}

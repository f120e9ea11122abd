"""graphrag-audit bundle's second process (bundle/parallel.py): the same bytes as the serial path,
and every failure of the worker falls back to filling in the parent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from test_bundle import _adversarial_texts

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is forked on Linux only")


@pytest.fixture
def split_everything(monkeypatch):
    """Every column of at least two distinct values is split (the fixtures are small), and the
    parent's submissions are counted."""
    from graphrag_audit.bundle import parallel

    monkeypatch.setattr(parallel, "MIN_SPLIT", 2)
    monkeypatch.delenv(parallel.SERIAL_ENV, raising=False)
    monkeypatch.setattr(parallel, "_cpus", lambda: 2)
    sent = []
    submit = parallel.Worker.submit

    def counted(self, uniq):
        ok = submit(self, uniq)
        sent.append((len(uniq), ok))
        return ok

    monkeypatch.setattr(parallel.Worker, "submit", counted)
    return sent


def _files(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


@pytest.mark.parametrize("name", ["seed-v3", "seed-v1", "seed-v3-csv"])
def test_bundles_with_and_without_the_worker_are_byte_identical(name, tmp_path, monkeypatch, split_everything):
    from graphrag_audit.bundle import parallel
    from graphrag_audit.bundle.build import plan_bundle, write_bundle

    write_bundle(plan_bundle(FIXTURES / name), tmp_path / "parallel")
    sent = list(split_everything)
    monkeypatch.setenv(parallel.SERIAL_ENV, "1")
    assert not parallel.available()
    write_bundle(plan_bundle(FIXTURES / name), tmp_path / "serial")
    assert len(split_everything) == len(sent)  # the serial bundle sent nothing
    if name != "seed-v3-csv":  # CSV tables are filled value by value, in the parent
        assert sent and all(ok for _, ok in sent)
    assert _files(tmp_path / "parallel") == _files(tmp_path / "serial")


def test_the_worker_fills_as_the_filler_does(split_everything):
    """The column filler with a worker gives Filler.text value by value (half the distinct values
    come back from the worker), for both string types."""
    from graphrag_audit.bundle import parallel
    from graphrag_audit.bundle.batch import ColumnFiller
    from graphrag_audit.bundle.filler import Filler

    texts = _adversarial_texts(7, 600)
    one = Filler()
    want = [one.text(t) if t else t for t in texts]
    columns = ColumnFiller(Filler())
    with parallel.second_process(columns) as worker:
        assert worker is not None and columns.worker is worker
        for typ in (pa.string(), pa.large_string()):
            got = columns.array(pa.array(texts, type=typ))
            assert got.type == typ and got.to_pylist() == want
    assert columns.worker is None and not worker.process.is_alive()
    assert len(split_everything) == 2 and all(ok for _, ok in split_everything)


class _FailsInWorker:
    """A ColumnFiller whose fill raises in any process but the one that made it."""

    def __init__(self):
        from graphrag_audit.bundle.batch import ColumnFiller
        from graphrag_audit.bundle.filler import Filler

        self.inner, self.pid = ColumnFiller(Filler()), os.getpid()

    def fill(self, uniq):
        if os.getpid() != self.pid:
            raise RuntimeError("fails in the worker")
        return self.inner.fill(uniq)


def test_a_failure_in_the_worker_is_filled_in_the_parent(split_everything):
    from graphrag_audit.bundle import parallel
    from graphrag_audit.bundle.batch import ColumnFiller
    from graphrag_audit.bundle.filler import Filler

    texts = _adversarial_texts(8, 300)
    one = Filler()
    want = [one.text(t) if t else t for t in texts]
    flaky = _FailsInWorker()
    with parallel.second_process(flaky) as worker:
        assert worker.submit(pa.array(["a text", "another one"]))
        assert worker.result() is None  # the worker's error: nothing usable back
        assert worker.alive
        columns = ColumnFiller(Filler())
        columns.worker = worker  # the worker fails every part: the parent fills it all
        assert columns.array(pa.array(texts)).to_pylist() == want
    # a worker that died: submit or result says so, the parent fills, the worker is not used again
    columns = ColumnFiller(Filler())
    with parallel.second_process(columns) as worker:
        worker.process.kill()
        worker.process.join()
        assert columns.array(pa.array(texts)).to_pylist() == want
        assert not worker.alive
        assert not worker.submit(pa.array(["x"]))


def test_serial_when_asked(monkeypatch):
    from graphrag_audit.bundle import parallel
    from graphrag_audit.bundle.batch import ColumnFiller
    from graphrag_audit.bundle.filler import Filler

    monkeypatch.setenv(parallel.SERIAL_ENV, "1")
    columns = ColumnFiller(Filler())
    with parallel.second_process(columns) as worker:
        assert worker is None and columns.worker is None
    monkeypatch.delenv(parallel.SERIAL_ENV)
    monkeypatch.setattr(parallel, "_cpus", lambda: 2)
    assert parallel.available()
    import threading

    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not parallel.available()  # no fork beside another thread
    finally:
        stop.set()
        other.join()
    monkeypatch.setattr(parallel, "_cpus", lambda: 1)
    assert not parallel.available()


def _without_paths(x):
    if isinstance(x, dict):
        return {k: _without_paths(v) for k, v in x.items() if k not in ("path", "output_dir", "name", "timings")}
    if isinstance(x, list):
        return [_without_paths(v) for v in x]
    return x


def test_the_bundles_audit_is_a_from_scratch_audit_of_out(tmp_path):
    """audit.json inside OUT equals ``levels OUT -f json`` run afterwards (paths set aside)."""
    out = tmp_path / "out"
    run = dict(cwd=ROOT, capture_output=True, text=True, timeout=600)
    proc = subprocess.run([sys.executable, "-m", "graphrag_audit", "bundle", "fixtures/seed-v3", "-o", str(out)], **run)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "graphrag_audit", "levels", str(out), "-f", "json", "--fail-on",
                           "never", "--no-token-cache"], **run)
    assert proc.returncode == 0, proc.stderr
    inside = json.loads((out / "audit.json").read_text())
    again = json.loads(proc.stdout)
    assert inside["index"]["path"] == str(out)
    assert _without_paths(inside) == _without_paths(again)

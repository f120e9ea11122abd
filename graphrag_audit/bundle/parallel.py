"""A second process for the column filler: about half of every large column is filled there.

The filler is a pure function of the text (:meth:`Filler.text`: the same value always gives the
same filler, whatever was filled before; its caches only save work), so the distinct values of a
column can be filled anywhere and put back in order. :func:`second_process` forks one worker
process holding a copy of the :class:`~graphrag_audit.bundle.batch.ColumnFiller` (made before the
fork, so nothing is pickled but arrow arrays); for a column of at least :data:`MIN_SPLIT`
distinct values, :meth:`ColumnFiller.array` sends the values after :func:`split_at` (a little over
half) to the worker (arrow IPC over a pipe), fills the others itself meanwhile and appends the
worker's part. The output is the one the serial path gives (``tests/test_bundle_parallel.py``
compares whole bundles made both ways byte by byte, and the column filler with a worker with
:meth:`Filler.text` value by value).

Once OUT's reports table is written, :meth:`Worker.count` also has the worker count, between
fills (a fill request always goes first), the strings the audit of OUT will count
(:mod:`graphrag_audit.bundle.precount`); :meth:`Worker.counts` collects them before the audit, and
the parent's share of a split column is :data:`COUNTING_PARENT_SHARE` meanwhile.

The worker only computes: it never writes a file, and the parent writes every output. Anything
that goes wrong in it (an error while filling, such as :class:`FillerError`; the process dying)
sends nothing usable back, and the parent fills that part itself, so an error is raised where the
serial path raises it. A worker that died is not used again.

Serial (no worker) when the environment variable :data:`SERIAL_ENV` is ``1``, when the platform
has no ``fork`` start method (Windows; macOS, where forking a process that loaded arrow is not
safe), when the process runs other Python threads (a library caller's) or when it may run on one
CPU only.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyarrow as pa

#: ``GRAPHRAG_AUDIT_BUNDLE_SERIAL=1``: fill every column in this process
SERIAL_ENV = "GRAPHRAG_AUDIT_BUNDLE_SERIAL"
#: a column with fewer distinct values than this is filled in this process (not worth the transfer)
MIN_SPLIT = 4096
#: the parent's share of a split column's distinct values: half (the parent also encodes, sends and
#: reassembles the column, but at 0.45 it waited for the worker's part; docs/performance.md, S8)
PARENT_SHARE = 0.5


#: the parent's share while the worker also counts OUT's report rows (``Worker.count``)
COUNTING_PARENT_SHARE = 0.6


def split_at(n: int, share: float = PARENT_SHARE) -> int:
    """Where a column of ``n`` distinct values is split: the parent fills ``[0, split_at(n))``."""
    return max(1, min(n - 1, int(n * share)))


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def available() -> bool:
    """Whether :func:`second_process` starts a worker here."""
    if os.environ.get(SERIAL_ENV, "").strip() == "1":
        return False
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return False  # pragma: no cover - not Linux
    if threading.active_count() > 1:  # forking a process that runs other threads is not safe
        return False
    return _cpus() >= 2


def _to_ipc(arr: pa.Array) -> pa.Buffer:
    batch = pa.RecordBatch.from_arrays([arr], ["v"])
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as w:
        w.write_batch(batch)
    return sink.getvalue()


def _from_ipc(data) -> pa.Array:
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    return table.column(0).combine_chunks()


_FILL, _COUNT, _COLLECT, _SPLIT = b"F", b"C", b"R", b"S"


def _serve(conn, parent_end, columns) -> None:  # pragma: no cover - runs in the worker (tested through bundles)
    """The worker: fill each array received, send the filled array back (an empty message when
    filling failed); between fills, count OUT's report rows (:mod:`~graphrag_audit.bundle.precount`)
    once asked to, and send the counts when collected (empty when counting failed); end when the
    parent closes the pipe."""
    parent_end.close()  # the parent's end, inherited by the fork: else closing it there is no EOF here
    pc = steps = None  # the count job (PreCounter, its steps) until collected; fills go first
    while True:
        if steps is not None:
            try:
                waiting = conn.poll(0)
            except (EOFError, OSError):
                return
            if not waiting:
                try:
                    next(steps)
                except StopIteration:
                    steps = None  # done: the counts wait for the collect message
                except Exception:  # noqa: BLE001 - the audit counts these rows itself
                    pc = steps = None
                continue
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        kind, body = data[:1], data[1:]
        if kind == _COUNT:
            try:
                from graphrag_audit.bundle.precount import PreCounter, weight_column

                paths = [os.fsdecode(p) for p in body.split(b"\0")]
                pc = PreCounter(Path(paths[0]), weight_column(Path(paths[1]) if paths[1] else None))
                steps = pc.steps()
            except Exception:  # noqa: BLE001 - the audit counts these rows itself
                pc = steps = None
            continue
        if kind == _COLLECT:
            # what is left of the count job is split: this process counts the first half of the
            # units left, the parent the rest (the header says where: the split, the number of
            # units, the weight column); then the counts follow (empty when counting failed)
            head = b""
            if pc is not None:
                try:
                    total = pc.prepare()
                    pc.stop = pc.position + (pc.stop - pc.position + 1) // 2
                    head = pc.stop.to_bytes(8, "little") + total.to_bytes(8, "little") + bytes([pc.with_weight])
                except Exception:  # noqa: BLE001 - the audit counts these rows itself
                    pc = steps = None
            try:
                conn.send_bytes(_SPLIT + head)
            except (BrokenPipeError, OSError):
                return
            reply = b""
            try:
                if pc is not None:
                    from graphrag_audit.bundle.precount import pack

                    for _ in steps or ():
                        pass
                    reply = pack(pc.entries)
            except Exception:  # noqa: BLE001 - the audit counts these rows itself
                reply = b""
            pc = steps = None
        else:
            try:
                uniq = _from_ipc(body)
                reply = _to_ipc(columns.fill(uniq).cast(uniq.type))
            except Exception:  # noqa: BLE001 - the parent fills this part itself and raises there
                reply = b""
        try:
            conn.send_bytes(reply)
        except (BrokenPipeError, OSError):
            return


class Worker:
    """One forked process filling arrays with a copy of ``columns`` (a ColumnFiller)."""

    def __init__(self, columns):
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe(duplex=True)
        self.process = ctx.Process(target=_serve, args=(child, self.conn, columns), daemon=True,
                                   name="graphrag-audit-bundle-filler")
        self.process.start()
        child.close()
        self.alive = True
        self.pending = False
        self.counting = False
        #: the parent's share of a split column (larger while the worker also counts)
        self.parent_share = PARENT_SHARE

    def submit(self, uniq: pa.Array) -> bool:
        """Send ``uniq`` (a string array without nulls) to be filled; False when the worker is gone."""
        if not self.alive:
            return False
        try:
            self.conn.send_bytes(_FILL + _to_ipc(uniq))
        except (BrokenPipeError, OSError):
            self.alive = False
            return False
        self.pending = True
        return True

    def result(self) -> pa.Array | None:
        """The filled array for the last :meth:`submit`, or None when the worker failed on it."""
        if not self.pending:
            return None
        self.pending = False
        try:
            data = self.conn.recv_bytes()
        except (EOFError, OSError):
            self.alive = False
            return None
        if not data:
            return None
        return _from_ipc(data)

    def count(self, reports_path: Path, entities_path: Path | None) -> bool:
        """Start counting the row texts of OUT's reports table at ``reports_path`` (between fills);
        ``entities_path``: the index's entities table (whether the rows have a weight column)."""
        if not self.alive or self.pending:
            return False
        try:
            self.conn.send_bytes(_COUNT + os.fsencode(str(reports_path)) + b"\0"
                                 + (os.fsencode(str(entities_path)) if entities_path is not None else b""))
        except (BrokenPipeError, OSError):
            self.alive = False
            return False
        self.counting = True
        self.reports_path = Path(reports_path)
        self.parent_share = COUNTING_PARENT_SHARE
        return True

    def counts(self) -> dict[bytes, int] | None:
        """The counts of the job :meth:`count` started; None when it failed. What the worker has not
        counted yet is split: the worker counts half of it while this process counts the other half
        (:func:`count_rest`), so neither waits for the other to count alone."""
        if not self.counting or not self.alive or self.pending:
            return None
        self.counting = False
        self.parent_share = PARENT_SHARE
        try:
            self.conn.send_bytes(_COLLECT)
            head = self.conn.recv_bytes()
        except (EOFError, OSError):
            self.alive = False
            return None
        own: dict[bytes, int] = {}
        if len(head) == 18 and head[:1] == _SPLIT:
            split, total = int.from_bytes(head[1:9], "little"), int.from_bytes(head[9:17], "little")
            own = count_rest(self.reports_path, bool(head[17]), split, total)
        try:
            data = self.conn.recv_bytes()
        except (EOFError, OSError):
            self.alive = False
            data = b""
        got = None
        if data:
            from graphrag_audit.bundle.precount import unpack

            try:
                got = unpack(data)
            except ValueError:
                got = None
        if got is None:
            return own or None
        got.update(own)
        return got

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            self.process.join(timeout=30)
            if self.process.is_alive():  # pragma: no cover - a worker stuck in a fill
                self.process.kill()
                self.process.join()


def count_rest(reports_path: Path, with_weight: bool, start: int, total: int) -> dict[bytes, int]:
    """Count units ``[start, total)`` of the count job on ``reports_path`` in this process (empty
    when the table cuts into another number of units, or when counting fails: the audit counts
    what no one counted)."""
    from graphrag_audit.bundle.precount import PreCounter

    try:
        pc = PreCounter(reports_path, with_weight)
        if pc.prepare() != total or not 0 <= start <= total:
            return {}
        pc.position, pc.stop = start, total
        return pc.run()
    except Exception:  # noqa: BLE001 - the audit counts these rows itself
        return {}


@contextmanager
def second_process(columns) -> Iterator[Worker | None]:
    """Within the block, ``columns`` (a ColumnFiller) fills half of every large column in a worker
    process (``columns.worker``); None and serial when :func:`available` says no."""
    worker = Worker(columns) if available() else None
    columns.worker = worker
    try:
        yield worker
    finally:
        columns.worker = None
        if worker is not None:
            worker.close()

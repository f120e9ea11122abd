"""The costs of every selection, computed in worker threads beside the rest of the audit.

This is the one place the audit runs work concurrently. Most of the cost work is arrow and numpy
code that releases the GIL, so while the main thread checks the tree and computes the per-level
statistics, two workers prepare what no selection changes (occurrence counts, each report's row
measure; graphrag < 2.0's occurrence counts from ``create_final_nodes``) and then pack every
costed selection into map batches; a last job may follow (the dynamic simulation, which needs
the prepared coster but no cost). The caller sees these steps::

    with BackgroundCosts(model, options) as bg:      # preparation starts
        ...                                          # the tree checks, in this thread
        bg.pack(selections)                          # the packing starts in the workers
        job = bg.with_coster(fn)                     # fn(coster) queued after the packing
        ...                                          # the per-level statistics, in this thread
        costs = bg.result(progress)                  # join
        ... job.result() ...
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from graphrag_audit.analysis.costs import (
    ContextCoster,
    V1TextUnitCounts,
    level_costs,
    prepared_coster,
    selection_costs,
)
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import AuditOptions

T = TypeVar("T")


def _then(between_phases: Callable[[], None] | None, fn, *args):
    """``fn(*args)``, then ``between_phases()`` (the CLI gives freed temporaries back to the OS
    there before the next phase)."""
    try:
        return fn(*args)
    finally:
        if between_phases is not None:
            between_phases()


class BackgroundCosts:
    """Tokens and map calls of every selection (``costs.level_costs``), prepared in workers."""

    def __init__(
        self, model: IndexModel, options: AuditOptions, between_phases: Callable[[], None] | None = None
    ):
        self._model, self._options, self._between_phases = model, options, between_phases
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphrag-audit")
        self._prepared = self._pool.submit(
            _then, between_phases, prepared_coster, model, options.tokenizer, options.max_context_tokens
        )
        # graphrag < 2.0 weighs by create_final_nodes (None when the model has no node ids)
        self._v1_counts = self._pool.submit(
            _then, between_phases, V1TextUnitCounts.of, model, lambda: self._prepared.result().counts
        )
        self._selections: dict | None = None
        self._v1: Future | None = None
        self._others: list[Future] = []

    def pack(self, selections: dict) -> None:
        """Start packing every costed selection in the workers: graphrag < 2.0's (they need the
        v1 counts), then >= 2.0's and the level-only ones, while this thread computes the
        per-level statistics (two cores: the packing no longer waits for them)."""
        self._selections = selections
        self._v1 = self._pool.submit(self._v1_costs, selections)
        self._others = [self._pool.submit(self._costs, selections, (b,)) for b in ("v2", "level_only")]

    def with_coster(self, fn: Callable[[ContextCoster], T]) -> Future[T]:
        """``fn(the prepared coster)``, run in a worker after the jobs already queued (the
        dynamic simulation: it needs the coster's tokenizer and batching, not the costs)."""
        return self._pool.submit(_then, self._between_phases, lambda: fn(self._prepared.result()))

    def _costs(self, selections: dict, behaviours: tuple[str, ...]) -> dict:
        return selection_costs(self._prepared.result(), selections, behaviours)

    def _v1_costs(self, selections: dict) -> dict:
        coster = self._prepared.result()
        coster.use_v1_counts(self._v1_counts.result())
        return selection_costs(coster, selections, ("v1",))

    def result(self, progress: Callable[[str], None] | None = None) -> dict:
        """Wait for the packing started by :meth:`pack`, and return
        ``costs.level_costs`` of every selection given to :meth:`pack`."""
        if self._selections is None or self._v1 is None:
            raise RuntimeError("BackgroundCosts.result() before pack()")
        results = {}
        for done in self._others + [self._v1]:
            results.update(done.result())
        return level_costs(self._model, self._selections, self._options, progress=progress, results=results)

    def coster(self):
        """The prepared :class:`~graphrag_audit.analysis.costs.ContextCoster` (waits for it)."""
        return self._prepared.result()

    def close(self, cancel: bool = False) -> None:
        """Wait for the workers to finish every queued job; ``cancel`` (a failure elsewhere) drops
        the jobs that have not started instead. Without a failure nothing is dropped: a job queued
        by :meth:`with_coster` may not have started when the caller leaves the ``with`` block, and
        the caller reads its result after it."""
        self._pool.shutdown(wait=True, cancel_futures=cancel)

    def __enter__(self) -> BackgroundCosts:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(cancel=exc_type is not None)

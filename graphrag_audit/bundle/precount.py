"""Counting OUT's report rows in the worker, while the parent writes the other tables.

The bundle ends with the audit of OUT, whose exact cl100k_base counting of every report row's
fixed text (:func:`graphrag_audit.graphrag.context.row_measures`) is most of its time. As soon as
OUT's reports table is written, :class:`PreCounter` (run in the worker process of
:mod:`graphrag_audit.bundle.parallel`) reads it back with the audit's own reader
(:func:`graphrag_audit.io.load.reports_frame`), builds the strings with the audit's own code
(:func:`graphrag_audit.graphrag.context.row_part_texts`, for the rows the rank filter keeps) and
counts the long ones, and the dynamic selection's rating prompts of the reports
(:func:`graphrag_audit.graphrag.dynamic.rating_texts`), (those a token store keeps, :data:`~graphrag_audit.graphrag.token_cache.MIN_CHARS`
characters or more). The parent then runs the audit of OUT inside a
:func:`~graphrag_audit.graphrag.token_cache.seeded_token_session`: an in-memory store holding these
counts, keyed by the digest of the exact text (never a file; not the user's cache). A string the
audit builds differently is a miss, counted afresh, so the audit's numbers are the same with or
without the counts (``tests/test_bundle_precount.py``).

The weight column (which strings: ``id|title|`` + ``|content|rank\\n``, or the whole row) follows
the audit's rule (``analysis.costs``: a weight column when the entities carry text units), read
from the entities table; a wrong guess only costs misses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np

#: the tokenizer the bundle's audit of OUT counts with (a bundle has no settings file)
TOKENIZER = "cl100k_base"
#: the query the bundle's audit of OUT rates with (graphrag's default: a bundle has no settings file)
RATING_QUERY = ""
#: report rows built and counted per step (the worker answers fill requests between steps)
CHUNK = 2048


def weight_column(entities_path: Path | None) -> bool:
    """Whether the audit of OUT packs with a weight column: the entities carry text units
    (``analysis.costs._entity_text_units_absent`` is false; the bundle keeps text-unit ids and nulls)."""
    if entities_path is None:
        return False
    from graphrag_audit.io.tables import read_table

    try:
        df = read_table(Path(entities_path), ["text_unit_ids"])
    except Exception:  # noqa: BLE001 - a guess only: the audit decides (and reports any error)
        return True
    return "text_unit_ids" in df.columns and not bool(df["text_unit_ids"].isna().all())


class PreCounter:
    """The counts of the long row texts of the reports table at ``reports_path``.

    The work is cut into units (:data:`CHUNK` rows of row parts, then :data:`CHUNK` rating prompts);
    :meth:`steps` counts the units from :attr:`position` up to :attr:`stop`, one per step, and
    :attr:`stop` may be lowered between steps: the rest can be counted by another PreCounter of the
    same table (:meth:`Worker.counts` splits what is left between the worker and the parent)."""

    def __init__(self, reports_path: Path, with_weight: bool, tokenizer: str = TOKENIZER,
                 rating_prompts: bool = True):
        self.reports_path = Path(reports_path)
        self.rating_prompts = rating_prompts
        self.with_weight = bool(with_weight)
        self.tokenizer = tokenizer
        self.entries: dict[bytes, int] = {}
        #: the next unit to count, and where to stop (the number of units once :meth:`prepare` ran)
        self.position = 0
        self.stop: int | None = None
        self._units: list[tuple[str, int]] | None = None

    def prepare(self) -> int:
        """Read the table and cut the work into units (once); the number of units."""
        if self._units is None:
            from graphrag_audit.graphrag.token_cache import MIN_CHARS, digest
            from graphrag_audit.graphrag.tokens import get_token_counter
            from graphrag_audit.io.load import reports_frame

            self._counter = get_token_counter(self.tokenizer)
            self._min, self._digest = MIN_CHARS, digest
            rep = reports_frame(self.reports_path)
            self._rep = rep
            # the report rows graphrag's rank filter keeps (ContextCoster.fixed_measures)
            self._ranks = rep["rank"].to_numpy(dtype=np.float64)
            self._rows = np.flatnonzero(self._ranks >= 0)
            units = [("rows", a) for a in range(0, len(self._rows), CHUNK)]
            if self.rating_prompts:
                # the dynamic selection's rating prompts (analysis.dynamic.dynamic_input: the content column,
                # graphrag's default use_summary=False and query "": a bundle has no settings file)
                self._descriptions = rep["content"].to_numpy(dtype=object)
                units += [("rating", a) for a in range(0, len(self._descriptions), CHUNK)]
            self._units = units
            if self.stop is None:
                self.stop = len(units)
        return len(self._units)

    def _count(self, texts: list[str]) -> None:
        entries, digest, min_chars = self.entries, self._digest, self._min
        new = [(k, t) for t in dict.fromkeys(texts) if len(t) >= min_chars
               for k in (digest(t),) if k not in entries]
        if new:
            entries.update(zip((k for k, _t in new), self._counter.count_many([t for _k, t in new]).tolist()))

    def count_unit(self, unit: int) -> None:
        """Count the strings of one unit."""
        from graphrag_audit.graphrag.context import row_part_texts
        from graphrag_audit.graphrag.dynamic import rating_texts

        kind, a = self._units[unit]
        rep = self._rep
        if kind == "rows":
            for _idx, parts in row_part_texts(rep["community"].to_numpy(), rep["title"], rep["content"],
                                              self._ranks, self._rows[a:a + CHUNK],
                                              with_weight=self.with_weight, chunk=CHUNK):
                for part in parts:
                    self._count(part)
        else:
            self._count(rating_texts(self._descriptions[a:a + CHUNK], RATING_QUERY))

    def steps(self) -> Iterator[None]:
        """Count one unit per step, from :attr:`position` to :attr:`stop` (read afresh before each
        unit), so the caller can do other work between steps (the first step reads the table)."""
        self.prepare()
        yield
        while self.position < self.stop:
            self.count_unit(self.position)
            self.position += 1
            yield

    def run(self) -> dict[bytes, int]:
        for _ in self.steps():
            pass
        return self.entries


def pack(entries: dict[bytes, int]) -> bytes:
    """``entries`` as bytes: the digests, then the counts (uint32, little-endian)."""
    from graphrag_audit.graphrag.token_cache import DIGEST_SIZE

    keep = [(k, v) for k, v in entries.items() if len(k) == DIGEST_SIZE and 0 <= v < 2**32]
    counts = np.fromiter((v for _k, v in keep), dtype="<u4", count=len(keep))
    return len(keep).to_bytes(8, "little") + b"".join(k for k, _v in keep) + counts.tobytes()


def unpack(data: bytes) -> dict[bytes, int]:
    """The inverse of :func:`pack` (ValueError when the bytes do not hold one)."""
    from graphrag_audit.graphrag.token_cache import DIGEST_SIZE

    if len(data) < 8:
        raise ValueError("too short")
    n = int.from_bytes(data[:8], "little")
    if len(data) != 8 + n * (DIGEST_SIZE + 4):
        raise ValueError("bad size")
    keys = data[8:8 + n * DIGEST_SIZE]
    counts = np.frombuffer(data, dtype="<u4", count=n, offset=8 + n * DIGEST_SIZE).tolist()
    return dict(zip((keys[i:i + DIGEST_SIZE] for i in range(0, n * DIGEST_SIZE, DIGEST_SIZE)), counts))

"""The filler of a whole arrow column at once: what :meth:`Filler.text` gives for each value, faster.

:meth:`Filler.text` checks every cell with four whole-text token counts (the filler and the original,
alone and between ``|`` separators) and fills the text chunk by chunk in Python. For a column this
module gives the same output with far less work, exactly:

* every distinct value is handled once (``dictionary_encode``);
* the values are cut into chunks in their UTF-8 bytes (:func:`cut_offsets`, numpy): before every
  space that sits between two non-space characters, a place where every cl100k pre-token ends (the
  places ``filler._CHUNK`` splits at; whitespace is the ``regex`` module's ``\\s``,
  :data:`WHITESPACE`); a value's first chunk is filled and counted once per distinct first chunk;
* each distinct chunk is filled and counted once (original and filler; a value's last chunk also
  with a ``|`` after it); a value of one chunk is counted directly, as :meth:`Filler.text` does;
* a text's token count is the sum of its chunks' counts, because a text's count is the sum of its
  pre-tokens' counts and every cut is a pre-token boundary. Between ``|`` separators only the first
  and last chunk change (``"|" + first`` and ``last + "|"`` are counted as they are). The filler's
  chunks are cut at the same kind of place (checked per chunk: a chunk that starts with a space and a
  non-space character, or ends with a non-space character, must have a filler that does the same),
  so its count is derived the same way.

A value whose derived counts differ from the original's, or whose chunks fail that check, goes
through :meth:`Filler._fix` with direct counts, as :meth:`Filler.text` does; the output is the
same string :meth:`Filler.text` returns (``tests/test_bundle.py`` compares both, and the derived
counts with direct ones, on adversarial text).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from graphrag_audit.bundle.filler import Filler

#: the code points the ``regex`` module's ``\s`` matches (Unicode White_Space), which is what
#: ``filler._CHUNK`` and tiktoken's pattern mean by whitespace (a test checks this list)
WHITESPACE = (
    0x9,
    0xA,
    0xB,
    0xC,
    0xD,
    0x20,
    0x85,
    0xA0,
    0x1680,
    *range(0x2000, 0x200B),
    0x2028,
    0x2029,
    0x202F,
    0x205F,
    0x3000,
)
_WS = frozenset(map(chr, WHITESPACE))
#: the UTF-8 encodings of the whitespace characters, by length
_WS_BYTES = tuple(
    tuple(c.encode("utf-8") for c in map(chr, WHITESPACE) if len(c.encode("utf-8")) == k) for k in (1, 2, 3)
)
_NO_BYTES = np.zeros(0, dtype=np.uint8)


_WS_SINGLE = np.zeros(256, dtype=bool)
_WS_SINGLE[[e[0] for e in _WS_BYTES[0]]] = True
#: the first and the last bytes of the longer whitespace encodings (the only positions looked at further)
_WS_LEAD = np.zeros(256, dtype=bool)
_WS_LEAD[[e[0] for k in (1, 2) for e in _WS_BYTES[k]]] = True
_WS_TAIL = np.zeros(256, dtype=bool)
_WS_TAIL[[e[-1] for k in (1, 2) for e in _WS_BYTES[k]]] = True


def _whitespace_at(
    data: np.ndarray, at: np.ndarray, lo: np.ndarray, hi: np.ndarray, *, ending: bool
) -> np.ndarray:
    """Per position: whether a whitespace character starts at ``at`` (``ending``: ends just before
    ``at``), within ``[lo, hi)`` (the value's bytes; the UTF-8 is valid, so a lead byte is followed by
    its continuation bytes and no whitespace encoding is the tail of a longer character)."""
    top = len(data) - 1
    edge = np.clip(at - 1 if ending else at, 0, top)
    byte = data[edge]
    out = _WS_SINGLE[byte] & ((at - 1 >= lo) if ending else (at < hi))
    maybe = np.flatnonzero(_WS_TAIL[byte] if ending else _WS_LEAD[byte])
    if len(maybe):
        at, lo, hi = at[maybe], lo[maybe], hi[maybe]
        longer = np.zeros(len(maybe), dtype=bool)
        for k in (2, 3):
            first = at - k if ending else at
            inside = (first >= lo) & (first + k <= hi)
            got = [data[np.clip(first + j, 0, top)] for j in range(k)]
            for enc in _WS_BYTES[k - 1]:
                hit = inside.copy()
                for j in range(k):
                    hit &= got[j] == enc[j]
                longer |= hit
        out[maybe] |= longer
    return out


def cut_offsets(data: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """The byte offsets (into ``data``, sorted) of every space that sits between two non-space
    characters inside a value (``offs``: the values' offsets into ``data``): where ``filler._CHUNK``
    cuts (``(?<=\\S)(?= \\S)``, ``\\s`` being :data:`WHITESPACE`)."""
    lo, hi = int(offs[0]), int(offs[-1])
    if hi <= lo:
        return np.zeros(0, dtype=np.int64)
    sp = np.flatnonzero(data[lo:hi] == 0x20).astype(np.int64) + lo
    value = np.searchsorted(offs, sp, side="right") - 1
    start, end = offs[value], offs[value + 1]
    inner = (sp > start) & (sp + 1 < end)
    sp, start, end = sp[inner], start[inner], end[inner]
    keep = ~_whitespace_at(data, sp, start, end, ending=True) & ~_whitespace_at(
        data, sp + 1, start, end, ending=False
    )
    return sp[keep]


def _starts_cut(s: str) -> bool:
    """``s`` starts with a space followed by a non-space character."""
    return len(s) >= 2 and s[0] == " " and s[1] not in _WS


def _ends_nonspace(s: str) -> bool:
    return bool(s) and s[-1] not in _WS


#: distinct values filled per block (bounds the memory of the per-chunk arrays at 1M entities)
BLOCK = 20_000


class _Counts(dict):
    """Token counts of chunks, counted on first use (up to ``limit`` remembered)."""

    def __init__(self, count, limit: int = 2_000_000):
        super().__init__()
        self.count, self.limit = count, limit

    def __missing__(self, s: str) -> int:
        n = self.count(s)
        if len(self) < self.limit:
            self[s] = n
        return n


class ColumnFiller:
    """:meth:`Filler.text` over whole arrow string arrays (see the module docstring)."""

    def __init__(self, filler: Filler):
        self.filler = filler
        self.counts_of = _Counts(filler.counter.count)

    def array(self, arr: pa.Array) -> pa.Array:
        """``[filler.text(v) if v else v for v in arr]`` as an array of ``arr``'s type (nulls stay)."""
        if len(arr) == 0:
            return arr
        enc = arr.dictionary_encode()
        return self.fill(enc.dictionary).cast(arr.type).take(enc.indices)

    def fill(self, uniq: pa.Array) -> pa.Array:
        """The filler of each value of ``uniq`` (a string array without nulls), as a large_string
        array, in blocks of :data:`BLOCK` values."""
        parts = [self.values_array(uniq.slice(at, BLOCK)) for at in range(0, len(uniq), BLOCK)]
        if not parts:
            return pa.array([], type=pa.large_string())
        return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)

    def _cut(self, uniq: pa.Array):
        """``uniq`` cut into chunks: (distinct chunks, chunk index of each position, per-value offsets).

        The cuts are found in the UTF-8 bytes (:func:`cut_offsets`): before every space that sits
        between two non-space characters (every place ``filler._CHUNK`` splits at); the chunks are
        views of ``uniq``'s own data buffer."""
        n = len(uniq)
        bufs = uniq.buffers()
        wide = pa.types.is_large_string(uniq.type)
        offs = np.frombuffer(bufs[1], dtype=np.int64 if wide else np.int32)[uniq.offset : uniq.offset + n + 1]
        offs = offs.astype(np.int64)
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None and bufs[2].size else _NO_BYTES
        cuts = cut_offsets(data, offs)
        bounds = np.sort(np.concatenate([offs, cuts]), kind="stable")
        chunk_arr = pa.Array.from_buffers(
            pa.large_string(),
            len(bounds) - 1,
            [None, pa.py_buffer(bounds), bufs[2] if data is not _NO_BYTES else pa.py_buffer(b"")],
        )
        flat = chunk_arr.dictionary_encode()
        offsets = np.arange(n + 1, dtype=np.int64) + np.searchsorted(cuts, offs, side="left")
        return flat.dictionary.to_pylist(), flat.indices.to_numpy().astype(np.int64), offsets

    def counts(self, uniq: pa.Array) -> list[tuple[int, int]]:
        """``(count(v), count("|" + v + "|"))`` of each value of ``uniq``, derived from its chunks'
        counts as :meth:`values` derives them (for the tests: they compare it with direct counts)."""
        count = self.filler.counter.count
        got = self._cut(uniq)
        if got is None:  # pragma: no cover
            return [(count(v), count("|" + v + "|")) for v in uniq.to_pylist()]
        chunks, at, offsets = got
        n = np.fromiter(map(self.counts_of.__getitem__, chunks), dtype=np.int64, count=len(chunks))
        rest = _rest_sums(n[at], offsets)
        out = []
        for i, v in enumerate(uniq.to_pylist()):
            s, e = offsets[i], offsets[i + 1]
            if e - s < 2:
                out.append((count(v), count("|" + v + "|")))
                continue
            c0, last = chunks[at[s]], chunks[at[e - 1]]
            out.append(_pair(count(c0), count("|" + c0), rest[i], count(last + "|") - int(n[at[e - 1]])))
        return out

    def values(self, uniq: pa.Array) -> list[str]:
        """The filler of each value of ``uniq`` (a string array without nulls), as a list."""
        return self.values_array(uniq).to_pylist()

    def _firsts(self, chunks: list[str], n_orig: np.ndarray, idx: np.ndarray):
        """For the distinct first chunks ``chunks[k]`` (``k`` in ``idx``, none empty): the filler of
        the chunk as a text's first chunk (:meth:`Filler._head` + :meth:`Filler._chunk` of the rest)
        and the counts :meth:`values_array` derives from: the chunk alone (``n_orig``) and after a
        ``|``, its filler alone and after a ``|``, and whether that filler ends in a non-space.

        A text's first pre-token ends inside its first chunk (every cut is a pre-token boundary), and
        the pattern matches it the same in the chunk alone: every path it tries either stays inside
        the chunk or reads the space after it, which no path needs to succeed (a letter, digit or
        punctuation run stops there, a whitespace run cannot end at the chunk's non-space end, and
        ``(?!\\S)`` holds before a space as at the end). So the filler of a text's first chunk
        depends on that chunk alone and is made once per distinct first chunk."""
        filler = self.filler
        count = filler.counter.count
        heads: list[str] = []
        m = len(idx)
        a0 = n_orig[idx]
        p0 = np.empty(m, dtype=np.int64)
        f0 = np.empty(m, dtype=np.int64)
        fp0 = np.empty(m, dtype=np.int64)
        ok0 = np.empty(m, dtype=bool)
        for j, k in enumerate(idx.tolist()):
            c0 = chunks[k]
            head, end = filler._head(c0)
            out0 = head + filler._chunk(c0[end:]) if end < len(c0) else head
            heads.append(out0)
            p0[j] = count("|" + c0)
            f0[j] = count(out0)
            fp0[j] = count("|" + out0)
            ok0[j] = _ends_nonspace(out0)
        return heads, a0, p0, f0, fp0, ok0

    def values_array(self, uniq: pa.Array) -> pa.Array:
        """The filler of each value of ``uniq`` (a string array without nulls), as a large_string
        array: per value its first chunk's filler (:meth:`_firsts`, once per distinct first chunk)
        and its other chunks' fillers joined in arrow; the counts compared in numpy. A value of one
        chunk, or whose derived counts differ or whose chunks are not provably cut alike, goes through
        :meth:`Filler._fix` (direct counts) as in :meth:`Filler.text`."""
        filler = self.filler
        got = self._cut(uniq)
        if got is None:  # pragma: no cover - every marker character occurs in the text
            return pa.array([filler.text(v) if v else v for v in uniq.to_pylist()], type=pa.large_string())
        chunks, at, offsets = got
        fills = list(map(filler._chunk, chunks))
        counts = self.counts_of.__getitem__
        n_orig = np.fromiter(map(counts, chunks), dtype=np.int64, count=len(chunks))
        n_fill = np.fromiter(map(counts, fills), dtype=np.int64, count=len(chunks))
        # a chunk's filler must be cut where the chunk is: same start (space + non-space), same end
        bad = np.fromiter(
            (
                (_starts_cut(c) and not _starts_cut(f)) or (_ends_nonspace(c) and not _ends_nonspace(f))
                for c, f in zip(chunks, fills)
            ),
            dtype=np.int64,
            count=len(chunks),
        )
        rest_o, rest_f, rest_bad = (_rest_sum_array(x[at], offsets) for x in (n_orig, n_fill, bad))
        starts, ends = offsets[:-1], offsets[1:]
        first = at[starts]
        last = at[ends - 1]
        many = ends - starts > 1
        empty = pc.equal(pc.binary_length(uniq), 0).to_numpy(zero_copy_only=False)
        # the first chunks' fillers and counts, once per distinct first chunk (an empty value has none)
        firsts, pos = np.unique(first[~empty], return_inverse=True)
        heads, a0, p0, f0, fp0, ok0 = self._firsts(chunks, n_orig, firsts)
        where = np.zeros(len(uniq), dtype=np.int64)  # per value: its first chunk's row in the above
        where[~empty] = pos
        # the fillers of each value's chunks after the first, joined, after its first chunk's filler
        fill_lists = pa.ListArray.from_arrays(
            pa.array(offsets, type=pa.int64()).cast(pa.int32()),
            pa.array(fills, type=pa.large_string()).take(pa.array(at)),
        )
        rest_out = pc.binary_join(pc.list_slice(fill_lists, 1), pa.scalar("", pa.large_string()))
        head_of = (
            pa.array(heads, type=pa.large_string()).take(pa.array(where))
            if heads
            else pa.nulls(len(uniq), pa.large_string())
        )
        whole = pc.binary_join_element_wise(head_of, rest_out, pa.scalar("", pa.large_string()))
        # what a '|' after each value's last chunk adds, once per distinct last chunk (values of
        # several chunks only)
        count = filler.counter.count
        po = np.zeros(len(chunks), dtype=np.int64)
        pf = np.zeros(len(chunks), dtype=np.int64)
        for k in np.unique(last[many]).tolist():
            po[k] = count(chunks[k] + "|") - int(n_orig[k])
            pf[k] = count(fills[k] + "|") - int(n_fill[k])
        want0, want1 = a0[where] + rest_o, p0[where] + rest_o + po[last]
        got0, got1 = f0[where] + rest_f, fp0[where] + rest_f + pf[last]
        # equal: what Filler._fix returns unchanged; else _fix counts directly and mends
        kept = many & ~empty & (rest_bad == 0) & ok0[where] & (want0 == got0) & (want1 == got1)
        direct = np.flatnonzero(~kept & ~empty)
        if len(direct) == 0:
            return (
                whole
                if not empty.any()
                else pc.if_else(pa.array(empty), pa.scalar("", pa.large_string()), whole)
            )
        values = uniq.take(pa.array(direct)).to_pylist()
        mended = whole.take(pa.array(direct)).to_pylist()
        fixed = [filler._fix(w, v) for w, v in zip(mended, values)]
        # every value from ``whole`` but the direct ones (from ``fixed``) and the empty ones ("")
        pick = np.arange(len(uniq), dtype=np.int64)
        pick[direct] = len(uniq) + np.arange(len(direct), dtype=np.int64)
        out = pa.concat_arrays([whole, pa.array(fixed, type=pa.large_string())]).take(pa.array(pick))
        return out if not empty.any() else pc.if_else(pa.array(empty), pa.scalar("", pa.large_string()), out)


def _rest_sum_array(per_position: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """:func:`_rest_sums` as an array."""
    cum = np.concatenate(([0], np.cumsum(per_position)))
    return cum[offsets[1:]] - cum[np.minimum(offsets[:-1] + 1, offsets[1:])]


def _rest_sums(per_position: np.ndarray, offsets: np.ndarray) -> list[int]:
    """Per value: the sum over its chunks after the first (``offsets`` delimit the values)."""
    cum = np.concatenate(([0], np.cumsum(per_position)))
    return (cum[offsets[1:]] - cum[np.minimum(offsets[:-1] + 1, offsets[1:])]).tolist()


def _pair(first: int, first_piped: int, rest: int, last_pipe: int) -> tuple[int, int]:
    """A text's count alone and between ``|`` from its first chunk's counts (alone, after a ``|``),
    the sum of its other chunks' counts, and what a ``|`` after the last chunk adds to that chunk."""
    return first + rest, first_piped + rest + last_pipe


def fill_nested(columns: ColumnFiller, arr: pa.Array) -> pa.Array | None:
    """``arr`` (not sliced) with every string in it, at any depth of lists and structs, filled by
    ``columns``; None for a type or layout this does not handle (dictionaries, maps, fixed-size
    lists, an array with an offset), which the caller fills value by value."""
    t = arr.type
    if arr.offset != 0:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return columns.array(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = fill_nested(columns, arr.values)
        if values is None:
            return None
        mask = arr.is_null() if arr.null_count else None
        return type(arr).from_arrays(arr.offsets, values, type=t, mask=mask)
    if pa.types.is_struct(t):
        fields = []
        for k in range(t.num_fields):
            child = fill_nested(columns, arr.field(k))
            if child is None:
                return None
            fields.append(child)
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(fields, fields=list(t), mask=mask)
    if not _has_text_type(t):
        return arr
    return None


def _has_text_type(t: pa.DataType) -> bool:
    # nested and dictionary types are not looked into here: the caller's value-by-value path has them
    return (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_nested(t)
        or pa.types.is_dictionary(t)
    )

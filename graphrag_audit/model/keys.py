"""Entity and community keys: arrow dictionary codes, key joins, and ``pd.factorize`` /
``np.unique`` / ``np.isin`` of integer keys by sorting or flags instead of numpy 2's hash path
(millions of membership rows at 1M entities; docs/performance.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def dictionary_keys(items: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """Arrow strings as a pandas arrow-backed dictionary array (codes in first-appearance order), for key
    columns that are joined and grouped: no Python string is built."""
    enc = pc.dictionary_encode(items)
    if isinstance(enc, pa.ChunkedArray):  # the chunks share one dictionary
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), items.type))
    return pd.arrays.ArrowExtensionArray(enc)


def dictionary_parts(values) -> tuple[np.ndarray, pa.Array] | None:
    """(int64 code of each row, the distinct keys) of an arrow dictionary or Categorical column without
    gaps; None otherwise."""
    arr = values.array if isinstance(values, pd.Series) else values
    if isinstance(arr, pd.Categorical):
        codes = np.asarray(arr.codes, dtype=np.int64)
        if len(codes) and codes.min() < 0:
            return None
        return codes, pa.array(arr.categories, from_pandas=True)
    if not (
        isinstance(arr, pd.arrays.ArrowExtensionArray) and pa.types.is_dictionary(arr.dtype.pyarrow_dtype)
    ):
        return None
    d = pa.array(arr)
    chunks = d.chunks if isinstance(d, pa.ChunkedArray) else [d]
    if not chunks:
        return np.zeros(0, dtype=np.int64), pa.array([], arr.dtype.pyarrow_dtype.value_type)
    dictionary = chunks[0].dictionary
    if any(c.indices.null_count for c in chunks) or not all(
        c.dictionary.equals(dictionary) for c in chunks[1:]
    ):
        return None
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int64)
    return codes, dictionary


def key_codes(values) -> tuple[np.ndarray, int]:
    """``pd.factorize(values)``'s codes and the number of distinct keys; dictionary-encoded keys through
    their integer codes."""
    parts = dictionary_parts(values)
    if parts is not None:  # no missing keys: codes <-> keys is a bijection
        return factorize_ints(parts[0])
    codes, uniques = pd.factorize(values)
    return np.asarray(codes, dtype=np.int64), len(uniques)


def factorize_ints(values: np.ndarray) -> tuple[np.ndarray, int]:
    """``pd.factorize`` of a 1-D integer array without hashing in the loaders' two shapes: codes already
    in first-appearance order (arrow's dictionary codes), or runs of distinct values (one code per run)."""
    a = np.asarray(values)
    n = len(a)
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    a = a.astype(np.int64, copy=False)
    if a[0] == 0:
        top = np.maximum.accumulate(a)
        if (a >= 0).all() and (a[1:] <= top[:-1] + 1).all():
            return a, int(top[-1]) + 1
    new_run = np.empty(n, dtype=bool)
    new_run[0] = True
    np.not_equal(a[1:], a[:-1], out=new_run[1:])
    heads = a[new_run]
    if len(sorted_unique(heads)) == len(heads):
        return np.cumsum(new_run, dtype=np.int64) - 1, len(heads)
    codes, uniques = pd.factorize(a)
    return np.asarray(codes, dtype=np.int64), len(uniques)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """``np.unique`` of a 1-D integer array by flags over a narrow range or by sorting (numpy 2's hash
    path is far slower on millions of integers)."""
    values = np.asarray(values).ravel()
    span = _narrow_span(values)
    if span is not None:  # one flag per number of the range, no sort
        lo, hi = span
        flags = np.zeros(hi - lo + 1, dtype=bool)
        flags[values.astype(np.int64, copy=False) - lo] = True  # int64: no wrap-around in small types
        return (np.flatnonzero(flags) + lo).astype(values.dtype, copy=False)
    a = np.sort(values)
    if len(a) < 2:
        return a
    return a[np.concatenate(([True], a[1:] != a[:-1]))]


def _narrow_span(values: np.ndarray) -> tuple[int, int] | None:
    """(min, max) of an integer array spanning a range not much wider than itself; None otherwise."""
    if values.dtype.kind not in "iu" or len(values) < 2:
        return None
    lo, hi = int(values.min()), int(values.max())
    if hi >= 2**63:  # uint64 beyond int64: the offsets below are int64
        return None
    return (lo, hi) if hi - lo <= 4 * len(values) + 1024 else None


def concat_ranges(starts, lens) -> np.ndarray:
    """``arange(s, s + n)`` for each pair of ``starts`` and ``lens``, concatenated (int64)."""
    lens = np.asarray(lens, dtype=np.int64)
    return np.repeat(np.asarray(starts, dtype=np.int64) - (np.cumsum(lens) - lens), lens) + np.arange(
        lens.sum()
    )


def is_nondecreasing(values: np.ndarray) -> bool:
    """Whether a 1-D array never decreases."""
    return bool((values[1:] >= values[:-1]).all()) if len(values) > 1 else True


def stable_order(values: np.ndarray) -> np.ndarray:
    """``np.argsort(values, kind="stable")``; integers spanning < 65,536 values sort as uint8/uint16
    offsets, by radix (11.5M levels: 0.19 s against 1.76 s as int64)."""
    v = np.asarray(values)
    if v.dtype.kind in "iu" and len(v) > 1:
        lo, hi = int(v.min()), int(v.max())
        if hi - lo < 1 << 16:
            v = (v - v.dtype.type(lo)).astype(np.uint8 if hi - lo < 1 << 8 else np.uint16)
    return np.argsort(v, kind="stable")


def has_duplicates(values: np.ndarray) -> bool:
    """Whether a 1-D integer array holds some value twice."""
    values = np.asarray(values).ravel()
    return len(sorted_unique(values)) < len(values)


@dataclass(frozen=True)
class EntityKeyMatch:
    """How membership keys meet entity keys: per entity row, whether a membership row names it
    (``clustered``) and whether it is the first with its key (``first``); per membership row, the first
    entity row with its key (-1: none)."""

    clustered: np.ndarray
    first: np.ndarray
    member_row: np.ndarray


def match_entity_keys(member_keys: pd.Series, entity_keys: pd.Series) -> EntityKeyMatch | None:
    """:class:`EntityKeyMatch`, or None unless dictionary-encoded member keys meet arrow entity keys without
    gaps (callers then use pandas)."""
    parts = dictionary_parts(member_keys)
    if parts is None or not isinstance(entity_keys.array, pd.arrays.ArrowExtensionArray):
        return None
    codes, dictionary = parts
    try:
        keys = pa.array(entity_keys.array)
        if dictionary.type != keys.type:
            dictionary = dictionary.cast(keys.type)
        if dictionary.null_count or keys.null_count:
            return None
        joint = pc.dictionary_encode(
            pa.chunked_array([dictionary] + (keys.chunks if isinstance(keys, pa.ChunkedArray) else [keys]))
        )
        jc = (
            np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in joint.chunks]).astype(np.int64)
            if joint.num_chunks
            else np.zeros(0, dtype=np.int64)
        )
        n_keys = int(jc.max()) + 1 if len(jc) else 0
        jd, je = jc[: len(dictionary)], jc[len(dictionary) :]
        used = np.zeros(n_keys, dtype=bool)
        used[jd[np.flatnonzero(np.bincount(codes, minlength=len(dictionary)))]] = True
        first_row = np.full(n_keys, -1, dtype=np.int64)
        first_row[je[::-1]] = np.arange(len(je) - 1, -1, -1, dtype=np.int64)  # the first row wins
        return EntityKeyMatch(
            clustered=used[je], first=first_row[je] == np.arange(len(je)), member_row=first_row[jd][codes]
        )
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        return None


def node_entity_rows(ids: pd.Series, entities: pd.DataFrame, first: np.ndarray) -> np.ndarray | None:
    """Each ``create_final_nodes`` row's entities row as graphrag 1.x matches it (the first with its ``id``;
    -1: none), or None unless both are arrow strings without gaps."""
    node_ids, e_id = ids.array, entities["id"].array
    if not all(isinstance(a, pd.arrays.ArrowExtensionArray) for a in (node_ids, e_id)):
        return None
    try:
        node_ids, e_id = pa.array(node_ids), pa.array(e_id)
        if (
            node_ids.null_count
            or e_id.null_count
            or not (pa.types.is_string(node_ids.type) or pa.types.is_large_string(node_ids.type))
        ):
            return None
        first_rows = np.flatnonzero(first)
        at = pc.index_in(node_ids, value_set=e_id.filter(pa.array(first)).cast(node_ids.type))
        at = pc.fill_null(at, -1).to_numpy(zero_copy_only=False).astype(np.int64)
        return np.where(at >= 0, first_rows[np.maximum(at, 0)] if len(first_rows) else -1, -1)
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        return None

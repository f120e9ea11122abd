"""Normalise the columns graphrag wrote with drifting types across versions.

string / int32 / int64 / double ids become int64 with −1 for "none"; list columns
(arrow lists, ``list<null>``, graphrag 3 CSV strings) become Python lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api import types as ptypes

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.tables import parse_list_cell, split_list_cell

INT64_MAX = np.iinfo(np.int64).max
MAX_LEVEL = 1000


def int_ids(series: pd.Series, path: Path, column: str, missing: int = -1) -> np.ndarray:
    """An id/level column as int64; None/NaN/'' become ``missing``.

    Raises IndexInputError for values that are not integers (text, fractions, lists, overflow).
    """
    s = series
    if ptypes.is_bool_dtype(s.dtype):
        raise IndexInputError(path, f"column '{column}' is boolean, expected integers")
    if ptypes.is_integer_dtype(s.dtype) and not isinstance(s.dtype, pd.CategoricalDtype):
        if ptypes.is_unsigned_integer_dtype(s.dtype) and len(s) and s.max() > INT64_MAX:
            raise IndexInputError(path, f"column '{column}' has an out-of-range value {str(s.max())!r}")
        if s.isna().any():  # nullable ints
            return s.fillna(missing).to_numpy(dtype=np.int64)
        return s.to_numpy(dtype=np.int64)
    if ptypes.is_float_dtype(s.dtype):
        arr = s.to_numpy(dtype=np.float64, na_value=np.nan)
        na = np.isnan(arr)
        bad = ~na & ((arr != np.floor(arr)) | ~np.isfinite(arr) | (np.abs(arr) >= 2**63))
        if bad.any():
            raise IndexInputError(
                path, f"column '{column}' has non-integer value {float(arr[bad][0])!r}, expected integer ids"
            )
        out = np.where(na, missing, arr).astype(np.int64)
        return out
    # strings or objects
    values = s.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):  # only string-typed (0.x) or odd columns reach here
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and v != v):
            out[i] = missing
            continue
        if isinstance(v, (bool, np.bool_)):
            raise IndexInputError(path, f"column '{column}' holds booleans, expected integers")
        if isinstance(v, (int, np.integer)):
            if abs(int(v)) > INT64_MAX:
                raise IndexInputError(path, f"column '{column}' has an out-of-range value {str(v)[:30]!r}")
            out[i] = int(v)
            continue
        if isinstance(v, (float, np.floating)):
            if not np.isfinite(v) or v != int(v) or abs(v) >= 2**63:
                raise IndexInputError(path, f"column '{column}' has non-integer value {float(v)!r}, "
                                            f"expected integer ids")
            out[i] = int(v)
            continue
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if not isinstance(v, str):
            kind = "structs" if isinstance(v, dict) else "lists" if hasattr(v, "__len__") else type(v).__name__
            raise IndexInputError(
                path, f"column '{column}' holds {kind} where single integer ids belong"
            )
        t = v.strip()
        if t == "" or t.lower() in ("nan", "none", "null"):
            out[i] = missing
            continue
        try:
            f = float(t) if not t.lstrip("-").isdigit() else None
            n = int(t) if f is None else int(f)
            if f is not None and f != n:
                raise ValueError
        except (ValueError, OverflowError):
            shown = t[:30]
            raise IndexInputError(
                path, f"column '{column}' has non-numeric value {shown!r}, expected integer ids"
            ) from None
        if abs(n) > INT64_MAX:
            raise IndexInputError(path, f"column '{column}' has an out-of-range value {t[:30]!r}")
        out[i] = n
    return out


def levels(series: pd.Series, path: Path, column: str = "level") -> np.ndarray:
    """A level column as int64; NaN, negative or absurd levels are input errors."""
    arr = int_ids(series, path, column, missing=-(2**62))
    if len(arr):
        if (arr == -(2**62)).any():
            raise IndexInputError(path, f"column '{column}' has missing (null/NaN) levels")
        lo, hi = int(arr.min()), int(arr.max())
        if lo < 0:
            raise IndexInputError(path, f"column '{column}' has a negative level ({lo})")
        if hi > MAX_LEVEL:
            raise IndexInputError(
                path, f"column '{column}' has level {hi}, beyond any real hierarchy (max {MAX_LEVEL})"
            )
    return arr


def _arrow_list(series: pd.Series):
    """The arrow array behind an arrow-backed list column (see tables.read_table), else None.
    Chunked columns stay chunked: combining them would copy every list item."""
    dt = series.dtype
    if not isinstance(dt, pd.ArrowDtype):
        return None
    t = dt.pyarrow_dtype
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        return None
    return pa.array(series.array)


def dictionary_lists(series: pd.Series) -> pd.Series | None:
    """An arrow list column of strings with its items dictionary-encoded (one dictionary for
    the whole column), or None when it is not one. The same lists of the same strings, held
    as int32 codes plus each distinct string once (text-unit ids: 3 M items, 250 k distinct)."""
    arr = _arrow_list(series)
    if arr is None:
        return None
    t = arr.type
    if not ((pa.types.is_list(t) or pa.types.is_large_list(t))
            and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type))):
        return None
    lens = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    enc = pc.dictionary_encode(pc.list_flatten(arr))
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), t.value_type))
    offsets = pa.array(np.concatenate(([0], np.cumsum(lens))).astype(np.int32 if pa.types.is_list(t) else np.int64))
    mask = pc.is_null(arr)
    mask = mask.combine_chunks() if isinstance(mask, pa.ChunkedArray) else mask
    cls = pa.ListArray if pa.types.is_list(t) else pa.LargeListArray
    out = cls.from_arrays(offsets, enc, mask=mask if mask.true_count else None)
    return pd.Series(pd.arrays.ArrowExtensionArray(out), index=series.index, name=series.name)


def list_column(series: pd.Series, path: Path, column: str, cell=parse_list_cell) -> list[list]:
    """A list column (arrow list, list<null>, CSV string) as Python lists; text cells parsed
    with ``cell`` (:func:`split_list_cell` for lists of ids, as graphrag 3 reads them)."""
    arr = _arrow_list(series)
    if arr is not None:  # converted in C++: no per-row numpy arrays
        return [[] if v is None else v for v in arr.to_pylist()]
    out = []
    for v in series.to_numpy(dtype=object):
        try:
            out.append(cell(v))
        except ValueError as exc:
            raise IndexInputError(path, f"column '{column}': {exc}") from None
    return out


def int_lists(series: pd.Series, path: Path, column: str) -> list[list]:
    """A list column of community numbers (``children``): every item an integer; missing items
    (None/NaN) are dropped. Anything else (nested lists, text, fractions) is an input error."""
    arr = _arrow_list(series)
    if arr is not None:
        vt = arr.type.value_type
        if (pa.types.is_signed_integer(vt) or vt in (pa.uint8(), pa.uint16(), pa.uint32())) \
                and pc.list_flatten(arr).null_count == 0:
            return list_column(series, path, column)  # already Python ints in int64 range, none missing
    out = []
    for lst in list_column(series, path, column):
        row = []
        for v in lst:
            if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and v != v):
                continue
            if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) and abs(int(v)) <= INT64_MAX:
                row.append(int(v))
                continue
            if isinstance(v, (float, np.floating)) and np.isfinite(v) and v == int(v) and abs(v) < 2**63:
                row.append(int(v))
                continue
            if isinstance(v, str) and v.strip().lstrip("-").isdigit() and abs(int(v)) <= INT64_MAX:
                row.append(int(v))
                continue
            shown = repr(v)[:40]
            raise IndexInputError(path, f"column '{column}' holds {shown} where community numbers belong")
        out.append(row)
    return out


def _nested(path: Path, column: str, kind: str = "lists") -> IndexInputError:
    return IndexInputError(path, f"column '{column}' holds nested {kind} where ids belong: graphrag's global "
                                 f"search fails on them (pandas merge / set(): unhashable type)")


def flat_ids(series: pd.Series, path: Path, column: str) -> None:
    """Refuse an arrow list column of ids whose items are lists, structs or maps (entity_ids,
    text_unit_ids): graphrag 3.x explodes them into unhashable arrays and its global search fails
    (``read_indexer_entities`` merges on them; the occurrence weights put them in a set). They are
    never turned into id strings. (A CSV cell ``"[['a', 'b']]"`` is different: graphrag splits
    the text into ``a``, ``b``; see tables.split_list_cell.)"""
    arr = _arrow_list(series)
    if arr is None:
        return
    t = arr.type.value_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_nested(t):
        raise _nested(path, column, "structs" if pa.types.is_struct(t) else "maps" if pa.types.is_map(t) else "lists")


def list_flat(series: pd.Series, path: Path, column: str) -> tuple[np.ndarray | pd.api.extensions.ExtensionArray,
                                                                   np.ndarray]:
    """(every item of every list as str, in row order; the list length of each row).

    Equal to flattening :func:`list_column` with ``str()`` on each item, without building a
    Python list per row (a communities table can have a million rows). Arrow string lists come
    back dictionary-encoded (:func:`dictionary_keys`: no Python string per item)."""
    flat_ids(series, path, column)
    arr = _arrow_list(series)
    if arr is not None:
        try:
            lens = pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)
            items = pc.list_flatten(arr)
            if pa.types.is_integer(items.type):  # str(int) == arrow's int -> string cast
                items = pc.cast(items, pa.string())
            if pa.types.is_string(items.type) or pa.types.is_large_string(items.type):
                if items.null_count:
                    items = pc.fill_null(items, "None")  # str(None), as the generic path does
                return dictionary_keys(items), lens
        except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
            raise
        except (pa.ArrowException, ValueError):  # anything odd: the generic path decides
            pass
    lists = list_column(series, path, column, cell=split_list_cell)
    for lst in lists:
        for e in lst:
            if isinstance(e, (list, tuple, dict, np.ndarray)):
                raise _nested(path, column, "structs" if isinstance(e, dict) else "lists")
    lens = np.fromiter((len(x) for x in lists), dtype=np.int64, count=len(lists))
    flat = np.empty(int(lens.sum()), dtype=object)
    flat[:] = [str(e) for lst in lists for e in lst]
    return flat, lens


def dictionary_keys(items: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    """Arrow strings as a pandas arrow-backed dictionary array (int32 codes in first-appearance
    order, each distinct string once), for key columns that are joined and grouped (entity keys
    of the membership rows). No Python string is built and nothing is hashed twice."""
    enc = pc.dictionary_encode(items)
    if isinstance(enc, pa.ChunkedArray):  # the chunks share one dictionary
        enc = enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), items.type))
    return pd.arrays.ArrowExtensionArray(enc)


def key_column(series: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A text key column (entity titles, from :func:`text_column`) dictionary-encoded like
    :func:`dictionary_keys`; a Categorical when it cannot go through arrow."""
    try:
        arr = pa.array(series.array) if isinstance(series.array, pd.arrays.ArrowExtensionArray) \
            else pa.array(series.to_numpy(dtype=object), from_pandas=True)
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return dictionary_keys(arr)
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        pass
    codes, uniques = pd.factorize(series)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques))


def dictionary_parts(values) -> tuple[np.ndarray, pa.Array] | None:
    """(int64 code of each row, the distinct keys) of a dictionary-encoded key column (arrow
    dictionary or pandas Categorical), or None for other columns and when a key is missing."""
    arr = values.array if isinstance(values, pd.Series) else values
    if isinstance(arr, pd.Categorical):
        codes = np.asarray(arr.codes, dtype=np.int64)
        if len(codes) and codes.min() < 0:
            return None
        return codes, pa.array(arr.categories, from_pandas=True)
    if not (isinstance(arr, pd.arrays.ArrowExtensionArray) and pa.types.is_dictionary(arr.dtype.pyarrow_dtype)):
        return None
    d = pa.array(arr)
    chunks = d.chunks if isinstance(d, pa.ChunkedArray) else [d]
    if not chunks:
        return np.zeros(0, dtype=np.int64), pa.array([], arr.dtype.pyarrow_dtype.value_type)
    dictionary = chunks[0].dictionary
    if any(c.indices.null_count for c in chunks) or not all(c.dictionary.equals(dictionary) for c in chunks[1:]):
        return None
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in chunks]).astype(np.int64)
    return codes, dictionary


def text_column(series: pd.Series | None, n: int) -> pd.Series:
    """Strings with None/NaN as ''. Non-UTF-8 bytes are decoded with replacement.

    Arrow-backed string columns stay arrow-backed (no Python string per value)."""
    if series is None:
        return pd.Series([""] * n, dtype=object)
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        # pandas/arrow string columns hold only str or missing: no per-value checks needed
        return series.fillna("")
    vals = series.to_numpy(dtype=object)
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and v != v):
            out[i] = ""
        elif isinstance(v, bytes):
            out[i] = v.decode("utf-8", "replace")
        elif isinstance(v, str):
            out[i] = v
        else:
            out[i] = str(v)
    return pd.Series(out, dtype=object, index=series.index)


def key_codes(values) -> tuple[np.ndarray, int]:
    """The codes ``pd.factorize(values)`` gives (order of first appearance) and the number of
    distinct keys. Dictionary-encoded keys (``load`` keeps entity keys that way) are factorized
    through their integer codes: no string is hashed again."""
    parts = dictionary_parts(values)
    if parts is not None:  # no missing keys: codes <-> keys is a bijection
        return factorize_ints(parts[0])
    codes, uniques = pd.factorize(values)
    return np.asarray(codes, dtype=np.int64), len(uniques)


def factorize_ints(values: np.ndarray) -> tuple[np.ndarray, int]:
    """``pd.factorize`` codes (first-appearance order) of a 1-D integer array and the number of
    distinct values, without hashing in the two shapes the loaders produce:

    * codes already in first-appearance order (arrow's ``dictionary_encode`` numbers keys so):
      they are their own factorization;
    * runs of equal values whose run values are all distinct (membership rows grouped by
      community): one code per run."""
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
    """``np.unique`` of a 1-D integer array, by sorting: numpy 2's hash-based ``np.unique`` is
    far slower than its vectorised sort on millions of integers."""
    a = np.sort(np.asarray(values).ravel())
    if len(a) < 2:
        return a
    return a[np.concatenate(([True], a[1:] != a[:-1]))]


@dataclass(frozen=True)
class EntityKeyMatch:
    """How the membership rows' entity keys meet the entities table's keys (``id`` or
    ``title``, see ``model.member_key``), every key string hashed once.

    ``clustered``: per entity row, its key is some membership row's key
    (``keys.isin(members.entity)``). ``first``: per entity row, the first row with its key
    (``~keys.duplicated()``). ``member_row``: per membership row, the first entity row with its
    key, −1 when none.
    """

    clustered: np.ndarray
    first: np.ndarray
    member_row: np.ndarray


def match_entity_keys(member_keys: pd.Series, entity_keys: pd.Series) -> EntityKeyMatch | None:
    """:class:`EntityKeyMatch` of the membership rows' keys against the entities' keys, or None
    when the member keys are not dictionary-encoded or the entity keys not arrow strings, or a
    key is missing (callers then use pandas)."""
    parts = dictionary_parts(member_keys)
    if parts is None or not isinstance(entity_keys.array, pd.arrays.ArrowExtensionArray):
        return None
    try:
        return _match_keys(parts[0], parts[1], pa.array(entity_keys.array))
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        return None


def _match_keys(codes: np.ndarray, dictionary: pa.Array, keys: pa.Array | pa.ChunkedArray) -> EntityKeyMatch | None:
    if dictionary.type != keys.type:
        dictionary = dictionary.cast(keys.type)
    if dictionary.null_count or keys.null_count:
        return None
    joint = pc.dictionary_encode(pa.chunked_array([dictionary] + (keys.chunks if isinstance(keys, pa.ChunkedArray)
                                                                    else [keys])))
    jc = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in joint.chunks]).astype(np.int64) \
        if joint.num_chunks else np.zeros(0, dtype=np.int64)
    n_keys = int(jc.max()) + 1 if len(jc) else 0
    jd, je = jc[: len(dictionary)], jc[len(dictionary):]
    used = np.zeros(n_keys, dtype=bool)
    used[jd[np.flatnonzero(np.bincount(codes, minlength=len(dictionary)))]] = True
    first_row = np.full(n_keys, -1, dtype=np.int64)
    first_row[je[::-1]] = np.arange(len(je) - 1, -1, -1, dtype=np.int64)  # the first row wins
    return EntityKeyMatch(clustered=used[je], first=first_row[je] == np.arange(len(je)),
                          member_row=first_row[jd][codes])


def node_entity_rows(titles: pd.Series, ids: pd.Series, entities: pd.DataFrame, first: np.ndarray) -> np.ndarray | None:
    """For each ``create_final_nodes`` row, the entities row graphrag 1.x matches it to: the
    first row whose ``id`` is the node's ``id`` (−1: none); ``first`` flags each entity row that
    is the first with its id. None when the columns are not arrow strings (callers then look the
    ids up themselves).

    The node titles are already hashed (``load`` dictionary-encodes them for the roll-up), so
    each distinct title is looked up among the entity titles once, and a node row takes the
    entity row found for its title when that row's id is the node's id and no earlier row has
    that id. Only the other rows (titles and ids that disagree, as in a hand-edited or updated
    index) are looked up by id: about half the hashing of looking up every node id."""
    parts = dictionary_parts(titles)
    node_ids, e_title, e_id = ids.array, entities["title"].array, entities["id"].array
    if parts is None or not all(isinstance(a, pd.arrays.ArrowExtensionArray) for a in (node_ids, e_title, e_id)):
        return None
    try:
        codes, title_keys = parts
        node_ids, e_title, e_id = pa.array(node_ids), pa.array(e_title), pa.array(e_id)
        if node_ids.null_count or e_id.null_count or not (pa.types.is_string(node_ids.type)
                                                          or pa.types.is_large_string(node_ids.type)):
            return None
        if e_title.null_count:
            e_title = pc.fill_null(e_title, "")  # any row found is checked by its id below
        if e_title.type != title_keys.type:
            e_title = e_title.cast(title_keys.type)
        found = pc.fill_null(pc.index_in(title_keys, value_set=e_title), -1).to_numpy(zero_copy_only=False)
        row = found.astype(np.int64)[codes] if len(codes) else np.zeros(0, dtype=np.int64)
        ok = row >= 0
        if len(e_id):
            ok &= first[np.maximum(row, 0)]
            e_id = e_id.cast(node_ids.type)
            for lo in range(0, len(row), _NODE_ROWS_PER_BLOCK):  # (bounded memory: ids are copied)
                hi = min(lo + _NODE_ROWS_PER_BLOCK, len(row))
                same = pc.equal(e_id.take(pa.array(np.maximum(row[lo:hi], 0))), node_ids.slice(lo, hi - lo))
                ok[lo:hi] &= same.to_numpy(zero_copy_only=False)
        row[~ok] = -1
        rest = np.flatnonzero(~ok)
        if len(rest) and len(e_id):
            first_rows = np.flatnonzero(first)
            at = pc.index_in(node_ids.take(pa.array(rest)), value_set=e_id.filter(pa.array(first)))
            at = pc.fill_null(at, -1).to_numpy(zero_copy_only=False).astype(np.int64)
            row[rest] = np.where(at >= 0, first_rows[np.maximum(at, 0)] if len(first_rows) else -1, -1)
        return row
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        return None


#: node rows compared per block when their ids are checked against the entity rows found
_NODE_ROWS_PER_BLOCK = 1 << 19


class LevelSlots:
    """The community of each (level, entity) slot of a set of (community, entity) pairs, when no
    entity is in two communities of one level, as hierarchical Leiden's partitions are: then
    "does community c hold entity e" is one array read, ``holds``, with no sort or hash of the
    pairs (3.5M membership rows at 1M entities).

    ``community``: communities-table row of each pair; ``entity``: entity code < ``width``;
    ``level_code``: a dense code (0..n-1) of each communities-table row's level.
    :meth:`of` gives None when an entity is in two communities of one level, or when the
    slot array would be far larger than the pairs (callers then sort)."""

    def __init__(self, owner: np.ndarray, level_code: np.ndarray, width: int):
        self.owner, self.level_code, self.width = owner, level_code, width

    @classmethod
    def of(cls, community: np.ndarray, entity: np.ndarray, level_code: np.ndarray, width: int) -> "LevelSlots | None":
        n_levels = int(level_code.max()) + 1 if len(level_code) else 0
        if n_levels * width > 16 * len(community) + 1_000_000:
            return None
        slots = cls(np.full(n_levels * width, -1, dtype=np.int32 if len(level_code) < 2**31 else np.int64),
                    level_code, width)
        at = slots.slot(community, entity)
        slots.owner[at] = community
        return slots if np.array_equal(slots.owner[at], community) else None

    def slot(self, community: np.ndarray, entity: np.ndarray) -> np.ndarray:
        out = self.level_code[community].astype(np.int64)
        out *= self.width
        out += entity
        return out

    def holds(self, community: np.ndarray, entity: np.ndarray) -> np.ndarray:
        """Per pair: the set has (community, entity)."""
        return self.owner[self.slot(community, entity)] == community

    def count(self) -> int:
        """Distinct pairs of the set."""
        return int(np.count_nonzero(self.owner >= 0))

    def count_of(self, community: np.ndarray, entity: np.ndarray) -> int:
        """Distinct (level, entity) slots among other pairs (their distinct pairs, when the set
        holds them all)."""
        seen = np.zeros(len(self.owner), dtype=bool)
        seen[self.slot(community, entity)] = True
        return int(np.count_nonzero(seen))

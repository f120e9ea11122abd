"""Type coercion of the columns graphrag wrote with drifting types across versions: string / int32 /
int64 / double ids become int64 with −1 for "none"; list columns (arrow lists, ``list<null>``,
graphrag 3 CSV strings) become Python lists."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api import types as ptypes

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.decoded import is_list_type
from graphrag_audit.model.keys import dictionary_keys

INT64_MAX = np.iinfo(np.int64).max
MAX_LEVEL = 1000


def parse_list_cell(value):
    """A list column cell as a Python list: arrays, graphrag 3 CSV strings, None."""
    if value is None or value is pd.NA:
        return []
    if isinstance(value, float) and value != value:
        return []
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return []
        if s[0] == "[":
            try:
                out = json.loads(s)
            except (ValueError, RecursionError):
                try:
                    out = _literal(s)
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    out = _numpy_repr_list(s)
                    if out is None:
                        raise ValueError(f"not a list: {s[:40]!r}") from None
            if not isinstance(out, (list, tuple)):
                raise ValueError(f"not a list: {s[:40]!r}")
            return list(out)
        return [x.strip() for x in s.split(",") if x.strip()]
    try:
        return list(value)
    except TypeError:
        raise ValueError(f"not a list: {value!r}"[:60]) from None


class _UnderscoredNumbers(ast.NodeTransformer):
    """Number literals written with ``_`` (``1_0``) as the text the cell holds: Python reads
    ``1_0`` as 10, graphrag never writes a number so (an id ``1_0`` is then refused as one)."""

    def __init__(self, source: str):
        self.source = source

    def _as_text(self, node, number):
        """``node`` as its source text when ``number`` is a number literal written with ``_``."""
        if isinstance(number, ast.Constant) and type(number.value) in (int, float, complex):
            text = ast.get_source_segment(self.source, node) or ""
            if "_" in text:
                return ast.copy_location(ast.Constant(text), node)
        return None

    def visit_Constant(self, node):
        return self._as_text(node, node) or node

    def visit_UnaryOp(self, node):  # -1_0
        signed = isinstance(node.op, (ast.USub, ast.UAdd))
        return (self._as_text(node, node.operand) if signed else None) or self.generic_visit(node)


def _literal(s: str):
    """``ast.literal_eval(s)``, with numbers written with ``_`` kept as their text."""
    node = ast.parse(s, mode="eval")
    if "_" in s:
        node = _UnderscoredNumbers(s).visit(node)
    return ast.literal_eval(node)


def split_list_cell(value):
    """A list of ids (``entity_ids``, ``text_unit_ids``) from a text cell, split exactly as graphrag 3
    does (graphrag/data_model/dfs.py ``split_list_column``, v3.0.4 to v3.3.0): newlines as commas,
    split on commas, ``[] '"`` stripped from both ends of each item, empty items dropped.
    Not a Python parse: ``"[['a', 'b']]"`` is ``['a', 'b']``, an id holding a comma is two ids.
    Arrays and None as :func:`parse_list_cell`."""
    if isinstance(value, str):
        items = (item.strip("[] '\"") for item in value.replace("\n", ",").split(","))
        return [item for item in items if item]
    return parse_list_cell(value)


def _numpy_repr_list(s: str):
    """graphrag 3 writes numpy arrays (e.g. ``children``) to CSV as ``str(array)``:
    ``"[20 21]"``, wrapped with newlines when long. Items are integers or quoted strings (a
    number written with ``_`` stays text)."""
    if not (s.startswith("[") and s.endswith("]")):
        return None
    items = s[1:-1].split()
    out: list[int | str] = []
    for it in items:
        try:
            if "_" in it:  # numpy never writes 1_0 (int() reads it as 10): kept as the text
                raise ValueError
            out.append(int(it))
        except ValueError:
            if len(it) >= 2 and it[0] == it[-1] and it[0] in "'\"":
                out.append(it[1:-1])
            elif "_" in it and it.replace("_", "").lstrip("-").isdigit():
                out.append(it)
            else:
                return None
    return out


def int_ids(series: pd.Series, path: Path, column: str, missing: int = -1) -> np.ndarray:
    """An id/level column as int64, None/NaN/'' as ``missing``; anything not an integer is an error."""
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
        return np.where(na, missing, arr).astype(np.int64)
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
                raise IndexInputError(
                    path, f"column '{column}' has non-integer value {float(v)!r}, expected integer ids"
                )
            out[i] = int(v)
            continue
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if not isinstance(v, str):
            kind = (
                "structs" if isinstance(v, dict) else "lists" if hasattr(v, "__len__") else type(v).__name__
            )
            raise IndexInputError(path, f"column '{column}' holds {kind} where single integer ids belong")
        t = v.strip()
        if t == "" or t.lower() in ("nan", "none", "null"):
            out[i] = missing
            continue
        try:
            if "_" in t:  # int() and float() read "1_0" as 10; graphrag never writes an id so
                raise ValueError
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
    """The arrow array behind an arrow-backed list column (see tables.read_table), else None."""
    dt = series.dtype
    return (
        pa.array(series.array) if isinstance(dt, pd.ArrowDtype) and is_list_type(dt.pyarrow_dtype) else None
    )


def _lengths(arr) -> np.ndarray:
    """Each list's length (0 for a null list) as int64."""
    return pc.fill_null(pc.list_value_length(arr), 0).to_numpy(zero_copy_only=False).astype(np.int64)


def id_lists(series: pd.Series, path: Path, column: str) -> pd.Series | list[list]:
    """A list column of ids (``text_unit_ids``), nested lists refused (:func:`flat_ids`): text cells
    split as graphrag 3 splits them; arrow lists stay arrow-backed, lists of strings with their items
    dictionary-encoded (one dictionary for the column: text-unit ids are 3 M items, 250 k distinct)."""
    flat_ids(series, path, column)
    arr = _arrow_list(series)
    if arr is None:
        return list_column(series, path, column, cell=split_list_cell)
    t = arr.type
    if not (
        (pa.types.is_list(t) or pa.types.is_large_list(t))
        and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type))
    ):
        return series
    lens = _lengths(arr)
    enc = pc.dictionary_encode(pc.list_flatten(arr))
    if isinstance(enc, pa.ChunkedArray):
        enc = (
            enc.combine_chunks() if enc.num_chunks else pa.array([], pa.dictionary(pa.int32(), t.value_type))
        )
    offsets = pa.array(
        np.concatenate(([0], np.cumsum(lens))).astype(np.int32 if pa.types.is_list(t) else np.int64)
    )
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
        if (
            pa.types.is_signed_integer(vt) or vt in (pa.uint8(), pa.uint16(), pa.uint32())
        ) and pc.list_flatten(arr).null_count == 0:
            return list_column(series, path, column)  # already Python ints in int64 range, none missing
    out = []
    for lst in list_column(series, path, column):
        row = []
        for v in lst:
            if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and v != v):
                continue
            if (
                isinstance(v, (int, np.integer))
                and not isinstance(v, (bool, np.bool_))
                and abs(int(v)) <= INT64_MAX
            ):
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
    return IndexInputError(
        path,
        f"column '{column}' holds nested {kind} where ids belong: graphrag's global "
        f"search fails on them (pandas merge / set(): unhashable type)",
    )


def flat_ids(series: pd.Series, path: Path, column: str) -> None:
    """Refuse an arrow list column of ids whose items are lists, structs or maps (graphrag 3.x's
    global search fails on them). A CSV cell ``"[['a', 'b']]"`` is text: see split_list_cell."""
    arr = _arrow_list(series)
    if arr is None:
        return
    t = arr.type.value_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_nested(t):
        raise _nested(
            path, column, "structs" if pa.types.is_struct(t) else "maps" if pa.types.is_map(t) else "lists"
        )


def list_flat(
    series: pd.Series, path: Path, column: str
) -> tuple[np.ndarray | pd.api.extensions.ExtensionArray, np.ndarray]:
    """(every item of every list as str, in row order; the list length of each row): flattened
    :func:`list_column` without a Python list per row; arrow string lists dictionary-encoded."""
    flat_ids(series, path, column)
    arr = _arrow_list(series)
    if arr is not None:
        try:
            lens = _lengths(arr)
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


def key_column(series: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A text key column (entity titles, from :func:`text_column`) dictionary-encoded like
    :func:`dictionary_keys`; a Categorical when it cannot go through arrow."""
    try:
        arr = (
            pa.array(series.array)
            if isinstance(series.array, pd.arrays.ArrowExtensionArray)
            else pa.array(series.to_numpy(dtype=object), from_pandas=True)
        )
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            return dictionary_keys(arr)
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, TypeError, ValueError):
        pass
    codes, uniques = pd.factorize(series)
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques))


def text_column(series: pd.Series | None, n: int) -> pd.Series:
    """Strings with None/NaN as '', bytes decoded with replacement; arrow-backed columns stay so."""
    if series is None:
        return pd.Series([""] * n, dtype=object)
    if pd.api.types.is_string_dtype(series.dtype) and series.dtype != object:
        # pandas/arrow string columns hold only str or missing: no per-value checks needed
        return series.fillna("")

    def text(v) -> str:
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, (float, np.floating)) and v != v):
            return ""
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        return v if isinstance(v, str) else str(v)

    out = np.empty(len(series), dtype=object)
    out[:] = [text(v) for v in series.to_numpy(dtype=object)]
    return pd.Series(out, dtype=object, index=series.index)

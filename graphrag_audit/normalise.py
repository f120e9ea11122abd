"""Normalise the columns graphrag wrote with drifting types across versions.

string / int32 / int64 / double ids become int64 with −1 for "none"; list columns
(arrow lists, ``list<null>``, graphrag 3 CSV strings) become Python lists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from graphrag_audit.errors import IndexInputError
from graphrag_audit.tables import parse_list_cell

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
        if s.isna().any():  # nullable ints
            return s.fillna(missing).to_numpy(dtype=np.int64)
        return s.to_numpy(dtype=np.int64)
    if ptypes.is_float_dtype(s.dtype):
        arr = s.to_numpy(dtype=np.float64, na_value=np.nan)
        na = np.isnan(arr)
        bad = ~na & ((arr != np.floor(arr)) | ~np.isfinite(arr) | (np.abs(arr) >= 2**63))
        if bad.any():
            raise IndexInputError(
                path, f"column '{column}' has non-integer value {arr[bad][0]!r}, expected integer ids"
            )
        out = np.where(na, missing, arr).astype(np.int64)
        return out
    # strings or objects
    values = s.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=np.int64)
    for i, v in enumerate(values):  # only string-typed (0.x) or odd columns reach here
        if v is None or (isinstance(v, float) and v != v):
            out[i] = missing
            continue
        if isinstance(v, (bool, np.bool_)):
            raise IndexInputError(path, f"column '{column}' holds booleans, expected integers")
        if isinstance(v, (int, np.integer)):
            out[i] = int(v)
            continue
        if isinstance(v, (float, np.floating)):
            if v != int(v):
                raise IndexInputError(path, f"column '{column}' has non-integer value {v!r}")
            out[i] = int(v)
            continue
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if not isinstance(v, str):
            kind = "lists" if hasattr(v, "__len__") else type(v).__name__
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


def list_column(series: pd.Series, path: Path, column: str) -> list[list]:
    """A list column (arrow list, list<null>, CSV string) as Python lists."""
    out = []
    for v in series.to_numpy(dtype=object):
        try:
            out.append(parse_list_cell(v))
        except ValueError as exc:
            raise IndexInputError(path, f"column '{column}': {exc}") from None
    return out


def text_column(series: pd.Series | None, n: int) -> pd.Series:
    """Strings with None/NaN as ''. Non-UTF-8 bytes are decoded with replacement."""
    if series is None:
        return pd.Series([""] * n, dtype=object)
    vals = series.to_numpy(dtype=object)
    out = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        if v is None or (isinstance(v, float) and v != v):
            out[i] = ""
        elif isinstance(v, bytes):
            out[i] = v.decode("utf-8", "replace")
        elif isinstance(v, str):
            out[i] = v
        else:
            out[i] = str(v)
    return pd.Series(out, dtype=object, index=series.index)

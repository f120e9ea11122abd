"""Read one index table (parquet or graphrag 3 CSV), only the columns asked for.

Every failure becomes an :class:`IndexInputError` naming the file and the problem.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError

PARQUET_MAGIC = b"PAR1"


def _check_file(path: Path) -> int:
    try:
        if path.is_dir():
            raise IndexInputError(path, "is a directory, expected a table file")
        size = path.stat().st_size
    except IndexInputError:
        raise
    except PermissionError:
        raise IndexInputError(path, "permission denied") from None
    except OSError as exc:
        raise IndexInputError(path, f"cannot read ({exc.strerror or exc})") from None
    if not path.is_file():
        raise IndexInputError(path, "not a regular file")
    if size == 0:
        raise IndexInputError(path, "file is empty (0 bytes)")
    return size


def _check_parquet_magic(path: Path, size: int) -> None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            if size < 12:
                raise IndexInputError(path, f"truncated parquet file ({size} bytes)")
            fh.seek(-4, 2)
            tail = fh.read(4)
    except PermissionError:
        raise IndexInputError(path, "permission denied") from None
    except OSError as exc:
        raise IndexInputError(path, f"cannot read ({exc.strerror or exc})") from None
    if head != PARQUET_MAGIC:
        raise IndexInputError(path, "not a parquet file (bad magic bytes)")
    if tail != PARQUET_MAGIC:
        raise IndexInputError(path, "truncated or corrupt parquet file (no footer)")


def table_columns(path: Path) -> list[str]:
    """Column names of a table without reading its data."""
    size = _check_file(path)
    if path.suffix == ".csv":
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                header = fh.readline()
        except OSError as exc:
            raise IndexInputError(path, f"cannot read ({exc.strerror or exc})") from None
        import csv

        return next(csv.reader([header]), [])
    _check_parquet_magic(path, size)
    try:
        return list(pq.read_schema(path).names)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise IndexInputError(path, f"corrupt parquet metadata ({_short(exc)})") from None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:160] + ("…" if len(text) > 160 else "")


def read_table(path: Path, wanted: list[str]) -> pd.DataFrame:
    """Read the ``wanted`` columns that exist in the table (others are skipped)."""
    names = table_columns(path)
    cols = [c for c in wanted if c in names]
    if path.suffix == ".csv":
        try:
            table = pacsv.read_csv(
                path,
                convert_options=pacsv.ConvertOptions(include_columns=cols),
                parse_options=pacsv.ParseOptions(newlines_in_values=True),
            )
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise IndexInputError(path, f"unreadable CSV ({_short(exc)})") from None
    else:
        try:
            table = pq.read_table(path, columns=cols)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise IndexInputError(path, f"unreadable parquet data ({_short(exc)})") from None
    try:
        return table.to_pandas()
    except (pa.ArrowException, ValueError) as exc:
        raise IndexInputError(path, f"cannot convert to a table ({_short(exc)})") from None


def parse_list_cell(value):
    """A list column cell as a Python list: arrays, graphrag 3 CSV strings, None."""
    if value is None:
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
            except ValueError:
                try:
                    out = ast.literal_eval(s)
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


def _numpy_repr_list(s: str):
    """graphrag 3 writes numpy arrays (e.g. ``children``) to CSV as ``str(array)``:
    ``"[20 21]"``, wrapped with newlines when long. Items are integers or quoted strings."""
    if not (s.startswith("[") and s.endswith("]")):
        return None
    items = s[1:-1].split()
    out = []
    for it in items:
        try:
            out.append(int(it))
        except ValueError:
            if len(it) >= 2 and it[0] == it[-1] and it[0] in "'\"":
                out.append(it[1:-1])
            else:
                return None
    return out

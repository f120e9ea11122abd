"""Read one index table (parquet or graphrag 3 CSV), only the columns asked for; every failure
is an :class:`IndexInputError` naming the file and the problem."""

from __future__ import annotations

import codecs
import contextlib
import csv
import io
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io import bounded
from graphrag_audit.io.bounded import MAX_CSV_HEADER, MAX_FOOTER_BYTES, MAX_TABLE_ROWS
from graphrag_audit.io.decoded import check_parquet, is_list_type, refusal
from graphrag_audit.io.remote import RemoteFile

PARQUET_MAGIC = b"PAR1"
#: rows per decoded record batch when reading parquet, at most
PARQUET_BATCH_ROWS = 65536
#: ... and fewer when the columns read hold more than this many bytes per batch
PARQUET_BATCH_BYTES = 32 << 20
#: bytes of a CSV file checked for valid UTF-8 at a time
_UTF8_CHUNK = 16 << 20


@contextlib.contextmanager
def _os_errors(path: Path):
    """An OSError in the block as the one-line error naming ``path``."""
    try:
        yield
    except PermissionError:
        raise IndexInputError(path, "permission denied") from None
    except OSError as exc:
        raise IndexInputError(path, f"cannot read ({exc.strerror or exc})") from None


@contextlib.contextmanager
def _failing(path: Path, what: str, errors: tuple = (pa.ArrowException, OSError, ValueError)):
    """``errors`` in the block as the one-line error ``what (the exception)`` naming ``path``."""
    try:
        yield
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except errors as exc:
        raise IndexInputError(path, f"{what} ({_short(exc)})") from None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:160] + ("…" if len(text) > 160 else "")


def _check_file(path: Path) -> int:
    if isinstance(path, RemoteFile):  # listed as a file
        size = path.size
    else:
        with _os_errors(path):
            if path.is_dir():
                raise IndexInputError(path, "is a directory, expected a table file")
            size = path.stat().st_size
        if not path.is_file():
            raise IndexInputError(path, "not a regular file")
    if size == 0:
        raise IndexInputError(path, "file is empty (0 bytes)")
    return size


def _check_parquet_magic(path: Path, size: int) -> None:
    with _os_errors(path), _open_regular(path) as fh:
        head = fh.read(4)
        if size < 12:
            raise IndexInputError(path, f"truncated parquet file ({size} bytes)")
        fh.seek(-8, 2)
        footer_len = int.from_bytes(fh.read(4), "little")
        tail = fh.read(4)
    if head != PARQUET_MAGIC:
        raise IndexInputError(path, "not a parquet file (bad magic bytes)")
    if tail != PARQUET_MAGIC:
        raise IndexInputError(path, "truncated or corrupt parquet file (no footer)")
    # checked before pyarrow sees the file: it would allocate the claimed length first
    if footer_len > size - 12:
        raise IndexInputError(
            path,
            f"corrupt parquet footer (metadata length {footer_len} bytes exceeds "
            f"the file size of {size} bytes)",
        )
    if footer_len > MAX_FOOTER_BYTES:
        raise IndexInputError(
            path,
            f"corrupt parquet footer (metadata length {footer_len} bytes, more than "
            f"the {MAX_FOOTER_BYTES // 1024**2} MiB any index table needs)",
        )


def table_columns(path: Path) -> list[str]:
    """Column names of a table without reading its data."""
    size = _check_file(path)
    if path.suffix != ".csv":
        return list(parquet_schema(path, size).names)
    with _os_errors(path), _open_regular(path) as fh:
        head = fh.read(MAX_CSV_HEADER)
    if len(head) >= MAX_CSV_HEADER and b"\n" not in head and b"\r" not in head:
        raise IndexInputError(
            path, f"not a CSV table (no header line within the first {MAX_CSV_HEADER // 1024**2} MiB)"
        )
    # one leading UTF-8 byte order mark is not part of the first name (pandas and pyarrow
    # drop it: graphrag 3 reads `id`, not `\ufeffid`); the header may hold quoted newlines
    text = head.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    return next(csv.reader(io.StringIO(text, newline="")), [])


def _open_regular(path: Path):
    return path.open() if isinstance(path, RemoteFile) else bounded.open_regular(path)


def _open(path: Path) -> pa.NativeFile:
    """A native file for pyarrow; the name as bytes, so non-UTF-8 file names open too."""
    if isinstance(path, RemoteFile):
        return pa.PythonFile(path.open(), mode="r")
    return pa.OSFile(os.fsencode(path))


def parquet_schema(path: Path, size: int | None = None) -> pa.Schema:
    _check_parquet_magic(path, _check_file(path) if size is None else size)
    try:
        with _open(path) as fh:
            return pq.read_schema(fh)
    except PermissionError:
        raise IndexInputError(path, "permission denied") from None
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise IndexInputError(path, f"corrupt parquet metadata ({_short(exc)})") from None


def read_table(path: Path, wanted: list[str]) -> pd.DataFrame:
    """Read the ``wanted`` columns that exist in the table (others are skipped)."""
    names = table_columns(path)
    cols = [c for c in wanted if c in names]
    if path.suffix == ".csv":
        table = _read_csv(path, cols)
    else:
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:  # pandas.read_parquet (graphrag's reader) fails: "Multiple matches for FieldRef"
            raise IndexInputError(
                path,
                f"column name {twice[0]!r} appears {names.count(twice[0])} times: "
                f"graphrag cannot read the table (pandas.read_parquet refuses "
                f"duplicate column names)",
            )
        table = _read_parquet(path, cols)
    table = _repair_utf8(path, table)
    try:
        # list columns stay arrow-backed: normalise converts them without a numpy array per row
        return table.to_pandas(types_mapper=_arrow_lists)
    except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
        raise
    except RecursionError:  # pyarrow parses it even with ignore_metadata, and so pandas.read_parquet fails
        raise IndexInputError(
            path, "cannot convert to a table (its pandas metadata is JSON nested too deeply)"
        ) from None
    except (pa.ArrowException, ValueError) as exc:
        raise IndexInputError(path, f"cannot convert to a table ({_short(exc)})") from None
    except (KeyError, TypeError, IndexError, AttributeError):
        pass  # the optional pandas metadata in the file is damaged: read the columns without it
    damaged = (pa.ArrowException, ValueError, KeyError, TypeError, IndexError, AttributeError)
    with _failing(path, "cannot convert to a table", damaged):
        return table.to_pandas(types_mapper=_arrow_lists, ignore_metadata=True)


def read_arrow_table(path: Path) -> pa.Table:
    """Every column of a parquet table as arrow, with :func:`read_table`'s checks (for bundle)."""
    names = table_columns(path)
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise IndexInputError(path, f"column name {twice[0]!r} appears {names.count(twice[0])} times")
    return _repair_utf8(path, _read_parquet(path, names))


def _batch_rows(meta: pq.FileMetaData, cols: list[str]) -> int:
    """Rows per record batch: a batch's text is built in buffers that grow by doubling, so a
    batch of 65536 reports (1-4 KB each) held up to twice its 160 MB while being decoded. The
    columns' uncompressed size in the file bounds a batch to about PARQUET_BATCH_BYTES."""
    try:
        wanted, size, rows = set(cols), 0, meta.num_rows
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                column = group.column(c)
                if column.path_in_schema.split(".")[0] in wanted:
                    size += max(int(column.total_uncompressed_size), 0)
    except (AttributeError, ValueError, TypeError, IndexError, pa.ArrowException):
        return PARQUET_BATCH_ROWS
    if rows <= 0 or size <= 0:
        return PARQUET_BATCH_ROWS
    return int(min(PARQUET_BATCH_ROWS, max(1024, PARQUET_BATCH_BYTES * rows // size)))


def _read_parquet(path: Path, cols: list[str]) -> pa.Table:
    """``pq.read_table(path, columns=cols)`` batch by batch (streamed pages: a 1M-entity ``entities``
    table peaks at 0.58 GB, not 1.35), refused before any column is materialised when it would
    decode to too much (io/decoded.py), and while read when its footer understated that."""
    with _failing(path, "unreadable parquet data"), _open(path) as fh:
        meta = pq.read_metadata(fh)
        if meta.num_rows > MAX_TABLE_ROWS:
            raise IndexInputError(
                path,
                f"the table claims {meta.num_rows:,} rows, more than the "
                f"{MAX_TABLE_ROWS:,} of any index table (refused unread)",
            )
        found = check_parquet(path, fh, meta, cols, fh.size())  # decompression and dictionary bombs
        fh.seek(0)
        if not cols:
            return pq.read_table(fh, columns=cols)
        pf = pq.ParquetFile(fh, metadata=meta, pre_buffer=False, buffer_size=1 << 20)
        batches, used = [], 0
        for batch in pf.iter_batches(batch_size=_batch_rows(meta, cols), columns=cols):
            used += batch.nbytes
            if used > found.limit:
                raise refusal(path, found, used, during_read=True)
            batches.append(batch)
        return pa.Table.from_batches(batches) if batches else pf.schema_arrow.empty_table().select(cols)


def read_csv_rows(path: Path) -> list[list[str]]:
    """A CSV table's cells exactly as written (header first), after graphrag's strict UTF-8 check;
    graphrag 3 reads the file as UTF-8 text, so newlines inside fields are kept as they are."""
    _check_csv_utf8(path)
    with _os_errors(path), _open_regular(path) as fh:
        text = fh.read().decode("utf-8")
    with _failing(path, "unreadable CSV", (csv.Error,)):
        return list(csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline="")))


def _check_csv_utf8(path: Path) -> None:
    """graphrag 3 reads CSV as strict UTF-8 and fails on any invalid byte (graphrag_storage/
    file_storage.py ``_read_file`` @ v3.0.2-v3.3.0): such a table is refused."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0
    with _os_errors(path), _open_regular(path) as fh:
        while True:
            data = fh.read(_UTF8_CHUNK)
            pending = len(decoder.getstate()[0])
            try:
                decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                raise IndexInputError(
                    path,
                    f"not valid UTF-8 (byte {offset - pending + exc.start:,}: {exc.reason}); graphrag reads "
                    f"CSV tables as UTF-8 text and fails on it",
                ) from None
            if not data:
                return
            offset += len(data)


def _read_csv(path: Path, cols: list[str]) -> pa.Table:
    """The ``cols`` of a CSV table as graphrag 3 reads it, ``pd.read_csv(StringIO(text))``
    (graphrag_storage/tables/csv_table_provider.py @ v3.0.2-v3.3.0): strict UTF-8, one leading BOM
    dropped, quoted fields spanning lines, ``\r\n`` and ``\r`` in a field read as ``\n``."""
    _check_csv_utf8(path)
    block = None  # pyarrow's default (1 MiB) first; a field longer than a block needs a bigger one
    while True:
        try:
            with _open(path) as fh:
                table = pacsv.read_csv(
                    fh,
                    read_options=pacsv.ReadOptions(block_size=block),
                    convert_options=pacsv.ConvertOptions(include_columns=cols, check_utf8=False),
                    parse_options=pacsv.ParseOptions(newlines_in_values=True),
                )
            break
        except MemoryError:  # arrow's out-of-memory is an ArrowException too: never a fallback
            raise
        except (pa.ArrowException, OSError, ValueError) as exc:
            if block is None and "straddl" in str(exc):
                with contextlib.suppress(OSError):
                    size = path.size if isinstance(path, RemoteFile) else os.stat(path).st_size
                    block = max(1 << 20, min(size + 1, 2**31 - 1))  # the whole file in one block
                    continue
            raise IndexInputError(path, f"unreadable CSV ({_short(exc)})") from None
    # ``\r\n`` and lone ``\r`` inside string fields as ``\n``, as Python's text mode reads them
    for i, f in enumerate(table.schema):
        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            col = table.column(i)
            if pc.any(pc.match_substring(col, "\r")).as_py():
                col = pc.replace_substring(pc.replace_substring(col, "\r\n", "\n"), "\r", "\n")
                table = table.set_column(i, f, col)
    return table


def _arrow_lists(t: pa.DataType):
    return pd.ArrowDtype(t) if is_list_type(t) else None


def _is_text(t: pa.DataType) -> bool:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    return (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_text(t.value_type)


def _as_binary(t: pa.DataType) -> pa.DataType:
    if pa.types.is_string(t):
        return pa.binary()
    if pa.types.is_large_string(t):
        return pa.large_binary()
    inner = _as_binary(t.value_type)
    return pa.large_list(inner) if pa.types.is_large_list(t) else pa.list_(inner)


def _decode(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return [_decode(x) for x in v] if isinstance(v, list) else v


def _repair_utf8(path: Path, table: pa.Table) -> pa.Table:
    """String columns holding invalid UTF-8 (LLM output, hand edits) decoded with U+FFFD (pandas
    >= 3 keeps strings in arrow and would fail on them later, anywhere)."""
    with _failing(path, "cannot convert to a table", (pa.ArrowException, ValueError)):
        for i, field in enumerate(table.schema):
            if not _is_text(field.type):
                continue
            col = table.column(i)
            try:
                col.validate(full=True)
                continue
            except pa.ArrowInvalid:
                pass
            as_bytes = col.cast(_as_binary(field.type))
            table = table.set_column(
                i, field, pa.array([_decode(v) for v in as_bytes.to_pylist()], field.type)
            )
    return table

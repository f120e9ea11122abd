"""How many bytes the columns read from a parquet table decode to, checked before they are read.

A parquet file can be tiny and decode to gigabytes: one 10 MB string referenced by 300 rows through a
dictionary is 3 KB on disk and 3 GB as plain strings. The decoded size (text bytes plus 8 bytes per
value) must not exceed :func:`decoded_limit`; :func:`check_parquet` refuses a table before any column
is materialised, per (row group, column) chunk and stopping once the sum fits:

1. footer only: text <= the chunk's uncompressed page bytes ``U``, plus ``values x U`` when it may be
   dictionary-encoded;
2. the dictionary page (one small read): ``U + values x the longest dictionary entry``;
3. exact: the chunk read in dictionary form and the lengths of the values its indices name.

DELTA_BYTE_ARRAY chunks (never written by pandas or pyarrow) keep the bound ``values x U``. A footer
that understates sizes is caught batch by batch while reading (:func:`refusal`), at the same limit.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.bounded import DECODED_CAP, DECODED_ENV, DECODED_FLOOR, DECODED_RATIO

#: bytes counted per value besides its text (arrow offsets, 8-byte numbers)
PER_VALUE = 8
#: text column chunks whose first page is always read (step 2); beyond, only while needed
MAX_PROBED_CHUNKS = 1000

_WIDTH = {"BOOLEAN": 1, "INT32": 4, "FLOAT": 4, "INT64": 8, "DOUBLE": 8, "INT96": 12}
_BYTES = (pa.string(), pa.binary(), pa.large_string(), pa.large_binary())


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n // size} {unit}" if n % size == 0 else f"{n / size:.1f} {unit}"
    return f"{n} bytes"


def parse_byte_count(text: str) -> int:
    """``"123"``, ``"512M"``, ``"16G"``, ``"2GiB"``, ``"1.5T"`` as bytes (powers of 1024)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", text, flags=re.IGNORECASE)
    value = int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " ")) if m else 0
    if value <= 0:
        raise ValueError(text)
    return value


def decoded_limit(file_size: int) -> tuple[int, str]:
    """(the most bytes a table of ``file_size`` bytes may decode to, how that was set)."""
    raw = os.environ.get(DECODED_ENV)
    if raw is not None and raw.strip():
        try:
            return parse_byte_count(raw), f"set by {DECODED_ENV}"
        except (ValueError, OverflowError):
            raise IndexInputError(DECODED_ENV, f"not a positive byte count: {raw[:40]!r} (e.g. 8G)") from None
    limit = min(DECODED_CAP, max(DECODED_FLOOR, DECODED_RATIO * file_size))
    return limit, (
        f"the larger of {_human(DECODED_FLOOR)} and {DECODED_RATIO} x the file size, at most "
        f"{_human(DECODED_CAP)}; {DECODED_ENV} changes it"
    )


def is_list_type(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


# ---- the chunks of the columns read ----------------------------------------------------------
@dataclass
class _Chunk:
    group: int
    leaf: int  # parquet leaf column index
    column: str  # the top-level column it belongs to
    values: int  # values (rows for a flat column, list items for a list column)
    pages: int  # uncompressed page bytes (footer)
    text: bool  # BYTE_ARRAY (variable length)
    dictionary: bool  # may be dictionary-encoded (footer)
    delta: bool  # DELTA_BYTE_ARRAY: values rebuilt from shared prefixes
    bound: int  # decoded bytes at most (or exactly, once ``exact``)
    dict_bytes: int = 0  # the dictionary page, decompressed (step 2; arrow decodes it whole)
    exact: bool = False


def _leaf_count(t: pa.DataType) -> int:
    if is_list_type(t) or pa.types.is_dictionary(t):
        return _leaf_count(t.value_type)
    if pa.types.is_map(t):
        return _leaf_count(t.key_type) + _leaf_count(t.item_type)
    if pa.types.is_struct(t):
        return sum(_leaf_count(t.field(i).type) for i in range(t.num_fields))
    return 1


def _leaf_columns(meta: pq.FileMetaData) -> list[str]:
    """The top-level column of each parquet leaf column (names may hold dots)."""
    schema = meta.schema
    owners = [f.name for f in schema.to_arrow_schema() for _ in range(_leaf_count(f.type))]
    if len(owners) == meta.num_columns:
        return owners
    return [schema.column(i).path.split(".")[0] for i in range(meta.num_columns)]


def _chunks(meta: pq.FileMetaData, owners: list[str], cols: list[str]) -> list[_Chunk]:
    """Every chunk of ``cols``, bounded from the footer (step 1)."""
    wanted = set(cols)
    leaves = [i for i, owner in enumerate(owners) if owner in wanted]
    out = []
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for i in leaves:
            cc, leaf = group.column(i), meta.schema.column(i)
            values = max(int(cc.num_values), 0)
            if (
                leaf.max_repetition_level <= 0
            ):  # a flat column has one value per row, whatever the footer says
                values = max(values, int(group.num_rows))
            encodings = set(cc.encodings or ())
            physical = leaf.physical_type
            # FIXED_LEN_BYTE_ARRAY: ``length`` bytes a value, dictionary or not
            width = (
                int(leaf.length or 0)
                if physical == "FIXED_LEN_BYTE_ARRAY"
                else _WIDTH.get(physical, PER_VALUE)
            )
            pages = max(int(cc.total_uncompressed_size), 0)
            dictionary = bool(cc.has_dictionary_page) or bool(
                encodings & {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
            )
            text, delta = physical == "BYTE_ARRAY", "DELTA_BYTE_ARRAY" in encodings
            bound = values * max(PER_VALUE, width)
            if text:
                bound += pages + (values * pages if dictionary or delta else 0)
            out.append(_Chunk(g, i, owners[i], values, pages, text, dictionary, delta, bound))
    return out


# ---- step 2: the dictionary page -------------------------------------------------------------
class _Thrift(Exception):
    pass


def _varint(b: bytes, i: int) -> tuple[int, int]:
    out = shift = 0
    while i < len(b) and shift <= 63:
        x = b[i]
        i += 1
        out |= (x & 0x7F) << shift
        shift += 7
        if not x & 0x80:
            return out, i
    raise _Thrift


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _struct(b: bytes, i: int, depth: int = 0) -> tuple[dict, int]:
    """A thrift compact-protocol struct (a parquet page header): {field id: int or nested dict},
    binary fields skipped; the kinds a page header never holds (lists, maps, doubles) raise."""
    fid = 0
    out: dict = {}
    while depth <= 16 and i < len(b):
        head = b[i]
        i += 1
        if head == 0:
            return out, i
        kind, delta = head & 0x0F, head >> 4
        if delta:
            fid += delta
        else:
            n, i = _varint(b, i)
            fid = _zigzag(n)
        if kind in (4, 5, 6):
            n, i = _varint(b, i)
            out[fid] = _zigzag(n)
        elif kind == 12:
            out[fid], i = _struct(b, i, depth + 1)
        elif kind == 8:
            n, i = _varint(b, i)
            i += n
        elif kind == 3:
            i += 1
        elif kind not in (1, 2):  # booleans live in the field header
            raise _Thrift
    raise _Thrift


_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli", "ZSTD": "zstd", "LZ4_RAW": "lz4_raw"}
_LEN = struct.Struct("<i")


def _longest_plain(body: bytes, count: int) -> int | None:
    """The longest value of ``count`` PLAIN-encoded BYTE_ARRAY values (4-byte length + bytes),
    or None when ``body`` is not exactly that."""
    n = len(body)
    if count > 0 and n >= 4:
        first = _LEN.unpack_from(body, 0)[0]
        if first >= 0 and count * (first + 4) == n:  # every value as long as the first (ids, hashes)
            lens = np.frombuffer(body, dtype=np.uint8).reshape(count, first + 4)[:, :4]
            if (np.ascontiguousarray(lens).view("<i4") == first).all():
                return first
    pos = longest = seen = 0
    unpack = _LEN.unpack_from
    while pos + 4 <= n:
        size = unpack(body, pos)[0]
        if size < 0:
            return None
        pos += 4 + size
        seen += 1
        if size > longest:
            longest = size
    return longest if pos == n and seen == max(count, 0) else None


def _first_page(fh: pa.NativeFile, cc, file_size: int, budget: int) -> tuple[int, int | None] | None:
    """``(0, 0)`` when a chunk starts with a data page; ``(dictionary bytes, longest entry or None
    when not worth or possible to tell)`` for a dictionary page; None: the header is unreadable."""
    start = int(cc.data_page_offset)  # where arrow starts reading (parquet's ComputeColumnChunkRange)
    dict_offset = cc.dictionary_page_offset
    if cc.has_dictionary_page and dict_offset is not None and 0 < int(dict_offset) < start:
        start = int(dict_offset)
    if not 4 <= start < file_size:
        return None
    fh.seek(start)
    try:
        header, size = _struct(fh.read(min(4096, file_size - start)), 0)
    except _Thrift:
        return None
    kind, raw_size, packed_size, dict_header = (header.get(k) for k in (1, 2, 3, 7))
    if kind in (0, 3):  # DATA_PAGE, DATA_PAGE_V2: arrow reads this chunk without a dictionary
        return 0, 0
    if not (kind == 2 and isinstance(dict_header, dict) and isinstance(raw_size, int)):
        return None
    if not isinstance(packed_size, int) or raw_size < 0 or packed_size < 0:
        return None
    count = dict_header.get(1)
    if not isinstance(count, int) or raw_size > budget or start + size + packed_size > file_size:
        return raw_size, None
    fh.seek(start + size)
    body = fh.read(packed_size)
    if cc.compression not in ("UNCOMPRESSED", *_CODECS):  # LZ4 (hadoop framing), LZO: step 3 reads it
        return raw_size, None
    if cc.compression != "UNCOMPRESSED":
        try:
            body = memoryview(pa.Codec(_CODECS[cc.compression]).decompress(body, decompressed_size=raw_size))
        except (pa.ArrowException, ValueError):
            return raw_size, None
    return raw_size, _longest_plain(body, count) if len(body) == raw_size else None


# ---- step 3: exact, in dictionary form -------------------------------------------------------
def _text_lengths(arr) -> int:
    """Total bytes of the string/binary values of ``arr`` (dictionary-encoded or not; lists of them)."""
    if isinstance(arr, pa.ChunkedArray):
        return sum(_text_lengths(c) for c in arr.chunks)
    if is_list_type(arr.type):
        return _text_lengths(pc.list_flatten(arr))
    if pa.types.is_dictionary(arr.type):
        return int(pc.sum(pc.take(pc.binary_length(arr.dictionary), arr.indices)).as_py() or 0)
    return int(pc.sum(pc.binary_length(arr)).as_py() or 0) if arr.type in _BYTES else 0


def _exact_text(
    fh: pa.NativeFile, meta: pq.FileMetaData, column: str, group: int, leaves: list[str]
) -> int | None:
    """Bytes of text in ``column`` of row group ``group``, read in dictionary form."""
    fh.seek(0)
    pf = pq.ParquetFile(fh, metadata=meta, read_dictionary=leaves, pre_buffer=False, buffer_size=1 << 20)
    t = pf.schema_arrow.field(column).type
    while is_list_type(t) or pa.types.is_dictionary(t):
        t = t.value_type
    if t not in _BYTES:
        return None  # structs, maps: the bound of step 2 stands
    batches = pf.iter_batches(batch_size=65536, row_groups=[group], columns=[column])
    return sum(_text_lengths(batch.column(0)) for batch in batches)


# ---- the check -------------------------------------------------------------------------------
@dataclass
class DecodedSize:
    """What :func:`check_parquet` found: the limit and the decoded bytes per column."""

    limit: int
    rule: str
    file_size: int
    columns: dict[str, int] = field(default_factory=dict)
    inexact: set[str] = field(default_factory=set)  # columns whose size is an upper bound

    @property
    def total(self) -> int:
        return sum(self.columns.values())

    @property
    def exact(self) -> bool:
        return not self.inexact


def _amount(n: int) -> str:
    return f"{n:,} bytes" if n < 1024 else f"{n:,} bytes ({_human(n)})"


def refusal(
    path: Path,
    found: DecodedSize,
    total: int | None = None,
    during_read: bool = False,
    at_least: bool = False,
) -> IndexInputError:
    """The error refusing ``path``; ``during_read``: its batches added up to ``total`` bytes."""
    total = found.total if total is None else total
    column, biggest = max(found.columns.items(), key=lambda kv: kv[1]) if found.columns else ("?", total)
    if during_read:
        what = f"the columns read decode to more than {_amount(total)} although the file's footer claims less"
    elif biggest > found.limit or len(found.columns) == 1:
        how = "at least " if at_least else "up to " if column in found.inexact else ""
        what = f"column '{column}' decodes to {how}{_amount(biggest)}"
    else:
        how = "at least " if at_least else "up to " if found.inexact else ""
        what = f"the columns read decode to {how}{_amount(total)} (column '{column}' {_human(biggest)})"
    if at_least:
        what += " (its pages decompress to that much)"
    return IndexInputError(
        path,
        f"{what} from a {found.file_size:,}-byte file, more than its "
        f"{_human(found.limit)} limit ({found.rule}); refused unread",
    )


def check_parquet(
    path: Path, fh: pa.NativeFile, meta: pq.FileMetaData, cols: list[str], file_size: int
) -> DecodedSize:
    """Refuse (IndexInputError) a parquet table whose columns ``cols`` decode to more than
    :func:`decoded_limit` bytes (the module doc); otherwise return what was found."""
    limit, rule = decoded_limit(file_size)
    found = DecodedSize(limit, rule, file_size)
    try:
        owners = _leaf_columns(meta)
        chunks = _chunks(meta, owners, cols)
    except (pa.ArrowException, ValueError, TypeError, AttributeError, IndexError) as exc:
        raise IndexInputError(path, f"corrupt parquet metadata ({exc})") from None

    def total() -> int:
        return sum(c.bound for c in chunks)

    def at_least() -> None:  # arrow decompresses each page whole, and decodes a dictionary whole
        pages: dict[str, int] = {}
        for c in chunks:
            pages[c.column] = pages.get(c.column, 0) + max(c.pages, c.dict_bytes)
        if sum(pages.values()) > limit:
            found.columns = pages
            raise refusal(path, found, at_least=True)

    at_least()
    # step 2: the page each text chunk starts with (a footer may hide or understate a dictionary);
    # with very many chunks (a real table has a few) only the largest, until the table fits
    probe = [c for c in chunks if c.text and not c.delta]
    every = len(probe) <= MAX_PROBED_CHUNKS
    running = total()
    for c in probe if every else sorted(probe, key=lambda c: -c.bound):
        if not every and running <= limit:
            break
        first = _first_page(fh, meta.row_group(c.group).column(c.leaf), file_size, limit)
        if first is None:
            continue
        c.dict_bytes, longest = first
        c.dictionary = c.dictionary or c.dict_bytes > 0
        if longest is not None:
            before = c.bound
            c.bound = max(c.pages, c.dict_bytes) + c.values * (longest + PER_VALUE)
            running += c.bound - before
    at_least()
    if total() > limit:  # step 3, exact: (column, row group) read in dictionary form
        leaves_of: dict[str, list[str]] = {}
        for i, owner in enumerate(owners):
            if meta.schema.column(i).physical_type == "BYTE_ARRAY":
                leaves_of.setdefault(owner, []).append(meta.schema.column(i).path)
        todo: dict[tuple[str, int], list[_Chunk]] = {}
        for c in chunks:
            if c.text and c.dictionary and not c.delta and c.column in leaves_of:
                todo.setdefault((c.column, c.group), []).append(c)
        for (column, group), cs in sorted(todo.items(), key=lambda kv: -sum(c.bound for c in kv[1])):
            if total() <= limit:
                break
            try:
                text = _exact_text(fh, meta, column, group, leaves_of[column])
            except MemoryError:
                raise
            except (pa.ArrowException, OSError, ValueError, KeyError) as exc:
                raise IndexInputError(
                    path, f"unreadable parquet data ({' '.join(str(exc).split())[:160]})"
                ) from None
            if text is None:
                continue
            for k, c in enumerate(cs):  # the text once, the per-value bytes of every leaf
                c.bound = (text if k == 0 else 0) + c.values * PER_VALUE
                c.exact = True
    for c in chunks:
        found.columns[c.column] = found.columns.get(c.column, 0) + c.bound
    found.inexact = {c.column for c in chunks if c.text and not c.exact}  # plain text: pages bound it
    if found.total > limit:
        raise refusal(path, found)
    return found

"""Every value a bundle keeps, rebuilt by its column's role (``schema.role``): ``id`` strings other than a
UUID, number or ISO date become ``id-N`` (the same string, the same pseudonym in every table and list, so
joins survive); ``entity`` names ``Entity N`` from the same map; ``community_title`` kept when every one is
graphrag's ``Community N``, else ``Community title N``; ``text`` filler with the same cl100k token count
(``filler.py``) in every arrow type that holds text. Struct fields other than ``schema.KNOWN_FIELDS`` become
``field_N``, dictionaries are decoded, no metadata is kept; unions, run-end encoded and extension types are
left out. Nulls, empty strings and list lengths stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from graphrag_audit.bundle import schema
from graphrag_audit.bundle.filler import Filler

#: an ``id`` string kept as it is: a UUID, a number (int, float, nan, inf), an ISO date, a boolean
_KEEP_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|inf|Infinity)"
    r"|\d{4}-\d{2}-\d{2}|True|False|None"
)
_COMMUNITY_TITLE = re.compile(r"Community -?\d+")
#: an item of a list written as text (graphrag 3 CSV cells: ``['a', 'b']``, ``[1 2]``)
_CSV_ITEM = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"|([^\s,\[\]'\"]+)")


class Unsupported(ValueError):
    """A column type the bundle cannot rebuild (the column is left out)."""


@dataclass
class Anonymiser:
    """The pseudonyms handed out so far in the tables of one index."""

    filler: Filler = field(default_factory=Filler)
    #: original string -> pseudonym, one map for ids and entity names (an id that is a name gets its pseudonym)
    names: dict[str, str] = field(default_factory=dict)
    entities: int = 0
    ids: int = 0

    def entity(self, name: str) -> str:
        got = self.names.get(name)
        if got is None:
            self.entities += 1
            got = self.names[name] = f"Entity {self.entities}"
        return got

    def ident(self, value: str) -> str:
        if _KEEP_ID.fullmatch(value):
            return value
        got = self.names.get(value)
        if got is None:
            self.ids += 1
            got = self.names[value] = f"id-{self.ids}"
        return got

    def _leaf(self, role: str, values: list[str]):
        """The function applied to each non-empty string of a column with this role."""
        if role == "keep":
            return lambda v: v
        if role == "entity":
            return self.entity
        if role == "id":
            return self.ident
        if role == "community_title":
            if all(_COMMUNITY_TITLE.fullmatch(v) for v in values):
                return lambda v: v
            names: dict[str, str] = {}
            return lambda v: names.setdefault(v, f"Community title {len(names) + 1}")
        return self.filler.text

    def arrow_column(self, column: pa.ChunkedArray, role: str) -> pa.ChunkedArray:
        values: list[str] = []
        if role == "community_title":  # kept when every title is graphrag's own
            for chunk in column.chunks:
                _strings_of(chunk, values)
        leaf = self._leaf(role, values)

        def strings(arr: pa.Array) -> pa.Array:
            enc = arr.cast(pa.large_string()).dictionary_encode()
            mapped = pa.array(
                [leaf(v) if v else v for v in enc.dictionary.to_pylist()], type=pa.large_string()
            )
            return mapped.take(enc.indices)

        chunks = [_rebuild(c, strings) for c in column.chunks]  # parquet columns have at least one chunk
        return pa.chunked_array(chunks, type=chunks[0].type)

    def arrow_table(self, table: pa.Table, columns: dict[str, str]) -> pa.Table:
        """The ``columns`` (name -> role) of ``table`` rebuilt, in its order; a column of another type is left out."""
        names, arrays = [], []
        for f in table.schema:
            if f.name not in columns:
                continue
            try:
                arrays.append(self.arrow_column(table.column(f.name), columns[f.name]))
            except Unsupported:
                continue
            names.append(f.name)
        return pa.Table.from_arrays(arrays, names=names)

    def csv_rows(self, rows: list[list[str]], columns: dict[str, str]) -> list[list[str]]:
        """graphrag 3 CSV tables: the ``columns`` kept, each cell rebuilt by its role (each item of an ``id`` list)."""
        if not rows:
            return rows
        header = rows[0]
        keep = [j for j, n in enumerate(header) if n in columns]
        body = rows[1:]
        cols = []
        for j in keep:
            role = columns[header[j]]
            cells = [r[j] if j < len(r) else "" for r in body]
            leaf = self._leaf(role, [c for c in cells if c])
            # an id column, or a text column of numbers only: numbers stay, anything else is replaced
            if role == "id" or role == "text" and all(not c or _KEEP_ID.fullmatch(c.strip()) for c in cells):
                leaf = self._csv_ids
            cols.append([leaf(c) if c else c for c in cells])
        return [[header[j] for j in keep]] + [list(r) for r in zip(*cols)]

    def _csv_ids(self, cell: str) -> str:
        s = cell.strip()
        if s.startswith("[") and s.endswith("]"):

            def item(m: re.Match) -> str:
                if m.group(1) is not None:
                    return "'" + self.ident(m.group(1)) + "'"
                if m.group(2) is not None:
                    return '"' + self.ident(m.group(2)) + '"'
                return self.ident(m.group(3))

            inner = _CSV_ITEM.sub(item, s[1:-1])
            return "[" + inner + "]"
        return self.ident(cell)


def _rebuild(arr: pa.Array, strings) -> pa.Array:
    """``arr`` with every string in it (at any depth) replaced by ``strings`` (a function from a
    large_string array to a large_string array of the same length); raises :class:`Unsupported`."""
    t = arr.type
    if (  # no text and no names: numbers, booleans, dates, times, decimals, null
        pa.types.is_integer(t)
        or pa.types.is_floating(t)
        or pa.types.is_boolean(t)
        or pa.types.is_null(t)
        or pa.types.is_temporal(t)
        or pa.types.is_decimal(t)
    ):
        return arr
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return strings(arr).cast(t)
    if (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_binary_view(t)
        or pa.types.is_fixed_size_binary(t)
    ):
        return _binary(arr, strings)
    if pa.types.is_dictionary(t):
        # decoded: pyarrow 26's parquet writer, handed a dictionary array, was seen writing stale
        # bytes of the process's memory (earlier tables' text) beside the dictionary page
        return _rebuild(arr.dictionary, strings).take(arr.indices)
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        plain = pa.large_list(t.value_type) if pa.types.is_large_list_view(t) else pa.list_(t.value_type)
        return _rebuild(pa.array(arr.to_pylist(), type=plain), strings)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if arr.offset or pa.types.is_fixed_size_list(t):
            arr = pa.concat_arrays([arr])  # a copy without offset
        mask = arr.is_null() if arr.null_count else None
        values = _rebuild(arr.values, strings)
        if pa.types.is_fixed_size_list(t):
            return pa.FixedSizeListArray.from_arrays(values, t.list_size, mask=mask)
        cls = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return cls.from_arrays(arr.offsets, values, mask=mask)
    if pa.types.is_struct(t):
        children = [_rebuild(c, strings) for c in arr.flatten()]
        names = [t.field(i).name for i in range(t.num_fields)]
        names = [n if n in schema.KNOWN_FIELDS else f"field_{i + 1}" for i, n in enumerate(names)]
        mask = arr.is_null() if arr.null_count else None
        if not children:
            raise Unsupported("struct without fields")
        return pa.StructArray.from_arrays(children, names=names, mask=mask)
    if pa.types.is_map(t):
        if arr.offset:
            arr = pa.concat_arrays([arr])
        keys, items = _rebuild(arr.keys, strings), _rebuild(arr.items, strings)
        mask = arr.is_null() if arr.null_count else None
        return pa.MapArray.from_arrays(arr.offsets, keys, items, mask=mask)
    raise Unsupported(str(t))


def _binary(arr: pa.Array, strings) -> pa.Array:
    """Binary values: their UTF-8 text rebuilt (decoded with replacement); fixed-size: zero bytes."""
    t = arr.type
    if pa.types.is_fixed_size_binary(t):
        zero = bytes(t.byte_width)
        return pa.array([None if v is None else zero for v in arr.to_pylist()], type=t)
    try:
        text = arr.cast(pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        text = pa.array(
            [None if v is None else v.decode("utf-8", "replace") for v in arr.to_pylist()],
            type=pa.large_string(),
        )
    return strings(text).cast(pa.large_binary()).cast(t)


def _strings_of(arr: pa.Array, out: list[str]) -> None:
    def collect(v):
        if isinstance(v, str):
            if v:
                out.append(v)
        elif isinstance(v, (bytes, bytearray)):
            out.append(bytes(v).decode("utf-8", "replace"))
        elif isinstance(v, dict):
            for x in v.values():
                collect(x)
        elif isinstance(v, (list, tuple)):
            for x in v:
                collect(x)

    for v in arr.to_pylist():
        collect(v)

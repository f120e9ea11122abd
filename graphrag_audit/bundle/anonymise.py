"""Which columns of an index table are free text, and their replacement.

Column roles (by table and column name; the table is the file stem without ``create_final_``):

* structural: ids, levels, parents, children, memberships, periods, sizes, dates of creation
  (:data:`STRUCTURAL`): kept as they are, like every column that holds no text at all (numbers,
  booleans, embeddings);
* entity names (:data:`ENTITY_NAMES`: entity and node titles, relationship ends, claim subjects
  and objects): one stable pseudonym per distinct name, ``Entity N``, the same in every table (so
  graphrag 1.x's roll-up, which groups ``create_final_nodes`` by title, groups the same rows);
* community titles: kept when every one is graphrag's ``Community N``, else ``Community title N``;
* document titles (file names): ``Document N``;
* everything else that holds text (report titles, summaries, full content, findings, descriptions,
  text units, entity types, ...), at any depth of lists and structs: filler with the same token
  count (:mod:`graphrag_audit.bundle.filler`). ``--keep-titles`` keeps entity names, community
  titles and report titles (not document titles).

Nulls stay null, empty strings stay empty, lists keep their lengths, arrow types are unchanged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pyarrow as pa

from graphrag_audit.bundle.batch import ColumnFiller, fill_nested
from graphrag_audit.bundle.filler import Filler

STRUCTURAL = frozenset({
    "id", "human_readable_id", "short_id", "community", "parent", "children", "level", "entity_ids",
    "text_unit_ids", "relationship_ids", "covariate_ids", "document_ids", "document_id", "text_unit_id",
    "period", "size", "raw_community", "source_id", "top_level_node_id", "creation_date", "community_id",
    "__index_level_0__",
})
ENTITY_NAMES = frozenset({("entities", "title"), ("entities", "name"), ("nodes", "title"),
                          ("relationships", "source"), ("relationships", "target"),
                          ("covariates", "subject_id"), ("covariates", "object_id")})
_COMMUNITY_TITLE = re.compile(r"Community -?\d+")
#: a CSV cell that holds no text: a number, a boolean, None/nan, a list of numbers
_NO_TEXT = re.compile(r"\s*(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf|True|False|None"
                      r"|\[[\d\s,.eE+\-]*\])?\s*")


def table_kind(stem: str) -> str:
    """``create_final_community_reports`` -> ``community_reports``."""
    return stem.removeprefix("create_final_")


@dataclass
class Anonymiser:
    """The state shared by the tables of one index: the pseudonyms handed out so far."""

    keep_titles: bool = False
    filler: Filler = field(default_factory=Filler)
    entities: dict[str, str] = field(default_factory=dict)
    documents: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        #: the filler applied to whole arrow columns (the same text as ``filler.text``, faster)
        self.columns = ColumnFiller(self.filler)

    # -- per value -----------------------------------------------------------------------------
    def _entity(self, name: str) -> str:
        got = self.entities.get(name)
        if got is None:
            got = self.entities[name] = f"Entity {len(self.entities) + 1}"
        return got

    def _document(self, name: str) -> str:
        got = self.documents.get(name)
        if got is None:
            got = self.documents[name] = f"Document {len(self.documents) + 1}"
        return got

    def role(self, kind: str, column: str) -> str:
        """``keep``, ``entity``, ``community_title``, ``document`` or ``text``."""
        if column in STRUCTURAL:
            return "keep"
        if (kind, column) in ENTITY_NAMES:
            return "keep" if self.keep_titles else "entity"
        if column == "title":
            if kind == "communities":
                return "keep" if self.keep_titles else "community_title"
            if kind == "community_reports" and self.keep_titles:
                return "keep"
            if kind == "documents":
                return "document"
        return "text"

    def _mapper(self, role: str, values: list):
        if role == "entity":
            return self._entity
        if role == "document":
            return self._document
        if role == "community_title":
            texts = [v for v in values if isinstance(v, str)]
            if all(_COMMUNITY_TITLE.fullmatch(v) for v in texts):
                return lambda v: v
            names: dict[str, str] = {}
            return lambda v: names.setdefault(v, f"Community title {len(names) + 1}")
        return self.filler.text

    # -- arrow tables --------------------------------------------------------------------------
    def arrow_table(self, kind: str, table: pa.Table) -> tuple[pa.Table, list[str]]:
        """The table with its text replaced (same schema); the names of the columns replaced."""
        changed = []
        for i, f in enumerate(table.schema):
            if not _has_text(f.type):
                continue
            role = self.role(kind, f.name)
            if role == "keep":
                continue
            if role == "text":
                column = table.column(i).combine_chunks()
                new_column = fill_nested(self.columns, column)
                if new_column is not None:
                    if new_column.equals(column):
                        continue
                    table = table.set_column(i, f, new_column)
                    changed.append(f.name)
                    continue
            if role in ("entity", "document") and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type)):
                # a plain string column of names: each distinct name mapped once, in order of first
                # occurrence (dictionary_encode's order), as the value-by-value loop below hands them out
                column = table.column(i).combine_chunks()
                new_column = _map_distinct(column, self._mapper(role, []))
                if new_column.equals(column):
                    continue
                table = table.set_column(i, f, new_column)
                changed.append(f.name)
                continue
            values = table.column(i).to_pylist()
            fn = self._mapper(role, _strings(values, f.type))
            new = [_map(v, f.type, fn) for v in values]
            if new == values:  # e.g. community titles that are all graphrag's own "Community N"
                continue
            table = table.set_column(i, f, _array(new, f.type))
            changed.append(f.name)
        return table, changed

    # -- CSV rows ------------------------------------------------------------------------------
    def csv_rows(self, kind: str, rows: list[list[str]]) -> tuple[list[list[str]], list[str]]:
        """graphrag 3 CSV tables: every cell is text, so a column is replaced unless structural
        or holding no text at all (numbers, booleans, lists of numbers); empty cells stay empty."""
        if not rows:
            return rows, []
        header, body = rows[0], [list(r) for r in rows[1:]]
        changed = []
        for j, name in enumerate(header):
            role = self.role(kind, name)
            if role == "keep":
                continue
            cells = [r[j] for r in body if j < len(r)]
            if all(_NO_TEXT.fullmatch(c) for c in cells):
                continue
            fn = self._mapper(role, [c for c in cells if c])
            differs = False
            for r in body:
                if j < len(r) and r[j]:
                    new = fn(r[j])
                    differs = differs or new != r[j]
                    r[j] = new
            if differs:
                changed.append(name)
        return [header] + body, changed


def _has_text(t: pa.DataType) -> bool:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_text(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_text(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_dictionary(t):
        return _has_text(t.value_type)
    if pa.types.is_map(t):
        return _has_text(t.key_type) or _has_text(t.item_type)
    return False


def _map(v, t: pa.DataType, fn):
    if v is None:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return fn(v) if v else v
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [_map(x, t.value_type, fn) for x in v]
    if pa.types.is_struct(t):
        return {t.field(i).name: _map(v.get(t.field(i).name), t.field(i).type, fn) for i in range(t.num_fields)}
    if pa.types.is_dictionary(t):
        return _map(v, t.value_type, fn)
    if pa.types.is_map(t):
        return [(_map(k, t.key_type, fn), _map(x, t.item_type, fn)) for k, x in v]
    return v


def _map_distinct(arr: pa.Array, fn) -> pa.Array:
    """``[fn(v) if v else v for v in arr]`` (nulls stay) with ``fn`` called once per distinct
    non-empty value, in order of first occurrence."""
    enc = arr.dictionary_encode()
    mapped = pa.array([fn(v) if v else v for v in enc.dictionary.to_pylist()], type=arr.type)
    return mapped.take(enc.indices)


def _strings(values: list, t: pa.DataType) -> list[str]:
    out: list[str] = []
    _map_collect = lambda s: (out.append(s), s)[1]  # noqa: E731
    for v in values:
        _map(v, t, _map_collect)
    return out


def _array(values: list, t: pa.DataType) -> pa.Array:
    if pa.types.is_dictionary(t):
        return pa.array(values, type=t.value_type).dictionary_encode().cast(t)
    return pa.array(values, type=t)

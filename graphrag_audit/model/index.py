"""The normalised model of one GraphRAG index, the same for every generation.

All community numbers are int64, levels int64, −1 means "no community / no parent".
Tables keep the source row order (graphrag's own selection keeps parquet row order,
which decides the seed-86 shuffle of the global-search context).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from graphrag_audit.model.forest import CommunityForest
from graphrag_audit.model.keys import EntityKeyMatch, key_codes


@dataclass(frozen=True)
class Generation:
    """Which graphrag wrote the index, and the files/columns that decided it."""

    label: str
    evidence: tuple[str, ...]

    @property
    def before_2(self) -> bool:
        return self.label in ("0.1-0.4", "0.5-0.9", "1.0-1.2")


@dataclass(frozen=True)
class IndexModel:
    """Communities, reports, entities and the community tree of one index.

    communities: one row per communities-table row (or per derived community for indexes
        without one): ``community``, ``level``, ``parent`` (−1 = root or unknown),
        ``title``, ``period`` (may be missing), ``size``, ``n_entities``, ``children``
        (list, or None where the table has no children column).
    members: entity ↔ community membership, one row per (entity, community):
        ``entity`` (entity id or title, see ``member_key``), ``community``, ``level``.
    rollup_rows: the per-entity rows that graphrag < 2.0's roll-up reads
        (``create_final_nodes`` for 0.x–1.x, −1 rows included; derived from ``entity_ids``
        for 2.x/3.x): ``entity``, ``community``, ``level``, and, when ``create_final_nodes``
        has an ``id`` (graphrag 1.x matches it to ``entities.id`` for occurrence weights),
        either ``entity_row`` (the entities row it matches, −1 for none: found while loading)
        or ``entity_id`` (the id itself).
    reports: one row per report row: ``community``, ``level``, ``title``, ``rank``,
        ``content`` (``full_content``, may be empty), ``content_chars``.
    entities: ``id``, ``title``, ``text_unit_ids`` (list or None) — or None when absent.
    forest: the community tree (:class:`~graphrag_audit.model.forest.CommunityForest`), the one
        representation every analysis and view reads; ``tree_source`` is its ``source``.
    schemas: per table read, its column names and their types as the file declares them
        (arrow type names; ``"csv"`` for every column of a CSV table).
    key_match: how the membership rows' entity keys meet the entities table's keys
        (:class:`~graphrag_audit.model.keys.EntityKeyMatch`, computed once by ``load_index``;
        None without an entities table or when the keys are not dictionary-encoded arrow
        strings without gaps: the analyses then use pandas).
    table_format, format_differences: the table set audited (``"parquet"`` or ``"csv"``) and,
        when both copies exist and differ, one dict per differing table (``io.locate``).

    ``load_index`` returns the model complete: every table read, nothing pending.
    """

    path: Path
    output_dir: Path
    files: dict[str, Path]
    notes: tuple[str, ...]
    generation: Generation
    communities: pd.DataFrame
    members: pd.DataFrame
    member_key: str
    rollup_rows: pd.DataFrame
    reports: pd.DataFrame
    entities: pd.DataFrame | None
    id_kind: str  # "int" or "string": how the index stored community numbers
    forest: CommunityForest
    tree_source: str  # "parent" or "membership"
    has_reports_table: bool = True
    has_children_column: bool = False
    schemas: dict[str, dict[str, str]] = field(default_factory=dict)
    key_match: EntityKeyMatch | None = None
    table_format: str = "parquet"
    format_differences: tuple[dict, ...] = ()
    settings_file: Path | None = None  # the project settings followed to the index, if any

    def member_key_codes(self) -> tuple[np.ndarray, int]:
        return key_codes(self.members["entity"])

    def rollup_key_codes(self) -> tuple[np.ndarray, int]:
        return key_codes(self.rollup_rows["entity"])

    @property
    def max_level(self) -> int:
        lv = self.communities["level"]
        return int(lv.max()) if len(lv) else -1

    @property
    def levels(self) -> list[int]:
        return list(range(self.max_level + 1))

    @property
    def entity_count(self) -> int:
        if self.entities is not None:
            return int(len(self.entities))
        keys = self.rollup_rows["entity"] if len(self.rollup_rows) else self.members["entity"]
        return int(keys.nunique())

"""The normalised model of one GraphRAG index, the same for every generation: int64 community numbers and
levels, -1 for "no community / no parent", tables in source row order (it decides graphrag's shuffle).
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
    """Communities, reports, entities and the community tree of one index, complete once loaded.

    communities: one row per communities row (or derived community): ``community``, ``level``, ``parent``
        (-1: root or unknown), ``title``, ``period``, ``size``, ``n_entities``, ``children`` (or None).
    members: one row per (``entity``, ``community``, ``level``); ``entity`` is the key ``member_key`` names.
    rollup_rows: the per-entity rows graphrag < 2.0's roll-up reads (``create_final_nodes`` with its -1
        rows, or derived from ``entity_ids``), with ``entity_row`` (the matched entities row, -1: none) or
        ``entity_id`` when the nodes have an ``id``.
    reports: ``community``, ``level``, ``title``, ``rank``, ``content`` (``full_content``), ``content_chars``.
    entities: ``id``, ``title``, ``text_unit_ids`` (or None); None when absent.
    schemas: per table, its columns' arrow type names (``"csv"`` for a CSV table).
    key_match: :class:`~graphrag_audit.model.keys.EntityKeyMatch`, None when the keys are not arrow.
    table_format, format_differences: ``"parquet"`` or ``"csv"``, and how the two copies differ.
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

"""Which graphrag wrote an index. graphrag writes no version number: files and columns decide."""

from __future__ import annotations

from pathlib import Path

from graphrag_audit.model.index import Generation


def detect_generation(tables: dict[str, Path], schemas: dict[str, dict[str, str]]) -> Generation:
    """``schemas`` maps a logical table name to {column: arrow type string}."""
    evidence: list[str] = []
    names = {k: p.name for k, p in tables.items()}
    legacy = any(n.startswith("create_final_") for n in names.values())
    comm = schemas.get("communities", {})
    ents = schemas.get("entities", {})

    if legacy:
        evidence.append("tables are named create_final_* (graphrag < 2.0)")
        string_ids = [
            f"{names[t]}.{col} is {typ}"
            for t, col in (("reports", "community"), ("nodes", "community"))
            for typ in [schemas.get(t, {}).get(col)]
            if typ in ("string", "large_string")
        ]
        if comm and "community" not in comm and "id" in comm:
            string_ids.append(f"{names['communities']} has 'id' but no 'community' column")
        if string_ids:
            evidence.extend(string_ids)
            evidence.append("string community ids (graphrag 0.1-0.4)")
            if "communities" not in tables:
                evidence.append("no communities table: hierarchy only in create_final_nodes")
            return Generation("0.1-0.4", tuple(evidence))
        if "parent" in comm:
            evidence.append(f"{names['communities']} has a 'parent' column (added in 1.0)")
            return Generation("1.0-1.2", tuple(evidence))
        if comm:
            has = "has 'entity_ids'" if "entity_ids" in comm else "has int 'community'"
            evidence.append(f"{names['communities']} {has} but no 'parent' column (0.5-0.9)")
        else:
            evidence.append("int community ids in create_final_nodes, no communities table (0.5-0.9)")
        return Generation("0.5-0.9", tuple(evidence))

    evidence.append("tables are named communities / community_reports / entities (graphrag >= 2.0)")
    if "children" in comm:
        evidence.append(f"{names['communities']} has a 'children' column")
    if any(p.suffix == ".csv" for p in tables.values()):
        label, why = "3.x", "tables are CSV (only graphrag 3 writes CSV output)"
    elif ents and "x" in ents and "y" in ents:
        label, why = "2.x", f"{names['entities']} has 'x' and 'y' (dropped in 3.0)"
    elif ents:
        label, why = "3.x", f"{names['entities']} has no 'x'/'y' columns (3.x)"
    else:
        label, why = "3.x", "no entities table: 2.x and 3.x differ only there; assuming 3.x"
    return Generation(label, (*evidence, why))

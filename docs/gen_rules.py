"""Regenerate docs/rules.md from graphrag_audit.rules (python docs/gen_rules.py).

tests/test_docs.py fails when docs/rules.md is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphrag_audit.rules import RULES  # noqa: E402

GROUPS = [
    ("Tree integrity", ["no-level-0", "level-gap", "parent-cycle", "missing-parent", "multiple-parents",
                        "level-not-parent-plus-one", "child-not-subset", "children-parent-mismatch",
                        "multiple-periods", "duplicate-community", "ids-not-depth-ordered"]),
    ("Reports and entities", ["community-without-report", "report-without-community", "report-level-mismatch",
                              "duplicate-report", "minus-one-report", "unclustered-entities", "no-reports-table",
                              "dynamic-no-level-0-report"]),
    ("Cross-version traps", ["string-community-ids", "v2-unreadable", "int32-community-ids", "needs-migration"]),
    ("Where the index is", ["parquet-csv-differ"]),
    ("At the level you query with (`--level`, default 2)", ["depth-mismatch", "v2-inflation", "low-coverage",
                                                            "level-beyond-max",
                                                            "single-child-chain", "duplicate-level",
                                                            "dynamic-no-descent", "dynamic-unreachable",
                                                            "dynamic-fails", "dynamic-old-graphrag"]),
]

NOTES = {
    "parquet-csv-differ": "Checked when a table exists as both `X.parquet` and `X.csv` in the audited folder: "
    "the row counts of each pair, and the community numbers of communities and community_reports, are compared. "
    "Evidence: `audited` and `other` (`parquet`/`csv`) and, per differing table, the row counts and the values "
    "found in only one copy. The index notes always say which set is audited when both exist.",
    "depth-mismatch": "Evidence: `roots_stuck`, `roots_total`, `entities_stuck`, `entities_total`, the shares and "
    "the `threshold`; `communities` lists the roots that cannot reach the level. Fires when the larger of the two "
    "shares exceeds `--max-unreachable` (default 0.25; env `GRAPHRAG_AUDIT_MAX_UNREACHABLE`). An entity is "
    "*stuck* at level N when its deepest community is at a level < N: its finest available report is coarser "
    "than N. On graphrag's own v3 test index (`verbs-v3`) at N=2, 18 of 23 roots and 312 of 504 clustered "
    "entities are stuck.",
    "v2-inflation": "Evidence: `v2_reports`, `v1_reports`, `ratio`, `ancestors_sent`, map calls of both, "
    "`threshold`; `communities` lists the reports only graphrag >= 2.0 sends. Fires when v2/v1 exceeds "
    "`--max-inflation` (default 1.2; env `GRAPHRAG_AUDIT_MAX_INFLATION`). On `verbs-v3` at N=2: 120 vs 97 "
    "reports (1.24x, 11 vs 8 map calls), 23 ancestors sent with their descendants.",
    "low-coverage": "An entity is *clustered* when some community holds it, and *covered* at N when a report "
    "sent at N belongs to a community that holds it; a text unit is covered when a covered entity names it "
    "(`entities.text_unit_ids`). Checked at `--level` (the deepest level when `--level` is beyond the tree) for "
    "the selection each graphrag that reads the index returns (`status` `exact`), else for the graphrag >= 2.0 "
    "rule; not checked without a reports table (`no-reports-table` says it). Fires when `entities_covered` / "
    "`clustered_entities` is below `--min-coverage` (default 0.5, i.e. fewer than half the clustered entities "
    "reach global search through any report; env `GRAPHRAG_AUDIT_MIN_COVERAGE`). Evidence: `level`, "
    "`behaviours`, `threshold`, `clustered_entities`, `entities_covered`, `share_entities`, "
    "`clustered_text_units`, `text_units_covered` (per behaviour). On `real-b2b-gaps-v2` at N=0 the 20 level-0 "
    "reports cover 772 of 2,323 clustered entities (33%, 423 of 804 text units): 10 of the 30 roots, among them "
    "the largest, have no report; at N=2 graphrag >= 2.0's 433 reports cover 1,923 (83%).",
    "string-community-ids": "graphrag 1.x and later merge the nodes' integer community numbers with the reports' "
    "string ones and keep nothing; `--verify` with graphrag 1.2.0 installed confirms 0 reports at every level on "
    "the three 0.1-0.4 indexes of `../shared/indexes`.",
    "needs-migration": "Fires on every `create_final_*` layout (0.1-1.2), and on a 2.x/3.x layout whose "
    "communities table lacks `children`, `period` or `size`. Evidence: `generation`, `files`, "
    "`typed_loader_missing` (per table, the columns graphrag 3.1+'s `communities_typed` / "
    "`community_reports_typed` read and the table lacks; data_model/dfs.py@v3.3.0). graphrag 3.3.0's "
    "`graphrag query` loader on `dulce-v1` stops at `ValueError: Could not find entities.parquet in storage!`; "
    "with the tables renamed, at `KeyError: 'children'`. The per-level table then shows the >= 2.0 column as "
    "`cannot read` with the rule's count labelled `hyp.` (graphrag >= 2.0's `read_indexer_reports`, handed "
    "`create_final_communities` through the Python API, does return it on 0.5+ indexes: 10/43/72 on `dulce-v1`).",
    "int32-community-ids": "Seen on `real-csekg-v1`: graphrag 3.3.0 with pandas 3.1.1 raises `TypeError: Invalid "
    "value ... for dtype 'int32'` inside `read_indexer_reports` on the tables read with `pd.read_parquet`; "
    "graphrag 1.2.0 with pandas 2.3 only warns. On graphrag's v3 test index (`verbs-v3`) with "
    "`communities.community` rewritten as int32, `--verify` with graphrag 3.3.0 shows both load paths: the Python "
    "API raises at every level, while the tables as `graphrag query` loads them (`DataReader`, "
    "`graphrag/data_model/dfs.py` `communities_typed`: `astype(int)`) give the audit's selection and map calls at "
    "every level. graphrag 3.0.x and 3.1.0 require pandas ~=2.3; 3.1.1 and later require pandas ~=3.0.",
}

HEAD = """# Finding rules

Every finding has a stable rule id (never renamed), a severity, a one-line message, the community
numbers involved and structured evidence (the `findings` array of the [JSON output](json-schema.md)).
Severities map to exit codes through `--fail-on` (default `error`): exit 1 when any finding is at or
above it, else 0; exit 2 is reserved for usage errors and unreadable indexes.
This page is generated from `graphrag_audit/rules.py` by `python docs/gen_rules.py`.
"""


def render() -> str:
    listed = [i for _, ids in GROUPS for i in ids]
    rest = [i for i in RULES if i not in listed]
    groups = GROUPS + ([("Other rules", rest)] if rest else [])
    out = [HEAD, "| rule | severity | what it means |", "|---|---|---|"]
    for _, ids in groups:
        for i in ids:
            r = RULES[i]
            out.append(f"| [`{i}`](#{i}) | {r.severity} | {r.title} |")
    out.append("")
    for g, ids in groups:
        out += [f"## {g}", ""]
        for i in ids:
            r = RULES[i]
            out += [f"### {i}", ""]
            if i in NOTES:
                out += [NOTES[i], ""]
            out += [f"**Severity:** {r.severity}. **Means:** {r.title}.", "", f"**Fix:** {r.fix}", ""]
    return "\n".join(out)


if __name__ == "__main__":
    (Path(__file__).resolve().parent / "rules.md").write_text(render(), encoding="utf-8")

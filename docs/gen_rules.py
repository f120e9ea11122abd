"""Regenerate docs/rules.md from graphrag_audit.rules (python docs/gen_rules.py).

tests/test_docs.py fails when docs/rules.md is out of date.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphrag_audit.rules import RULE_NOTES as NOTES  # noqa: E402
from graphrag_audit.rules import RULES

GROUPS = [
    (
        "Tree integrity",
        [
            "no-level-0",
            "level-gap",
            "parent-cycle",
            "missing-parent",
            "multiple-parents",
            "level-not-parent-plus-one",
            "child-not-subset",
            "children-parent-mismatch",
            "multiple-periods",
            "delta-id-offset",
            "dangling-membership",
            "membership-level-mismatch",
            "duplicate-community",
            "ids-not-depth-ordered",
        ],
    ),
    (
        "Reports and entities",
        [
            "community-without-report",
            "report-without-community",
            "report-level-mismatch",
            "duplicate-report",
            "minus-one-report",
            "unclustered-entities",
            "no-reports-table",
            "dynamic-no-level-0-report",
        ],
    ),
    (
        "Cross-version traps",
        ["string-community-ids", "v2-unreadable", "int32-community-ids", "needs-migration"],
    ),
    ("Where the index is", ["parquet-csv-differ"]),
    (
        "At the level you query with (`--level`, default 2)",
        [
            "depth-mismatch",
            "v2-inflation",
            "low-coverage",
            "level-beyond-max",
            "single-child-chain",
            "duplicate-level",
            "dynamic-no-descent",
            "dynamic-unreachable",
            "dynamic-fails",
            "dynamic-old-graphrag",
            "local-context-coarse",
            "local-context-empty",
            "drift-missing-embeddings",
            "reduce-truncation-risk",
        ],
    ),
    (
        "Against an earlier index (`levels --baseline`, `diff`)",
        ["regression-map-calls", "regression-coverage", "regression-new-finding"],
    ),
]


HEAD = """# Finding rules

Every finding has a stable rule id (never renamed), a severity, a one-line message, the community
numbers involved and structured evidence (the `findings` array of the [JSON output](json-schema.md)).
Severities map to exit codes through `--fail-on` (default `error`): exit 1 when any finding is at or
above it, else 0; exit 2 is reserved for usage errors and unreadable indexes.
This page is generated from `graphrag_audit/rules.py` by `python docs/gen_rules.py`;
`graphrag-audit explain RULE` prints one rule's section in a terminal (`explain` alone lists them).
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

"""Every rule the tool can report: id, default severity, title, how to fix it (docs/rules.md is generated)."""

from __future__ import annotations

from dataclasses import dataclass

SEVERITY_RANK = {"info": 1, "warning": 2, "error": 3}


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    title: str
    fix: str


_RULES = {  # id -> (severity, title, fix)
    # ---- tree integrity --------------------------------------------------------------------
    "no-level-0": (
        "error",
        "The tree has no level-0 communities",
        "Re-run community detection (graphrag index). Global search at community_level 0 selects "
        "nothing, and dynamic selection raises KeyError without level-0 reports (microsoft/graphrag#2382).",
    ),
    "level-gap": (
        "error",
        "A level between 0 and the maximum has no communities",
        "The hierarchy was truncated or hand-edited; re-index, or renumber levels so they are contiguous.",
    ),
    "parent-cycle": (
        "error",
        "Parent links form a cycle (or a community is its own parent)",
        "Fix the parent column: every chain of parents must end at a root with parent -1.",
    ),
    "multiple-parents": (
        "warning",
        "A community sits under several parents",
        "Typical of `graphrag update` output whose membership was merged without remapping; "
        "re-index from scratch for a clean hierarchy.",
    ),
    "missing-parent": (
        "error",
        "A community's parent number has no communities row",
        "The communities table is incomplete; re-run the create_communities workflow.",
    ),
    "level-not-parent-plus-one": (
        "error",
        "A community's level is not its parent's level + 1",
        "Levels and parent links disagree; re-index or correct the level column.",
    ),
    "child-not-subset": (
        "warning",
        "A child community has entities its parent lacks",
        "Child entity sets must lie inside the parent's; this happens after incremental updates. "
        "Re-index for a consistent tree.",
    ),
    "children-parent-mismatch": (
        "warning",
        "The children column disagrees with the parent column",
        "graphrag update does not remap `children`; trust `parent` (this tool does) or re-index.",
    ),
    "multiple-periods": (
        "warning",
        "Communities carry several period values (incremental update)",
        "The index merges several runs (two forests). Levels may mean different things in each; "
        "re-index from scratch if levels look inconsistent.",
    ),
    "delta-id-offset": (
        "warning",
        "A later run's community numbers do not follow graphrag update's offset",
        "graphrag update shifts every delta community number by the previous maximum + 1, so each run's numbers "
        "start right after the earlier runs'. Numbers that overlap or leave a gap come from a hand merge, a "
        "re-run on a copied table or a broken update: re-index from scratch, or rebuild the merge with graphrag update.",
    ),
    "dangling-membership": (
        "warning",
        "Community memberships name entities that are not in the entities table",
        "graphrag update keeps the delta run's entity ids in the delta communities' entity_ids while its entity "
        "merge keeps the previous run's id for every known title, so those memberships point at entities merged "
        "away. Such entities add nothing to what the communities hold; re-index from scratch for consistent ids.",
    ),
    "membership-level-mismatch": (
        "warning",
        "create_final_nodes levels disagree with the communities table",
        "graphrag update before 2.0 shifts every delta node's community by the previous maximum + 1, -1 included, so "
        "the delta run's unclustered node rows land in the previous run's last community, at a level where that "
        "community does not exist. graphrag < 2.0's roll-up and this tool's tree read the node rows: those entities "
        "count as members of that community. Re-index from scratch for a consistent hierarchy.",
    ),
    "duplicate-community": (
        "error",
        "A community number appears in several communities rows",
        "Community numbers must be unique; duplicated rows make graphrag's join send reports twice.",
    ),
    "community-without-report": (
        "warning",
        "A community has no report",
        "Report generation failed silently for these communities (LLM errors drop reports). Re-run "
        "create_community_reports; their entities get no report at that level.",
    ),
    "report-without-community": (
        "warning",
        "A report names a community that has no communities row",
        "graphrag >= 2.0 drops such reports in its inner join; regenerate reports for this index.",
    ),
    "report-level-mismatch": (
        "warning",
        "A report's level differs from its community's level",
        "Reports and communities come from different runs; regenerate the reports.",
    ),
    "duplicate-report": (
        "warning",
        "A community has several reports",
        "Several report rows share a community; graphrag sends each of them. Deduplicate.",
    ),
    "minus-one-report": (
        "warning",
        "There is a report for community -1 ('no community')",
        "graphrag 0.5.x wrote a report for unclustered entities (microsoft/graphrag#1422); graphrag < 2.0 sends it at every "
        "level. Drop the row or re-index with a newer graphrag.",
    ),
    "unclustered-entities": (
        "info",
        "Entities belong to no community",
        "With use_lcc (default on) entities outside the largest connected component get no community "
        "(microsoft/graphrag#1808, microsoft/graphrag#2348); they never reach global search. Set cluster_graph.use_lcc: false to keep them.",
    ),
    "no-reports-table": (
        "info",
        "The index has no community reports table",
        "Global search needs community_reports; run the create_community_reports workflow.",
    ),
    "ids-not-depth-ordered": (
        "warning",
        "A child community's number is smaller than its parent's",
        "graphrag < 2.0 keeps each entity's max community number, which is then not the deepest one; "
        "the < 2.0 selection below reproduces that literally.",
    ),
    # ---- cross-version traps -------------------------------------------------------------
    "string-community-ids": (
        "warning",
        "Community ids are strings (graphrag 0.1-0.4 index)",
        "graphrag >= 1.0 reading this index selects 0 reports at every level and graphrag >= 2.0 "
        "cannot read it at all; re-index with the graphrag you query with.",
    ),
    "v2-unreadable": (
        "warning",
        "graphrag >= 2.0 cannot read this index as written",
        "The communities table lacks entity_ids (or is absent); the >= 2.0 numbers shown apply the "
        "<= N rule to the rebuilt tree. Re-index with graphrag >= 2.0 to query it there.",
    ),
    "int32-community-ids": (
        "warning",
        "The communities table stores community numbers as int32",
        "graphrag >= 2.0's roll-up writes int64 values into this int32 column with .loc: pandas 2 warns, "
        "pandas 3 raises TypeError. That happens where the tables are read with plain pd.read_parquet: "
        "graphrag's Python API and notebooks, and graphrag query before 3.0.2 (graphrag 3.3.0 + pandas 3.1.1 "
        "fail on such an index through the Python API). graphrag query since 3.0.2 loads the tables through "
        "its typed DataReader, which casts the ids to int64 first, and reads it. Cast the column to int64 "
        "(e.g. pandas astype) and rewrite the parquet file.",
    ),
    "needs-migration": (
        "warning",
        "graphrag 3.x cannot read this index without migrating it",
        "graphrag query 2.x/3.x reads entities, communities and community_reports by those names, and "
        "graphrag 3.1+ types them on load: communities need children, period and size, community_reports "
        "children, rank, findings and size (KeyError otherwise). Migrate with graphrag's "
        "docs/examples_notebooks/index_migration_to_v2.ipynb (it renames the create_final_* tables and adds "
        "children; a pre-1.0 index needs index_migration_to_v1.ipynb first), or re-index with the graphrag "
        "you query with. Until then the table's >= 2.0 numbers are hypothetical.",
    ),
    "dynamic-no-level-0-report": (
        "error",
        "Dynamic community selection cannot start: no level-0 report",
        "Dynamic selection starts from level-0 reports and raises KeyError without them (microsoft/graphrag#2382).",
    ),
    "dynamic-no-descent": (
        "info",
        "graphrag 2.0.0-2.7.2's dynamic community selection never descends",
        "graphrag 2.x looks a community's children up as ints among string report keys (`child in self.reports`, "
        "microsoft/graphrag#2004, fixed in 3.0.0 by #2159), so with --dynamic-community-selection it rates only "
        "the level-0 reports when any is relevant, and whole levels (up to dynamic_search_max_level) only when "
        "none is. Query with graphrag >= 3.0 (or 1.1.1-1.2.x on a create_final_* index) to use the tree, or use "
        "a static community_level.",
    ),
    "dynamic-fails": (
        "warning",
        "graphrag's dynamic community selection fails on this index",
        "Some graphrag line cannot run --dynamic-community-selection on this index for a reason other than a "
        "missing level-0 report: graphrag 1.x's query reads create_final_communities and its community column "
        "(read_indexer_communities raises AttributeError on a 0.1-0.4 layout, which has no such column), or the "
        "children lists form a cycle (the selector never returns). Query statically, or re-index with the "
        "graphrag you query with.",
    ),
    "dynamic-old-graphrag": (
        "info",
        "Before graphrag 1.1.1 dynamic community selection is broken",
        "A create_final_* index may be queried with graphrag releases whose dynamic selection does not work: 0.5.x lists "
        "level members by community.id while reports are keyed by community number, so nothing is ever rated; "
        "0.9.0-1.1.0 key node2children by community.id, so the selector never descends below level 0. Use "
        "graphrag 1.1.1-1.2.x (or >= 3.0 after migrating) for dynamic selection.",
    ),
    "dynamic-unreachable": (
        "warning",
        "Dynamic community selection cannot reach some reports",
        "graphrag's dynamic selection descends only through communities that have a report (in 1.x, children "
        "rebuilt from create_final_nodes by entity containment), so a community without a report cuts its "
        "subtree off even when every report is relevant (the -1 report is never rated either). Regenerate the "
        "missing reports (graphrag index) so every community on the way down has one, or query those "
        "communities with a static community_level.",
    ),
    # ---- where the index is ----------------------------------------------------------------
    "parquet-csv-differ": (
        "warning",
        "The output folder holds parquet and CSV copies of tables that differ",
        "graphrag reads only the set its table_provider names (parquet unless `table_provider: {type: csv}`, "
        "graphrag >= 3.0.2), so the other copy is stale or from another run. Delete or move the copy you do "
        "not query with; the audit reads the same set as graphrag (see the notes).",
    ),
    # ---- level-dependent rules (checked at the community_level you query with, --level) -----
    "depth-mismatch": (
        "warning",
        "Many branches cannot reach the level you query with",
        "At this community_level a large share of roots/entities is stuck at a coarser leaf, so 'level N' "
        "means different granularity in different subtrees. Query a lower level, or plan a cross-level "
        "frontier by budget (graphrag-audit plan).",
    ),
    "v2-inflation": (
        "warning",
        "graphrag >= 2.0 sends far more reports than the < 2.0 frontier",
        "Since graphrag 2.0 every report with level <= N is sent, ancestors together with their "
        "descendants. Use a lower community_level, dynamic selection, or a planned frontier written "
        "with graphrag-audit plan --write.",
    ),
    "low-coverage": (
        "warning",
        "The reports sent at the level you query with cover few of the clustered entities",
        "Entities outside every selected report's community never reach global search. Look for communities "
        "without a report (community-without-report: re-run create_community_reports), query a deeper "
        "community_level if its reports cover more, or lower --min-coverage if the gap is expected.",
    ),
    "level-beyond-max": (
        "info",
        "The level you query with is deeper than the tree",
        "community_level above the deepest level behaves like no filter; pick a level within the tree.",
    ),
    "single-child-chain": (
        "info",
        "Communities with exactly one child",
        "A single child covers its parent's entities at a finer level: the same entities are summarised "
        "twice. Harmless, but it inflates what graphrag >= 2.0 sends.",
    ),
    "duplicate-level": (
        "warning",
        "A level repeats the previous level's partition",
        "Every community at this level is the only child of a parent with the same entities: the level "
        "adds cost and no granularity. Query the level above.",
    ),
    "local-context-coarse": (
        "warning",
        "Local search's finest report is coarser than the level you query with",
        "Since graphrag 2.0 local search ranks every report <= N by the query's matched entities, and an "
        "ancestor matches at least as many as its descendants, so ancestors take the community budget "
        "(community_prop x max_context_tokens) first. Raise local_search.community_prop, or query a lower "
        "community_level if the coarse reports are what you get anyway.",
    ),
    "local-context-empty": (
        "warning",
        "Local search gets no community report: the first does not fit",
        "Local search packs reports until the first that does not fit and stops there "
        "(microsoft/graphrag#1391): a report larger than community_prop x max_context_tokens empties the "
        "community context. Raise local_search.community_prop or max_context_tokens, or shorten the reports.",
    ),
    "drift-missing-embeddings": (
        "error",
        "DRIFT search reads reports that have no full_content embedding",
        "DRIFT looks every report it reads up in the vector store by id and raises 'Some reports are missing "
        "full content embeddings' when one has none (microsoft/graphrag#1561). Re-run the index's text "
        "embedding step (embed community.full_content) against this vector store, or point the settings' "
        "vector store at the folder the index was embedded into.",
    ),
    "reduce-truncation-risk": (
        "warning",
        "Global search's reduce window holds fewer full-length map answers than the map calls made",
        "graphrag's reduce sorts the map answers' points by score and stops at the first that passes "
        "global_search.data_max_tokens, dropping the rest without a log line. Raise data_max_tokens, lower "
        "map_max_length (2.x/3.x) or map_max_tokens (1.x), or query a lower community_level (fewer map calls).",
    ),
    # ---- regressions against an earlier index (levels --baseline OLD.json, diff OLD NEW) ---------
    "regression-map-calls": (
        "error",
        "Map calls at the level you query with rose beyond the allowed increase",
        "The new index sends more or longer reports at this community_level than the baseline. Check what "
        "diff OLD NEW lists as added and changed, query a lower level, or raise --max-map-calls-increase "
        "if the growth is expected (more documents).",
    ),
    "regression-coverage": (
        "error",
        "Coverage at the level you query with dropped",
        "The reports sent now cover a smaller share of the clustered entities than in the baseline: "
        "look for communities without a report or entities left out of the hierarchy (graphrag update), "
        "or raise --max-coverage-drop if the drop is expected.",
    ),
    "regression-new-finding": (
        "warning",
        "A finding the baseline did not have",
        "The new index has a problem the baseline did not (the message names the rule; its severity is "
        "that finding's). Run graphrag-audit levels on the new index and follow that rule's fix.",
    ),
}

RULES: dict[str, Rule] = {k: Rule(k, *v) for k, v in _RULES.items()}

#: longer notes on some rules (evidence keys, thresholds, what was measured): docs/rules.md
#: (docs/gen_rules.py) and ``graphrag-audit explain RULE`` print them
RULE_NOTES: dict[str, str] = {
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
    "multiple-periods": "`graphrag update` concatenates the previous communities with the delta run's, each run "
    "stamped with its UTC date in `period` (`create_communities.py` @ v3.3.0; `create_final_communities.py` @ v0.9.0) "
    "and nothing else telling the two hierarchies apart (`graphrag/index/update/communities.py` @ v3.3.0). Evidence: "
    "`periods` (communities per period), `levels_per_period` (per period, communities per level: each run's own "
    "hierarchy). On `real-climate-update-v09`: 2025-04-22 26/153/84, 2025-04-26 26/209/117.",
    "children-parent-mismatch": "After `graphrag update` this is expected: the merge maps `community` and `parent` "
    "of the delta communities through `community_id_mapping` but not `children` "
    "(`graphrag/index/update/communities.py` @ v2.7.2, v3.3.0), so the delta's children lists keep the delta run's "
    "numbers, which name communities of the previous run. Checked when the table has both `parent` and `children`. "
    "Evidence: `only_in_children`, `only_in_parent` (the (parent, child) pairs found in one column only).",
    "delta-id-offset": "graphrag's merge: `community_id_mapping = {v: v + old_max_community_id + 1}` for every delta "
    "community, applied to `community` and `parent` (`graphrag/index/update/communities.py` @ v3.3.0, v2.7.2; "
    "`_merge_and_resolve_nodes` there @ v1.2.0 and in `graphrag/index/update/incremental_index.py` @ v0.9.0, "
    "where the maximum is the previous create_final_nodes'). Checked when the communities table carries two or "
    "more `period` values, all ISO dates as graphrag writes them (each run's UTC date): runs are taken oldest first and each must start at the earlier "
    "runs' maximum + 1 with no number at or below it. Two runs on the same UTC day share a period and cannot be "
    "told apart. Evidence: `runs` (per offending period, the first 100: `expected_first`, `first`, "
    "`at_or_below_previous_max`, `examples`), `runs_off` (how many periods break the rule). `real-climate-update-v09` follows the rule (2025-04-22: 0-262, "
    "2025-04-26: 263-614).",
    "dangling-membership": "The entity merge of `graphrag update` groups the entities by title and keeps the "
    'first id (`graphrag/index/update/entities.py` @ v3.3.0: `"id": "first"`), and remaps the delta ids only '
    "in the text units (`update_text_units.py` @ v3.3.0; `_update_and_merge_text_units` @ v0.9.0), never in the "
    "communities' `entity_ids`. Checked against the entities table's `id` (members from `entity_ids`) or `title` "
    "(members from create_final_nodes); not checked without an entities table. Evidence: `rows`, `entities` "
    "(distinct keys), `count` (communities), `key`, `examples`. On `real-climate-update-v09`, 817 membership rows "
    "of the communities table name 339 entity ids that the entities table lacks.",
    "membership-level-mismatch": "graphrag's node merge (`_merge_and_resolve_nodes` in "
    '`graphrag/index/update/communities.py` @ v0.9.0 and v1.2.0) sets `delta_nodes["community"].where(isna, '
    "fillna(0).astype(int) + old_max_community_id + 1)`: a delta node row with community -1 (unclustered at that "
    "level) gets `old_max_community_id`, the previous run's largest community number, which lives at one level "
    "only. Checked on indexes with a create_final_nodes table and a communities table: each node row with a "
    "community (not -1) is compared with that community's level. Evidence: `rows`, `count` (communities), "
    "`node_vs_table_levels` (row counts per `node level->table level`), `shifted_minus_one` (of those rows, how many "
    "name a run's previous maximum, i.e. a shifted -1, when the table has several periods). On "
    "`real-climate-update-v09` 206 level-0 node rows name community 262, the level-2 community that ends the "
    "2025-04-22 run (0-262): the delta run's unclustered entities, shifted from -1.",
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
    "local-context-coarse": "Probes: one per leaf community (no child), its first `top_k_entities` (10) entities; "
    "the budget is `local_search.community_prop x max_context_tokens` (0.15 x 12,000 = 1,800 tokens by default; "
    "`max_tokens` in 1.x). Checked at `--level` for the lines whose status is `exact` (else every line computed). "
    "Fires when more than `--max-local-coarse` (default 0.25; env `GRAPHRAG_AUDIT_MAX_LOCAL_COARSE`) of the "
    "probes get a finest report coarser than min(N, their leaf's level). Evidence: `level`, `behaviours` (per "
    "line: `probes`, `coarse`, `share`), `threshold`, `budget_tokens`; `communities` lists the probes' leaves. On "
    "`verbs-v3` at N=2: 32 of 98 probes (0.33); on `real-insurance-v3` 0.14, below the default.",
    "local-context-empty": "Same probes and budget as local-context-coarse. Fires when more than "
    "`--max-local-empty` (default 0.1; env `GRAPHRAG_AUDIT_MAX_LOCAL_EMPTY`) of the probes get no report because "
    "the first one does not fit. Evidence: `level`, `behaviours` (per line: `probes`, `empty`, `share`), "
    "`threshold`, `budget_tokens`, `largest_report` (`community`, `tokens`). On `verbs-v3` at N=2: 43 of 98 "
    "probes, the largest blocking report community 4 at 2,083 tokens. When graphrag >= 2.0 reads the index, "
    "`unclustered-entities` is raised to a warning with the `share` of entities local and DRIFT search drop.",
    "drift-missing-embeddings": "Runs when the index's vector store is a local LanceDB folder (settings "
    "`vector_store.db_uri`, 1.x `embeddings.vector_store.db_uri`; default `output/lancedb`, without settings the "
    "output folder's `lancedb`) and the `[lancedb]` extra is installed; else `levels[].drift_search.by_version.*."
    "embeddings` says `not_run` and why. Per line, the table graphrag reads (1.x and 2.x "
    "`default-community-full_content`, 3.x `community_full_content`, or the settings' index name) must hold the "
    "`id` of every report of DRIFT's pool at `--level` (rolled up in 1.x, every report <= N since 2.0). Evidence: "
    "`level`, `missing_ids` and `tables` per line. The folder is only read.",
    "reduce-truncation-risk": "Per graphrag line, the map calls at `--level` (the deepest level when beyond the "
    "tree; lines whose status is `exact`, else every line) against the full-length map answers the reduce window "
    "holds: one point per answer of `map_max_length` words x `--tokens-per-word` (default 1.33; env "
    "`GRAPHRAG_AUDIT_TOKENS_PER_WORD`) in 2.x/3.x, `map_max_tokens` tokens in 1.x, plus its `----Analyst N----` / "
    "`Importance Score` header, packed into `data_max_tokens` (12,000 by default) as `_reduce_response` does "
    "(`query/structured_search/global_search/search.py` @ v1.2.0, v2.7.2, v3.3.0; checked against it with stub "
    "map answers). Evidence: `level`, `behaviours` (per line: `map_calls`, `answer_tokens`, `answers_fit`, "
    "`answers_dropped`), `data_max_tokens`, `tokens_per_word`. On `verbs-v3` at N=2: 11 map calls, 8 answers "
    "of 1,330 tokens fit (graphrag 2.x, 3.x).",
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

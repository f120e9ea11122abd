"""Runs in a side interpreter with graphrag installed (tests/verify/test_plan_write_graphrag.py): for every
index given, ``graphrag-audit plan INDEX --reports K --write OUT -f json`` (this checkout's CLI, in
process), then graphrag's OWN code over OUT:

* the tables loaded as graphrag loads them: graphrag >= 3.0.2 ``graphrag query``'s DataReader over
  the parquet or CSV table provider (graphrag_audit.verify.query_load); graphrag 1.x ``pd.read_parquet``
  of create_final_nodes/_entities/_communities/_community_reports (1.2.0 cli/query.py reads those four);
* ``read_indexer_reports`` at community_level=None and at the plan's largest level (the
  ``--community-level`` the printed command passes): the selected community numbers;
* graphrag 1.x: ``read_indexer_communities`` too (1.2.0's api.global_search calls it first);
* ``read_indexer_entities`` + ``build_community_context`` with global search's defaults (the seed-86
  shuffle, occurrence weights, rank) at the plan's max_context_tokens and tokenizer: the map calls.

Usage: ``python plan_write_runner.py WORK_DIR OUT.json SPEC...`` where SPEC is ``name=path`` or
``name=path@csv`` (the index's entities/communities/community_reports are first rewritten as CSV
with ``DataFrame.to_csv(index=False)``, as graphrag 3.x's CSVTableProvider writes them). The budget:
K = the plan's coarsest-frontier report count plus a quarter of the remaining reports (so plans mix
levels); raised until the plan fits. Output: one JSON record per index.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import traceback
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from graphrag_audit.cli.entry import app
from graphrag_audit.verify import GLOBAL_CONTEXT_PARAMS, RANDOM_STATE, _tiktoken_encoding, query_load


def _plan(index: str, out: Path, k: int, write: bool = True) -> tuple[int, dict | None, str]:
    runner = CliRunner()
    js = out.parent / (out.name + ".json")
    args = ["plan", index, "--reports", str(k), "-f", "json", "-o", str(js)] + (
        ["--write", str(out)] if write else ["--no-costs"]
    )
    res = runner.invoke(app, args)
    doc = json.loads(js.read_text(encoding="utf-8")) if js.exists() else None
    return res.exit_code, doc, (res.output or "")[-500:]


def _to_csv(src: str, dst: Path) -> str:
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("entities", "communities", "community_reports", "text_units"):
        p = Path(src) / f"{name}.parquet"
        if p.exists():
            (dst / f"{name}.csv").write_text(pd.read_parquet(p).to_csv(index=False), encoding="utf-8")
    return str(dst)


def _context(
    build, read_entities, entities_df, other_df, v1: bool, level, reports, tokenizer: str, max_tokens: int
):
    import inspect

    params = inspect.signature(build).parameters
    tok_param = "tokenizer" if "tokenizer" in params else "token_encoder"
    max_param = "max_context_tokens" if "max_context_tokens" in params else "max_tokens"
    encoding, _ = _tiktoken_encoding(tokenizer)
    tok = encoding
    if tok_param == "tokenizer":
        from graphrag.tokenizer.get_tokenizer import get_tokenizer

        tok = get_tokenizer(encoding_model=tokenizer)
    if v1:
        entities = read_entities(other_df.copy(), entities_df.copy(), community_level=level)
    else:
        entities = read_entities(entities_df.copy(), other_df.copy(), community_level=level)
    chunks, _ = build(
        community_reports=reports,
        entities=entities,
        single_batch=False,
        random_state=RANDOM_STATE,
        **GLOBAL_CONTEXT_PARAMS,
        **{tok_param: tok, max_param: max_tokens},
    )
    if isinstance(chunks, str):
        chunks = [chunks] if chunks else []
    return len(chunks)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir() if p.is_file() and not p.is_symlink())


def one(name: str, spec: str, work: Path) -> dict:
    from graphrag.query.context_builder.community_context import build_community_context
    from graphrag.query.indexer_adapters import read_indexer_entities, read_indexer_reports

    from graphrag_audit.io.load import load_index

    index, _, fmt = spec.partition("@")
    if fmt == "csv":
        index = _to_csv(index, work / f"{name}-csv-src")
    rec: dict = {"name": name, "format": fmt or "parquet"}
    probe_code, probe, _ = _plan(index, work / f"{name}-probe", 10**9, write=False)
    if probe is None:
        return {**rec, "error": f"plan failed on the index (exit {probe_code})"}
    start = int(probe["plan"]["start_reports"])
    total = int(probe["plan"]["reports"])
    k = start + max(1, (total - start) // 4)
    out = work / name
    while True:
        if out.exists():
            shutil.rmtree(out)
        code, doc, text = _plan(index, out, k)
        if doc is not None and doc["plan"]["fits"] or k >= total:
            break
        k = min(total, k + max(1, (total - start) // 4))
    rec.update({"k": k, "exit": code})
    if code != 0 or doc is None or not doc.get("handoff"):
        return {**rec, "error": f"plan --write exit {code}: {text}"}
    plan, h = doc["plan"], doc["handoff"]
    planned = sorted(plan["communities"])
    rec.update(
        {
            "planned": planned,
            "by_level": plan["by_level"],
            "plan_map_calls": plan["map_calls"],
            "plan_reports": plan["reports"],
            "max_level": h["max_level"],
            "linked": h["linked"],
            "linked_bytes": h["linked_bytes"],
            "copied_bytes": h["copied_bytes"],
            "written_bytes": _size(out),
            "commands": h["commands"],
            "generation": h["generation"],
        }
    )
    settings = doc["settings"]
    m2 = load_index(out)
    v1 = m2.generation.before_2
    if v1:  # graphrag 1.2.0 cli/query.py run_global_search: these four tables, read as parquet
        frames = {k2: pd.read_parquet(m2.files[k2]) for k2 in ("nodes", "entities", "communities", "reports")}
        from graphrag.query.indexer_adapters import read_indexer_communities

        read_indexer_communities(
            frames["communities"].copy(), frames["nodes"].copy(), frames["reports"].copy()
        )
        reports_df, other_df, entities_df = frames["reports"], frames["nodes"], frames["entities"]
        rec["load"] = "pd.read_parquet (graphrag 1.x query)"
    else:
        q = query_load(m2)
        if q is None:
            raise SystemExit(
                "this runner needs graphrag >= 3.0.2 for >= 2.0 layouts (graphrag query's DataReader)"
            )
        how, frames = q
        if not how.loaded:
            return {**rec, "error": f"graphrag query's loader failed: {how.load_error}"}
        reports_df, other_df, entities_df = (
            frames["community_reports"],
            frames["communities"],
            frames["entities"],
        )
        rec["load"] = "graphrag query DataReader (" + m2.table_format + ")"
    selected = {}
    got_at_max = None
    for level in (None, h["max_level"]):
        got = read_indexer_reports(reports_df.copy(), other_df.copy(), level)
        selected[str(level)] = sorted(
            int(r.community_id if hasattr(r, "community_id") else r.short_id) for r in got
        )
        if level == h["max_level"]:
            got_at_max = got
    rec["selected"] = selected
    rec["graphrag_map_calls"] = _context(
        build_community_context,
        read_indexer_entities,
        entities_df,
        other_df,
        v1,
        h["max_level"],
        got_at_max,
        settings["tokenizer"],
        int(settings["max_context_tokens"]),
    )
    return rec


def main(work: str, out_json: str, *specs: str) -> None:
    work_dir = Path(work)
    work_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for s in specs:
        name, _, spec = s.partition("=")
        try:
            rows.append(one(name, spec, work_dir))
        except Exception as exc:  # noqa: BLE001 - one index's failure is that index's result
            rows.append(
                {
                    "name": name,
                    "error": f"{type(exc).__name__}: {exc}",
                    "trace": traceback.format_exc()[-1500:],
                }
            )
    Path(out_json).write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    os.environ.setdefault("NO_COLOR", "1")
    main(*sys.argv[1:])

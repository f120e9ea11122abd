"""Runs graphrag's own local-search community context on shared indexes; executed by
tests/graphrag_tests/test_local_search.py in a side interpreter with graphrag installed (1.2.0, 2.7.2, 3.3.0).

Usage: ``python local_search_runner.py CASES.json OUT.json``. CASES.json holds ``{"encoding": str,
"cases": [{"id", "files": {name: parquet path}, "levels": [N, ...], "budgets":
[int, ...], "top_k": int, "what_if": {"<N>": [[entity id, ...], ...]}}]}``.

As ``graphrag query --method local`` reads them (api/query.py ``local_search``): the tables by
``pandas.read_parquet`` (``nodes`` is read by 1.x only), ``read_indexer_entities`` and ``read_indexer_reports`` at N, a
``LocalSearchMixedContext`` with a real tiktoken tokenizer, then its own ``_build_community_context``
with the arguments ``build_context`` passes (defaults, ``include_community_rank=False``). The selected
entities of a probe (a community no row names as parent, in row order) are the first ``top_k`` ids of
its ``entity_ids`` among the entities graphrag read.

Output per case: ``{"id", "error", "levels": {"<N>": {"<budget>": [[leaf, [community, ...]], ...],
"what_if": [[community, ...], ...]}}}``: the report ids in context, in graphrag's order."""

from __future__ import annotations

import copy
import inspect
import json
import sys

import pandas as pd
from graphrag.query.indexer_adapters import read_indexer_entities, read_indexer_reports
from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext


def _tokenizer(encoding: str) -> dict:
    params = inspect.signature(LocalSearchMixedContext.__init__).parameters
    if "token_encoder" in params:  # 1.x
        import tiktoken

        return {"token_encoder": tiktoken.get_encoding(encoding)}
    try:  # 3.x
        from graphrag_llm.tokenizer.tiktoken_tokenizer import TiktokenTokenizer
    except ImportError:  # 2.x
        from graphrag.tokenizer.tiktoken_tokenizer import TiktokenTokenizer
    return {"tokenizer": TiktokenTokenizer(encoding_name=encoding)}


def _ids(context_data: dict) -> list[int]:
    df = context_data.get("reports")
    return [] if df is None or not len(df) else [int(x) for x in df["id"].tolist()]


def run_case(case: dict, tokenizer: dict) -> dict:
    frames = {name: pd.read_parquet(path) for name, path in case["files"].items()}
    communities = frames["communities"]
    leaves = communities[~communities["community"].isin(communities["parent"])]
    budget_kw = (
        "max_tokens"
        if "max_tokens" in inspect.signature(LocalSearchMixedContext._build_community_context).parameters
        else "max_context_tokens"
    )
    out = {}
    for n in case["levels"]:
        if "final_nodes" in inspect.signature(read_indexer_entities).parameters:  # 1.x
            nodes = frames["nodes"]
            entities = read_indexer_entities(copy.deepcopy(nodes), copy.deepcopy(frames["entities"]), n)
            reports = read_indexer_reports(
                copy.deepcopy(frames["community_reports"]), copy.deepcopy(nodes), n
            )
        else:
            entities = read_indexer_entities(copy.deepcopy(frames["entities"]), copy.deepcopy(communities), n)
            reports = read_indexer_reports(
                copy.deepcopy(frames["community_reports"]), copy.deepcopy(communities), n
            )
        builder = LocalSearchMixedContext(
            entities=entities,
            entity_text_embeddings=None,
            text_embedder=None,
            community_reports=reports,
            **tokenizer,
        )
        by_id = {e.id: e for e in entities}

        def context(ids, budget, by_id=by_id, builder=builder):
            selected = [by_id[e] for e in ids if e in by_id]
            _, data = builder._build_community_context(selected_entities=selected, **{budget_kw: budget})
            return _ids(data)

        level = {}
        for budget in case["budgets"]:
            level[str(budget)] = [
                [int(leaf), context([e for e in ids if e in by_id][: case["top_k"]], budget)]
                for leaf, ids in zip(leaves["community"].tolist(), leaves["entity_ids"].tolist())
            ]
        level["what_if"] = [context(ids, case["budgets"][0]) for ids in case["what_if"].get(str(n), [])]
        out[str(n)] = level
    return {"id": case["id"], "error": None, "levels": out}


def main(cases_path: str, out_path: str) -> None:
    with open(cases_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    tokenizer = _tokenizer(spec["encoding"])
    results = []
    for case in spec["cases"]:
        try:
            results.append(run_case(case, tokenizer))
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is the result
            results.append({"id": case["id"], "error": f"{type(exc).__name__}: {exc}"})
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"results": results}, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

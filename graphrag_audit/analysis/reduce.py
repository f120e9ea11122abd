"""Global search's reduce headroom per community_level and graphrag line (issue 41), for ``levels[]``.

The rule is :mod:`graphrag_audit.graphrag.reduce`; the map calls are the audit's own (``selected.v1`` for
1.x, ``selected.v2`` since 2.0). Settings (``global_search`` section): ``data_max_tokens`` (every version),
``map_max_length`` (2.x/3.x ``GlobalSearchConfig``), ``map_max_tokens`` (1.x; 1.2.0
``config/create_graphrag_config.py`` L577-580 reads a 0 as its default).
"""

from __future__ import annotations

import dataclasses

from graphrag_audit.analysis.local_search import GRAPHRAG, read_section
from graphrag_audit.findings import Finding, finding
from graphrag_audit.graphrag.reduce import (
    DEFAULT_DATA_MAX_TOKENS,
    DEFAULT_MAP_MAX_LENGTH,
    DEFAULT_MAP_MAX_TOKENS,
    answers_fit,
)
from graphrag_audit.graphrag.tokens import TokenCounter
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import EXACT, LevelResult

#: version line -> (the selection its global search reads, its map answer's limit setting, unit)
LINES = {
    "1.x": ("v1", "map_max_tokens", "tokens"),
    "2.x": ("v2", "map_max_length", "words"),
    "3.x": ("v2", "map_max_length", "words"),
}


def reduce_settings(model: IndexModel) -> dict[str, int]:
    """``data_max_tokens``, ``map_max_length`` and ``map_max_tokens`` from the project's ``global_search``
    settings when the index was reached through a settings file, else graphrag's defaults."""
    out = {
        "data_max_tokens": DEFAULT_DATA_MAX_TOKENS,
        "map_max_length": DEFAULT_MAP_MAX_LENGTH,
        "map_max_tokens": DEFAULT_MAP_MAX_TOKENS,
    }
    values, _ = read_section(model, "global_search", [(k, k, int) for k in out], positive=True)
    return out | values


def with_global_reduce(
    model: IndexModel, levels: list[LevelResult], tokens_per_word: float, counter: TokenCounter
) -> list[LevelResult]:
    """``levels`` with ``global_reduce`` set wherever the map calls were counted."""
    settings = reduce_settings(model)
    window = settings["data_max_tokens"]
    out = []
    for r in levels:
        by_version = {}
        for line, (behaviour, limit_key, unit) in LINES.items():
            sel = r.selected[behaviour]
            cost = sel.cost
            if cost is None:
                continue
            limit, calls = settings[limit_key], cost.map_calls
            answer = round(limit * tokens_per_word) if unit == "words" else limit
            fit = answers_fit(answer, window, counter)
            by_version[line] = {
                "graphrag": GRAPHRAG[line],
                "status": sel.outcome.status if sel.outcome is not None else EXACT,
                "map_calls": calls,
                "map_tokens_mean": round(cost.tokens / calls) if calls else 0,  # the batch header included
                "map_tokens_max": cost.max_batch_tokens or 0,
                "answer_limit": limit,
                "answer_unit": unit,  # "words" (2.x/3.x map_max_length) or "tokens" (1.x map_max_tokens)
                "answer_tokens": answer,  # one full-length answer
                "answers_fit": fit,  # full-length answers the window holds
                "answers_dropped": max(calls - fit, 0),  # map calls beyond that: graphrag drops their answers
            }
        entry = {"data_max_tokens": window, "tokens_per_word": tokens_per_word, "by_version": by_version}
        out.append(dataclasses.replace(r, global_reduce=entry if by_version else None))
    return out


def reduce_findings(levels: list[LevelResult], level: int) -> list[Finding]:
    """``reduce-truncation-risk`` at the queried N (the deepest level when beyond the tree) for the lines
    whose status is exact, else for every line: more map calls than full-length answers the window holds."""
    at = [r for r in levels if r.community_level is not None and r.global_reduce]
    if not at:
        return []
    n = min(level, max(x.community_level for x in at if x.community_level is not None))
    r = next(x for x in at if x.community_level == n)
    entry = r.global_reduce
    assert entry is not None
    versions = entry["by_version"]
    lines = [k for k, v in versions.items() if v["status"] == EXACT] or list(versions)
    risky = {k: versions[k] for k in lines if versions[k]["answers_dropped"] > 0}
    if not risky:
        return []
    v = next(iter(risky.values()))
    assumption = (
        f"{v['answer_limit']:,} words x {entry['tokens_per_word']:g} tokens per word"
        if v["answer_unit"] == "words"
        else f"{v['answer_limit']:,} tokens"
    )
    return [
        finding(
            "reduce-truncation-risk",
            f"At community_level {r.community_level}, global search makes {v['map_calls']:,} map calls but its "
            f"reduce window (data_max_tokens {entry['data_max_tokens']:,} tokens) holds {v['answers_fit']:,} "
            f"full-length map answers ({assumption} each): graphrag drops the {v['answers_dropped']:,} "
            f"lowest-scored without notice (graphrag {', '.join(risky)})",
            level=r.community_level,
            behaviours={
                k: {x: s[x] for x in ("map_calls", "answer_tokens", "answers_fit", "answers_dropped")}
                for k, s in risky.items()
            },
            data_max_tokens=entry["data_max_tokens"],
            tokens_per_word=entry["tokens_per_word"],
        )
    ]

"""--verify: the installed graphrag's own code run on the index and compared with the audit, per community_level.

graphrag is optional, never a dependency. graphrag >= 2.0 is compared with the ``v2`` selection (communities
table), < 2.0 with ``v1`` (``create_final_nodes``). Per level N:

1. ``read_indexer_reports`` against the audit's selection; a raise is never agreement. Tables are loaded as
   graphrag's Python API does (``pd.read_parquet``) and, on graphrag >= 3.0.2, as ``graphrag query`` does
   (``DataReader``; graphrag/data_model/dfs.py casts community and level with ``astype(int)``).
2. ``build_community_context`` called as ``GlobalCommunityContext.build_context`` calls it
   (``get_global_search_engine``'s ``context_builder_params``, ``single_batch=False``, ``random_state=86``)
   against the audit's batches: map calls, tokens and the text of each batch (exact tokenizers only; the
   global-search module is not imported: it pulls in LiteLLM). The tiktoken file bundled with ``bpe-openai``
   is handed to tiktoken when it has no cached copy (tiktoken checks its sha256).
3. ``DynamicCommunitySelection.select()`` built as ``global_search`` (``graphrag/api/query.py``) builds it
   with the audit's ``dynamic_search_*`` settings (1.1.1-1.2.x on ``nodes`` with ``llm=``/``token_encoder=``,
   2.x/3.x on ``communities`` with ``model=``/``tokenizer=``) and a stub chat model that never leaves the
   process: it finds the rated report by its text in the rating prompt (``RATE_QUERY``) and answers
   ``threshold`` when it is relevant, else ``threshold - 1``. A wave is one ``asyncio.gather``.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import hashlib
import inspect
import io
import json
import logging
import os
import re
import sys
import tempfile
import types
import warnings
from collections import Counter
from dataclasses import replace
from importlib import metadata
from itertools import zip_longest
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.context import render_batches
from graphrag_audit.results.verify import (
    DynamicCheckSummary,
    DynamicLevelCheck,
    DynamicScenarioCheck,
    DynamicSettings,
    LevelCheck,
    MapCallCheck,
    MapCallSummary,
    QueryLoadPath,
    SelectionCheck,
    VerifyResult,
)

#: graphrag's global search context parameters (``get_global_search_engine``, 1.x - 3.x), without the
#: size limit, whose name changed (1.x ``max_tokens``, 2.x/3.x ``max_context_tokens``)
GLOBAL_CONTEXT_PARAMS = {
    "use_community_summary": False,
    "shuffle_data": True,
    "include_community_rank": True,
    "min_community_rank": 0,
    "community_rank_name": "rank",
    "include_community_weight": True,
    "community_weight_name": "occurrence weight",
    "normalize_community_weight": True,
    "context_name": "Reports",
}
RANDOM_STATE = 86
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
PYTHON_API_LOAD = (
    "pandas.read_parquet (read_csv for CSV tables), as graphrag's Python API examples and "
    "notebooks load the tables"
)
QUERY_LOAD = (
    "graphrag query's loader (graphrag/cli/query.py _resolve_output_files): DataReader "
    "(graphrag/data_model/data_reader.py) over the output folder's table provider, which casts "
    "community and level with astype(int) (graphrag/data_model/dfs.py communities_typed, "
    "community_reports_typed)"
)
#: the question put to the stub rater (its text is not looked at)
QUERY = "graphrag-audit --verify: which reports matter?"
HOW = (
    "graphrag's DynamicCommunitySelection built as global search builds it (read_indexer_communities, "
    "read_indexer_reports(..., dynamic_community_selection=True), tables read with pd.read_parquet) with a "
    "stub chat model that rates each report from the scenario's relevance set (identified by its text); "
    "waves = coroutines per asyncio.gather, rating calls = graphrag's llm_calls, kept = the reports "
    "select() returns"
)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def installed_graphrag_version() -> str | None:
    return _version("graphrag")


def graphrag_unusable_reason() -> str | None:
    """Why ``--verify`` cannot run graphrag in this interpreter, or None when it can."""
    version = installed_graphrag_version()
    if version is None:
        return (
            f"graphrag is not installed in this Python ({sys.executable}); install it beside the tool "
            "(python -m pip install graphrag) or drop --verify"
        )
    try:
        import graphrag.query.indexer_adapters  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure of an optional extra
        return f"graphrag {version} is installed but graphrag.query.indexer_adapters cannot be imported ({short_error(exc)})"
    return None


def short_error(exc: BaseException) -> str:
    """``Type: message`` on one line, long messages (pandas prints whole arrays) cut in the middle."""
    s = " ".join(f"{type(exc).__name__}: {exc}".split())
    return s if len(s) <= 160 else s[:90] + " … " + s[-60:]


def id_key(x) -> object:
    """A row id as a comparable value: the community number (``"5"``, ``5``, ``"5.0"`` -> 5); other
    text as it is (``"1_0"``, which float() reads as 10)."""
    if isinstance(x, str) and "_" in x:
        return x
    try:
        f = float(x)
        return int(f) if f.is_integer() else str(x)
    except (TypeError, ValueError):
        return str(x)


def sorted_ids(values) -> list:
    return sorted(
        (id_key(x) for x in values),
        key=lambda v: (isinstance(v, str), v if isinstance(v, int) else 0, str(v)),
    )


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)


# ---- the static selection ------------------------------------------------------------------------
def query_load(model) -> tuple[QueryLoadPath, dict[str, pd.DataFrame]] | None:
    """The tables as ``graphrag query --data DIR`` loads them (None before graphrag 3.0.2, which read them
    with ``pd.read_parquet``): ``DataReader`` over ``StorageConfig(base_dir=DIR)``'s table provider reads
    ``entities``, ``communities`` and ``community_reports`` in that order; the first that fails stops it."""
    try:
        from graphrag.data_model.data_reader import DataReader
    except ImportError:
        return None
    frames: dict[str, pd.DataFrame] = {}
    try:
        from graphrag_storage import StorageConfig, create_storage
        from graphrag_storage.tables.table_provider_config import TableProviderConfig
        from graphrag_storage.tables.table_provider_factory import create_table_provider
    except Exception as exc:  # noqa: BLE001 - another layout of graphrag's storage package
        error = f"could not build graphrag query's table loader ({short_error(exc)})"
        return QueryLoadPath(how=QUERY_LOAD, loaded=False, load_error=error), frames
    first = model.files.get("communities") or model.files.get("reports")
    kind = "csv" if first is not None and first.suffix == ".csv" else "parquet"
    try:
        storage = create_storage(StorageConfig(base_dir=str(first.parent)))
        reader = DataReader(create_table_provider(TableProviderConfig(type=kind), storage=storage))
        for name in ("entities", "communities", "community_reports"):
            frames[name] = asyncio.run(getattr(reader, name)())
    except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
        return QueryLoadPath(how=QUERY_LOAD, loaded=False, load_error=short_error(exc)), frames
    return QueryLoadPath(how=QUERY_LOAD, loaded=True), frames


def _select(read_indexer_reports, reports_df, other_df, n):
    """graphrag's selection at N: (community numbers, the CommunityReport list, error or None)."""
    try:
        got = read_indexer_reports(copy.deepcopy(reports_df), copy.deepcopy(other_df), n)
    except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
        return None, None, short_error(exc)
    return sorted_ids(x.community_id if hasattr(x, "community_id") else x.short_id for x in got), got, None


def _outcome(theirs, err, ours, expected: str | None) -> SelectionCheck:
    if err is not None:
        return SelectionCheck("graphrag_raised", None, graphrag_error=err, expected=expected)
    not_raised = bool(expected)
    if theirs != ours:
        return SelectionCheck(
            "differs",
            len(theirs),
            only_graphrag=tuple(sorted(set(theirs) - set(ours))),
            only_audit=tuple(sorted(set(ours) - set(theirs))),
            expected=expected,
            expected_error_not_raised=not_raised,
        )
    return SelectionCheck("agrees", len(theirs), expected=expected, expected_error_not_raised=not_raised)


def verify_with_graphrag(report, model) -> VerifyResult:
    """Compare the audit ``report`` of ``model`` with the installed graphrag at every community_level.
    pandas' FutureWarnings raised in graphrag's own code (graphrag 1.2 assigning int to an int32 column,
    each with an array dump) are not shown; any other warning and every error is."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"graphrag(\.|$)")
        return _verify_with_graphrag(report, model)


def _verify_with_graphrag(report, model) -> VerifyResult:
    version = installed_graphrag_version()
    unusable = graphrag_unusable_reason()
    if unusable is not None or version is None:
        return VerifyResult(available=False, reason=unusable, graphrag_version=version)
    from graphrag.query.indexer_adapters import read_indexer_reports

    from graphrag_audit.graphrag.compat import v2_readable

    major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
    behaviour = "v2" if major >= 2 else "v1"
    second = model.files.get("communities") if behaviour == "v2" else model.files.get("nodes")
    if second is None or "reports" not in model.files:
        return VerifyResult(
            available=False,
            graphrag_version=version,
            behaviour=behaviour,
            reason="this index lacks the tables graphrag "
            f"{version} reads ({'communities' if behaviour == 'v2' else 'create_final_nodes'})",
        )
    # what the audit predicts graphrag does on this index
    string_trap = behaviour == "v1" and model.id_kind == "string" and major >= 1
    api_expected = query_expected = None
    if behaviour == "v2" and not v2_readable(model):
        api_expected = query_expected = "an error: graphrag >= 2.0 cannot read this index (v2-unreadable)"
    elif (
        behaviour == "v2"
        and model.schemas.get("communities", {}).get("community") == "int32"
        and int(pd.__version__.split(".")[0]) >= 3
    ):
        api_expected = (
            f"an error: int32 ids in the communities table read with pd.read_parquet under pandas "
            f"{pd.__version__} (int32-community-ids)"
        )
    reports_df = _read(model.files["reports"])
    other_df = _read(second)
    query = query_load(model) if behaviour == "v2" else None
    q_frames = query[1] if query is not None and query[0].loaded else None
    contexts = _ContextCheck(report, model, behaviour, other_df)
    rows = []
    for r in report.levels:
        n = r.community_level
        ours = [] if string_trap else r.selected[behaviour].community_ids
        theirs, got, err = _select(read_indexer_reports, reports_df, other_df, n)
        api = _outcome(theirs, err, ours, api_expected)
        if string_trap:
            api = replace(
                api, expected="0 reports: graphrag >= 1.0 on string community ids (string-community-ids)"
            )
        q = map_calls = skipped = None
        if q_frames is not None:
            q_theirs, q_got, q_err = _select(
                read_indexer_reports, q_frames["community_reports"], q_frames["communities"], n
            )
            q = _outcome(q_theirs, q_err, ours, query_expected)
        if contexts.reason is None:  # on graphrag's selection when it is the audit's (the Python API's first)
            if string_trap:
                skipped = "the audit's costs are for another selection than graphrag makes here"
            elif api.status == "agrees":
                map_calls = contexts.compare(n, got, r.selected[behaviour])
            elif q_frames is not None and q is not None and q.status == "agrees":
                q_tables = (q_frames["entities"], q_frames["communities"])
                map_calls = contexts.compare(n, q_got, r.selected[behaviour], q_tables)
                map_calls = replace(map_calls, load_path="graphrag_query")
            elif api.status == "graphrag_raised":
                skipped = "graphrag's read_indexer_reports raised"
            else:
                skipped = "the selections differ"
        agree = (
            api.status == "agrees"
            and not api.expected_error_not_raised
            and (q is None or (q.status == "agrees" and not q.expected_error_not_raised))
            and (map_calls is None or map_calls.agrees)
        )
        rows.append(LevelCheck(n, api, len(ours), agree, q, map_calls, skipped))
    # the dynamic comparison on the tables read for the Python API
    frames = {"reports": reports_df, "communities": other_df}
    if behaviour == "v1":
        path = model.files.get("communities")
        frames.update(nodes=other_df, communities=_read(path) if path is not None else None)
    try:
        dyn_summary, dyn_rows = verify_dynamic(report, version, frames)
    except Exception as exc:  # noqa: BLE001 - never let the extra comparison break --verify
        reason = f"the dynamic-selection comparison failed ({short_error(exc)})"
        dyn_summary = DynamicCheckSummary(compared=False, agree=None, reason=reason)
        dyn_rows = {
            r.community_level: DynamicLevelCheck(status="not_run", reason=reason) for r in report.levels
        }
    rows = [replace(x, dynamic=dyn_rows.get(x.community_level)) for x in rows]
    # each row's agree: the selection and map-call comparisons; its dynamic check has its own status
    dynamic_ok = all(x.dynamic is None or x.dynamic.status in ("agrees", "not_run") for x in rows)
    return VerifyResult(
        available=True,
        graphrag_version=version,
        behaviour=behaviour,
        pandas_version=pd.__version__,
        agree=bool(rows) and all(x.agree for x in rows) and dynamic_ok,
        map_calls=contexts.summary(),
        dynamic=dyn_summary,
        levels=tuple(rows),
        python_api_how=PYTHON_API_LOAD,
        graphrag_query=None if query is None else query[0],
    )


# ---- the map calls -------------------------------------------------------------------------------
class _Recorder:
    """graphrag's token counting passed to the real tokenizer, each call recorded (2.x/3.x call
    ``tokenizer.num_tokens(text)``; 1.x ``token_encoder.encode(text)``)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[str, int]] = []

    def num_tokens(self, text: str) -> int:
        n = self.inner.num_tokens(text) if hasattr(self.inner, "num_tokens") else len(self.inner.encode(text))
        self.calls.append((text, n))
        return n

    def encode(self, text, *args, **kwargs):
        tokens = self.inner.encode(text, *args, **kwargs)
        self.calls.append((text, len(tokens)))
        return tokens

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _tiktoken_encoding(name: str):
    """``tiktoken.get_encoding(name)`` offline: a cache directory holding bpe-openai's copy of the file
    is offered to tiktoken for that one call (tiktoken checks its sha256)."""
    import tiktoken
    import tiktoken.registry

    source = f"tiktoken {_version('tiktoken') or '?'}"
    if name in tiktoken.registry.ENCODINGS:
        return tiktoken.get_encoding(name), source
    try:
        import bpe_openai.data

        bundled = os.path.join(os.path.dirname(bpe_openai.data.__file__), f"{name}.tiktoken.gz")
        with gzip.open(bundled, "rb") as fh:
            data = fh.read()
    except (ImportError, OSError):
        return tiktoken.get_encoding(name), source
    url = TIKTOKEN_URL.format(name=name)
    with tempfile.TemporaryDirectory(prefix="graphrag-audit-tiktoken-") as cache:
        with open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), "wb") as fh:
            fh.write(data)
        with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": cache}):
            enc = tiktoken.get_encoding(name)
    return enc, (
        f"{source} (encoding file: the copy bundled with bpe-openai "
        f"{_version('bpe-openai') or '?'}, sha256 checked by tiktoken)"
    )


class _ContextCheck:
    """graphrag's own global-search context building against the audit's batching; ``reason`` says why
    it cannot run (None: ready)."""

    def __init__(self, report, model, behaviour: str, other_df: pd.DataFrame):
        self.levels_compared = 0
        try:
            self.reason = self._prepare(report, model, behaviour, other_df)
        except Exception as exc:  # noqa: BLE001 - never let the extra comparison break --verify
            self.info: dict = {}
            self.reason = f"could not prepare the map-call comparison ({short_error(exc)})"

    def _prepare(self, report, model, behaviour: str, other_df: pd.DataFrame) -> str | None:
        opts = report.options
        tokenizer = opts.tokenizer
        self.info = {"tokenizer": tokenizer, "max_context_tokens": opts.max_context_tokens}
        if not opts.costs:
            return "costs were not computed (--no-costs)"
        if tokenizer not in ("cl100k_base", "o200k_base"):
            return (
                f"tokenizer {tokenizer!r} is an approximation: map calls are only compared "
                "with an exact tokenizer (cl100k_base, o200k_base)"
            )
        if not any(r.selected[behaviour].cost for r in report.levels):
            return "the audit computed no costs for this index"
        try:
            from graphrag.query.context_builder.community_context import build_community_context
            from graphrag.query.indexer_adapters import read_indexer_entities
        except Exception as exc:  # noqa: BLE001
            return f"cannot import graphrag's build_community_context ({type(exc).__name__}: {exc})"
        params = inspect.signature(build_community_context).parameters
        tok_param = next((p for p in ("tokenizer", "token_encoder") if p in params), None)
        max_param = next((p for p in ("max_context_tokens", "max_tokens") if p in params), None)
        missing = [p for p in (*GLOBAL_CONTEXT_PARAMS, "single_batch", "random_state") if p not in params]
        if tok_param is None or max_param is None or missing:
            return "this graphrag's build_community_context has an unknown signature"
        try:
            # 1.x: the tiktoken encoding itself (tiktoken.get_encoding(config.encoding_model))
            inner, source = _tiktoken_encoding(tokenizer)
            if tok_param == "tokenizer":  # 2.x/3.x: graphrag's own tokenizer over that encoding
                try:
                    from graphrag.tokenizer.get_tokenizer import get_tokenizer

                    inner = get_tokenizer(encoding_model=tokenizer)
                except (ImportError, TypeError):  # another layout: count len(encode(text)) ourselves
                    source += (
                        "; graphrag's get_tokenizer(encoding_model=...) not found, len(encode(text)) used"
                    )
        except Exception as exc:  # noqa: BLE001
            return f"cannot load tokenizer {tokenizer!r} for graphrag ({type(exc).__name__}: {exc})"[:300]
        from graphrag_audit.analysis.costs import ContextCoster

        entities_path = model.files.get("entities")
        self.entities_df = _read(entities_path) if entities_path is not None else None
        self.other_df, self.behaviour = other_df, behaviour
        self.read_entities, self.build = read_indexer_entities, build_community_context
        self.tok_param, self.max_param, self.inner = tok_param, max_param, inner
        self.max_context_tokens = int(opts.max_context_tokens)
        self.coster = ContextCoster(model, tokenizer, self.max_context_tokens)
        self.comm = model.reports["community"].to_numpy()
        self.info.update({"graphrag_tokenizer": source, "entities": entities_path is not None})
        return None

    def summary(self) -> MapCallSummary:
        if self.reason is not None:
            return MapCallSummary(compared=False, reason=self.reason, **self.info)
        return MapCallSummary(compared=True, levels_compared=self.levels_compared, **self.info)

    def graphrag_batches(self, n, got, frames=None) -> tuple[list[list], list[int], list[str]]:
        """graphrag's batches on its selection ``got``: per batch its row ids, its token count (header
        included) and the text sent. ``frames``: (entities, communities) as another load path read them."""
        entities_df, other_df = frames if frames is not None else (self.entities_df, self.other_df)
        entities = None
        if entities_df is not None and self.behaviour == "v2":  # 2.x/3.x: (entities, communities, N)
            entities = self.read_entities(entities_df.copy(), other_df.copy(), community_level=n)
        elif entities_df is not None:  # 1.x: nodes first
            entities = self.read_entities(other_df.copy(), entities_df.copy(), community_level=n)
        rec = _Recorder(self.inner)
        chunks, _records = self.build(
            community_reports=got,
            entities=entities,
            single_batch=False,
            random_state=RANDOM_STATE,
            **GLOBAL_CONTEXT_PARAMS,
            **{self.tok_param: rec, self.max_param: self.max_context_tokens},
        )
        if isinstance(chunks, str):
            chunks = [chunks] if chunks else []
        # graphrag counts the batch header at every batch start and each report row once, in packing
        # order; the emitted batches take those rows in that order
        header, header_tokens = rec.calls[0] if rec.calls else (None, 0)
        row_calls = [(t, k) for t, k in rec.calls if t != header]
        ids, tokens, at = [], [], 0
        for chunk in chunks:
            df = pd.read_csv(io.StringIO(chunk), sep="|", dtype=str, keep_default_na=False)
            seg = row_calls[at : at + len(df)]
            at += len(df)
            batch_ids = sorted((id_key(x) for x in df["id"]), key=repr)
            if sorted((id_key(t.split("|", 1)[0]) for t, _ in seg), key=repr) != batch_ids:
                raise RuntimeError("cannot attribute graphrag's token counts to its batches")
            ids.append(batch_ids)
            tokens.append(header_tokens + sum(k for _, k in seg))
        return ids, tokens, list(chunks)

    def compare(self, n, got, stats, frames=None) -> MapCallCheck:
        cost = stats.cost
        audit_calls = cost.map_calls if cost else None
        audit_tokens = cost.tokens if cost else None
        zero_note = "ZeroDivisionError" in ((cost.note if cost else None) or "")
        self.levels_compared += 1
        try:
            g_ids, g_tokens, g_texts = self.graphrag_batches(n, got, frames)
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            return MapCallCheck(
                audit_calls,
                audit_tokens,
                context_error=short_error(exc),
                context_error_expected=zero_note and isinstance(exc, ZeroDivisionError),
            )
        expected = False if zero_note else None  # the audit predicted graphrag would fail here; it did not
        rows = np.asarray(stats.rows, dtype=np.int64)
        c = self.coster
        b = c.selection_batches(rows, self.behaviour, n)
        if (
            b.n_batches != audit_calls
            or b.total_tokens != audit_tokens
            or (stats.row_tokens is not None and not np.array_equal(b.row_tokens, stats.row_tokens))
        ):
            # verify rebuilds the audit's batches to see inside them; they must be the reported ones
            return MapCallCheck(
                audit_calls,
                audit_tokens,
                context_error_expected=expected,
                graphrag_map_calls=len(g_ids),
                map_calls_agree=len(g_ids) == audit_calls,
                batches_agree=False,
                audit_error="rebuilding the audit's batches did not give the costs it reported",
            )
        a_ids = [
            sorted((id_key(x) for x in self.comm[rows[b.batch_of == k]].tolist()), key=repr)
            for k in range(b.n_batches)
        ]
        a_tokens = [int(t) for t in b.batch_tokens[: b.n_batches]]
        weights = c.selection_weights(rows, self.behaviour, n) if b.has_weight_column else None
        a_texts = render_batches(b, c.comm[rows], c.titles[rows], c.contents[rows], c.ranks[rows], weights)
        batches_agree = g_ids == a_ids and g_tokens == a_tokens
        detail: dict = {}
        if g_texts != a_texts:
            pairs = enumerate(zip_longest(g_texts, a_texts))
            detail["texts_differ_in_batches"] = tuple(k for k, (g, a) in pairs if g != a)
        if not batches_agree:
            pairs = enumerate(zip_longest(zip(g_ids, g_tokens), zip(a_ids, a_tokens)))
            diff = next((k for k, (g, a) in pairs if g != a), None)
            detail.update(
                first_differing_batch=diff,
                graphrag_batch_tokens=tuple(g_tokens),
                audit_batch_tokens=tuple(a_tokens),
                graphrag_batch_sizes=tuple(len(x) for x in g_ids),
                audit_batch_sizes=tuple(len(x) for x in a_ids),
            )
            if diff is not None and diff < min(len(g_ids), len(a_ids)):
                detail["only_graphrag_batch"] = tuple(x for x in g_ids[diff] if x not in a_ids[diff])[:50]
                detail["only_audit_batch"] = tuple(x for x in a_ids[diff] if x not in g_ids[diff])[:50]
        return MapCallCheck(
            audit_calls,
            audit_tokens,
            context_error_expected=expected,
            graphrag_map_calls=len(g_ids),
            map_calls_agree=len(g_ids) == audit_calls == b.n_batches,
            graphrag_context_tokens=int(sum(g_tokens)),
            context_tokens_agree=int(sum(g_tokens)) == audit_tokens == int(sum(a_tokens)),
            batches_agree=batches_agree,
            texts_agree=g_texts == a_texts,
            **detail,
        )


# ---- dynamic community selection -----------------------------------------------------------------
def family_of(version: str | None) -> tuple[str | None, str | None]:
    """(family, None) for the graphrag releases the simulator covers, else (None, why not)."""
    from graphrag_audit.graphrag.dynamic import BROKEN_LINES

    parts = [re.match(r"\d*", p).group() for p in (version or "").split(".")[:3]]  # type: ignore[union-attr]
    if not all(parts):
        return None, f"graphrag version {version!r} cannot be read"
    v = (*map(int, parts), 0, 0)[:3]
    if (1, 1, 1) <= v < (1, 3, 0):
        return "1.x", None
    if (2, 0, 0) <= v <= (2, 7, 2):
        return "2.x", None
    if v >= (3, 0, 0):
        return "3.x", None
    if v < (1, 1, 1):
        line = BROKEN_LINES[0] if v[:2] == (0, 5) else BROKEN_LINES[1] if v >= (0, 9, 0) else None
        return None, (
            f"graphrag {version} is older than 1.1.1, whose dynamic selection the audit does not simulate"
            + (f" (broken in another way there: {line[0]}: {line[1]})" if line else "")
        )
    return None, (
        f"graphrag {version} is a release the audit's dynamic simulation does not cover "
        "(1.1.1-1.2.x, 2.0.0-2.7.2, 3.0.0 and later)"
    )


class _Waves:
    """Stands in for the selector module's ``asyncio`` during ``select()``: counts each gather."""

    def __init__(self):
        self.sizes: list[int] = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    def gather(self, *aws, **kw):
        self.sizes.append(len(aws))
        return asyncio.gather(*aws, **kw)


#: tokenizer / token encoder stand-in: rating prompts' token counts are not compared
_NO_TOKENS = types.SimpleNamespace(
    encode=lambda *a, **k: [],
    decode=lambda *a, **k: "",
    num_tokens=lambda *a, **k: 0,
    num_prompt_tokens=lambda *a, **k: 0,
)


class StubError(RuntimeError):
    """The stub rater could not do its part: a failure of the check, not of graphrag."""


class StubRater:
    """A chat model for every graphrag line that answers a rating prompt: ``texts`` maps each report text
    to its community key, ``relevant`` the relevant community numbers (None: every one); ``head``/``tail``:
    the template's text around the report."""

    def __init__(self, texts: dict[str, str], relevant, threshold: int, head: str, tail: str, max_calls: int):
        self.texts, self.relevant, self.threshold = texts, relevant, int(threshold)
        self.head, self.tail, self.max_calls = head, tail, max_calls
        self.calls = 0

    def answer(self, message) -> str:
        prompt = message["content"] if isinstance(message, dict) else message.content
        if not isinstance(prompt, str):
            raise StubError("the stub rater got a rating prompt that is not one string")
        head, tail = self.head, self.tail
        if not (prompt.startswith(head) and prompt.endswith(tail) and len(prompt) >= len(head) + len(tail)):
            raise StubError("the stub rater got a prompt that is not graphrag's rating template")
        key = self.texts.get(prompt[len(head) : len(prompt) - len(tail)])
        if key is None:
            raise StubError("the stub rater got a report text it cannot attribute to one report")
        self.calls += 1
        if self.calls > self.max_calls:
            raise StubError(
                f"graphrag made more than {self.max_calls:,} rating calls (far beyond the audit's "
                "count): stopped"
            )
        relevant = self.relevant is None or id_key(key) in self.relevant
        rating = self.threshold if relevant else self.threshold - 1
        return json.dumps({"reason": "graphrag-audit stub", "rating": rating})

    # graphrag 1.x: BaseLLM.agenerate(messages=..., **kwargs) -> str
    async def agenerate(self, messages, **kwargs):
        return self.answer(messages[0])

    # graphrag 2.x: ChatModel.achat(prompt, history, model_parameters, json) -> .output.content
    async def achat(self, prompt, history=None, **kwargs):
        text = self.answer(history[0])
        return types.SimpleNamespace(output=types.SimpleNamespace(content=text))

    # graphrag 3.x: LLMCompletion.completion_async(messages=...) -> .choices[0].message.content
    async def completion_async(self, messages, **kwargs):
        msg = types.SimpleNamespace(content=self.answer(messages[0]))
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])


def mark_shared_texts(reports) -> dict[str, str]:
    """A marker appended to every ``full_content`` two reports share (in place); text -> community key."""
    counts = Counter(r.full_content for r in reports)
    texts: dict[str, str] = {}
    for i, r in enumerate(reports):
        if counts[r.full_content] > 1:
            marked = f"{r.full_content}\n[graphrag-audit marker {i}]"
            while marked in counts or marked in texts:
                marked += "*"
            r.full_content = marked
        texts[r.full_content] = r.community_id
    return texts


class GraphragDynamic:
    """graphrag's own selector on one index: built once per community_level, run per scenario."""

    def __init__(self, family: str, frames: dict, settings: dict):
        from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_reports

        key = "LITELLM_LOCAL_MODEL_COST_MAP"  # LiteLLM (3.x) with its bundled cost map: no network
        with mock.patch.dict(os.environ, {key: os.environ.get(key, "True")}):
            import graphrag.query.context_builder.dynamic_community_selection as mod
        self.mod, self.family, self.frames, self.settings = mod, family, frames, settings
        self.read_reports = read_indexer_reports
        params = inspect.signature(mod.DynamicCommunitySelection.__init__).parameters
        if "llm" in params and "token_encoder" in params:
            self.model_kw, self.tok_kw = "llm", "token_encoder"
        elif "model" in params and "tokenizer" in params:
            self.model_kw, self.tok_kw = "model", "tokenizer"
        else:
            raise TypeError("this graphrag's DynamicCommunitySelection has an unknown signature")
        missing = [k for k in settings if k not in params]
        if missing:
            raise TypeError(f"this graphrag's DynamicCommunitySelection lacks {', '.join(missing)}")
        sentinel = "\x00graphrag-audit-description\x00"
        filled = mod.RATE_QUERY.format(description=sentinel, question=QUERY)
        if filled.count(sentinel) != 1:
            raise TypeError("graphrag's rating prompt does not hold the report text once")
        self.head, self.tail = filled.split(sentinel)
        self._by_level: dict = {}
        tables = ("communities", "nodes", "reports") if family == "1.x" else ("communities", "reports")
        self.communities, self.communities_error = None, None
        try:
            self.communities = read_indexer_communities(*(copy.deepcopy(frames[t]) for t in tables))
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            self.communities_error = short_error(exc)

    def run(self, n, relevant, max_calls: int | None = None) -> dict:
        """One ``select()`` at community_level ``n``; ``relevant``: community numbers (None: every
        report); ``max_calls``: stop graphrag beyond that many rating calls. Returns ``{"error"}``,
        ``{"not_run"}`` (the stub could not rate) or ``{"rating_calls", "waves", "kept_ids"}``."""
        if self.communities_error is not None:
            return {"error": self.communities_error}
        if n not in self._by_level:  # graphrag's candidate reports, shared texts marked
            other = self.frames["nodes" if self.family == "1.x" else "communities"]
            try:
                reports = self.read_reports(
                    copy.deepcopy(self.frames["reports"]),
                    copy.deepcopy(other),
                    n,
                    dynamic_community_selection=True,
                )
                self._by_level[n] = (reports, mark_shared_texts(reports), None)
            except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
                self._by_level[n] = (None, None, short_error(exc))
        reports, texts, error = self._by_level[n]
        if error is not None:
            return {"error": error}
        if max_calls is None:  # the audit predicted no selection: bound graphrag anyway
            max_calls = 8 * len(texts) * max(1, self.settings["num_repeats"]) + 10_000
        rater = StubRater(texts, relevant, self.settings["threshold"], self.head, self.tail, max_calls)
        kw = {self.model_kw: rater, self.tok_kw: _NO_TOKENS, "use_summary": False, **self.settings}
        waves = _Waves()
        saved, self.mod.asyncio = self.mod.asyncio, waves
        try:
            selector = self.mod.DynamicCommunitySelection(
                community_reports=reports, communities=self.communities, **kw
            )
            got, info = asyncio.run(selector.select(QUERY))
        except StubError as exc:
            return {"not_run": str(exc)}
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            return {"error": short_error(exc)}
        finally:
            self.mod.asyncio = saved
        return {
            "rating_calls": int(info["llm_calls"]),
            "waves": list(waves.sizes),
            "kept_ids": sorted_ids(r.community_id for r in got),
            "stub_calls": rater.calls,
        }


def compare_scenario(expected, got: dict, audit_error: str | None) -> DynamicScenarioCheck:
    """One scenario at one level: the audit's ``DynamicScenario`` (None when it predicts an error)
    against graphrag's run (``GraphragDynamic.run``)."""
    if got.get("not_run") is not None:
        return DynamicScenarioCheck(status="not_run", reason=got["not_run"])
    if got.get("error") is not None:
        return DynamicScenarioCheck(
            status="graphrag_raised", graphrag_error=got["error"], expected=audit_error or None
        )
    check = DynamicScenarioCheck(
        status="differs",
        graphrag_rating_calls=got["rating_calls"],
        graphrag_waves=tuple(got["waves"]),
        graphrag_kept=len(got["kept_ids"]),
    )
    if expected is None:
        return replace(check, expected=audit_error or "no scenario", expected_error_not_raised=True)
    audit_kept = sorted_ids(expected.kept_ids)
    check = replace(
        check,
        audit_rating_calls=int(expected.rating_calls),
        audit_waves=tuple(int(w) for w in expected.waves),
        audit_kept=len(audit_kept),
    )
    if (
        check.graphrag_rating_calls == check.audit_rating_calls
        and check.graphrag_waves == check.audit_waves
        and got["kept_ids"] == audit_kept
    ):
        return replace(check, status="agrees")
    g, a = set(got["kept_ids"]), set(audit_kept)
    return replace(
        check,
        only_graphrag_kept=tuple(sorted(g - a, key=repr)[:50]),
        only_audit_kept=tuple(sorted(a - g, key=repr)[:50]),
    )


def combine(scenarios: dict) -> str:
    """A level's status from its scenarios': a raise first, then a difference, then a scenario not run,
    else agreement."""
    statuses = [s.status for s in scenarios.values()]
    for status in ("graphrag_raised", "differs", "not_run"):
        if status in statuses:
            return status
    return "agrees" if statuses else "not_run"


def compare_level(version, runner, n, relevant) -> DynamicLevelCheck:
    """The dynamic comparison at one community_level: the audit's ``DynamicVersion`` of the family
    (``version``) against graphrag's ``select()`` (``runner``: ``run(n, relevant_set_or_None)``)."""
    if version.error and version.error.startswith("never ends"):
        return DynamicLevelCheck(
            status="not_run",
            family=version.family,
            expected=version.error,
            reason="the audit predicts graphrag's select() never returns here: not run",
        )
    scen: dict[str, tuple[Any, set[int] | None]] = {
        "none_relevant": (version.none_relevant, set()),
        "all_relevant": (version.all_relevant, None),
    }
    if relevant is not None:
        scen["what_if"] = (version.what_if, set(int(x) for x in relevant))
    results = {}
    for name, (expected, rel) in scen.items():
        bound = None if expected is None else 2 * int(expected.rating_calls) + 1000
        results[name] = compare_scenario(expected, runner(n, rel, bound), version.error)
    return DynamicLevelCheck(
        status=combine(results), family=version.family, expected=version.error or None, scenarios=results
    )


def verify_dynamic(report, version: str, frames: dict) -> tuple[DynamicCheckSummary, dict]:
    """(summary, {community_level: per-level result}) of the dynamic comparison; ``frames``: the
    tables as read for the Python API (``reports``, ``communities``, 1.x also ``nodes``)."""
    opts = report.options
    settings = DynamicSettings(
        threshold=int(opts.threshold),
        keep_parent=bool(opts.keep_parent),
        num_repeats=int(opts.num_repeats),
        max_level=int(opts.max_level),
    )
    relevant = None if opts.relevant is None else tuple(int(x) for x in opts.relevant)
    family, why = family_of(version)
    summary = DynamicCheckSummary(
        compared=False,
        agree=None,
        family=family,
        settings=settings,
        scenarios=("none_relevant", "all_relevant") + (() if relevant is None else ("what_if",)),
    )
    levels = [r.community_level for r in report.levels]

    def all_not_run(reason):
        return replace(summary, reason=reason), {
            n: DynamicLevelCheck(status="not_run", reason=reason) for n in levels
        }

    if family is None:
        return all_not_run(why)
    from graphrag_audit.graphrag.dynamic import FAMILIES

    summary = replace(summary, graphrag=FAMILIES[family])
    if (
        frames.get("reports") is None
        or frames.get("communities") is None
        or (family == "1.x" and frames.get("nodes") is None)
    ):
        need = "create_final_communities, create_final_nodes" if family == "1.x" else "communities"
        return all_not_run(
            f"this index lacks the tables graphrag {version}'s dynamic selection reads "
            f"(community reports, {need})"
        )
    by_level = {
        r.community_level: r.selected["dynamic"].by_version for r in report.levels if "dynamic" in r.selected
    }
    if not any(bv is not None and family in bv.versions for bv in by_level.values()):
        layout = "create_final_* tables" if family == "1.x" else "communities table with children"
        return all_not_run(
            f"the audit simulates the {family} line only on the layout that line reads ({layout}); "
            "this index has another"
        )
    rows = {}
    log = logging.getLogger("graphrag")  # read_indexer_communities warns about every report-less community
    saved = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        try:
            runner = GraphragDynamic(family, frames, settings.to_dict())
        except Exception as exc:  # noqa: BLE001 - an unknown graphrag layout: not run, with the reason
            return all_not_run(f"cannot build graphrag's DynamicCommunitySelection here ({short_error(exc)})")
        for n in levels:
            bv = by_level.get(n)
            if bv is None or family not in bv.versions:
                rows[n] = DynamicLevelCheck(
                    status="not_run",
                    reason="the audit did not simulate dynamic selection at this community_level "
                    "(a deep tree is simulated at --level and N=None only)",
                )
                continue
            rows[n] = compare_level(bv.versions[family], runner.run, n, relevant)
    finally:
        log.setLevel(saved)
    compared = [r.status for r in rows.values() if r.status != "not_run"]
    return replace(
        summary,
        compared=True,
        how=HOW,
        levels_compared=len(compared),
        agree=bool(compared) and all(s == "agrees" for s in compared),
    ), rows

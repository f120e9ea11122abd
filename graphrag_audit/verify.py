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
3. Dynamic community selection: verify_dynamic.py.
"""

from __future__ import annotations

import asyncio
import copy
import gzip
import hashlib
import inspect
import io
import os
import sys
import tempfile
import warnings
from dataclasses import replace
from importlib import metadata
from unittest import mock

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.context import render_batches
from graphrag_audit.results.verify import (
    DynamicCheckSummary,
    DynamicLevelCheck,
    LevelCheck,
    MapCallCheck,
    MapCallSummary,
    QueryLoadPath,
    SelectionCheck,
    VerifyResult,
)
from graphrag_audit.verify_dynamic import id_key, short_error, sorted_ids, verify_dynamic

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


def _read(path) -> pd.DataFrame:
    return pd.read_csv(path) if path.suffix == ".csv" else pd.read_parquet(path)


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
    # the dynamic comparison (verify_dynamic.py) on the tables read for the Python API
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
        weights = c.selection_weights(rows, self.behaviour, n) if b.has_weight_column else None
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
        a_texts = render_batches(b, c.comm[rows], c.titles[rows], c.contents[rows], c.ranks[rows], weights)
        batches_agree = g_ids == a_ids and g_tokens == a_tokens
        detail: dict = {}
        if g_texts != a_texts:
            k_max = max(len(g_texts), len(a_texts))
            detail["texts_differ_in_batches"] = tuple(
                k for k in range(k_max) if k >= len(g_texts) or k >= len(a_texts) or g_texts[k] != a_texts[k]
            )
        if not batches_agree:
            k_max = max(len(g_ids), len(a_ids))
            diff = next(
                (
                    k
                    for k in range(k_max)
                    if k >= min(len(g_ids), len(a_ids)) or g_ids[k] != a_ids[k] or g_tokens[k] != a_tokens[k]
                ),
                None,
            )
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

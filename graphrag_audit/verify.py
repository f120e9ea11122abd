"""--verify: run the installed graphrag's own code and compare with the audit, level by level.

graphrag is optional (``python -m pip install graphrag`` beside the tool), never a dependency.
graphrag >= 2.0 is compared with the ``v2`` selection (it reads the communities table), graphrag < 2.0
with ``v1`` (it reads ``create_final_nodes``). Per ``community_level`` N:

1. Selection: graphrag's ``read_indexer_reports`` against the audit's. "agrees" only when graphrag
   returned the audit's selection; "graphrag_raised" when it raised, even where the audit predicted
   the failure (kept in ``expected``); else "differs". Tables are loaded as graphrag's Python API does
   (``pd.read_parquet``) and, where graphrag has it (>= 3.0.2), as ``graphrag query`` does (typed
   ``DataReader``, graphrag/data_model/dfs.py: ``astype(int)`` on community and level); under pandas 3
   an int32 ``communities.community`` makes the first raise and not the second.
2. Map calls (costs counted with an exact tokenizer): graphrag's ``build_community_context`` called as
   ``GlobalCommunityContext.build_context`` calls it by default (``get_global_search_engine``'s
   ``context_builder_params``, ``single_batch=False``, ``random_state=86``) on the reports
   ``read_indexer_reports`` returned and the entities ``read_indexer_entities`` returns, against the
   audit's batches: map calls, each batch's reports and tokens, and the text each map call is sent.
   (Importing the global-search module would pull in LiteLLM, ~5 s, for nothing used here.)
3. Dynamic community selection: verify_dynamic.py.

graphrag's tokenizer is tiktoken's encoding of ``--tokenizer``; when tiktoken has no cached copy, the
byte-identical file bundled with ``bpe-openai`` is handed to it (tiktoken checks its sha256).
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
from collections.abc import Callable
from dataclasses import replace
from importlib import metadata
from typing import TYPE_CHECKING, Any
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

if TYPE_CHECKING:
    from graphrag_audit.analysis.costs import ContextCoster

#: graphrag's global search context parameters (``get_global_search_engine``, 1.x - 3.x),
#: without the size limit, whose name changed (1.x ``max_tokens``, 2.x/3.x ``max_context_tokens``)
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


def installed_graphrag_version() -> str | None:
    try:
        return metadata.version("graphrag")
    except metadata.PackageNotFoundError:
        return None


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
    if path.suffix == ".csv":
        return pd.read_csv(path)
    return pd.read_parquet(path)


#: how each load path reads the tables (``verify.load_paths``)
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


class _QueryLoad:
    """The tables as ``graphrag query --data DIR`` loads them (graphrag >= 3.0.2; before, it read them
    with ``pd.read_parquet`` like the Python API): ``DataReader`` over the table provider of
    ``StorageConfig(base_dir=DIR)`` reads ``entities``, ``communities`` and ``community_reports`` in
    that order; the first that cannot be read stops it."""

    def __init__(self):
        self.loaded = False
        self.error: str | None = None
        self.frames: dict[str, pd.DataFrame] = {}

    @classmethod
    def for_index(cls, model) -> _QueryLoad | None:
        try:
            from graphrag.data_model.data_reader import DataReader
        except ImportError:  # graphrag < 3.0.2: graphrag query reads with pd.read_parquet too
            return None
        self = cls()
        try:
            from graphrag_storage import StorageConfig, create_storage
            from graphrag_storage.tables.table_provider_config import TableProviderConfig
            from graphrag_storage.tables.table_provider_factory import create_table_provider
        except Exception as exc:  # noqa: BLE001 - another layout of graphrag's storage package
            self.error = f"could not build graphrag query's table loader ({short_error(exc)})"
            return self
        first = model.files.get("communities") or model.files.get("reports")
        kind = "csv" if first is not None and first.suffix == ".csv" else "parquet"
        try:
            storage = create_storage(StorageConfig(base_dir=str(first.parent)))
            reader = DataReader(create_table_provider(TableProviderConfig(type=kind), storage=storage))
            for name in ("entities", "communities", "community_reports"):
                self.frames[name] = asyncio.run(getattr(reader, name)())
            self.loaded = True
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            self.error = short_error(exc)
        return self

    def describe(self) -> QueryLoadPath:
        return QueryLoadPath(how=QUERY_LOAD, loaded=self.loaded, load_error=self.error or None)


def _select(read_indexer_reports, reports_df, other_df, n):
    """graphrag's selection at N: (community numbers, the CommunityReport list, error or None)."""
    try:
        got = read_indexer_reports(copy.deepcopy(reports_df), copy.deepcopy(other_df), n)
    except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
        return None, None, short_error(exc)
    return sorted_ids(x.community_id if hasattr(x, "community_id") else x.short_id for x in got), got, None


def _outcome(theirs, err, ours, expected: str | None) -> SelectionCheck:
    """One load path's result at one level."""
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

    pandas' FutureWarnings raised in graphrag's own code (graphrag 1.2 assigning int to an int32
    column, each with an array dump) are not shown; any other warning and every error is."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=FutureWarning, module=r"graphrag(\.|$)")
        return _verify_with_graphrag(report, model)


def _verify_with_graphrag(report, model) -> VerifyResult:
    version = installed_graphrag_version()
    unusable = graphrag_unusable_reason()
    if unusable is not None or version is None:
        return VerifyResult(available=False, reason=unusable, graphrag_version=version)
    from graphrag.query.indexer_adapters import read_indexer_reports

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
    from graphrag_audit.graphrag.compat import v2_readable

    # what the audit predicts graphrag does on this index
    string_trap = behaviour == "v1" and model.id_kind == "string" and major >= 1
    int32_trap = (
        model.schemas.get("communities", {}).get("community") == "int32"
        and int(pd.__version__.split(".")[0]) >= 3
    )
    unreadable = behaviour == "v2" and not v2_readable(model)
    api_expected = query_expected = None
    if unreadable:
        api_expected = query_expected = "an error: graphrag >= 2.0 cannot read this index (v2-unreadable)"
    elif behaviour == "v2" and int32_trap:
        api_expected = (
            f"an error: int32 ids in the communities table read with pd.read_parquet under pandas "
            f"{pd.__version__} (int32-community-ids)"
        )
    reports_df = _read(model.files["reports"])
    other_df = _read(second)
    query = _QueryLoad.for_index(model) if behaviour == "v2" else None
    try:
        contexts = _ContextCheck.prepare(report, model, behaviour, other_df)
    except Exception as exc:  # noqa: BLE001 - never let the extra comparison break --verify
        contexts = _ContextCheck()
        contexts.reason = f"could not prepare the map-call comparison ({short_error(exc)})"
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
        if query is not None and query.loaded:
            q_theirs, q_got, q_err = _select(
                read_indexer_reports, query.frames["community_reports"], query.frames["communities"], n
            )
            q = _outcome(q_theirs, q_err, ours, query_expected)
        if contexts.ready:  # on graphrag's selection when it is the audit's (the Python API's first)
            if string_trap:
                skipped = "the audit's costs are for another selection than graphrag makes here"
            elif api.status == "agrees":
                map_calls = contexts.compare(n, got, r.selected[behaviour])
            elif query is not None and q is not None and q.status == "agrees":
                map_calls = replace(
                    contexts.compare(
                        n,
                        q_got,
                        r.selected[behaviour],
                        frames=(query.frames["entities"], query.frames["communities"]),
                    ),
                    load_path="graphrag_query",
                )
            else:
                skipped = (
                    "graphrag's read_indexer_reports raised"
                    if api.status == "graphrag_raised"
                    else "the selections differ"
                )
        agree = (
            api.status == "agrees"
            and not api.expected_error_not_raised
            and (q is None or (q.status == "agrees" and not q.expected_error_not_raised))
            and (map_calls is None or map_calls.agrees)
        )
        rows.append(
            LevelCheck(
                community_level=n,
                selection=api,
                audit_count=len(ours),
                agree=agree,
                graphrag_query=q,
                map_calls=map_calls,
                map_calls_skipped=skipped,
            )
        )
    dyn_summary, dyn_rows = _dynamic(report, model, version, behaviour, reports_df, other_df)
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
        graphrag_query=None if query is None else query.describe(),
    )


def _dynamic(report, model, version, behaviour, reports_df, other_df) -> tuple[DynamicCheckSummary, dict]:
    """The dynamic-selection comparison (verify_dynamic.py) on the tables read for the Python API."""
    frames = {"reports": reports_df}
    if behaviour == "v2":
        frames["communities"] = other_df
    else:
        frames["nodes"] = other_df
        path = model.files.get("communities")
        frames["communities"] = _read(path) if path is not None else None
    try:
        return verify_dynamic(report, version, frames)
    except Exception as exc:  # noqa: BLE001 - never let the extra comparison break --verify
        reason = f"the dynamic-selection comparison failed ({short_error(exc)})"
        return (
            DynamicCheckSummary(compared=False, agree=None, reason=reason),
            {r.community_level: DynamicLevelCheck(status="not_run", reason=reason) for r in report.levels},
        )


class _Recorder:
    """Passes graphrag's token counting to the real tokenizer and records each call (2.x/3.x call
    ``tokenizer.num_tokens(text)``; 1.x ``token_encoder.encode(text)``)."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[str, int]] = []

    def num_tokens(self, text: str) -> int:
        count = getattr(self.inner, "num_tokens", None)
        n = count(text) if count is not None else len(self.inner.encode(text))
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

    if name in tiktoken.registry.ENCODINGS:
        return tiktoken.get_encoding(name), f"tiktoken {_dist_version('tiktoken')}"
    try:
        import bpe_openai.data

        bundled = os.path.join(os.path.dirname(bpe_openai.data.__file__), f"{name}.tiktoken.gz")
        with gzip.open(bundled, "rb") as fh:
            data = fh.read()
    except (ImportError, OSError):
        return tiktoken.get_encoding(name), f"tiktoken {_dist_version('tiktoken')}"
    url = TIKTOKEN_URL.format(name=name)
    with tempfile.TemporaryDirectory(prefix="graphrag-audit-tiktoken-") as cache:
        with open(os.path.join(cache, hashlib.sha1(url.encode()).hexdigest()), "wb") as fh:
            fh.write(data)
        with mock.patch.dict(os.environ, {"TIKTOKEN_CACHE_DIR": cache}):
            enc = tiktoken.get_encoding(name)
    return enc, (
        f"tiktoken {_dist_version('tiktoken')} (encoding file: the copy bundled with bpe-openai "
        f"{_dist_version('bpe-openai')}, sha256 checked by tiktoken)"
    )


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


class _ContextCheck:
    """graphrag's own global-search context building, compared with the audit's batching."""

    # set by prepare() when it makes the check ready
    entities_df: pd.DataFrame | None
    other_df: pd.DataFrame
    behaviour: str
    read_entities: Callable[..., Any]
    build: Callable[..., Any]
    tok_param: str
    max_param: str
    inner: Any
    max_context_tokens: int
    coster: ContextCoster
    comm: np.ndarray

    def __init__(self):
        self.ready = False
        self.reason: str | None = None
        self.info: dict = {}
        self.levels_compared = 0

    @classmethod
    def prepare(cls, report, model, behaviour: str, other_df: pd.DataFrame) -> _ContextCheck:
        self = cls()
        opts = report.options
        tokenizer = opts.tokenizer
        self.info = {"tokenizer": tokenizer, "max_context_tokens": opts.max_context_tokens}
        if not opts.costs:
            self.reason = "costs were not computed (--no-costs)"
            return self
        if tokenizer not in ("cl100k_base", "o200k_base"):
            self.reason = (
                f"tokenizer {tokenizer!r} is an approximation: map calls are only compared "
                "with an exact tokenizer (cl100k_base, o200k_base)"
            )
            return self
        if not any(r.selected[behaviour].cost for r in report.levels):
            self.reason = "the audit computed no costs for this index"
            return self
        try:
            from graphrag.query.context_builder.community_context import build_community_context
            from graphrag.query.indexer_adapters import read_indexer_entities
        except Exception as exc:  # noqa: BLE001
            self.reason = f"cannot import graphrag's build_community_context ({type(exc).__name__}: {exc})"
            return self
        params = inspect.signature(build_community_context).parameters
        tok_param = next((p for p in ("tokenizer", "token_encoder") if p in params), None)
        max_param = next((p for p in ("max_context_tokens", "max_tokens") if p in params), None)
        missing = [p for p in (*GLOBAL_CONTEXT_PARAMS, "single_batch", "random_state") if p not in params]
        if tok_param is None or max_param is None or missing:
            self.reason = "this graphrag's build_community_context has an unknown signature"
            return self
        try:
            encoding, source = _tiktoken_encoding(tokenizer)
            inner = (
                encoding  # 1.x: the tiktoken encoding itself (tiktoken.get_encoding(config.encoding_model))
            )
            if tok_param == "tokenizer":  # 2.x/3.x: graphrag's own tokenizer over that encoding
                try:
                    from graphrag.tokenizer.get_tokenizer import get_tokenizer

                    inner = get_tokenizer(encoding_model=tokenizer)
                except (ImportError, TypeError):  # another layout: count len(encode(text)) ourselves
                    source += (
                        "; graphrag's get_tokenizer(encoding_model=...) not found, len(encode(text)) used"
                    )
        except Exception as exc:  # noqa: BLE001
            self.reason = f"cannot load tokenizer {tokenizer!r} for graphrag ({type(exc).__name__}: {exc})"[
                :300
            ]
            return self
        entities_path = model.files.get("entities")
        self.entities_df = _read(entities_path) if entities_path is not None else None
        self.other_df = other_df
        self.behaviour = behaviour
        self.read_entities = read_indexer_entities
        self.build = build_community_context
        self.tok_param, self.max_param, self.inner = tok_param, max_param, inner
        self.max_context_tokens = int(opts.max_context_tokens)
        from graphrag_audit.analysis.costs import ContextCoster

        self.coster = ContextCoster(model, tokenizer, self.max_context_tokens)
        self.comm = model.reports["community"].to_numpy()
        self.info.update({"graphrag_tokenizer": source, "entities": entities_path is not None})
        self.ready = True
        return self

    def summary(self) -> MapCallSummary:
        if not self.ready:
            return MapCallSummary(compared=False, reason=self.reason, **self.info)
        return MapCallSummary(compared=True, levels_compared=self.levels_compared, **self.info)

    def _entities(self, n, frames=None):
        entities_df, other_df = frames if frames is not None else (self.entities_df, self.other_df)
        if entities_df is None:
            return None
        if self.behaviour == "v2":  # 2.x/3.x: read_indexer_entities(entities, communities, N)
            return self.read_entities(entities_df.copy(), other_df.copy(), community_level=n)
        return self.read_entities(other_df.copy(), entities_df.copy(), community_level=n)  # 1.x: nodes first

    def _graphrag(self, n, got, frames=None) -> tuple[list[list], list[int], list[str]]:
        """graphrag's batches: per emitted batch its row ids, its token count (header included)
        and the text sent to the map call. ``frames``: (entities, communities) as another load
        path read them (default: read with pandas)."""
        rec = _Recorder(self.inner)
        chunks, _records = self.build(
            community_reports=got,
            entities=self._entities(n, frames),
            single_batch=False,
            random_state=RANDOM_STATE,
            **GLOBAL_CONTEXT_PARAMS,
            **{self.tok_param: rec, self.max_param: self.max_context_tokens},
        )
        if isinstance(chunks, str):
            chunks = [chunks] if chunks else []
        # graphrag counts the batch header at every batch start, and each report row once, in
        # packing order; the emitted batches take those rows in that order.
        header = rec.calls[0][0] if rec.calls else None
        header_tokens = rec.calls[0][1] if rec.calls else 0
        row_calls = [(t, k) for t, k in rec.calls if t != header]
        ids, tokens, at = [], [], 0
        for chunk in chunks:
            df = pd.read_csv(io.StringIO(chunk), sep="|", dtype=str, keep_default_na=False)
            seg = row_calls[at : at + len(df)]
            at += len(df)
            seg_ids = sorted((id_key(t.split("|", 1)[0]) for t, _ in seg), key=repr)
            batch_ids = sorted((id_key(x) for x in df["id"]), key=repr)
            if seg_ids != batch_ids:
                raise RuntimeError("cannot attribute graphrag's token counts to its batches")
            ids.append(batch_ids)
            tokens.append(header_tokens + sum(k for _, k in seg))
        return ids, tokens, list(chunks)

    def compare(self, n, got, stats, frames=None) -> MapCallCheck:
        cost = stats.cost
        audit_calls = cost.map_calls if cost else None
        audit_tokens = cost.tokens if cost else None
        zero_note = "ZeroDivisionError" in ((cost.note if cost else None) or "")
        try:
            g_ids, g_tokens, g_texts = self._graphrag(n, got, frames)
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            self.levels_compared += 1
            return MapCallCheck(
                audit_calls,
                audit_tokens,
                context_error=short_error(exc),
                context_error_expected=zero_note and isinstance(exc, ZeroDivisionError),
            )
        # zero_note: the audit predicted graphrag would fail here and it did not
        expected = False if zero_note else None
        self.levels_compared += 1
        rows = np.asarray(stats.rows, dtype=np.int64)
        b = self.coster.selection_batches(rows, self.behaviour, n)
        weights = self.coster.selection_weights(rows, self.behaviour, n) if b.has_weight_column else None
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
        a_ids, a_tokens = [], []
        for k in range(b.n_batches):
            a_ids.append(sorted((id_key(x) for x in self.comm[rows[b.batch_of == k]].tolist()), key=repr))
            a_tokens.append(int(b.batch_tokens[k]))
        c = self.coster
        a_texts = render_batches(b, c.comm[rows], c.titles[rows], c.contents[rows], c.ranks[rows], weights)
        texts_agree = g_texts == a_texts
        batches_agree = g_ids == a_ids and g_tokens == a_tokens
        detail: dict = {}
        if not texts_agree:
            detail["texts_differ_in_batches"] = tuple(
                k
                for k in range(max(len(g_texts), len(a_texts)))
                if k >= len(g_texts) or k >= len(a_texts) or g_texts[k] != a_texts[k]
            )
        if not batches_agree:
            diff = next(
                (
                    k
                    for k in range(max(len(g_ids), len(a_ids)))
                    if k >= len(g_ids)
                    or k >= len(a_ids)
                    or g_ids[k] != a_ids[k]
                    or g_tokens[k] != a_tokens[k]
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
            if diff is not None and diff < len(g_ids) and diff < len(a_ids):
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
            texts_agree=texts_agree,
            **detail,
        )

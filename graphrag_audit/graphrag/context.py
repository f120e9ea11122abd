"""Reproduce graphrag global search's map-phase context: which reports, how many map calls, how many tokens.

Pure functions; no graphrag import. Given the reports ``read_indexer_reports`` selected at a
``community_level`` (parquet row order), :func:`build_batches` reproduces
``build_community_context(..., single_batch=False)`` as global search calls it and
:func:`occurrence_weights` the "occurrence weight" column.

Sources (``microsoft/graphrag`` unless named): ``query/context_builder/community_context.py``
@4d59c43 (3.x), @4778166 (2.1.0) and SofarDataAI/graphrag @3945482 (0.x; same logic in all
three); ``query/factory.py`` @330c142 (3.x), @079e8d2 (2.x); ``structured_search/global_search/
community_context.py`` @4c8ef97 (3.x), @5aca582 (2.x), @06171f3 (0.x/1.x);
``query/indexer_adapters.py`` @12607bb (3.x), @dac0b86 (0.9/1.0), BlokTrek/graphrag @5c87adc
(1.0.1), @04c9472 (early 0.x); ``query/input/loaders/dfs.py`` @22a4d29, ``utils.py`` @133a86f;
``query/llm/text_utils.py`` @13a5e5f (1.x ``num_tokens``).

1. Parameters (every version): full ``content``, ``shuffle_data=True``, ``random_state=86``,
   rank and normalised weight columns, ``min_community_rank=0``, ``max_context_tokens`` from
   ``global_search.max_context_tokens`` (1.x ``max_tokens``), default 12 000.
2. Weights are computed over *all* reports passed in (before the rank filter) when entities
   are passed: ``len(set(text units of every entity whose community_ids hold the community))``
   divided by the max (Python true division; ZeroDivisionError when the max is 0). Entity
   ``community_ids`` = every community of the entity at a level ``<= N``: 3.x from
   ``communities.explode("entity_ids")`` (left-merged: -1 for none; NaN levels kept), 1.x from
   ``create_final_nodes`` rows with ``level <= N``; early 0.x kept the max id (``rule="max"``).
   Without entities the weight column disappears.
3. Rank filter: kept iff ``rank is not None and rank >= min_community_rank`` (NaN dropped).
4. Shuffle: ``random.seed(86); random.shuffle(kept)`` in input order (:func:`shuffle_order`).
5. Header ``"-----Reports-----\\n" + "id|title|occurrence weight|content|rank\\n"``, counted once
   per batch; row ``"|".join([str(community), title, str(weight), content, str(float(rank))])
   + "\\n"``.
6. Packing: a row whose tokens would pass ``max_context_tokens`` (strictly) cuts a non-empty
   batch and starts a new one at the header; the row is added regardless (an oversize report
   sits alone; no empty batch).
7. The last batch is not emitted when its set of ids equals an earlier batch's (only with
   duplicate community ids); its reports are lost.
8. Map calls = emitted batches; each sends its batch as ``to_csv(index=False, sep="|")``,
   sorted by weight then rank descending (:func:`render_batches`); 0.x/1.x prefix ``"\\n\\n"``.
9. Tokenizer: ``len(tiktoken.get_encoding(name).encode(text))``, default cl100k_base (see
   :mod:`graphrag_audit.graphrag.tokens`).

Not modelled: a 3.x development state (@1eb8fb0) that built the chunks with the defaults.

Counting each report once: a row is ``P + w + B`` (``P = f"{id}|{title}|"``, ``w`` the weight
string, ``B = f"|{content}|{rank}\\n"``). ``w`` starts and ends with a digit and is flanked by
``|``; in cl100k and o200k pre-tokenisation no pre-token crosses those junctions, so
``tokens(row) = tokens(P) + tokens(w) + tokens(B)`` and :class:`RowTokenCache` counts ``P`` and
``B`` once per report. ``build_batches(exact=True)`` counts whole rows, as the default does when
the premises fail (a weight string not bounded by digits, another delimiter, a counter that is
not additive).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.tokens import TokenCounter, get_token_counter

__all__ = [
    "DEFAULT_MAX_CONTEXT_TOKENS",
    "DEFAULT_SHUFFLE_SEED",
    "WEIGHT_COLUMN",
    "ContextBatches",
    "RowTokenCache",
    "WeightNormalizationError",
    "build_batches",
    "context_header",
    "explode_text_units",
    "format_id",
    "format_rank",
    "format_weight",
    "occurrence_weights",
    "render_batches",
    "report_row",
    "row_measures",
    "row_texts",
    "shuffle_order",
    "text_unit_codes",
    "text_unit_counts",
]

DEFAULT_MAX_CONTEXT_TOKENS = 12_000
DEFAULT_SHUFFLE_SEED = 86
WEIGHT_COLUMN = "occurrence weight"
RANK_COLUMN = "rank"
CONTENT_COLUMN = "content"
CONTEXT_NAME = "Reports"
_DIGITS = frozenset("0123456789")


# --------------------------------------------------------------------------------------
# formatting: exactly the strings graphrag puts in a row
# --------------------------------------------------------------------------------------
def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def format_id(community: Any) -> str:
    """The row id: ``str()`` of the report's ``community`` value (``"5"``; ``""`` for None)."""
    v = _py(community)
    if v is None:
        return ""  # graphrag: report.short_id if report.short_id else ""
    return str(v)


def format_weight(weight: Any) -> str:
    """``str()`` of the weight as graphrag holds it: Python int (raw) or float (normalised)."""
    v = _py(weight)
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def format_rank(rank: Any) -> str:
    """``str(float(rank))``: graphrag reads rank with ``to_optional_float`` (``"7.0"``)."""
    return repr(float(_py(rank)))


def _text(value: Any) -> str:
    v = _py(value)
    return v if type(v) is str else str(v)  # graphrag: to_str() -> str(value)


def context_header(
    with_weight: bool = True,
    include_rank: bool = True,
    *,
    weight_column: str = WEIGHT_COLUMN,
    content_column: str = CONTENT_COLUMN,
    rank_column: str = RANK_COLUMN,
    context_name: str = CONTEXT_NAME,
    delimiter: str = "|",
) -> str:
    """The batch header graphrag counts once per batch (``-----Reports-----`` line included)."""
    cols = ["id", "title"]
    if with_weight:
        cols.append(weight_column)
    cols.append(content_column)
    if include_rank:
        cols.append(rank_column)
    return f"-----{context_name}-----\n" + delimiter.join(cols) + "\n"


def report_row(
    community: Any,
    title: Any,
    content: Any,
    rank: Any,
    weight: Any = None,
    *,
    include_rank: bool = True,
    delimiter: str = "|",
) -> str:
    """One report's row text exactly as graphrag counts it (``weight=None``: no weight column)."""
    parts = [format_id(community), _text(title)]
    if weight is not None:
        parts.append(format_weight(weight))
    parts.append(_text(content))
    if include_rank:
        parts.append(format_rank(rank))
    return delimiter.join(parts) + "\n"


# --------------------------------------------------------------------------------------
# occurrence weights
# --------------------------------------------------------------------------------------
class WeightNormalizationError(ZeroDivisionError):
    """Every selected report has weight 0: graphrag's ``/ max_weight`` raises ZeroDivisionError."""


def explode_text_units(entity_text_units: pd.Series) -> pd.DataFrame:
    """Long form ``(entity, text_unit)`` of a Series ``entity -> list of text unit ids``.

    Duplicate entity keys keep the first row (graphrag: ``drop_duplicates(subset=["id"])``
    after the merge). ``None``/empty lists contribute nothing (graphrag would raise ``TypeError``
    on a null list of an entity with communities)."""
    s = entity_text_units
    if s.index.has_duplicates:
        s = s[~s.index.duplicated(keep="first")]
    ex = s.explode()
    ex = ex[ex.notna()]
    return pd.DataFrame({"entity": ex.index.to_numpy(dtype=object), "text_unit": ex.to_numpy(dtype=object)})


def text_unit_counts(
    membership: pd.DataFrame | None,
    entity_text_units: pd.Series,
    community_level: int | None = None,
    *,
    rule: Literal["all", "max"] = "all",
    entity_rows: np.ndarray | None = None,
) -> pd.Series:
    """Raw occurrence counts: distinct text units per community (int64 Series by community).

    ``membership``: one row per (``entity``, ``community``, ``level``), the rows graphrag's
    ``read_indexer_entities`` reads (2.x/3.x: ``communities.entity_ids`` exploded; 1.x:
    ``create_final_nodes``). A NaN community becomes ``-1`` (graphrag ``fillna(-1)``).
    ``community_level``: keep rows with ``level <= N`` or NaN level (None: all rows).
    ``rule="all"``: an entity counts for every community it is in (0.5+ … 3.x); ``"max"``: only
    for its largest community id at ``<= N`` (early 0.x). ``entity_text_units``: Series
    ``entity -> list of text unit ids``. Communities with no text unit are left out.
    ``entity_rows``: each membership row's first row in ``entity_text_units`` (-1: none), if known."""
    if rule not in ("all", "max"):
        raise ValueError(f"rule must be 'all' or 'max', not {rule!r}")
    s = entity_text_units
    lens, tu = text_unit_codes(s)
    empty = pd.Series([], dtype=np.int64, name="text_units")
    if membership is None or len(membership) == 0 or len(tu) == 0:
        return empty
    m = membership
    if entity_rows is None:  # each membership row's first entity row with its key (-1: none)
        first = np.flatnonzero(~s.index.duplicated(keep="first"))
        keys = np.concatenate([s.index[first].to_numpy(dtype=object), m["entity"].to_numpy(dtype=object)])
        codes, _ = pd.factorize(keys, use_na_sentinel=False)  # null keys meet, as in a merge
        row_of = np.full(int(codes.max()) + 1, -1, dtype=np.int64)
        row_of[codes[: len(first)]] = first
        entity_rows = row_of[codes[len(first) :]]
    pos = np.asarray(entity_rows, dtype=np.int64)
    if community_level is not None:
        lv = m["level"]
        at = ((lv <= community_level) | lv.isna()).to_numpy()
        m, pos = m[at], pos[at]
    comm = m["community"]
    if comm.isna().any():
        comm = comm.fillna(-1)
    if comm.dtype.kind == "f" and np.isfinite(comm.to_numpy()).all() and (comm % 1 == 0).all():
        comm = comm.astype(np.int64)  # NaN-padded int column: back to ints, like astype(int)
    com = comm.to_numpy()
    if rule == "max":  # an entity's largest community (entity keys are one-to-one with first rows)
        pos = np.where(m["entity"].isna().to_numpy(), -1, pos)  # groupby drops null keys
        g = pd.DataFrame({"pos": pos, "community": com}).groupby("pos", sort=False)["community"].max()
        pos, com = g.index.to_numpy(dtype=np.int64), g.to_numpy()
    # (community, text unit) pairs on integer codes: each membership row's entity text units
    n = np.where(pos >= 0, lens[np.maximum(pos, 0)], 0)
    keep = n > 0
    if not keep.any():
        return empty
    codes, uniques = pd.factorize(com[keep])  # communities in order of first pair (merge order)
    pos, n = pos[keep], n[keep]
    starts = np.cumsum(lens) - lens
    tu_rows = np.repeat(starts[pos] - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
    width = np.int64(tu.max()) + 1
    pairs = np.unique(np.repeat(codes.astype(np.int64), n) * width + tu[tu_rows])
    sizes = np.bincount(pairs // width, minlength=len(uniques)).astype(np.int64)
    return pd.Series(sizes, index=pd.Index(uniques, name="community"), name="text_units")


def text_unit_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(number of text units of each entity row, their integer codes flattened; nulls dropped)."""
    ex = col.reset_index(drop=True).explode()  # arrow lists stay in arrow
    ex = ex[ex.notna()]
    codes, _ = pd.factorize(ex)
    lens = np.bincount(ex.index.to_numpy(dtype=np.int64), minlength=len(col)).astype(np.int64)
    return lens, codes.astype(np.int64)


def occurrence_weights(
    selected_communities: Sequence[Any] | np.ndarray | pd.Series,
    membership: pd.DataFrame | None,
    entity_text_units: pd.Series | None,
    community_level: int | None = None,
    *,
    normalize: bool = True,
    rule: Literal["all", "max"] = "all",
    counts: pd.Series | None = None,
) -> np.ndarray | None:
    """graphrag's "occurrence weight" of each selected report, aligned with ``selected_communities``.

    ``selected_communities``: the community number of every report ``read_indexer_reports``
    returned, *before* the rank filter (graphrag normalises over all of them).
    Returns float64 (normalised, ``count / max``) or int64 (``normalize=False``) — the type
    graphrag formats with ``str()`` — or ``None`` when ``entity_text_units`` is None/empty:
    graphrag then computes no weight and the header and rows have no weight column.
    ``counts``: precomputed :func:`text_unit_counts` (skips the membership work; rule "all"
    counts are level-independent, so one Series serves every level).
    Raises :class:`WeightNormalizationError` (a ZeroDivisionError, as graphrag raises) when
    normalising and every weight is 0 (e.g. entity/community id types that do not match).
    """
    sel = pd.Series(_as_list(selected_communities), dtype=None)
    if counts is None:
        if entity_text_units is None or len(entity_text_units) == 0:
            return None
        counts = text_unit_counts(membership, entity_text_units, community_level, rule=rule)
    if len(sel) == 0:
        return np.zeros(0, dtype=np.float64 if normalize else np.int64)
    if len(counts):
        raw = counts.reindex(sel.to_numpy()).fillna(0).to_numpy(dtype=np.int64)
    else:
        raw = np.zeros(len(sel), dtype=np.int64)
    if not normalize:
        return raw
    top = int(raw.max())
    if top == 0:
        raise WeightNormalizationError(
            "every selected report has occurrence weight 0 (no selected community has an "
            "entity with text units); graphrag divides by the max weight and raises "
            "ZeroDivisionError here"
        )
    return raw / top  # same IEEE result as Python int/int true division (counts < 2**53)


# --------------------------------------------------------------------------------------
# shuffle
# --------------------------------------------------------------------------------------
def shuffle_order(n: int, seed: int | None = DEFAULT_SHUFFLE_SEED) -> np.ndarray:
    """Positions ``0..n-1`` in the order ``random.seed(seed); random.shuffle(list)`` leaves
    a list of length ``n`` (``seed=None``: no shuffle)."""
    if seed is None or n < 2:
        return np.arange(n, dtype=np.int64)
    order = list(range(n))
    random.Random(int(seed)).shuffle(order)
    return np.array(order, dtype=np.int64)


# --------------------------------------------------------------------------------------
# token cache
# --------------------------------------------------------------------------------------
class RowTokenCache:
    """Remembers the measure of each report's fixed row parts and of each weight string.

    Reuse one cache across the levels of one index (and one counter): a report's ``P`` and
    ``B`` parts are counted once; per level only new weight strings are counted.
    """

    def __init__(self, token_counter: TokenCounter | str = "cl100k_base"):
        self.counter = get_token_counter(token_counter) if isinstance(token_counter, str) else token_counter
        if not getattr(self.counter, "additive", False):
            raise ValueError(f"RowTokenCache needs an additive token counter, not {self.counter!r}")
        self._fixed: dict[tuple, dict[tuple, int]] = {}
        self._weights: dict[str, int] = {}

    def fixed_measures(self, keys: list[tuple], with_weight: bool, delimiter: str) -> np.ndarray:
        """Measures of the fixed row parts for ``keys = (id, title, content, rank_or_None)``."""
        d = self._fixed.setdefault((with_weight, delimiter), {})
        get = d.get
        vals = [get(k) for k in keys]
        if None in vals:
            missing = list(dict.fromkeys(k for k, v in zip(keys, vals) if v is None))
            counter = self.counter
            parts = row_texts(
                [k[0] for k in missing],
                [k[1] for k in missing],
                [k[2] for k in missing],
                [k[3] for k in missing],
                with_weight=with_weight,
                delimiter=delimiter,
            )
            got = counter.measure_many(parts[0])
            for part in parts[1:]:
                got = got + counter.measure_many(part)
            d.update(zip(missing, got.tolist()))
            vals = [d[k] for k in keys]
        return np.array(vals, dtype=np.int64)

    def weight_measures(self, weight_strings: list[str]) -> np.ndarray:
        d = self._weights
        get = d.get
        vals = [get(w) for w in weight_strings]
        if None in vals:
            missing = list(dict.fromkeys(w for w, v in zip(weight_strings, vals) if v is None))
            d.update(zip(missing, self.counter.measure_many(missing).tolist()))
            vals = [d[w] for w in weight_strings]
        return np.array(vals, dtype=np.int64)


def row_measures(
    token_counter: TokenCounter | str,
    community_ids: np.ndarray,
    titles: Any,
    contents: Any,
    ranks: np.ndarray,
    *,
    with_weight: bool,
    rows: np.ndarray | None = None,
) -> np.ndarray:
    """The measure of each report row's fixed text (:class:`RowTokenCache`'s numbers): with a weight
    column that of ``f"{id}|{title}|"`` plus that of ``f"|{content}|{rank}\\n"``, without, that of
    the whole row. ``rows``: the positions to measure (others get -1)."""
    counter = get_token_counter(token_counter) if isinstance(token_counter, str) else token_counter
    ids = np.asarray(community_ids)
    out = np.full(len(ids), -1, dtype=np.int64)
    rows = np.arange(len(ids), dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    title_l, content_l = _as_list(titles), _as_list(contents)
    id_s = ["" if x is None else str(x) for x in ids[rows].tolist()]
    title_s = [_text(title_l[i]) for i in rows.tolist()]
    content_s = [_text(content_l[i]) for i in rows.tolist()]
    rank_s = _rank_strings(np.asarray(ranks, dtype=np.float64)[rows])
    parts = row_texts(id_s, title_s, content_s, rank_s, with_weight=with_weight)
    got = counter.measure_many(parts[0])
    for part in parts[1:]:
        got = got + counter.measure_many(part)
    out[rows] = got
    return out


def row_texts(
    id_s: list, title_s: list, content_s: list, rank_s: list, *, with_weight: bool, delimiter: str = "|"
) -> list[list[str]]:
    """The strings whose measures add up to each report row's fixed measure: with a weight
    column ``[heads, tails]`` (``f"{id}|{title}|"``, ``f"|{content}|{rank}\\n"``), without
    ``[rows]`` (the whole row). A rank of None: no rank column."""
    if with_weight:
        heads = [f"{i}{delimiter}{t}{delimiter}" for i, t in zip(id_s, title_s)]
        tails = [
            f"{delimiter}{c}\n" if r is None else f"{delimiter}{c}{delimiter}{r}\n"
            for c, r in zip(content_s, rank_s)
        ]
        return [heads, tails]
    return [
        [
            delimiter.join((i, t, c) if r is None else (i, t, c, r)) + "\n"
            for i, t, c, r in zip(id_s, title_s, content_s, rank_s)
        ]
    ]


# --------------------------------------------------------------------------------------
# batches
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ContextBatches:
    """What global search's context builder does with one list of selected reports.

    Per-report arrays are aligned with the *input* order. ``total_tokens`` and
    ``batch_tokens`` are the tokens graphrag counts against ``max_context_tokens`` (header
    included once per batch); the text actually sent is :func:`render_batches`' CSV.
    """

    reports_in_context: int  # reports in emitted batches (after the rank filter)
    n_batches: int  # = map LLM calls
    total_tokens: int  # sum of batch_tokens
    batch_tokens: list[int]  # per emitted batch, header included
    dropped_by_rank: int  # rank None/NaN or < min_community_rank
    row_tokens: np.ndarray  # int64 per input report; -1 where dropped by rank
    batch_of: np.ndarray  # int64 per input report: batch number, -1 if not sent
    order: np.ndarray  # input positions of the kept reports, in shuffled (packing) order
    header_tokens: int
    oversize_reports: int  # reports with header + row > max_context_tokens (each alone)
    lost_in_last_batch: int  # reports lost to the duplicate-id-set quirk (normally 0)
    max_context_tokens: int
    token_counter: str
    counter_exact: bool  # the token counter is exact (not the estimate)
    has_weight_column: bool


def _as_list(values: Any) -> list:
    if isinstance(values, (pd.Series, pd.Index, np.ndarray)):
        return values.tolist()
    return list(values)


def build_batches(
    community_ids: Sequence[Any] | np.ndarray | pd.Series,
    titles: Sequence[Any] | np.ndarray | pd.Series,
    contents: Sequence[Any] | np.ndarray | pd.Series,
    ranks: Sequence[Any] | np.ndarray | pd.Series,
    weights: Sequence[Any] | np.ndarray | pd.Series | None,
    token_counter: TokenCounter | str = "cl100k_base",
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS,
    min_community_rank: float = 0,
    shuffle_seed: int | None = DEFAULT_SHUFFLE_SEED,
    *,
    include_rank: bool = True,
    weight_column: str = WEIGHT_COLUMN,
    content_column: str = CONTENT_COLUMN,
    context_name: str = CONTEXT_NAME,
    delimiter: str = "|",
    cache: RowTokenCache | None = None,
    exact: bool = False,
) -> ContextBatches:
    """Pack the selected reports into map batches exactly as graphrag's global search does.

    Inputs are aligned, in the order graphrag holds the reports (parquet row order of the
    selected reports); ``weights`` from :func:`occurrence_weights` (None: no weight column).
    ``shuffle_seed=None`` reproduces ``shuffle_data=False``. ``cache``: a :class:`RowTokenCache`
    reused across levels. ``exact=True`` counts whole row strings (as for counters that are not
    additive)."""
    counter = get_token_counter(token_counter) if isinstance(token_counter, str) else token_counter
    ids, title_l, content_l = _as_list(community_ids), _as_list(titles), _as_list(contents)
    n = len(ids)
    if not (len(title_l) == len(content_l) == n):
        raise ValueError("community_ids, titles, contents and ranks must have the same length")
    if isinstance(ranks, np.ndarray) and ranks.dtype.kind == "f":
        rank_f = ranks.astype(np.float64)
    else:
        rank_f = np.array([np.nan if r is None else r for r in _as_list(ranks)], dtype=np.float64)
    if len(rank_f) != n:
        raise ValueError("community_ids, titles, contents and ranks must have the same length")
    with_weight = weights is not None
    if with_weight:
        w_arr = np.asarray(weights.to_numpy() if isinstance(weights, pd.Series) else weights)
        if len(w_arr) != n:
            raise ValueError("weights must have one value per report")

    keep = rank_f >= min_community_rank  # NaN -> False
    kept = np.flatnonzero(keep)
    order = kept[shuffle_order(len(kept), shuffle_seed)]
    header = context_header(
        with_weight,
        include_rank,
        weight_column=weight_column,
        content_column=content_column,
        context_name=context_name,
        delimiter=delimiter,
    )
    header_tokens = int(counter.count(header))

    # ---- token count of every kept row (in packing order) ----------------------------
    o = order.tolist()
    id_s = ["" if (x := ids[i]) is None else str(x) for i in o]  # format_id
    title_s = [_text(title_l[i]) for i in o]
    content_s = [_text(content_l[i]) for i in o]
    rank_s = _rank_strings(rank_f[order]) if include_rank else [None] * len(o)
    if with_weight:
        w_u, w_inv = _weight_strings(w_arr[order])  # each distinct weight string once
    # the split count is exact only at digit|'|' junctions with a punctuation delimiter
    use_parts = (
        not exact
        and getattr(counter, "additive", False)
        and len(delimiter) == 1
        and not (delimiter.isalnum() or delimiter.isspace() or delimiter == "_")
        and (not with_weight or all(w[:1] in _DIGITS and w[-1:] in _DIGITS for w in w_u))
    )
    if use_parts:
        if cache is None:
            cache = RowTokenCache(counter)
        elif cache.counter is not counter:
            raise ValueError("the RowTokenCache was built for a different token counter")
        meas = cache.fixed_measures(list(zip(id_s, title_s, content_s, rank_s)), with_weight, delimiter)
        if with_weight:
            meas = meas + cache.weight_measures(w_u)[w_inv]
        toks = np.asarray(counter.tokens_from_measure(meas), dtype=np.int64)
    else:
        if with_weight:
            w_s = [w_u[i] for i in w_inv.tolist()]
            cols = [id_s, title_s, w_s, content_s] + ([rank_s] if include_rank else [])
        else:
            cols = [id_s, title_s, content_s] + ([rank_s] if include_rank else [])
        rows = [delimiter.join(parts) + "\n" for parts in zip(*cols)] if o else []
        toks = np.asarray(counter.count_many(rows), dtype=np.int64)

    # ---- graphrag's greedy packing -----------------------------------------------------
    limit = int(max_context_tokens)
    # any limit above every token sum batches alike: capped so that numpy's int64 never overflows
    # (graphrag compares Python ints: --max-context-tokens may be any positive integer)
    cap = min(limit, 2**62)
    m = len(order)
    oversize = int(np.count_nonzero(header_tokens + toks > cap))
    csum = np.concatenate(([0], np.cumsum(toks, dtype=np.int64)))
    starts, batch_tokens = greedy_batches(csum, cap - header_tokens, header_tokens)
    lost = 0
    if len(starts) > 1 and len(set(id_s)) < len(id_s):
        # graphrag does not emit the last batch when its set of ids equals an earlier batch's
        last_ids = set(id_s[starts[-1] :])
        if any(set(id_s[starts[b] : starts[b + 1]]) == last_ids for b in range(len(starts) - 1)):
            lost = m - starts.pop()
            batch_tokens.pop()

    batch_of = np.full(n, -1, dtype=np.int64)
    row_tokens = np.full(n, -1, dtype=np.int64)
    if m:
        row_tokens[order] = toks
        bounds = np.array(starts + [m - lost], dtype=np.int64)
        sizes = bounds[1:] - bounds[:-1]  # np.diff, which numpy's stubs type as timedelta64 here
        in_ctx = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
        batch_of[order[: len(in_ctx)]] = in_ctx
    name = getattr(counter, "name", type(counter).__name__)
    return ContextBatches(
        reports_in_context=int(m - lost),
        n_batches=len(batch_tokens),
        total_tokens=int(sum(batch_tokens)),
        batch_tokens=batch_tokens,
        dropped_by_rank=int(n - len(kept)),
        row_tokens=row_tokens,
        batch_of=batch_of,
        order=order,
        header_tokens=header_tokens,
        oversize_reports=oversize,
        lost_in_last_batch=lost,
        max_context_tokens=limit,
        token_counter=str(name),
        counter_exact=bool(getattr(counter, "exact", False)),
        has_weight_column=with_weight,
    )


def greedy_batches(csum: np.ndarray, room: int, header_tokens: int) -> tuple[list[int], list[int]]:
    """(first row of each batch, tokens of each batch) of graphrag's greedy packing of rows whose
    token prefix sums are ``csum`` (``csum[0] = 0``), ``room`` tokens for rows in a batch: a batch
    starting at row s takes row s, then every following row while their sum fits."""
    m = len(csum) - 1
    batch_tokens: list[int] = []
    starts: list[int] = []
    s = 0
    while s < m:
        e = max(int(np.searchsorted(csum, csum[s] + room, side="right")) - 1, s + 1)
        starts.append(s)
        batch_tokens.append(header_tokens + int(csum[e] - csum[s]))
        s = e
    return starts, batch_tokens


def _rank_strings(rank: np.ndarray) -> list[str]:
    """``str(float(rank))`` of each rank (``format_rank``), each distinct value formatted once."""
    u, inv = np.unique(np.asarray(rank, dtype=np.float64).view(np.int64), return_inverse=True)
    strs = list(map(repr, u.view(np.float64).tolist()))  # bit patterns: -0.0 stays '-0.0'
    return [strs[i] for i in inv.tolist()]


def _weight_strings(wk: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(distinct weight strings, index of each row's string): ``format_weight`` of each value
    (int -> ``str``, float -> ``repr``), each distinct value formatted once."""
    if wk.dtype.kind in "iub":
        u, inv = np.unique(wk.astype(np.int64), return_inverse=True)
        return list(map(str, u.tolist())), inv.astype(np.int64)
    if wk.dtype.kind == "f":
        u, inv = np.unique(wk.astype(np.float64).view(np.int64), return_inverse=True)
        return list(map(repr, u.view(np.float64).tolist())), inv.astype(np.int64)
    strs = [format_weight(x) for x in wk.tolist()]
    uniq = list(dict.fromkeys(strs))
    pos = {w: i for i, w in enumerate(uniq)}
    return uniq, np.array([pos[w] for w in strs], dtype=np.int64)


def render_batches(
    batches: ContextBatches,
    community_ids: Sequence[Any] | np.ndarray | pd.Series,
    titles: Sequence[Any] | np.ndarray | pd.Series,
    contents: Sequence[Any] | np.ndarray | pd.Series,
    ranks: Sequence[Any] | np.ndarray | pd.Series,
    weights: Sequence[Any] | np.ndarray | pd.Series | None,
    *,
    include_rank: bool = True,
    weight_column: str = WEIGHT_COLUMN,
    content_column: str = CONTENT_COLUMN,
    delimiter: str = "|",
    prefix: str = "",
) -> list[str]:
    """The context text of each map call, as graphrag builds it (``_cut_batch``).

    Each batch's records go into a DataFrame, the weight and rank columns are cast to float
    and sorted descending (``sort_values(by=[weight, rank], ascending=False)``), and the
    text is ``to_csv(index=False, sep="|")`` (pandas quoting; ``lineterminator`` is
    ``os.linesep``). ``prefix="\\n\\n"`` reproduces the 0.x/1.x-era chunk prefix. Pass the
    same inputs that built ``batches``. Meant for validation and small inputs.
    """
    ids = _as_list(community_ids)
    title_l, content_l, rank_l = _as_list(titles), _as_list(contents), _as_list(ranks)
    with_weight = weights is not None
    w_l = _as_list(weights) if with_weight else []
    header = ["id", "title"] + ([weight_column] if with_weight else []) + [content_column]
    if include_rank:
        header.append(RANK_COLUMN)
    texts = []
    order = batches.order.tolist()
    batch_of = batches.batch_of
    for b in range(batches.n_batches):
        records = []
        for i in order:
            if batch_of[i] != b:
                continue
            rec = [format_id(ids[i]), _text(title_l[i])]
            if with_weight:
                rec.append(format_weight(w_l[i]))
            rec.append(_text(content_l[i]))
            if include_rank:
                rec.append(format_rank(rank_l[i]))
            records.append(rec)
        df = pd.DataFrame(records, columns=header)
        sort_by = []
        if with_weight:
            df[weight_column] = df[weight_column].astype(float)
            sort_by.append(weight_column)
        if include_rank:
            df[RANK_COLUMN] = df[RANK_COLUMN].astype(float)
            sort_by.append(RANK_COLUMN)
        if sort_by:
            df = df.sort_values(by=sort_by, ascending=False)
        texts.append(prefix + df.to_csv(index=False, sep=delimiter))
    return texts

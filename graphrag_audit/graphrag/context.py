"""Reproduce graphrag global search's map-phase context: which reports, how many map calls, how many tokens.

:func:`build_batches` reproduces ``build_community_context(..., single_batch=False)`` as global search calls
it on the reports ``read_indexer_reports`` selected (parquet row order). Sources (``microsoft/graphrag``):
``query/context_builder/community_context.py`` @4d59c43 (3.x), @4778166 (2.1.0), SofarDataAI/graphrag
@3945482 (0.x); ``structured_search/global_search/community_context.py`` @4c8ef97, @5aca582, @06171f3;
``query/indexer_adapters.py`` @12607bb, @dac0b86, BlokTrek/graphrag @5c87adc, @04c9472;
``query/input/loaders/dfs.py`` @22a4d29; ``query/llm/text_utils.py`` @13a5e5f (1.x ``num_tokens``).

1. Full ``content``, ``shuffle_data=True``, ``random_state=86``, ``min_community_rank=0``,
   ``max_context_tokens`` default 12 000 (1.x ``max_tokens``).
2. Weight: distinct text units of the community's entities over the max of all reports passed in
   (ZeroDivisionError when 0); no weight column without entities.
3. Kept iff ``rank >= min_community_rank`` (NaN dropped); then ``random.seed(86); random.shuffle``.
4. Header ``"-----Reports-----\n" + "id|title|occurrence weight|content|rank\n"`` once per batch; row
   ``"|".join([str(community), title, str(weight), content, str(float(rank))]) + "\n"``.
5. A row passing ``max_context_tokens`` (strictly) cuts a non-empty batch; an oversize report sits alone.
6. The last batch is dropped when its id set equals an earlier batch's (duplicate ids only).
7. Each batch is sent as ``to_csv(index=False, sep="|")`` sorted by weight then rank descending
   (:func:`render_batches`); 0.x/1.x prefix ``"\n\n"``.

A row is ``P + w + B`` (``P = f"{id}|{title}|"``, ``B = f"|{content}|{rank}\n"``): a weight that starts
and ends with a digit is flanked by ``|``, which no cl100k/o200k pre-token crosses, so ``tokens(row) =
tokens(P) + tokens(w) + tokens(B)`` and :class:`RowTokenCache` counts ``P`` and ``B`` once per report.
Otherwise (or with a counter that is not additive) whole rows are counted.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from graphrag_audit.graphrag.tokens import TokenCounter, get_token_counter
from graphrag_audit.model.keys import concat_ranges

DEFAULT_MAX_CONTEXT_TOKENS = 12_000
_DIGITS = frozenset("0123456789")


def _py(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def format_id(community: Any) -> str:
    """``str()`` of the report's ``community`` (``report.short_id or ""``)."""
    v = _py(community)
    return "" if v is None else str(v)


def format_weight(weight: Any) -> str:
    """``str()`` of the weight as graphrag holds it: Python int (raw) or float (normalised)."""
    v = _py(weight)
    if isinstance(v, (bool, int)):
        return str(int(v))
    return repr(float(v))


def _text(value: Any) -> str:
    v = _py(value)
    return v if type(v) is str else str(v)  # graphrag: to_str() -> str(value)


def context_header(with_weight: bool = True) -> str:
    """The batch header graphrag counts once per batch (``-----Reports-----`` line included)."""
    return "-----Reports-----\n" + (
        "id|title|occurrence weight|content|rank\n" if with_weight else "id|title|content|rank\n"
    )


def _cells(community: Any, title: Any, content: Any, rank: Any, weight: Any = None) -> list[str]:
    weight_cell = [] if weight is None else [format_weight(weight)]
    return [format_id(community), _text(title), *weight_cell, _text(content), repr(float(_py(rank)))]


def report_row(community: Any, title: Any, content: Any, rank: Any, weight: Any = None) -> str:
    """One report's row exactly as graphrag counts it (``weight=None``: no weight column)."""
    return "|".join(_cells(community, title, content, rank, weight)) + "\n"


def explode_text_units(entity_text_units: pd.Series) -> pd.DataFrame:
    """Long form ``(entity, text_unit)`` of a Series ``entity -> list of text unit ids``; duplicate
    entity keys keep the first row (graphrag: ``drop_duplicates(subset=["id"])``)."""
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
    entity_rows: np.ndarray | None = None,
) -> pd.Series:
    """Distinct text units per community (int64 Series by community; none: left out).

    ``membership``: (``entity``, ``community``, ``level``) rows as ``read_indexer_entities`` reads them (a
    NaN community is -1: ``fillna(-1)``), kept at ``level <= community_level`` or NaN level.
    ``entity_text_units``: ``entity -> text unit ids``, the first row of a repeated key;
    ``entity_rows``: each membership row's row there (-1: none), if known."""
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
        at = ((m["level"] <= community_level) | m["level"].isna()).to_numpy()
        m, pos = m[at], pos[at]
    comm = m["community"]
    if comm.isna().any():
        comm = comm.fillna(-1)
    if comm.dtype.kind == "f" and np.isfinite(comm.to_numpy()).all() and (comm % 1 == 0).all():
        comm = comm.astype(np.int64)  # NaN-padded int column: back to ints, like astype(int)
    com = comm.to_numpy()
    # (community, text unit) pairs on integer codes: each membership row's entity text units
    n = np.where(pos >= 0, lens[np.maximum(pos, 0)], 0)
    keep = n > 0
    if not keep.any():
        return empty
    codes, uniques = pd.factorize(com[keep])  # communities in order of first pair (merge order)
    pos, n = pos[keep], n[keep]
    starts = np.cumsum(lens) - lens
    tu_rows = concat_ranges(starts[pos], n)
    width = np.int64(tu.max()) + 1
    pairs = np.sort(np.repeat(codes.astype(np.int64), n) * width + tu[tu_rows])
    pairs = pairs[np.concatenate(([True], pairs[1:] != pairs[:-1]))]  # a sort: np.unique hashes, 5x slower
    sizes = np.bincount(pairs // width, minlength=len(uniques)).astype(np.int64)
    return pd.Series(sizes, index=pd.Index(uniques, name="community"), name="text_units")


def text_unit_codes(col: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(number of text units of each entity row, their integer codes flattened; nulls dropped)."""
    ex = col.reset_index(drop=True).explode()  # arrow lists stay in arrow
    ex = ex[ex.notna()]
    codes, _ = pd.factorize(ex)
    lens = np.bincount(ex.index.to_numpy(dtype=np.int64), minlength=len(col)).astype(np.int64)
    return lens, codes.astype(np.int64)


def shuffle_order(n: int, seed: int | None = 86) -> np.ndarray:
    """Positions ``0..n-1`` in the order ``random.seed(seed); random.shuffle(list)`` leaves a list of
    length ``n`` (``seed=None``: no shuffle)."""
    order = list(range(n))
    if seed is not None:
        random.Random(int(seed)).shuffle(order)
    return np.array(order, dtype=np.int64)


def _fixed_texts(ids: list, titles: np.ndarray, contents: np.ndarray, ranks: np.ndarray, with_weight: bool):
    """``[P, B]`` with a weight column, ``[whole row]`` without."""
    heads = [f"{format_id(i)}|{_text(t)}|" for i, t in zip(ids, titles.tolist())]
    tails = [f"{_text(c)}|{r}\n" for c, r in zip(contents.tolist(), _rank_strings(ranks))]
    if with_weight:
        return [heads, ["|" + b for b in tails]]
    return [[h + b for h, b in zip(heads, tails)]]


def _measure(counter: TokenCounter, parts: list[list[str]]) -> np.ndarray:
    """The sum of the measures of aligned text lists."""
    return np.asarray(np.sum([counter.measure_many(p) for p in parts], axis=0, dtype=np.int64))


class RowTokenCache:
    """Every report row's fixed measure (:func:`row_measures`), counted on first use and kept across levels."""

    def __init__(self, counter: TokenCounter, community_ids, titles, contents, ranks):
        if not counter.additive:
            raise ValueError(f"RowTokenCache needs an additive token counter, not {counter!r}")
        self.counter = counter
        self.columns = (community_ids, titles, contents, ranks)
        self._fixed: dict[bool, np.ndarray] = {}

    def fixed(self, rows: np.ndarray, with_weight: bool) -> np.ndarray:
        if with_weight not in self._fixed:
            self._fixed[with_weight] = row_measures(self.counter, *self.columns, with_weight=with_weight)
        return self._fixed[with_weight][rows]


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
    """The measure of each report row's fixed text; ``rows``: the positions to measure (others get -1)."""
    counter = get_token_counter(token_counter) if isinstance(token_counter, str) else token_counter
    ids = _objects(community_ids)
    rows = np.arange(len(ids), dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    texts = _fixed_texts(
        ids[rows].tolist(),
        _objects(titles)[rows],
        _objects(contents)[rows],
        np.asarray(ranks, dtype=np.float64)[rows],
        with_weight,
    )
    out = np.full(len(ids), -1, dtype=np.int64)
    out[rows] = _measure(counter, texts)
    return out


@dataclass(frozen=True, eq=False)
class ContextBatches:
    """What global search's context builder does with one list of reports (arrays in input order)."""

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


def _objects(values: Any) -> np.ndarray:
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values
    if isinstance(values, pd.Series):
        return values.to_numpy(dtype=object)
    out = np.empty(len(values), dtype=object)
    out[:] = list(values) if not isinstance(values, np.ndarray) else values
    return out


def build_batches(
    community_ids: Any,
    titles: Any,
    contents: Any,
    ranks: Any,
    weights: Any,
    token_counter: TokenCounter | str = "cl100k_base",
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS,
    min_community_rank: float = 0,
    shuffle_seed: int | None = 86,
    *,
    fixed: np.ndarray | None = None,
) -> ContextBatches:
    """Pack the reports (aligned inputs in graphrag's order) into map batches as global search does.

    ``weights`` None: no weight column; ``shuffle_seed=None``: ``shuffle_data=False``; ``fixed``: each
    row's :func:`row_measures` for this weight column, when known."""
    counter = get_token_counter(token_counter) if isinstance(token_counter, str) else token_counter
    ids, title_a, content_a = _objects(community_ids), _objects(titles), _objects(contents)
    rank_f = np.asarray(ranks.to_numpy() if isinstance(ranks, pd.Series) else ranks, dtype=np.float64)
    n = len(ids)
    with_weight = weights is not None
    if with_weight:
        w_arr = np.asarray(weights.to_numpy() if isinstance(weights, pd.Series) else weights)

    kept = np.flatnonzero(rank_f >= min_community_rank)  # NaN -> False
    order = kept[shuffle_order(len(kept), shuffle_seed)]
    m = len(order)
    header_tokens = int(counter.count(context_header(with_weight)))

    # token count of every kept row, in packing order
    id_l = ids[order].tolist()
    cols = (id_l, title_a[order], content_a[order], rank_f[order])
    if with_weight:
        w_u, w_inv = _weight_strings(w_arr[order])  # each distinct weight string once
    digit_bounded = not with_weight or all(w[:1] in _DIGITS and w[-1:] in _DIGITS for w in w_u)
    if counter.additive and digit_bounded:
        meas = _measure(counter, _fixed_texts(*cols, with_weight)) if fixed is None else fixed[order]
        if with_weight:
            meas = meas + counter.measure_many(w_u)[w_inv]
        toks = np.asarray(counter.tokens_from_measure(meas), dtype=np.int64)
    else:
        heads, tails = _fixed_texts(*cols, True)
        ws = [w_u[i] for i in w_inv.tolist()] if with_weight else [None] * m
        rows = [h + b[1:] if w is None else h + w + b for h, w, b in zip(heads, ws, tails)]
        toks = np.asarray(counter.count_many(rows), dtype=np.int64)

    # graphrag's greedy packing; a limit above every token sum batches alike, so it is capped where
    # numpy's int64 cannot overflow (graphrag compares Python ints)
    limit = int(max_context_tokens)
    cap = min(limit, 2**62)
    csum = np.concatenate(([0], np.cumsum(toks, dtype=np.int64)))
    starts, batch_tokens = greedy_batches(csum, cap - header_tokens, header_tokens)
    lost = 0
    if len(starts) > 1 and len(set(id_l)) < m:
        # graphrag does not emit the last batch when its set of ids equals an earlier batch's
        id_s = [format_id(x) for x in id_l]
        last_ids = set(id_s[starts[-1] :])
        if any(set(id_s[starts[b] : starts[b + 1]]) == last_ids for b in range(len(starts) - 1)):
            lost = m - starts.pop()
            batch_tokens.pop()

    batch_of = np.full(n, -1, dtype=np.int64)
    row_tokens = np.full(n, -1, dtype=np.int64)
    if m:
        row_tokens[order] = toks
        bounds = np.array([*starts, m - lost], dtype=np.int64)
        sizes = bounds[1:] - bounds[:-1]  # np.diff, which numpy's stubs type as timedelta64 here
        in_ctx = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
        batch_of[order[: len(in_ctx)]] = in_ctx
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
        oversize_reports=int(np.count_nonzero(header_tokens + toks > cap)),
        lost_in_last_batch=lost,
        max_context_tokens=limit,
        token_counter=str(getattr(counter, "name", type(counter).__name__)),
        counter_exact=bool(counter.exact),
        has_weight_column=with_weight,
    )


def greedy_batches(csum: np.ndarray, room: int, header_tokens: int) -> tuple[list[int], list[int]]:
    """(first row, tokens) of each batch of graphrag's greedy packing of rows with token prefix sums
    ``csum`` (``csum[0] = 0``): a batch takes its first row, then rows while they fit in ``room``."""
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
    """``str(float(rank))`` of each rank, each distinct value formatted once."""
    u, inv = np.unique(np.asarray(rank, dtype=np.float64).view(np.int64), return_inverse=True)
    strs = list(map(repr, u.view(np.float64).tolist()))  # bit patterns: -0.0 stays '-0.0'
    return [strs[i] for i in inv.tolist()]


def _weight_strings(weights: np.ndarray) -> tuple[list[str], np.ndarray]:
    """(distinct weight strings, each row's index there); weights are >= 0: no -0.0 to keep apart."""
    u, inv = np.unique(weights, return_inverse=True)
    return [format_weight(w) for w in u.tolist()], inv.astype(np.int64)


def render_batches(
    batches: ContextBatches,
    community_ids: Any,
    titles: Any,
    contents: Any,
    ranks: Any,
    weights: Any,
    *,
    prefix: str = "",
) -> list[str]:
    """Each map call's context text as graphrag's ``_cut_batch`` builds it from the inputs of ``batches``:
    weight and rank as floats sorted descending, ``to_csv(index=False, sep="|")``, after ``prefix``."""
    with_weight = weights is not None
    header = ["id", "title", "occurrence weight", "content", "rank"]
    if not with_weight:
        header.remove("occurrence weight")
    ids, title_l, content_l, rank_l = map(_objects, (community_ids, titles, contents, ranks))
    w_l = _objects(weights) if with_weight else [None] * len(ids)
    texts = []
    for b in range(batches.n_batches):
        members = [i for i in batches.order.tolist() if batches.batch_of[i] == b]
        cells = [_cells(ids[i], title_l[i], content_l[i], rank_l[i], w_l[i]) for i in members]
        df = pd.DataFrame(cells, columns=header)
        sort_by = ["occurrence weight", "rank"] if with_weight else ["rank"]
        df[sort_by] = df[sort_by].astype(float)
        texts.append(prefix + df.sort_values(by=sort_by, ascending=False).to_csv(index=False, sep="|"))
    return texts

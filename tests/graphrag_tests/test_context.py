"""Tests for graphrag_audit.graphrag.tokens and graphrag_audit.graphrag.context.

Expectations are derived independently of the code under test: hand-worked examples with
tiny budgets and a character-counting fake tokenizer, literal strings, Python's own
``random.seed(86); random.shuffle``, a plain tiktoken-algorithm reference tokenizer, and a
brute-force re-implementation of graphrag's loop written from docs/graphrag-semantics.md#context
inside this file.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphrag_audit.graphrag.context import (
    RowTokenCache,
    build_batches,
    context_header,
    render_batches,
    report_row,
    shuffle_order,
    text_unit_counts,
)
from graphrag_audit.graphrag.tokens import TOKEN_COUNTER_NAMES, TokenCounter, get_token_counter

INDEXES = Path(__file__).resolve().parents[3] / "shared" / "indexes"
HYP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------
# fake counters
# ---------------------------------------------------------------------------------------
class CharCounter(TokenCounter):
    """1 token per character: easy to work by hand, and additive."""

    name = "chars"
    exact = True
    additive = True

    def count(self, text: str) -> int:
        return len(text)


class WordCounter(TokenCounter):
    """Whitespace-separated words: NOT additive across '|' junctions (exact path)."""

    name = "words"
    exact = False

    def count(self, text: str) -> int:
        return len(text.split())


class SpyCounter(CharCounter):
    """Records every string it measures."""

    def __init__(self):
        self.seen: list[str] = []

    def measure_many(self, texts):
        texts = list(texts)
        self.seen.extend(texts)
        return super().measure_many(texts)


# ---------------------------------------------------------------------------------------
# tokens
# ---------------------------------------------------------------------------------------
def test_known_counts():
    assert get_token_counter("cl100k_base").count("hello world") == 2
    assert get_token_counter().name == "cl100k_base"
    assert get_token_counter("o200k_base").count("hello world") == 2
    assert get_token_counter("estimate").count("hello world") == 3  # ceil(11 / 4)
    assert get_token_counter("estimate").count("数据") == 2  # 6 UTF-8 bytes -> ceil(6/4)
    assert get_token_counter("cl100k_base").count("") == 0


def test_unknown_counter_name_lists_valid_ones():
    with pytest.raises(ValueError) as exc:
        get_token_counter("gpt2")
    for name in TOKEN_COUNTER_NAMES:
        assert name in str(exc.value)


def test_counter_attributes_and_count_many():
    texts = ["hello world", "", "数据图谱 graph", "a|b|0.5|c\n"]
    for name in TOKEN_COUNTER_NAMES:
        c = get_token_counter(name)
        assert c.name == name
        assert c.exact == (name != "estimate")
        got = c.count_many(texts)
        assert got.dtype == np.int64
        assert got.tolist() == [c.count(t) for t in texts]


def test_special_tokens_and_surrogates_are_plain_text():
    c = get_token_counter("cl100k_base")
    assert c.count("<|endoftext|>") == 7  # not the single special token
    assert c.count("a\ud800b") >= 2  # lone surrogate: replaced, no exception
    assert c.count_many(["a\ud800b", "ok"]).tolist() == [c.count("a\ud800b"), 1]


def _reference_bpe(encoding: str):
    """tiktoken's algorithm, plainly: regex pre-tokenise, then merge lowest-rank pairs."""
    import regex  # the test extra installs it
    from bpe_openai import registry

    meta = getattr(registry, encoding)()
    ranks, pat = meta["mergeable_ranks"], regex.compile(meta["pat_str"])

    def piece_tokens(piece: bytes) -> int:
        parts = [bytes([b]) for b in piece]
        while len(parts) > 1:
            scored = [
                (ranks[parts[i] + parts[i + 1]], i)
                for i in range(len(parts) - 1)
                if parts[i] + parts[i + 1] in ranks
            ]
            if not scored:
                break
            _, i = min(scored)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return len(parts)

    return lambda text: sum(piece_tokens(p.encode("utf-8")) for p in pat.findall(text))


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_bpe_counts_equal_reference_algorithm(encoding):
    ref = _reference_bpe(encoding)
    c = get_token_counter(encoding)
    samples = [
        "hello world",
        "The quick brown fox's 12345678 jumps;   over\n\n\tthe lazy dog's back!!",
        "5|Verdant Oasis Plaza|0.42857142857142855|# Title\n\nBody [Data: Entities (1, 2)]|7.5\n",
        "图谱检索增强生成（GraphRAG）是一种方法。Привет, мир! 1e-05 ",
        "   trailing spaces   \r\n  ",
    ]
    for s in samples:
        assert c.count(s) == ref(s), s


# ---------------------------------------------------------------------------------------
# row format, header, shuffle
# ---------------------------------------------------------------------------------------
def test_row_format_of_a_known_report():
    row = report_row(5, "Verdant Oasis", "# Verdant Oasis\n\nBody", 7.5, 3 / 7)
    assert row == "5|Verdant Oasis|0.42857142857142855|# Verdant Oasis\n\nBody|7.5\n"
    # raw (not normalised) weight is an int; rank is always str(float)
    assert report_row(12, "T", "c", 7, 3) == "12|T|3|c|7.0\n"
    assert report_row(np.int32(12), "T", "c", np.float64(8.0), 1.0) == "12|T|1.0|c|8.0\n"
    assert report_row(1, "T", "c", 2.5, 1 / 100000) == "1|T|1e-05|c|2.5\n"
    # no weight column when graphrag had no entities
    assert report_row(3, "T", "c", 2.5) == "3|T|c|2.5\n"


def test_header():
    assert context_header() == "-----Reports-----\nid|title|occurrence weight|content|rank\n"
    assert context_header(with_weight=False) == "-----Reports-----\nid|title|content|rank\n"


def test_seed_86_order_of_a_known_list():
    # literal: random.seed(86); x = list(range(10)); random.shuffle(x)
    assert shuffle_order(10).tolist() == [4, 1, 3, 2, 6, 9, 7, 5, 8, 0]
    state = random.getstate()
    try:
        for n in (0, 1, 2, 7, 57, 300):
            x = list(range(n))
            random.seed(86)
            random.shuffle(x)
            assert shuffle_order(n).tolist() == x
    finally:
        random.setstate(state)
    assert shuffle_order(5, None).tolist() == [0, 1, 2, 3, 4]


def test_build_batches_packs_in_seed_86_order():
    ids = list(range(10))
    b = build_batches(ids, ["T"] * 10, ["c"] * 10, [1.0] * 10, None, CharCounter())
    assert b.order.tolist() == [4, 1, 3, 2, 6, 9, 7, 5, 8, 0]


# ---------------------------------------------------------------------------------------
# hand-worked packing (1 token = 1 character)
# ---------------------------------------------------------------------------------------
# header "-----Reports-----\n" (18) + "id|title|content|rank\n" (22) = 40 tokens.
# row "{id}|T|{content}|1.0\n" = 9 + len(content) tokens for a one-digit id.
def test_hand_worked_packing():
    contents = ["x" * 11, "x", "x" * 5, "x" * 41, ""]  # rows: 20, 10, 14, 50, 9
    b = build_batches(
        [1, 2, 3, 4, 5],
        ["T"] * 5,
        contents,
        [1.0] * 5,
        None,
        CharCounter(),
        max_context_tokens=70,
        shuffle_seed=None,
    )
    assert b.header_tokens == 40
    assert b.row_tokens.tolist() == [20, 10, 14, 50, 9]
    # 40+20=60, +10=70 (equal is allowed) | 40+14=54 | 40+50=90 alone (oversize) | 40+9=49
    assert b.batch_tokens == [70, 54, 90, 49]
    assert b.n_batches == 4 and b.total_tokens == 263
    assert b.batch_of.tolist() == [0, 0, 1, 2, 3]
    assert b.oversize_reports == 1 and b.reports_in_context == 5 and b.dropped_by_rank == 0


def test_oversize_first_report_makes_no_empty_batch():
    b = build_batches(
        [1, 2],
        ["T", "T"],
        ["x" * 100, "x"],
        [1.0, 1.0],
        None,
        CharCounter(),
        max_context_tokens=60,
        shuffle_seed=None,
    )
    assert b.batch_tokens == [40 + 109, 40 + 10]
    assert b.batch_of.tolist() == [0, 1]


def test_header_alone_over_budget_every_report_alone():
    b = build_batches(
        [1, 2, 3],
        ["T"] * 3,
        ["a", "b", "c"],
        [1.0] * 3,
        None,
        CharCounter(),
        max_context_tokens=10,
        shuffle_seed=None,
    )
    assert b.batch_tokens == [50, 50, 50] and b.oversize_reports == 3


def test_rank_none_nan_and_below_min_are_dropped():
    ranks = [None, float("nan"), -0.5, 0.0, 2.0]
    b = build_batches([1, 2, 3, 4, 5], ["T"] * 5, ["c"] * 5, ranks, None, CharCounter(), shuffle_seed=None)
    assert b.dropped_by_rank == 3 and b.reports_in_context == 2
    assert b.batch_of.tolist() == [-1, -1, -1, 0, 0]
    assert b.row_tokens.tolist() == [-1, -1, -1, 10, 10]
    b2 = build_batches(
        [1, 2, 3, 4, 5], ["T"] * 5, ["c"] * 5, ranks, None, CharCounter(), min_community_rank=2
    )
    assert b2.dropped_by_rank == 4 and b2.batch_of.tolist() == [-1, -1, -1, -1, 0]
    empty = build_batches([1], ["T"], ["c"], [None], None, CharCounter())
    assert empty.n_batches == 0 and empty.total_tokens == 0 and empty.batch_tokens == []


def test_weight_column_changes_header_and_rows():
    # header with weight: 18 + len("id|title|occurrence weight|content|rank\n") = 18 + 40
    b = build_batches([1], ["T"], ["c"], [1.0], np.array([1.0]), CharCounter())
    assert b.header_tokens == 58
    assert b.row_tokens.tolist() == [len("1|T|1.0|c|1.0\n")]
    assert b.has_weight_column


def test_last_batch_with_repeated_id_set_is_lost():
    # graphrag emits the last batch only if its id set differs from every earlier batch's
    b = build_batches(
        [7, 7],
        ["T", "T"],
        ["x" * 50, "y" * 50],
        [1.0, 1.0],
        None,
        CharCounter(),
        max_context_tokens=60,
        shuffle_seed=None,
    )
    assert b.n_batches == 1 and b.lost_in_last_batch == 1 and b.reports_in_context == 1
    assert b.batch_of.tolist() == [0, -1]
    ok = build_batches(
        [7, 8],
        ["T", "T"],
        ["x" * 50, "y" * 50],
        [1.0, 1.0],
        None,
        CharCounter(),
        max_context_tokens=60,
        shuffle_seed=None,
    )
    assert ok.n_batches == 2 and ok.lost_in_last_batch == 0


def test_render_batches_is_graphrags_csv():
    ids, titles = [1, 2, 3], ["A", "B", "C"]
    contents, ranks = ["x\ny", "plain", "p|q"], [2.0, 9.0, 5.0]
    weights = np.array([0.5, 0.5, 1.0])
    b = build_batches(ids, titles, contents, ranks, weights, CharCounter(), shuffle_seed=None)
    [text] = render_batches(b, ids, titles, contents, ranks, weights)
    assert text == (
        "id|title|occurrence weight|content|rank\n"
        '3|C|1.0|"p|q"|5.0\n'  # weight 1.0 first; '|' inside a field is quoted
        "2|B|0.5|plain|9.0\n"  # equal weight: higher rank first
        '1|A|0.5|"x\ny"|2.0\n'  # newline inside a field is quoted
    )
    assert render_batches(b, ids, titles, contents, ranks, weights, prefix="\n\n")[0].startswith("\n\nid|")


def test_cache_counts_fixed_parts_once_across_levels():
    spy = SpyCounter()
    ids, titles, contents = np.array([1, 2, 3]), ["A", "B", "C"], ["aa", "bb", "cc"]
    ranks = np.array([1.0, 2.0, 3.0])
    cache = RowTokenCache(spy, ids, titles, contents, ranks)
    every, two = np.array([0, 1, 2]), np.array([0, 1])
    w = np.array([1.0, 0.5, 0.25])
    build_batches(ids, titles, contents, ranks, w, spy, fixed=cache.fixed(every, True))
    first = len(spy.seen)
    w2 = np.array([1.0, 0.75])
    b = build_batches(ids[two], titles[:2], contents[:2], ranks[two], w2, spy, fixed=cache.fixed(two, True))
    assert spy.seen[first:] == ["0.75", "1.0"]  # only the weight strings: contents not re-measured
    assert b.row_tokens.tolist() == [len("1|A|1.0|aa|1.0\n"), len("2|B|0.75|bb|2.0\n")]
    assert (
        b.row_tokens.tolist()
        == build_batches(ids[two], titles[:2], contents[:2], ranks[two], w2, spy).row_tokens.tolist()
    )
    with pytest.raises(ValueError):
        RowTokenCache(WordCounter(), ids, titles, contents, ranks)


# ---------------------------------------------------------------------------------------
# brute force from docs/graphrag-semantics.md#context, compared on random inputs
# ---------------------------------------------------------------------------------------
def brute_force(ids, titles, contents, ranks, weights, count, max_tokens, min_rank=0, seed=86):
    """graphrag's global-search context loop, written plainly from docs/graphrag-semantics.md#context."""
    reports = []
    for i in range(len(ids)):
        r = ranks[i]
        if r is None or not (r >= min_rank):
            continue
        reports.append(i)
    if seed is not None:
        state = random.getstate()
        random.seed(seed)
        random.shuffle(reports)
        random.setstate(state)
    cols = ["id", "title"] + (["occurrence weight"] if weights is not None else []) + ["content", "rank"]
    header = "-----Reports-----\n" + "|".join(cols) + "\n"
    batches, batch_ids = [], []
    tokens, members = count(header), []
    row_tokens = {}
    for i in reports:
        parts = [str(ids[i]), str(titles[i])]
        if weights is not None:
            parts.append(str(weights[i]))
        parts += [str(contents[i]), str(float(ranks[i]))]
        t = count("|".join(parts) + "\n")
        row_tokens[i] = t
        if tokens + t > max_tokens:
            if members:
                batches.append((tokens, members))
                batch_ids.append({str(ids[j]) for j in members})
            tokens, members = count(header), []
        tokens += t
        members = members + [i]
    if members and {str(ids[j]) for j in members} not in batch_ids:
        batches.append((tokens, members))
    return batches, row_tokens


_text = st.lists(
    st.sampled_from(list("ab Z9|.-_#\n\t\r'\"数据é") + [" 1", "0.", "|\n", "  ", "'s", "1e-05"]),
    max_size=25,
).map("".join)


@st.composite
def report_lists(draw):
    n = draw(st.integers(0, 12))
    ids = draw(st.lists(st.integers(-1, 6), min_size=n, max_size=n))
    titles = draw(st.lists(_text, min_size=n, max_size=n))
    contents = draw(st.lists(_text, min_size=n, max_size=n))
    ranks = draw(
        st.lists(
            st.one_of(st.none(), st.just(float("nan")), st.floats(-2, 10).map(lambda x: round(x, 1))),
            min_size=n,
            max_size=n,
        )
    )
    weights = None
    if draw(st.booleans()) and n:
        raw = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
        top = max(raw) or 1
        weights = [w / top for w in raw] if draw(st.booleans()) else raw
    return ids, titles, contents, ranks, weights


@HYP
@given(
    report_lists(),
    st.integers(30, 200),
    st.sampled_from(["chars", "words", "estimate", "cl100k_base"]),
    st.sampled_from([86, None, 3]),
)
def test_matches_brute_force(reports, max_tokens, counter_name, seed):
    ids, titles, contents, ranks, weights = reports
    counter = {"chars": CharCounter(), "words": WordCounter()}.get(counter_name) or get_token_counter(
        counter_name
    )
    expected, row_tokens = brute_force(
        ids, titles, contents, ranks, weights, counter.count, max_tokens, seed=seed
    )
    w = None if weights is None else np.array(weights)
    b = build_batches(
        ids, titles, contents, ranks, w, counter, max_context_tokens=max_tokens, shuffle_seed=seed
    )
    assert b.batch_tokens == [t for t, _ in expected]
    assert b.n_batches == len(expected)
    assert b.reports_in_context == sum(len(m) for _, m in expected)
    for k, (_, members) in enumerate(expected):
        assert [i for i in b.order.tolist() if b.batch_of[i] == k] == members
    for i, t in row_tokens.items():
        assert b.row_tokens[i] == t


_edge_weights = st.sampled_from([1.0, 0.5, 3 / 7, 1e-05, 2.5e-07, 0.1 + 0.2, 123456789 / 987654321])


@HYP
@given(
    st.lists(
        st.tuples(_text, _text, _edge_weights, st.floats(0, 10).map(lambda x: round(x, 2))),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["cl100k_base", "o200k_base", "estimate"]),
)
def test_split_count_equals_whole_row_count(rows, counter_name):
    """tokens(P + w + B) == tokens(P) + tokens(w) + tokens(B) on adversarial text."""
    c = get_token_counter(counter_name)
    n = len(rows)
    titles = [r[0] for r in rows]
    contents = [r[1] for r in rows]
    weights = np.array([r[2] for r in rows])
    ranks = [r[3] for r in rows]
    ids = list(range(n))
    fast = build_batches(ids, titles, contents, ranks, weights, c, max_context_tokens=200)
    whole = [c.count(report_row(i, titles[i], contents[i], ranks[i], weights[i])) for i in range(n)]
    assert fast.row_tokens.tolist() == whole


@pytest.mark.parametrize("counter_name", ["cl100k_base", "estimate"])
def test_non_digit_weights_fall_back_to_whole_rows(counter_name):
    c = get_token_counter(counter_name)
    titles, contents, ranks = ["Alpha", "B"], ["nan is a word", "x"], [1.0, 2.0]
    weights = np.array([float("nan"), float("inf")])  # never from graphrag; '|nan' merges
    b = build_batches([1, 2], titles, contents, ranks, weights, c)
    assert b.row_tokens.tolist() == [
        c.count(report_row(1, "Alpha", "nan is a word", 1.0, float("nan"))),
        c.count(report_row(2, "B", "x", 2.0, float("inf"))),
    ]


# ---------------------------------------------------------------------------------------
# occurrence weights
# ---------------------------------------------------------------------------------------
# e1 in c0 (level 0) and c1 (level 1); e2 in c0 and c2 (level 1); e3 in c3 (level 0 leaf)
MEMBERS = pd.DataFrame(
    {"entity": ["e1", "e1", "e2", "e2", "e3"], "community": [0, 1, 0, 2, 3], "level": [0, 1, 0, 1, 0]}
)
TEXT_UNITS = pd.Series({"e1": ["t1", "t2"], "e2": ["t2", "t3"], "e3": np.array(["t4"])})


def _raw(selected, members, text_units, level=None):
    """The raw occurrence weight of each selected community (0: none)."""
    counts = text_unit_counts(members, text_units, level)
    return counts.reindex(selected).fillna(0).astype(np.int64).tolist()


def test_text_unit_counts_hand_worked():
    # level 1: c0 {t1,t2,t3}, c1 {t1,t2}, c2 {t2,t3}, c3 {t4}; level 0: the level-0 rows only
    assert text_unit_counts(MEMBERS, TEXT_UNITS, 1).to_dict() == {0: 3, 1: 2, 2: 2, 3: 1}
    assert text_unit_counts(MEMBERS, TEXT_UNITS, 0).to_dict() == {0: 3, 3: 1}
    assert text_unit_counts(MEMBERS, TEXT_UNITS).to_dict() == {0: 3, 1: 2, 2: 2, 3: 1}
    assert report_row(3, "T", "c", 1.0, 1 / 3) == "3|T|0.3333333333333333|c|1.0\n"
    assert report_row(0, "T", "c", 1.0, np.int64(3)) == "0|T|3|c|1.0\n"
    assert _raw([9, 1, 1], MEMBERS, TEXT_UNITS, 1) == [0, 2, 2]
    assert text_unit_counts(MEMBERS, pd.Series(dtype=object)).empty
    # a NaN community means "no community" and counts for the report of community -1
    m = pd.concat([MEMBERS, pd.DataFrame({"entity": ["e4"], "community": [np.nan], "level": [np.nan]})])
    tu = pd.concat([TEXT_UNITS, pd.Series({"e4": ["t9", "t9", "t8"]})])
    assert _raw([-1, 3], m, tu, 0) == [2, 1]


def brute_force_weights(selected, members, text_units, level, normalize=True):
    """graphrag's _compute_community_weights over read_indexer_entities' community_ids."""
    community_ids: dict = {}
    for e, c, lv in members.itertuples(index=False):
        if level is None or lv <= level or pd.isna(lv):
            community_ids.setdefault(e, set()).add(str(int(-1 if pd.isna(c) else c)))
    units: dict = {}
    for e, comms in community_ids.items():
        for c in comms:
            units.setdefault(c, []).extend(list(text_units.get(e, [])))
    raw = [len(set(units.get(str(c), []))) for c in selected]
    if not normalize:
        return raw
    return [r / max(raw) for r in raw]


@st.composite
def memberships(draw):
    n_ent = draw(st.integers(1, 8))
    rows = draw(
        st.lists(
            st.tuples(st.integers(0, n_ent - 1), st.integers(0, 6), st.integers(0, 3)),
            min_size=1,
            max_size=20,
        )
    )
    members = pd.DataFrame(
        {
            "entity": [f"e{e}" for e, _, _ in rows],
            "community": [c for _, c, _ in rows],
            "level": [lv for _, _, lv in rows],
        }
    )
    tus = {
        f"e{e}": draw(st.lists(st.sampled_from(["t1", "t2", "t3", "t4", "t5"]), max_size=4))
        for e in range(n_ent)
    }
    selected = draw(st.lists(st.integers(0, 6), min_size=1, max_size=6))
    level = draw(st.one_of(st.none(), st.integers(0, 3)))
    return selected, members, pd.Series(tus), level


@HYP
@given(memberships())
def test_text_unit_counts_match_brute_force(case):
    selected, members, tus, level = case
    assert _raw(selected, members, tus, level) == brute_force_weights(
        selected, members, tus, level, normalize=False
    )


# ---------------------------------------------------------------------------------------
# a real index (graphrag 3.1.2's own test data), end to end against the brute force
# ---------------------------------------------------------------------------------------
def test_real_index_level_2_matches_brute_force():
    d = INDEXES / "verbs-v3"
    if not (d / "community_reports.parquet").exists():
        pytest.skip("shared index verbs-v3 not available")
    reports = pd.read_parquet(d / "community_reports.parquet")
    communities = pd.read_parquet(d / "communities.parquet")
    entities = pd.read_parquet(d / "entities.parquet")
    level = 2
    # graphrag >= 2.0 selection (docs/graphrag-semantics.md#selection-v2): every report with level <= N whose
    # community has a communities row with level <= N, in report row order
    members = communities[["entity_ids", "community", "level"]].explode("entity_ids")
    members = members.rename(columns={"entity_ids": "entity"}).dropna(subset=["entity"])
    kept = set(communities.loc[communities.level <= level, "community"])
    sel = reports[(reports.level <= level) & reports.community.isin(kept)]
    assert len(sel) == 120  # docs/graphrag-semantics.md#numbers
    tus = pd.Series(entities.text_unit_ids.to_numpy(), index=entities.id.to_numpy())
    ids = sel.community.tolist()
    raw = np.array(_raw(ids, members, tus, level))
    weights = raw / raw.max()
    assert weights.tolist() == brute_force_weights(ids, members, tus.map(list), level)
    c = get_token_counter("cl100k_base")
    b = build_batches(ids, sel.title, sel.full_content, sel["rank"], weights, c)
    expected, _ = brute_force(
        ids,
        sel.title.tolist(),
        sel.full_content.tolist(),
        sel["rank"].tolist(),
        weights.tolist(),
        c.count,
        12_000,
    )
    assert b.batch_tokens == [t for t, _ in expected]
    assert b.n_batches == len(expected) and b.reports_in_context == 120
    assert all(t <= 12_000 for t in b.batch_tokens)
    texts = render_batches(b, ids, sel.title, sel.full_content, sel["rank"], weights)
    assert len(texts) == b.n_batches and all(
        t.startswith("id|title|occurrence weight|content|rank\n") for t in texts
    )
    assert math.isclose(sum(c.count_many(texts)), b.total_tokens, rel_tol=0.05)

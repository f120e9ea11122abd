"""Synthetic GraphRAG indexes: an in-memory spec, a Leiden-like generator, writers for every
on-disk generation, and small "damage" helpers that introduce one defect each.

Shared by tests, ``fixtures/generate.py`` and benchmarks.  Everything is deterministic for a
given seed and vectorised with numpy / pyarrow (no per-entity Python objects), so
``leiden_like(1_000_000)`` builds in seconds and ``write_index(..., "3.x")`` writes in
well under a couple of minutes.

The spec (:class:`IndexSpec`)
----------------------------
* ``entities``      DataFrame ``id`` (UUID string), ``human_readable_id``, ``title``, ``type``,
                    ``description``, ``degree``; row ``i`` is entity index ``i``.
* ``tu_offsets`` / ``tu_index``  CSR arrays: entity ``i`` is in text units
                    ``tu_index[tu_offsets[i]:tu_offsets[i+1]]`` (row numbers of ``text_units``).
* ``text_units``    DataFrame ``id`` (128-hex), ``document_id`` (128-hex), ``text``, ``n_tokens``.
* ``communities``   DataFrame ``key`` (internal unique id, never written), ``community``
                    (number), ``level``, ``parent`` (number, -1 for roots), ``period``; optional
                    ``children`` column (list<int64> ArrowDtype) overriding the children derived
                    from ``parent`` (only damage helpers set it).  Row order = written row order.
* ``membership``    DataFrame ``key``, ``entity``: one row per (community, entity) pair.  A
                    community's entity set is every entity whose row carries its key.
* ``reports``       DataFrame ``community``, ``level``, ``title``, ``summary``, ``full_content``,
                    ``rank``, ``rank_explanation``, ``findings`` (list<struct<explanation,
                    summary>> ArrowDtype).  A community may have no report; a report may name a
                    community that does not exist.  Row order = written row order.

Layouts (``write_index``): ``"0.1-0.4"``, ``"0.5-0.9"``, ``"1.0-1.2"``, ``"2.x"``, ``"3.x"``,
``"3.x-csv"``; column names, order and arrow types copied from real indexes of each
generation (see ``../shared/indexes`` beside the repository).

Conventions taken from the real indexes
---------------------------------------
* ``create_final_nodes`` 0.5-1.2: every entity has a level-0 row (community -1 when it is in no
  community); at a level L >= 1 an entity has a row only when it is in a community at L.  An
  entity whose community is a leaf at L has **no** rows at L+1 (verbs-v1: 301 / 230 / 21 rows at
  levels 0 / 1 / 2; no -1 below level 0).  Row order: level by level in 0.5-0.9, entity by entity
  (each entity's rows together, in level order, entities in their table's order) in 1.0-1.2, as
  graphrag 1.x's left merge of the entities with the communities writes them.
* ``create_final_nodes`` 0.1-0.4: one row per entity per level 0..max (a full grid); ``community``
  is a string, null when the entity is in no community at that level.
* graphrag 3 CSV output (``CSVTableProvider.write_dataframe`` = ``df.to_csv(index=False)``):
  list columns built as Python lists are written as ``str(list)`` (``"['a', 'b']"``), ``children``
  comes from ``groupby(...).agg(unique)`` so it is a numpy array written as ``str(ndarray)``
  (``"[23 24 25]"``, ``"[]"`` when empty), ``findings`` is a list of dicts
  (``"[{'explanation': ..., 'summary': ...}]"``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

__all__ = [
    "LAYOUTS",
    "DEFAULT_PERIOD",
    "IndexSpec",
    "seed_example",
    "balanced_tree",
    "leiden_like",
    "SHAPES",
    "leiden_shape",
    "write_index",
    "build_tables",
    "make_reports",
    # damage helpers
    "drop_level0",
    "level_gap",
    "parent_cycle",
    "multi_parent",
    "level_not_parent_plus_one",
    "child_not_subset",
    "children_mismatch",
    "two_forests",
    "duplicate_numbers",
    "drop_report",
    "orphan_report",
    "report_level_mismatch",
    "minus_one_report",
    "unclustered_entities",
    "non_depth_ordered",
    "DAMAGES",
]

LAYOUTS = ("0.1-0.4", "0.5-0.9", "1.0-1.2", "2.x", "3.x", "3.x-csv")
DEFAULT_PERIOD = "2025-01-15"

_FINDING_TYPE = pa.struct([("explanation", pa.string()), ("summary", pa.string())])
_FINDINGS_TYPE = pa.list_(_FINDING_TYPE)
_LIST_STR = pa.list_(pa.string())
_LIST_I64 = pa.list_(pa.int64())


# ----------------------------------------------------------------------------------------
# the spec
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass
class IndexSpec:
    """In-memory description of one GraphRAG index (see module docstring)."""

    entities: pd.DataFrame
    tu_offsets: np.ndarray
    tu_index: np.ndarray
    text_units: pd.DataFrame
    communities: pd.DataFrame
    membership: pd.DataFrame
    reports: pd.DataFrame
    seed: int = 0
    max_cluster_size: int = 10
    period: str = DEFAULT_PERIOD
    extra_report_columns: int = (
        0  # string columns x_note_1.. appended to the reports table (no tool reads them)
    )

    # -- convenience -------------------------------------------------------------------
    def copy(self) -> IndexSpec:
        return dataclasses.replace(
            self,
            entities=self.entities.copy(),
            tu_offsets=self.tu_offsets.copy(),
            tu_index=self.tu_index.copy(),
            text_units=self.text_units.copy(),
            communities=self.communities.copy(),
            membership=self.membership.copy(),
            reports=self.reports.copy(),
        )

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    def entity_sets(self) -> dict[int, set[str]]:
        """community *key* -> set of entity titles (small specs / tests only)."""
        titles = self.entities["title"].to_numpy()
        out: dict[int, set[str]] = {int(k): set() for k in self.communities["key"]}
        for k, e in zip(self.membership["key"].to_numpy(), self.membership["entity"].to_numpy()):
            out.setdefault(int(k), set()).add(str(titles[e]))
        return out

    def members_by_number(self) -> dict[int, set[str]]:
        """community number -> set of entity titles (duplicated numbers are merged)."""
        sets = self.entity_sets()
        out: dict[int, set[str]] = {}
        for k, n in zip(self.communities["key"], self.communities["community"]):
            out.setdefault(int(n), set()).update(sets.get(int(k), set()))
        return out

    def key_of(self, number: int) -> int:
        """Key of the first community row with this number."""
        hit = self.communities.index[self.communities["community"].to_numpy() == number]
        if len(hit) == 0:
            raise KeyError(number)
        return int(self.communities.loc[hit[0], "key"])

    def row_of(self, number: int) -> int:
        hit = np.flatnonzero(self.communities["community"].to_numpy() == number)
        if len(hit) == 0:
            raise KeyError(number)
        return int(hit[0])

    def text_unit_lists(self) -> list[list[int]]:
        """entity index -> text unit rows (small specs only)."""
        o, ix = self.tu_offsets, self.tu_index
        return [ix[o[i] : o[i + 1]].tolist() for i in range(self.n_entities)]


# ----------------------------------------------------------------------------------------
# id / string helpers (vectorised)
# ----------------------------------------------------------------------------------------
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _hex_ids(rng: np.random.Generator, n: int, nhex: int) -> pa.Array:
    """n random lowercase hex strings of length nhex (as an arrow string array)."""
    if n == 0:
        return pa.array([], pa.string())
    nib = rng.integers(0, 16, size=(n, nhex), dtype=np.uint8)
    chars = np.ascontiguousarray(_HEX[nib])
    return pa.array(chars.view(f"S{nhex}").ravel(), pa.binary(nhex)).cast(pa.string())


def _uuid_ids(rng: np.random.Generator, n: int) -> pa.Array:
    """n random UUID4-looking strings ``xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx``."""
    if n == 0:
        return pa.array([], pa.string())
    nib = rng.integers(0, 16, size=(n, 32), dtype=np.uint8)
    nib[:, 12] = 4
    nib[:, 16] = 8 + (nib[:, 16] & 3)
    hexc = _HEX[nib]
    out = np.empty((n, 36), dtype=np.uint8)
    out[:, 0:8] = hexc[:, 0:8]
    out[:, 9:13] = hexc[:, 8:12]
    out[:, 14:18] = hexc[:, 12:16]
    out[:, 19:23] = hexc[:, 16:20]
    out[:, 24:36] = hexc[:, 20:32]
    out[:, [8, 13, 18, 23]] = ord("-")
    return pa.array(np.ascontiguousarray(out).view("S36").ravel(), pa.binary(36)).cast(pa.string())


def _ranges(starts: np.ndarray, lens: np.ndarray) -> np.ndarray:
    """concatenate arange(s, s+l) for every (s, l)."""
    lens = np.asarray(lens, dtype=np.int64)
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lens)
    base = np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lens), lens)
    return base + np.arange(total, dtype=np.int64)


def _offsets(counts: np.ndarray) -> np.ndarray:
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return off


def _list_array(offsets: np.ndarray, values: pa.Array, typ: pa.DataType | None = None) -> pa.Array:
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets[-1] < 2**31 - 1:
        arr = pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32), pa.int32()), values)
    else:  # pragma: no cover - huge lists
        arr = pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), values)
    return arr if typ is None else arr.cast(typ)


def _str(series_or_array) -> pa.Array:
    """pandas str / object column -> pa.string() array."""
    arr = (
        pa.array(series_or_array)
        if not isinstance(series_or_array, (pa.Array, pa.ChunkedArray))
        else series_or_array
    )
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != pa.string():
        arr = arr.cast(pa.string())
    return arr


def _pd_str(arr: pa.Array) -> pd.Series:
    """arrow string array -> pandas string Series (arrow backed, no Python objects)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return pd.Series(pd.arrays.ArrowStringArray(arr))


def _join(*parts, sep: str = "") -> pa.Array:
    return pc.binary_join_element_wise(*parts, sep)


# ----------------------------------------------------------------------------------------
# text pools (mixed English / Chinese / Russian); no quotes, backslashes or newlines
# ----------------------------------------------------------------------------------------
_EN_SUBJ = [
    "The community",
    "This network",
    "The organization",
    "The alliance",
    "The group",
    "Its leadership",
    "The central entity",
    "The coalition",
    "The partnership",
    "The research cluster",
    "The supply chain",
    "The regional office",
]
_EN_VERB = [
    "coordinates",
    "oversees",
    "depends on",
    "funds",
    "regulates",
    "influences",
    "collaborates with",
    "competes with",
    "supports",
    "documents",
    "audits",
    "connects",
]
_EN_OBJ = [
    "several regional partners and their shared logistics operations",
    "a broad set of suppliers that ship components across borders",
    "the annual reporting cycle and its compliance reviews",
    "a network of volunteers who maintain the public archive",
    "the technical infrastructure used by downstream teams",
    "legal agreements that govern the distribution of its products",
    "research programmes on climate risk and transition planning",
    "the training of new staff in safety procedures",
    "community events that attract visitors from neighbouring towns",
    "data sharing arrangements with academic institutions",
]
_EN_TAIL = [
    "",
    " [Data: Entities (12, 40); Relationships (7, 19)]",
    " over the reporting period",
    ", which raises its overall impact",
    " according to several independent sources",
]
_ZH = [
    "该社区围绕核心组织展开，并与多个区域合作伙伴保持密切联系。",
    "这些实体之间的关系揭示了供应链中的关键依赖。",
    "该网络的影响力主要来自其在行业标准制定中的作用。",
    "多个研究机构参与了相关项目，并共享数据与成果。",
    "社区成员定期举办活动，以促进知识交流与合作。",
    "该组织负责监督合规审查，并发布年度报告。",
    "技术基础设施的稳定性对下游团队至关重要。",
    "法律协议规定了产品分发的条件和范围。",
    "志愿者在维护公共档案方面发挥了重要作用。",
    "气候风险与转型规划是该社区研究的重点方向。",
    "该联盟与地方政府合作推动区域经济发展。",
    "培训新员工的安全程序是其日常工作的一部分。",
]
_RU = [
    "Сообщество объединяет несколько региональных партнёров и их логистические операции.",
    "Центральная организация координирует работу поставщиков и подрядчиков.",
    "Связи между участниками показывают ключевые зависимости цепочки поставок.",
    "Исследовательские группы обмениваются данными и публикуют совместные отчёты.",
    "Руководство сети отвечает за соблюдение нормативных требований.",
    "Волонтёры поддерживают публичный архив и помогают новым участникам.",
    "Техническая инфраструктура критически важна для последующих команд.",
    "Юридические соглашения определяют условия распространения продукции.",
    "Климатические риски и планирование перехода находятся в центре внимания.",
    "Обучение сотрудников правилам безопасности проводится ежегодно.",
]
_EN_HEAD = [
    "{} as the central actor",
    "The role of {} in the network",
    "{} and its partners",
    "Regulatory pressure on {}",
    "{} drives collaboration",
    "Risks linked to {}",
]
_ZH_HEAD = ["{}的核心作用", "{}与合作伙伴的关系", "{}面临的监管压力", "{}推动的合作"]
_RU_HEAD = ["Ключевая роль {}", "{} и его партнёры", "Регуляторное давление на {}", "Риски, связанные с {}"]
_EN_SUFFIX = ["Network", "Alliance", "Community", "Consortium", "Cluster", "Partnership"]
_ZH_SUFFIX = ["合作网络", "社区", "联盟", "产业集群"]
_RU_SUFFIX = ["сеть", "альянс", "сообщество", "консорциум"]
_EN_RATING = [
    "The impact severity rating is high due to the community's reach and influence.",
    "The community has a moderate impact because its activities are mostly local.",
    "The rating reflects limited but notable influence on its partners.",
]
_ZH_RATING = ["该社区影响力较高，因为其覆盖范围广泛。", "该社区影响中等，主要活动集中在本地。"]
_RU_RATING = [
    "Влияние сообщества высокое благодаря его охвату.",
    "Влияние умеренное, деятельность в основном локальная.",
]
_ENTITY_WORDS_EN = [
    "ACME",
    "CONTOSO",
    "NORTHWIND",
    "FABRIKAM",
    "TAILSPIN",
    "WINGTIP",
    "LITWARE",
    "ADVENTURE WORKS",
    "PROSEWARE",
    "WOODGROVE",
    "FOURTH COFFEE",
    "ALPINE SKI",
    "BLUE YONDER",
    "COHO WINERY",
    "LUCERNE",
    "MARGIE TRAVEL",
    "TREY RESEARCH",
    "WIDE WORLD",
    "GRAPHIC DESIGN",
    "CITY POWER",
    "SOUTHRIDGE",
    "HUMONGOUS",
]
_ENTITY_WORDS_ZH = ["北京", "上海", "长江", "华夏", "东方", "天元"]
_ENTITY_WORDS_RU = ["МОСКВА", "ВОЛГА", "УРАЛ", "СЕВЕР", "БАЙКАЛ"]
_TYPES = ["ORGANIZATION", "PERSON", "GEO", "EVENT"]


def _en_sentences() -> list[str]:
    rng = np.random.default_rng(12345)
    out = []
    for _ in range(96):
        s = (
            f"{_EN_SUBJ[rng.integers(len(_EN_SUBJ))]} {_EN_VERB[rng.integers(len(_EN_VERB))]} "
            f"{_EN_OBJ[rng.integers(len(_EN_OBJ))]}{_EN_TAIL[rng.integers(len(_EN_TAIL))]}."
        )
        out.append(s)
    return out


_POOLS = {"en": _en_sentences(), "zh": _ZH, "ru": _RU}
_LANGS = ("en", "zh", "ru")


def _pool_arrays():
    """One flat arrow sentence pool plus per-language (offset, count, separator, mean bytes)."""
    flat, info = [], {}
    for lang in _LANGS:
        sents = _POOLS[lang]
        sep = "" if lang == "zh" else " "
        mean = float(np.mean([len((s + sep).encode()) for s in sents]))
        info[lang] = (len(flat), len(sents), sep, mean)
        flat.extend(s + sep for s in sents)
    return pa.array(flat, pa.string()), info


def _sentences(rng, lang_idx: np.ndarray, counts: np.ndarray) -> pa.Array:
    """For each row: `counts[i]` random sentences of language `lang_idx[i]`, joined."""
    pool, info = _pool_arrays()
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    row_lang = np.repeat(lang_idx, counts)
    base = np.zeros(total, dtype=np.int64)
    width = np.ones(total, dtype=np.int64)
    for li, lang in enumerate(_LANGS):
        m = row_lang == li
        base[m] = info[lang][0]
        width[m] = info[lang][1]
    pick = base + (rng.random(total) * width).astype(np.int64)
    joined = pc.binary_join(_list_array(_offsets(counts), pool.take(pa.array(pick))), "")
    return pc.utf8_rtrim_whitespace(joined)


def _choose_lang(
    lang_idx: np.ndarray, rng, pools: dict[str, list[str]], fill: pa.Array | None = None
) -> pa.Array:
    """Per row, a random template of its language; '{}' replaced by `fill` (if given)."""
    n = len(lang_idx)
    flat, base, width = [], np.zeros(3, np.int64), np.zeros(3, np.int64)
    for li, lang in enumerate(_LANGS):
        base[li], width[li] = len(flat), len(pools[lang])
        flat.extend(pools[lang])
    pick = base[lang_idx] + (rng.random(n) * width[lang_idx]).astype(np.int64)
    arr = pa.array(flat, pa.string()).take(pa.array(pick))
    if fill is None:
        return arr
    pre = pc.replace_substring_regex(arr, r"\{\}.*$", "")
    post = pc.replace_substring_regex(arr, r"^.*?\{\}", "")
    return _join(pre, fill, post)


# ----------------------------------------------------------------------------------------
# reports
# ----------------------------------------------------------------------------------------
def _rank_strings(rank: np.ndarray) -> pa.Array:
    return (
        pa.array([repr(float(r)) for r in rank], pa.string())
        if len(rank) < 50_000
        else pc.if_else(
            pc.equal(pc.floor(pa.array(rank)), pa.array(rank)),
            _join(pc.cast(pa.array(rank.astype(np.int64)), pa.string()), ".0"),
            pc.cast(pa.array(rank), pa.string()),
        )
    )


def make_reports(
    numbers: np.ndarray,
    levels: np.ndarray,
    name_a: pa.Array,
    name_b: pa.Array,
    rng: np.random.Generator,
    *,
    lang_p: Sequence[float] = (0.8, 0.12, 0.08),
    content_bytes: tuple[int, int] = (1000, 4000),
) -> pd.DataFrame:
    """Realistic reports (1-4 KB full_content, mixed languages) for the given communities.

    name_a / name_b: entity titles used in each report's title and findings.
    """
    n = len(numbers)
    pool, info = _pool_arrays()
    lang = rng.choice(3, size=n, p=np.asarray(lang_p) / np.sum(lang_p)).astype(np.int64)
    mean_b = np.array([info[l][3] for l in _LANGS])
    target = rng.uniform(content_bytes[0], content_bytes[1], size=n)
    k = rng.integers(2, 6, size=n)  # findings per report
    n_sum = rng.integers(2, 4, size=n)

    suffix = _choose_lang(lang, rng, {"en": _EN_SUFFIX, "zh": _ZH_SUFFIX, "ru": _RU_SUFFIX})
    sep_and = pa.array([" and ", "与", " и "], pa.string()).take(pa.array(lang))
    sep_suf = pa.array([" ", "", ": "], pa.string()).take(pa.array(lang))
    title = _join(name_a, sep_and, name_b, sep_suf, suffix)
    summary = _sentences(rng, lang, n_sum)

    # findings: k per report; explanation lengths sized so full_content lands in content_bytes
    f_off = _offsets(k)
    f_rep = np.repeat(np.arange(n), k)
    f_lang = lang[f_rep]
    who = pc.if_else(
        pa.array(rng.random(len(f_rep)) < 0.5), name_a.take(pa.array(f_rep)), name_b.take(pa.array(f_rep))
    )
    f_sum = _choose_lang(f_lang, rng, {"en": _EN_HEAD, "zh": _ZH_HEAD, "ru": _RU_HEAD}, fill=who)
    fixed = (
        np.asarray(pc.binary_length(title))
        + np.asarray(pc.binary_length(summary))
        + 6
        + np.bincount(f_rep, weights=np.asarray(pc.binary_length(f_sum)) + 7, minlength=n)
    )
    per_f = np.maximum(target - fixed, 100.0)[f_rep] / k[f_rep]
    f_cnt = np.maximum(1, np.round(per_f / mean_b[f_lang])).astype(np.int64)
    f_exp = _sentences(rng, f_lang, f_cnt)
    lo, hi = content_bytes
    for _ in range(25):  # nudge the few reports that fell outside [lo, hi]
        total = fixed + np.bincount(f_rep, weights=np.asarray(pc.binary_length(f_exp)), minlength=n)
        bad = ((total < lo) | (total > hi))[f_rep]
        if not bad.any():
            break
        step = np.where(total < lo, 1, -1)[f_rep]
        f_cnt = np.where(bad, np.maximum(1, f_cnt + step), f_cnt)
        fb = np.flatnonzero(bad)
        redo = _sentences(rng, f_lang[fb], f_cnt[fb])
        pos = np.arange(len(f_rep))
        pos[fb] = len(f_rep) + np.arange(len(fb))
        f_exp = pa.concat_arrays([f_exp, redo]).take(pa.array(pos))
    findings = _list_array(f_off, pa.StructArray.from_arrays([f_exp, f_sum], fields=list(_FINDING_TYPE)))

    sections = pc.binary_join(_list_array(f_off, _join("## ", f_sum, "\n\n", f_exp)), "\n\n")
    full = _join("# ", title, "\n\n", summary, "\n\n", sections)

    rank = np.clip(np.round(rng.normal(6.0, 2.0, size=n) * 2) / 2, 0.0, 10.0)
    rexp = _choose_lang(lang, rng, {"en": _EN_RATING, "zh": _ZH_RATING, "ru": _RU_RATING})
    return pd.DataFrame(
        {
            "community": np.asarray(numbers, dtype=np.int64),
            "level": np.asarray(levels, dtype=np.int64),
            "title": _pd_str(title),
            "summary": _pd_str(summary),
            "full_content": _pd_str(full),
            "rank": rank.astype(np.float64),
            "rank_explanation": _pd_str(rexp),
            "findings": pd.Series(pd.arrays.ArrowExtensionArray(findings)),
        }
    )


def _simple_reports(numbers, levels, titles, contents, ranks) -> pd.DataFrame:
    """Short hand-written reports (seed / balanced examples)."""
    findings = pa.array(
        [[{"explanation": c, "summary": t}] for t, c in zip(titles, contents)], _FINDINGS_TYPE
    )
    full = [f"# {t}\n\n{c}\n\n## {t}\n\n{c}" for t, c in zip(titles, contents)]
    return pd.DataFrame(
        {
            "community": np.asarray(numbers, dtype=np.int64),
            "level": np.asarray(levels, dtype=np.int64),
            "title": pd.Series(titles, dtype=object).astype(str),
            "summary": pd.Series(contents, dtype=object).astype(str),
            "full_content": pd.Series(full, dtype=object).astype(str),
            "rank": np.asarray(ranks, dtype=np.float64),
            "rank_explanation": pd.Series(
                [f"Rank {r} for the synthetic example." for r in ranks], dtype=object
            ).astype(str),
            "findings": pd.Series(pd.arrays.ArrowExtensionArray(findings)),
        }
    )


# ----------------------------------------------------------------------------------------
# entities / text units
# ----------------------------------------------------------------------------------------
def _entities_frame(ids: pa.Array, titles: pa.Array, types: pa.Array, degree: np.ndarray) -> pd.DataFrame:
    n = len(ids)
    desc = _join(titles, " (", types, ") is mentioned in the synthetic corpus.")
    return pd.DataFrame(
        {
            "id": _pd_str(ids),
            "human_readable_id": np.arange(n, dtype=np.int64),
            "title": _pd_str(titles),
            "type": _pd_str(types),
            "description": _pd_str(desc),
            "degree": np.asarray(degree, dtype=np.int64),
        }
    )


def _text_units_frame(rng, n_tu: int, per_doc: int = 20) -> pd.DataFrame:
    ids = _hex_ids(rng, n_tu, 128)
    n_doc = max(1, -(-n_tu // per_doc))
    docs = _hex_ids(rng, n_doc, 128)
    doc_of = np.minimum(np.arange(n_tu) // per_doc, n_doc - 1)
    text = _join(
        "title: synthetic-",
        pc.cast(pa.array(doc_of), pa.string()),
        ".txt.\n",
        _sentences(rng, np.zeros(n_tu, dtype=np.int64), np.full(n_tu, 3)),
    )
    return pd.DataFrame(
        {
            "id": _pd_str(ids),
            "document_id": _pd_str(docs.take(pa.array(doc_of))),
            "text": _pd_str(text),
            "n_tokens": np.full(n_tu, 1200, dtype=np.int64),
        }
    )


# ----------------------------------------------------------------------------------------
# hand-made trees
# ----------------------------------------------------------------------------------------
def _from_tree(
    entity_titles: list[str],
    comms: list[tuple[int, int, int, list[str]]],
    tus: list[list[int]],
    n_tu: int,
    seed: int,
    period: str = DEFAULT_PERIOD,
    report_titles: dict[int, str] | None = None,
) -> IndexSpec:
    """Small spec from an explicit tree: comms = [(number, level, parent, [entity titles])]."""
    rng = np.random.default_rng(seed)
    n = len(entity_titles)
    ids = _uuid_ids(rng, n)
    types = pa.array([_TYPES[i % len(_TYPES)] for i in range(n)], pa.string())
    ents = _entities_frame(ids, pa.array(entity_titles, pa.string()), types, np.full(n, 1))
    pos = {t: i for i, t in enumerate(entity_titles)}
    counts = np.array([len(t) for t in tus], dtype=np.int64)
    tu_off = _offsets(counts)
    tu_ix = np.array([x for t in tus for x in t], dtype=np.int64)
    tunits = _text_units_frame(rng, n_tu)
    communities = pd.DataFrame(
        {
            "key": np.arange(len(comms), dtype=np.int64),
            "community": np.array([c[0] for c in comms], dtype=np.int64),
            "level": np.array([c[1] for c in comms], dtype=np.int64),
            "parent": np.array([c[2] for c in comms], dtype=np.int64),
            "period": pd.Series([period] * len(comms), dtype=object).astype(str),
        }
    )
    mk, me = [], []
    for key, c in enumerate(comms):
        for t in c[3]:
            mk.append(key)
            me.append(pos[t])
    membership = pd.DataFrame({"key": np.array(mk, dtype=np.int64), "entity": np.array(me, dtype=np.int64)})
    # reports: deepest level first, like graphrag writes them
    order = sorted(range(len(comms)), key=lambda i: (-comms[i][1], comms[i][0]))
    nums = [comms[i][0] for i in order]
    levs = [comms[i][1] for i in order]
    titles = [(report_titles or {}).get(c, f"Community {c} report") for c in nums]
    contents = [
        f"Community {comms[i][0]} (level {comms[i][1]}) groups {', '.join(comms[i][3])}." for i in order
    ]
    ranks = [float(1 + (c * 37) % 9) + 0.5 for c in nums]
    reports = _simple_reports(nums, levs, titles, contents, ranks)
    return IndexSpec(
        entities=ents,
        tu_offsets=tu_off,
        tu_index=tu_ix,
        text_units=tunits,
        communities=communities,
        membership=membership,
        reports=reports,
        seed=seed,
        max_cluster_size=10,
        period=period,
    )


def seed_example(seed: int = 0) -> IndexSpec:
    """The worked example of the docs.

    level 0: C5{A,B,C}, C6{D}; level 1: C20{A,B}(5), C21{C}(5), C22{D}(6);
    level 2: C77{A}(20), C78{B}(20).  Every community has a report.
    At community_level=1 graphrag >= 2.0 sends [5, 6, 20, 21, 22], graphrag < 2.0 [20, 21, 22].
    """
    comms = [
        (5, 0, -1, ["A", "B", "C"]),
        (6, 0, -1, ["D"]),
        (20, 1, 5, ["A", "B"]),
        (21, 1, 5, ["C"]),
        (22, 1, 6, ["D"]),
        (77, 2, 20, ["A"]),
        (78, 2, 20, ["B"]),
    ]
    tus = [[0], [0, 1], [1], [2]]  # A, B, C, D
    return _from_tree(["A", "B", "C", "D"], comms, tus, n_tu=3, seed=seed)


def balanced_tree(
    n_roots: int = 2, branching: int = 2, depth: int = 3, leaf_size: int = 1, seed: int = 0
) -> IndexSpec:
    """A clean tree where every branch reaches the same depth (all leaves at level depth-1).

    Numbered in BFS order (children > parents); entities E0, E1, ... (leaf_size per leaf).
    """
    n_leaves = n_roots * branching ** (depth - 1)
    titles = [f"E{i}" for i in range(n_leaves * leaf_size)]
    comms: list[tuple[int, int, int, list[str]]] = []
    # level L has n_roots * branching**L communities; community j at level L covers a contiguous
    # block of leaves.
    number = 0
    prev: list[int] = []
    for lev in range(depth):
        cnt = n_roots * branching**lev
        span = n_leaves // cnt * leaf_size
        cur = []
        for j in range(cnt):
            parent = -1 if lev == 0 else prev[j // branching]
            comms.append((number, lev, parent, titles[j * span : (j + 1) * span]))
            cur.append(number)
            number += 1
        prev = cur
    tus = [[i // 2] for i in range(len(titles))]
    return _from_tree(titles, comms, tus, n_tu=max(1, (len(titles) + 1) // 2), seed=seed)


# ----------------------------------------------------------------------------------------
# Leiden-like generator
# ----------------------------------------------------------------------------------------
def _root_sizes(rng, m: int, max_cluster_size: int) -> np.ndarray:
    """Heavy-tailed level-0 cluster sizes summing to m."""
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    cap = max(6 * max_cluster_size, int(m**0.8))
    chunks, total = [], 0
    while total < m:
        u = rng.random(max(64, m // 8))
        s = np.floor(2.0 * (1.0 - u) ** (-1.0 / 0.8)).astype(np.int64)  # Pareto, tail index 0.8
        s = np.clip(s, 1, cap)
        chunks.append(s)
        total += int(s.sum())
    sizes = np.concatenate(chunks)
    cut = int(np.searchsorted(np.cumsum(sizes), m))
    sizes = sizes[: cut + 1].copy()
    sizes[-1] -= int(sizes.sum()) - m
    sizes = sizes[sizes > 0]
    rng.shuffle(sizes)
    return sizes


def _split(rng, sizes: np.ndarray, fanout: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Split each cluster into k >= 2 heavy-tailed parts. Returns (k per cluster, child sizes)."""
    s = sizes.astype(np.int64)
    k = 2 + rng.poisson(fanout * s.astype(np.float64) ** 0.6)
    k = np.minimum(k, s)
    grp = np.repeat(np.arange(len(s)), k)
    w = rng.lognormal(0.0, 0.8, size=len(grp))
    wsum = np.bincount(grp, weights=w, minlength=len(s))
    extra = (s - k)[grp]  # every child gets 1, the rest is shared by weight
    part = np.floor(w / wsum[grp] * extra).astype(np.int64)
    child = 1 + part
    short = s - np.bincount(grp, weights=child, minlength=len(s)).astype(np.int64)
    first = _offsets(k)[:-1]
    child[first] += short
    return k, child


def leiden_like(
    n_entities: int,
    max_cluster_size: int = 10,
    seed: int = 0,
    *,
    use_lcc: bool = True,
    unclustered_fraction: float = 0.05,
    unsplit_prob: float = 0.03,
    fanout: float = 0.2,
    max_levels: int | None = None,
    report_drop_fraction: float = 0.0,
    lang_p: Sequence[float] = (0.8, 0.12, 0.08),
    content_bytes: tuple[int, int] = (1000, 4000),
    entities_per_text_unit: float = 4.0,
    period: str = DEFAULT_PERIOD,
    extra_report_columns: int = 0,
) -> IndexSpec:
    """A hierarchical-Leiden-like index of ``n_entities`` entities.

    Level-0 clusters have heavy-tailed sizes; a cluster is split into children at the next
    level only if it has more than ``max_cluster_size`` entities (and, with probability
    ``unsplit_prob``, a large cluster stays unsplit, as Leiden sometimes does), so depth is
    uneven and leaves occur at every level.  A split cluster of size s gets
    2 + Poisson(fanout * s**0.6) children (lognormal sizes); ``fanout`` tunes the community
    count (defaults: ~4 entities per community at max_cluster_size=10, ~7 at 20).  Communities are numbered in BFS/level order, so a
    child's number is larger than its parent's.  With ``use_lcc`` a share
    ``unclustered_fraction`` of entities is in no community.  Every community gets a report
    (1-4 KB, mixed English/Chinese/Russian) unless dropped with ``report_drop_fraction``.
    Each entity is in 1-5 text units (consecutive, so members of a community share units).
    ``extra_report_columns`` appends that many short string columns to the reports table (an
    index with more report columns than graphrag writes; see ``SHAPES``).
    """
    rng = np.random.default_rng(seed)
    n = int(n_entities)
    n_unc = int(round(n * unclustered_fraction)) if use_lcc else 0
    m = n - n_unc
    perm = rng.permutation(n).astype(np.int64)  # perm[:m] laid out in tree order
    max_levels = max_levels or 64

    # --- tree -------------------------------------------------------------------------
    sizes = _root_sizes(rng, m, max_cluster_size)
    starts = _offsets(sizes)[:-1]
    lev_num, lev_level, lev_parent, lev_start, lev_size = [], [], [], [], []
    numbers = np.arange(len(sizes), dtype=np.int64)
    parents = np.full(len(sizes), -1, dtype=np.int64)
    level = 0
    next_number = len(sizes)
    while len(sizes):
        lev_num.append(numbers)
        lev_level.append(np.full(len(sizes), level, dtype=np.int64))
        lev_parent.append(parents)
        lev_start.append(starts)
        lev_size.append(sizes)
        if level + 1 >= max_levels:
            break
        split = sizes > max_cluster_size
        if unsplit_prob > 0:
            split &= rng.random(len(sizes)) >= unsplit_prob
        idx = np.flatnonzero(split)
        if len(idx) == 0:
            break
        k, child = _split(rng, sizes[idx], fanout)
        grp = np.repeat(idx, k)
        coff = _offsets(child)
        goff = _offsets(k)
        # start of each child = parent start + offset within parent's block
        within = coff[:-1] - np.repeat(coff[goff[:-1]], k)
        starts = starts[grp] + within
        parents = numbers[grp]
        sizes = child
        numbers = next_number + np.arange(len(sizes), dtype=np.int64)
        next_number += len(sizes)
        level += 1

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    number, lvl, parent = cat(lev_num), cat(lev_level), cat(lev_parent)
    start, size = cat(lev_start), cat(lev_size)
    n_comm = len(number)
    communities = pd.DataFrame(
        {
            "key": np.arange(n_comm, dtype=np.int64),
            "community": number,
            "level": lvl,
            "parent": parent,
            "period": _pd_str(pa.array(np.full(n_comm, period, dtype=object), pa.string())),
        }
    )
    membership = pd.DataFrame(
        {
            "key": np.repeat(np.arange(n_comm, dtype=np.int64), size),
            "entity": perm[_ranges(start, size)],
        }
    )

    # --- entities -----------------------------------------------------------------------
    ids = _uuid_ids(rng, n)
    lang_e = rng.choice(3, size=n, p=[0.85, 0.09, 0.06])
    words = _ENTITY_WORDS_EN + _ENTITY_WORDS_ZH + _ENTITY_WORDS_RU
    woff = np.array([0, len(_ENTITY_WORDS_EN), len(_ENTITY_WORDS_EN) + len(_ENTITY_WORDS_ZH)])
    wcnt = np.array([len(_ENTITY_WORDS_EN), len(_ENTITY_WORDS_ZH), len(_ENTITY_WORDS_RU)])
    wpick = woff[lang_e] + (rng.random(n) * wcnt[lang_e]).astype(np.int64)
    titles = _join(
        pa.array(words, pa.string()).take(pa.array(wpick)),
        " ",
        pc.cast(pa.array(np.arange(n, dtype=np.int64)), pa.string()),
    )
    types = pa.array(_TYPES, pa.string()).take(pa.array(rng.integers(0, len(_TYPES), size=n)))
    degree = 1 + rng.geometric(0.35, size=n) - 1
    entities = _entities_frame(ids, titles, types, degree)

    # --- text units: entity at tree position p is in units near p / entities_per_text_unit
    n_tu = max(1, int(np.ceil(n / entities_per_text_unit)))
    tpos = np.empty(n, dtype=np.int64)
    tpos[perm] = np.arange(n, dtype=np.int64)
    cnt = rng.integers(1, 6, size=n).astype(np.int64)
    cnt = np.minimum(cnt, n_tu)
    first = (tpos * n_tu) // max(n, 1) - rng.integers(0, 2, size=n)
    tu_off = _offsets(cnt)
    rel = np.arange(int(cnt.sum()), dtype=np.int64) - np.repeat(tu_off[:-1], cnt)
    tu_ix = (np.repeat(first, cnt) + rel) % n_tu
    text_units = _text_units_frame(rng, n_tu)

    # --- reports ---------------------------------------------------------------------------
    keep = np.ones(n_comm, dtype=bool)
    if report_drop_fraction > 0:
        keep = rng.random(n_comm) >= report_drop_fraction
    ridx = np.flatnonzero(keep)
    ridx = ridx[np.lexsort((number[ridx], -lvl[ridx]))]  # deepest level first
    a = perm[start[ridx]]
    b = perm[start[ridx] + size[ridx] - 1]
    title_arr = _str(entities["title"])
    reports = make_reports(
        number[ridx],
        lvl[ridx],
        title_arr.take(pa.array(a)),
        title_arr.take(pa.array(b)),
        rng,
        lang_p=lang_p,
        content_bytes=content_bytes,
    )
    return IndexSpec(
        entities=entities,
        tu_offsets=tu_off,
        tu_index=tu_ix,
        text_units=text_units,
        communities=communities,
        membership=membership,
        reports=reports,
        seed=seed,
        max_cluster_size=max_cluster_size,
        period=period,
        extra_report_columns=int(extra_report_columns),
    )


#: Named index shapes (``leiden_like`` keyword arguments besides ``n_entities`` and ``seed``) for the
#: benchmarks (issue 22). Per 1M entities, roughly: "default" is the benchmarks' historic shape
#: (~115k communities, 8 levels, ~24 entities per community counted over all levels); "wide-shallow"
#: has 3 levels and many children per split; "deep-narrow" splits every large cluster in two
#: (~18+ levels); "many-tiny" has ~2x the communities (~250k, ~13 entities per community, 9+
#: levels) and 16 report columns in the 3.x layout, like the differently shaped index the issue cites.
SHAPES: dict[str, dict] = {
    "default": {"max_cluster_size": 24},
    "wide-shallow": {"max_cluster_size": 64, "fanout": 1.5, "max_levels": 3},
    "deep-narrow": {"max_cluster_size": 24, "fanout": 0.0, "unsplit_prob": 0.0},
    "many-tiny": {"max_cluster_size": 10, "fanout": 0.25, "extra_report_columns": 1},
}


def leiden_shape(shape: str, n_entities: int, seed: int = 0) -> IndexSpec:
    """``leiden_like`` with the keyword arguments of the named shape in ``SHAPES``."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {', '.join(SHAPES)}")
    return leiden_like(n_entities, seed=seed, **SHAPES[shape])


# ----------------------------------------------------------------------------------------
# table building
# ----------------------------------------------------------------------------------------
def _derived_children(comm: pd.DataFrame) -> pa.Array:
    """children lists per community row, from `parent` (order of appearance), list<int64>."""
    num = comm["community"].to_numpy(dtype=np.int64)
    par = comm["parent"].to_numpy(dtype=np.int64)
    has = par >= 0
    child_rows = np.flatnonzero(has)
    order = child_rows[np.argsort(par[child_rows], kind="stable")]
    spar = par[order]
    lo = np.searchsorted(spar, num, side="left")
    hi = np.searchsorted(spar, num, side="right")
    counts = hi - lo
    vals = num[order][_ranges(lo, counts)]
    arr = _list_array(_offsets(counts), pa.array(vals, pa.int64()))
    if "children" in comm.columns:
        override = pa.array(comm["children"])
        if isinstance(override, pa.ChunkedArray):
            override = override.combine_chunks()
        override = override.cast(_LIST_I64)
        arr = pc.if_else(pc.is_null(override), arr, override)
    return arr


class _Derived:
    """Per-write derived arrays shared by the table builders."""

    def __init__(self, spec: IndexSpec, community_text_units: bool = True):
        self.spec = spec
        comm = spec.communities.reset_index(drop=True)
        self.comm = comm
        nrow = len(comm)
        keys = comm["key"].to_numpy(dtype=np.int64)
        maxkey = (
            int(max(keys.max(initial=-1), spec.membership["key"].max() if len(spec.membership) else -1)) + 1
        )
        row_of_key = np.full(maxkey, -1, dtype=np.int64)
        row_of_key[keys] = np.arange(nrow)
        mk = spec.membership["key"].to_numpy(dtype=np.int64)
        me = spec.membership["entity"].to_numpy(dtype=np.int64)
        mrow = row_of_key[mk]
        ok = mrow >= 0
        mrow, me = mrow[ok], me[ok]
        order = np.lexsort((me, mrow))
        self.m_row = mrow[order]
        self.m_ent = me[order]
        self.counts = np.bincount(self.m_row, minlength=nrow).astype(np.int64)
        self.m_off = _offsets(self.counts)
        self.number = comm["community"].to_numpy(dtype=np.int64)
        self.level = comm["level"].to_numpy(dtype=np.int64)
        self.parent = comm["parent"].to_numpy(dtype=np.int64)
        self.m_level = self.level[self.m_row]
        # text units per community row (distinct, sorted by unit row)
        if community_text_units and len(self.m_row):
            o, ix = spec.tu_offsets, spec.tu_index
            c = (o[1:] - o[:-1])[self.m_ent]
            rows = np.repeat(self.m_row, c)
            tus = ix[_ranges(o[:-1][self.m_ent], c)]
            n_tu = max(1, len(spec.text_units))
            key = np.unique(rows * n_tu + tus)
            self.ctu_row, self.ctu = key // n_tu, key % n_tu
        else:
            self.ctu_row = np.zeros(0, dtype=np.int64)
            self.ctu = np.zeros(0, dtype=np.int64)
        self.ctu_off = _offsets(np.bincount(self.ctu_row, minlength=nrow))
        rng = np.random.default_rng([spec.seed, 7919, spec.n_entities, nrow])
        self.comm_uuid = _uuid_ids(rng, maxkey).take(pa.array(keys))
        self._children = None

    @property
    def children(self) -> pa.Array:
        if self._children is None:
            self._children = _derived_children(self.comm)
        return self._children


def _entity_ids(spec: IndexSpec, layout: str) -> pa.Array:
    ids = _str(spec.entities["id"])
    if layout in ("0.1-0.4", "0.5-0.9"):
        ids = pc.replace_substring(ids, "-", "")
    return ids


def _tu_ids(spec: IndexSpec, layout: str) -> pa.Array:
    ids = _str(spec.text_units["id"])
    if layout in ("0.1-0.4", "0.5-0.9"):
        ids = pc.utf8_slice_codeunits(ids, 0, 32)
    return ids


def _empty_lists(n: int, typ=_LIST_STR) -> pa.Array:
    return _list_array(np.zeros(n + 1, dtype=np.int64), pa.array([], typ.value_type))


def _int_col(values, dtype=pa.int64()) -> pa.Array:
    return pa.array(np.asarray(values), dtype)


def _report_join(spec: IndexSpec, d: _Derived):
    """For each report row: index of the first community row with the same number (-1 if none)."""
    num = d.number
    first_rows = pd.Series(np.arange(len(num)), index=num)
    first_rows = first_rows[~first_rows.index.duplicated(keep="first")]
    rc = spec.reports["community"].to_numpy(dtype=np.int64)
    return first_rows.reindex(rc).fillna(-1).to_numpy(dtype=np.int64)


def _full_content_json(rep: pd.DataFrame) -> pa.Array:
    if len(rep) == 0:
        return pa.array([], pa.string())
    findings = pa.array(rep["findings"])
    if isinstance(findings, pa.ChunkedArray):
        findings = findings.combine_chunks()
    findings = findings.cast(_FINDINGS_TYPE)
    flat = findings.flatten()
    fe = _json_str(flat.field("explanation"))
    fs = _json_str(flat.field("summary"))
    items = _join(
        '        {\n            "summary": ', fs, ',\n            "explanation": ', fe, "\n        }"
    )
    off = np.asarray(findings.offsets)
    body = pc.binary_join(_list_array(off - off[0], items), ",\n")
    rank = _rank_strings(rep["rank"].to_numpy(dtype=np.float64))
    return _join(
        '{\n    "title": ',
        _json_str(_str(rep["title"])),
        ',\n    "summary": ',
        _json_str(_str(rep["summary"])),
        ',\n    "findings": [\n',
        body,
        '\n    ],\n    "rating": ',
        rank,
        ',\n    "rating_explanation": ',
        _json_str(_str(rep["rank_explanation"])),
        "\n}",
    )


def _json_str(arr: pa.Array) -> pa.Array:
    """JSON string literal (ensure_ascii=False) for every element."""
    s = arr
    for raw, esc in (("\\", "\\\\"), ('"', '\\"'), ("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r")):
        if len(s) and pc.any(pc.match_substring(s, raw)).as_py():
            s = pc.replace_substring(s, raw, esc)
    return _join('"', s, '"')


def _entity_tu_lists(spec: IndexSpec, layout: str) -> pa.Array:
    return _list_array(spec.tu_offsets, _tu_ids(spec, layout).take(pa.array(spec.tu_index)))


def _nodes_table(spec: IndexSpec, d: _Derived, layout: str) -> pa.Table:
    n = spec.n_entities
    ent = spec.entities
    eids = _entity_ids(spec, layout)
    titles = _str(ent["title"])
    deg = ent["degree"].to_numpy(dtype=np.int64)
    if layout == "0.1-0.4":
        max_level = int(d.level.max()) if len(d.level) else 0
        levels = np.repeat(np.arange(max_level + 1, dtype=np.int64), n)
        eidx = np.tile(np.arange(n, dtype=np.int64), max_level + 1)
        comm = np.full(len(levels), -1, dtype=np.int64)
        has = np.zeros(len(levels), dtype=bool)
        ok = d.m_level >= 0
        slot = d.m_level[ok] * n + d.m_ent[ok]
        comm[slot] = d.number[d.m_row[ok]]
        has[slot] = True
        comm_s = pc.if_else(pa.array(has), pc.cast(pa.array(comm), pa.string()), pa.scalar(None, pa.string()))
        tu_lists = _entity_tu_lists(spec, layout)
        source_id = pc.binary_join(tu_lists, ",")
        cols = {
            "level": _int_col(levels),
            "title": titles.take(pa.array(eidx)),
            "type": _str(ent["type"]).take(pa.array(eidx)),
            "description": _str(ent["description"]).take(pa.array(eidx)),
            "source_id": source_id.take(pa.array(eidx)),
            "community": comm_s,
            "degree": _int_col(deg[eidx]),
            "human_readable_id": _int_col(eidx),
            "id": eids.take(pa.array(eidx)),
            "size": _int_col(deg[eidx]),
            "graph_embedding": pa.nulls(len(eidx), pa.null()),
            "top_level_node_id": eids.take(pa.array(eidx)),
            "x": _int_col(np.zeros(len(eidx), dtype=np.int64)),
            "y": _int_col(np.zeros(len(eidx), dtype=np.int64)),
        }
        return pa.table(cols)
    # 0.5 - 1.2: level-0 row per entity (-1 if unclustered there) + a row per membership at L>=1
    lvl0 = d.m_level == 0
    c0 = np.full(n, -1, dtype=np.int64)
    c0[d.m_ent[lvl0]] = d.number[d.m_row[lvl0]]
    extra0 = np.flatnonzero(lvl0)
    # entities in several level-0 communities (defects) get several rows; keep the first in c0
    dup0 = extra0[np.r_[False, d.m_ent[extra0][1:] == d.m_ent[extra0][:-1]]] if len(extra0) else extra0
    deeper = np.flatnonzero(d.m_level >= 1)
    lev = np.concatenate(
        [np.zeros(n, dtype=np.int64), np.zeros(len(dup0), dtype=np.int64), d.m_level[deeper]]
    )
    eidx = np.concatenate([np.arange(n, dtype=np.int64), d.m_ent[dup0], d.m_ent[deeper]])
    comm = np.concatenate([c0, d.number[d.m_row[dup0]], d.number[d.m_row[deeper]]])
    if layout == "1.0-1.2":
        # graphrag 1.x writes entity by entity: create_final_nodes is base_entity_nodes.merge(
        # base_communities, on="title", how="left") (flows/create_final_nodes.py, 1.0.0-1.2.0), so each
        # entity's rows, in level order, follow one another in the entities' order
        order = np.lexsort((lev, eidx))
    else:  # 0.5-0.9 writes level by level (verbs-v0.5, real-csekg-v1, real-climate-update-v09)
        order = np.lexsort((eidx, lev))
    lev, eidx, comm = lev[order], eidx[order], comm[order]
    xy_type = pa.int64() if layout == "0.5-0.9" else pa.float64()
    zeros = np.zeros(len(eidx))
    return pa.table(
        {
            "id": eids.take(pa.array(eidx)),
            "human_readable_id": _int_col(eidx),
            "title": titles.take(pa.array(eidx)),
            "community": _int_col(comm),
            "level": _int_col(lev),
            "degree": _int_col(deg[eidx]),
            "x": pa.array(zeros.astype(np.int64) if xy_type == pa.int64() else zeros, xy_type),
            "y": pa.array(zeros.astype(np.int64) if xy_type == pa.int64() else zeros, xy_type),
        }
    )


def _entities_table(spec: IndexSpec, layout: str) -> pa.Table:
    ent = spec.entities
    n = len(ent)
    ids = _entity_ids(spec, layout)
    tul = _entity_tu_lists(spec, layout)
    freq = (spec.tu_offsets[1:] - spec.tu_offsets[:-1]).astype(np.int64)
    if layout == "0.1-0.4":
        return pa.table(
            {
                "id": ids,
                "name": _str(ent["title"]),
                "type": _str(ent["type"]),
                "description": _str(ent["description"]),
                "human_readable_id": _int_col(ent["human_readable_id"]),
                "graph_embedding": pa.nulls(n, pa.null()),
                "text_unit_ids": tul,
                "description_embedding": pa.nulls(n, pa.list_(pa.float64())),
            }
        )
    cols = {
        "id": ids,
        "human_readable_id": _int_col(ent["human_readable_id"]),
        "title": _str(ent["title"]),
        "type": _str(ent["type"]),
        "description": _str(ent["description"]),
        "text_unit_ids": tul,
    }
    if layout in ("2.x", "3.x", "3.x-csv"):
        cols["frequency"] = _int_col(freq)
        cols["degree"] = _int_col(ent["degree"])
        if layout == "2.x":
            cols["x"] = pa.array(np.zeros(n), pa.float64())
            cols["y"] = pa.array(np.zeros(n), pa.float64())
    return pa.table(cols)


def _communities_table(spec: IndexSpec, d: _Derived, layout: str) -> pa.Table:
    nrow = len(d.number)
    num_s = pc.cast(pa.array(d.number), pa.string())
    title = _join("Community ", num_s)
    tu_ids = _tu_ids(spec, layout)
    text_unit_ids = _list_array(d.ctu_off, tu_ids.take(pa.array(d.ctu)))
    rel = _empty_lists(nrow)
    if layout == "0.1-0.4":
        return pa.table(
            {
                "id": num_s,
                "title": title,
                "level": _int_col(d.level),
                "raw_community": num_s,
                "relationship_ids": rel,
                "text_unit_ids": text_unit_ids,
            }
        )
    entity_ids = _list_array(d.m_off, _entity_ids(spec, layout).take(pa.array(d.m_ent)))
    period = _str(d.comm["period"])
    cols: dict[str, pa.Array] = {
        "id": d.comm_uuid,
        "human_readable_id": _int_col(d.number),
        "community": _int_col(d.number),
    }
    if layout == "1.0-1.2":
        cols["parent"] = _int_col(d.parent)
        cols["level"] = _int_col(d.level)
    elif layout in ("2.x", "3.x", "3.x-csv"):
        cols["level"] = _int_col(d.level)
        cols["parent"] = _int_col(d.parent)
        cols["children"] = _children_typed(d.children)
    else:
        cols["level"] = _int_col(d.level)
    cols.update(
        {
            "title": title,
            "entity_ids": entity_ids,
            "relationship_ids": rel,
            "text_unit_ids": text_unit_ids,
            "period": period,
            "size": _int_col(d.counts),
        }
    )
    return pa.table(cols)


def _children_typed(children: pa.Array) -> pa.Array:
    """graphrag writes list<null> when no community has children (pandas type inference)."""
    if len(children) and pc.sum(pc.list_value_length(children)).as_py() == 0 and children.null_count == 0:
        return _list_array(np.asarray(children.offsets), pa.nulls(0, pa.null()))
    return children


def _reports_table(spec: IndexSpec, d: _Derived, layout: str) -> pa.Table:
    rep = spec.reports.reset_index(drop=True)
    nrep = len(rep)
    crow = _report_join(spec, d)
    has = crow >= 0
    safe = np.where(has, crow, 0)
    mask = pa.array(~has)
    num = rep["community"].to_numpy(dtype=np.int64)

    def from_comm(values: np.ndarray, typ=pa.int64()) -> pa.Array:
        v = values[safe] if len(values) else np.zeros(nrep, dtype=np.int64)
        return pa.array(v, typ, mask=~has)

    rng = np.random.default_rng([spec.seed, 104729, spec.n_entities, len(spec.reports)])
    findings = pa.array(rep["findings"])
    if isinstance(findings, pa.ChunkedArray):
        findings = findings.combine_chunks()
    findings = findings.cast(_FINDINGS_TYPE)
    fcj = _full_content_json(rep)
    if layout == "0.1-0.4":
        return pa.table(
            {
                "community": pc.cast(pa.array(num), pa.string()),
                "full_content": _str(rep["full_content"]),
                "level": _int_col(rep["level"]),
                "rank": pa.array(rep["rank"].to_numpy(dtype=np.float64), pa.float64()),
                "title": _str(rep["title"]),
                "rank_explanation": _str(rep["rank_explanation"]),
                "summary": _str(rep["summary"]),
                "findings": findings,
                "full_content_json": fcj,
                "id": _uuid_ids(rng, nrep),
            }
        )
    ids = _uuid_ids(rng, nrep) if layout == "0.5-0.9" else _hex_ids(rng, nrep, 32)
    cols: dict[str, pa.Array] = {"id": ids, "human_readable_id": _int_col(num), "community": _int_col(num)}
    if layout == "1.0-1.2":
        cols["parent"] = from_comm(d.parent)
        cols["level"] = _int_col(rep["level"])
    elif layout in ("2.x", "3.x", "3.x-csv"):
        cols["level"] = _int_col(rep["level"])
        cols["parent"] = from_comm(d.parent)
        ch = d.children
        if nrep:
            taken = ch.take(pa.array(safe))
            ch = pc.if_else(mask, pa.scalar(None, ch.type), taken) if (~has).any() else taken
        else:
            ch = _empty_lists(0, _LIST_I64)
        cols["children"] = _children_typed(ch) if nrep else ch
    else:
        cols["level"] = _int_col(rep["level"])
    cols.update(
        {
            "title": _str(rep["title"]),
            "summary": _str(rep["summary"]),
            "full_content": _str(rep["full_content"]),
            "rank": pa.array(rep["rank"].to_numpy(dtype=np.float64), pa.float64()),
            ("rating_explanation" if layout in ("2.x", "3.x", "3.x-csv") else "rank_explanation"): _str(
                rep["rank_explanation"]
            ),
            "findings": findings,
            "full_content_json": fcj,
            "period": pc.if_else(
                mask, pa.scalar(None, pa.string()), _str(d.comm["period"]).take(pa.array(safe))
            )
            if nrep
            else pa.array([], pa.string()),
            "size": from_comm(d.counts),
        }
    )
    for i in range(1, spec.extra_report_columns + 1):
        cols[f"x_note_{i}"] = _join(f"note {i} on community ", pc.cast(pa.array(num), pa.string()))
    return pa.table(cols)


def _text_units_table(spec: IndexSpec, layout: str) -> pa.Table:
    tu = spec.text_units
    n_tu = len(tu)
    ids = _tu_ids(spec, layout)
    # transpose entity -> units into unit -> entities
    o = spec.tu_offsets
    ent_of = np.repeat(np.arange(spec.n_entities, dtype=np.int64), o[1:] - o[:-1])
    order = np.lexsort((ent_of, spec.tu_index))
    counts = np.bincount(spec.tu_index, minlength=n_tu).astype(np.int64)
    entity_ids = _list_array(_offsets(counts), _entity_ids(spec, layout).take(pa.array(ent_of[order])))
    docs = _str(tu["document_id"])
    if layout in ("0.1-0.4", "0.5-0.9"):
        docs = pc.utf8_slice_codeunits(docs, 0, 32)
    doc_lists = _list_array(np.arange(n_tu + 1), docs)
    cols: dict[str, pa.Array] = {"id": ids}
    if layout != "0.1-0.4":
        cols["human_readable_id"] = _int_col(np.arange(n_tu))
    cols["text"] = _str(tu["text"])
    cols["n_tokens"] = _int_col(tu["n_tokens"])
    if layout in ("3.x", "3.x-csv"):
        cols["document_id"] = docs
    else:
        cols["document_ids"] = doc_lists
    cols["entity_ids"] = entity_ids
    cols["relationship_ids"] = _empty_lists(n_tu)
    cols["covariate_ids"] = _empty_lists(n_tu)
    return pa.table(cols)


_NAMES = {
    "0.1-0.4": {
        "nodes": "create_final_nodes",
        "communities": "create_final_communities",
        "community_reports": "create_final_community_reports",
        "entities": "create_final_entities",
        "text_units": "create_final_text_units",
    },
}
_NAMES["0.5-0.9"] = _NAMES["0.1-0.4"]
_NAMES["1.0-1.2"] = _NAMES["0.1-0.4"]
_NAMES["2.x"] = {
    "communities": "communities",
    "community_reports": "community_reports",
    "entities": "entities",
    "text_units": "text_units",
}
_NAMES["3.x"] = _NAMES["2.x"]
_NAMES["3.x-csv"] = _NAMES["2.x"]


def build_tables(
    spec: IndexSpec,
    layout: str,
    *,
    communities_file: bool = True,
    text_units: bool = True,
    community_text_units: bool = True,
) -> dict[str, pa.Table]:
    """Arrow tables of ``spec`` in ``layout``, keyed by file stem (e.g. ``"communities"``)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")
    names = _NAMES[layout]
    d = _Derived(spec, community_text_units=community_text_units)
    out: dict[str, pa.Table] = {}
    if "nodes" in names:
        out[names["nodes"]] = _nodes_table(spec, d, layout)
    if communities_file or layout not in ("0.1-0.4",):
        out[names["communities"]] = _communities_table(spec, d, layout)
    out[names["community_reports"]] = _reports_table(spec, d, layout)
    out[names["entities"]] = _entities_table(spec, layout)
    if text_units:
        out[names["text_units"]] = _text_units_table(spec, layout)
    return out


# ----------------------------------------------------------------------------------------
# writing
# ----------------------------------------------------------------------------------------
def _np_repr_ints(lst) -> str:
    return str(np.asarray(lst if lst is not None else [], dtype=np.int64))


def _csv_list_strings(arr: pa.Array) -> pa.Array:
    """list<string> -> Python list repr "['a', 'b']" (exact for quote-free items)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    joined = pc.binary_join(arr, "', '")
    out = _join("['", joined, "']")
    empty = pc.equal(pc.list_value_length(arr), 0)
    return pc.if_else(empty, pa.scalar("[]"), out)


def _to_csv_frame(table: pa.Table, name: str) -> pd.DataFrame:
    cols = {}
    for field, col in zip(table.schema, table.columns):
        arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        t = field.type
        if pa.types.is_list(t):
            vt = t.value_type
            if field.name == "children":
                # numpy array from groupby().agg("unique") -> str(ndarray): "[23 24]" / "[]"
                cols[field.name] = pd.Series(
                    [None if v is None else _np_repr_ints(v) for v in arr.to_pylist()], dtype=object
                )
            elif pa.types.is_struct(vt):
                # list of dicts -> repr
                cols[field.name] = pd.Series(
                    [None if v is None else repr(v) for v in arr.to_pylist()], dtype=object
                )
            elif pa.types.is_string(vt):
                cols[field.name] = pd.Series(_csv_list_strings(arr).to_pylist(), dtype=object)
            else:
                cols[field.name] = pd.Series(
                    [None if v is None else repr(v) for v in arr.to_pylist()], dtype=object
                )
        elif pa.types.is_string(t):
            cols[field.name] = pd.Series(arr.to_pylist(), dtype=object)
        else:
            cols[field.name] = arr.to_pandas()
    return pd.DataFrame(cols)


def write_index(
    spec: IndexSpec,
    out_dir: str | os.PathLike,
    layout: str,
    *,
    communities_file: bool = True,
    text_units: bool = True,
    community_text_units: bool = True,
    row_group_size: int | None = None,
) -> dict[str, Path]:
    """Write ``spec`` into ``out_dir`` in the on-disk ``layout`` of one graphrag generation.

    layout: "0.1-0.4" | "0.5-0.9" | "1.0-1.2" | "2.x" | "3.x" | "3.x-csv".
    communities_file: 0.1-0.4 only - also write create_final_communities (0.3-0.4 do, 0.1-0.2
    often do not).  text_units: also write the text units table.  community_text_units: fill
    communities.text_unit_ids (costly at 1M entities).  Output is byte-for-byte deterministic.
    Returns {file stem: path}.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = build_tables(
        spec,
        layout,
        communities_file=communities_file,
        text_units=text_units,
        community_text_units=community_text_units,
    )
    paths: dict[str, Path] = {}
    for name, table in tables.items():
        if layout == "3.x-csv":
            p = out / f"{name}.csv"
            _to_csv_frame(table, name).to_csv(p, index=False, lineterminator="\n")
        else:
            p = out / f"{name}.parquet"
            pq.write_table(
                table,
                p,
                compression="snappy",
                row_group_size=row_group_size or max(1, min(len(table), 1 << 20)),
            )
        paths[name] = p
    return paths


# ----------------------------------------------------------------------------------------
# damage helpers: each returns a new spec with exactly one kind of defect
# ----------------------------------------------------------------------------------------
def _next_key(spec: IndexSpec) -> int:
    k = spec.communities["key"].max() if len(spec.communities) else -1
    mk = spec.membership["key"].max() if len(spec.membership) else -1
    return int(max(k, mk)) + 1


def _add_entities(spec: IndexSpec, titles: Sequence[str]) -> np.ndarray:
    """Append entities (each in one new text unit... reusing unit 0). Returns their indices."""
    rng = np.random.default_rng([spec.seed, 31, len(spec.entities)])
    n0 = len(spec.entities)
    k = len(titles)
    ids = _uuid_ids(rng, k)
    types = pa.array(["ORGANIZATION"] * k, pa.string())
    new = _entities_frame(ids, pa.array(list(titles), pa.string()), types, np.ones(k))
    new["human_readable_id"] = np.arange(n0, n0 + k, dtype=np.int64)
    spec.entities = pd.concat([spec.entities, new], ignore_index=True)
    n_tu = max(1, len(spec.text_units))
    spec.tu_index = np.concatenate([spec.tu_index, np.arange(n0, n0 + k, dtype=np.int64) % n_tu])
    spec.tu_offsets = np.concatenate(
        [spec.tu_offsets, spec.tu_offsets[-1] + np.arange(1, k + 1, dtype=np.int64)]
    )
    return np.arange(n0, n0 + k, dtype=np.int64)


def _leaf_rows(spec: IndexSpec) -> np.ndarray:
    c = spec.communities
    return np.flatnonzero(~np.isin(c["community"].to_numpy(), c["parent"].to_numpy()))


def drop_level0(spec: IndexSpec) -> IndexSpec:
    """No level 0: level-0 communities (and their reports) removed; level-1 ones become roots
    (parent -1) but keep level 1 (graphrag #2382)."""
    s = spec.copy()
    c = s.communities
    lvl0 = c["level"].to_numpy() == 0
    gone_keys = c.loc[lvl0, "key"].to_numpy()
    gone_nums = c.loc[lvl0, "community"].to_numpy()
    c = c.loc[~lvl0].copy()
    c.loc[np.isin(c["parent"].to_numpy(), gone_nums), "parent"] = -1
    s.communities = c.reset_index(drop=True)
    s.membership = s.membership.loc[~np.isin(s.membership["key"].to_numpy(), gone_keys)].reset_index(
        drop=True
    )
    s.reports = s.reports.loc[s.reports["level"].to_numpy() != 0].reset_index(drop=True)
    return s


def level_gap(spec: IndexSpec, missing: int = 1) -> IndexSpec:
    """Gap between levels: every level >= `missing` is shifted up by one (communities and
    reports), so no community has level `missing`."""
    s = spec.copy()
    c = s.communities
    c.loc[c["level"] >= missing, "level"] += 1
    r = s.reports
    r.loc[r["level"] >= missing, "level"] += 1
    return s


def parent_cycle(spec: IndexSpec, root: int | None = None) -> IndexSpec:
    """A parent cycle: a root's parent is set to its deepest descendant on one branch
    (e.g. 5 -> 77 -> 20 -> 5 on the seed example)."""
    s = spec.copy()
    c = s.communities
    num, par, lvl = (c[x].to_numpy() for x in ("community", "parent", "level"))
    if root is None:
        roots = num[(par == -1) & np.isin(num, par)]
        root = int(roots[0])
    children = {}
    for n_, p_ in zip(num, par):
        children.setdefault(int(p_), []).append(int(n_))
    cur = root
    while children.get(cur):
        cur = children[cur][0]
    if cur == root:
        raise ValueError("root has no children; cannot make a cycle")
    c.loc[c["community"] == root, "parent"] = cur
    return s


def multi_parent(spec: IndexSpec, level: int = 1) -> IndexSpec:
    """A community with several parents (0.x membership-derived): two leaf communities at
    `level` with different parents are merged - the first takes the second's entities, the
    second (and its report) disappears.  Write with layout "0.5-0.9" (no parent column):
    the merged community's entities sit in two different level-(level-1) communities."""
    s = spec.copy()
    c = s.communities
    leaves = _leaf_rows(s)
    cand = leaves[c["level"].to_numpy()[leaves] == level]
    par = c["parent"].to_numpy()
    for i in cand:
        for j in cand:
            if par[i] != par[j] and i != j:
                ki, kj = int(c.loc[i, "key"]), int(c.loc[j, "key"])
                nj = int(c.loc[j, "community"])
                m = s.membership
                m.loc[m["key"] == kj, "key"] = ki
                s.membership = m.drop_duplicates().reset_index(drop=True)
                s.communities = c.drop(index=j).reset_index(drop=True)
                s.reports = s.reports.loc[s.reports["community"].to_numpy() != nj].reset_index(drop=True)
                return s
    raise ValueError(f"need two leaf communities at level {level} with different parents")


def level_not_parent_plus_one(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """level != parent level + 1: a leaf at level >= 1 gets level parent+2 (its report too)."""
    s = spec.copy()
    c = s.communities
    if community is None:
        leaves = _leaf_rows(s)
        leaves = leaves[c["level"].to_numpy()[leaves] >= 1]
        community = int(c.loc[leaves[0], "community"])
    row = s.row_of(community)
    parent = int(c.loc[row, "parent"])
    plevel = int(c.loc[s.row_of(parent), "level"]) if parent >= 0 else -1
    c.loc[row, "level"] = plevel + 2
    r = s.reports
    r.loc[r["community"] == community, "level"] = plevel + 2
    return s


def child_not_subset(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """A child's entities not inside its parent's: one extra entity is put in a level >= 1
    community although it is not in the parent (a brand-new entity that is in no other
    community, so nothing else is broken)."""
    s = spec.copy()
    c = s.communities
    if community is None:
        rows = np.flatnonzero(c["level"].to_numpy() >= 1)
        community = int(c.loc[rows[-1], "community"])
    key = s.key_of(community)
    (e,) = _add_entities(s, [f"STRAY {community}"])
    s.membership = pd.concat([s.membership, pd.DataFrame({"key": [key], "entity": [e]})], ignore_index=True)
    return s


def children_mismatch(spec: IndexSpec) -> IndexSpec:
    """`children` disagreeing with `parent` (2.x/3.x): the first parent with >= 2 children
    loses its last child from `children`, and that child is listed under another community."""
    s = spec.copy()
    c = s.communities
    children = _derived_children(c).to_pylist()
    src = next(i for i, ch in enumerate(children) if len(ch) >= 2)
    moved = children[src].pop()
    dst = next(
        i
        for i in range(len(children))
        if i != src
        and int(c.loc[i, "community"]) != moved
        and int(c.loc[i, "level"]) == int(c.loc[src, "level"])
    )
    children[dst] = children[dst] + [moved]
    c["children"] = pd.Series(pd.arrays.ArrowExtensionArray(pa.array(children, _LIST_I64)))
    return s


def two_forests(
    spec: IndexSpec, period: str = "2025-02-01", remap_children: bool = True, offset: int | None = None
) -> IndexSpec:
    """Two `period` values / two forests, as `graphrag update` leaves them: a copy of the whole
    forest over new entities, numbered after the old one (offset = max + 1), with a later
    period.  remap_children=False reproduces graphrag's bug of not remapping `children`;
    ``offset`` replaces graphrag's max + 1 (a merge that breaks graphrag's offset rule)."""
    s = spec.copy()
    c = s.communities
    off = int(c["community"].max()) + 1 if offset is None else offset
    kbase = _next_key(s)
    new = c.copy()
    new["key"] = new["key"] + kbase
    new["community"] = new["community"] + off
    new.loc[new["parent"] >= 0, "parent"] += off
    new["period"] = period
    if not remap_children:
        ch = _derived_children(c)
        new["children"] = pd.Series(pd.arrays.ArrowExtensionArray(ch))
        c["children"] = pd.Series(pd.arrays.ArrowExtensionArray(pa.nulls(len(c), _LIST_I64)))
    n0 = len(s.entities)
    titles = [f"{t} (update)" for t in s.entities["title"].astype(str)]
    _add_entities(s, titles)
    m = s.membership.copy()
    m["key"] += kbase
    m["entity"] = m["entity"] + n0
    s.membership = pd.concat([s.membership, m], ignore_index=True)
    s.communities = pd.concat([c, new], ignore_index=True)
    r = s.reports.copy()
    r["community"] = r["community"] + off
    s.reports = pd.concat([s.reports, r], ignore_index=True)
    assert len(s.entities) == 2 * n0
    return s


def duplicate_numbers(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """Duplicated community numbers: a leaf is renumbered to its previous sibling's (or any
    other community's) number; its report follows."""
    s = spec.copy()
    c = s.communities
    leaves = _leaf_rows(s)
    if community is None:
        community = int(c.loc[leaves[-1], "community"])
    row = s.row_of(community)
    par = int(c.loc[row, "parent"])
    sib = c.loc[(c["parent"] == par) & (c["community"] != community), "community"].to_numpy()
    target = int(sib[0]) if len(sib) else int(c.loc[0 if row else 1, "community"])
    c.loc[row, "community"] = target
    r = s.reports
    r.loc[r["community"] == community, "community"] = target
    return s


def drop_report(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """A community without a report (default: the first level-1 leaf, else the last row)."""
    s = spec.copy()
    if community is None:
        c = s.communities
        leaves = _leaf_rows(s)
        l1 = leaves[c["level"].to_numpy()[leaves] == 1]
        community = int(c.loc[l1[0] if len(l1) else len(c) - 1, "community"])
    s.reports = s.reports.loc[s.reports["community"].to_numpy() != community].reset_index(drop=True)
    return s


def _append_report(s: IndexSpec, community: int, level: int, title: str) -> None:
    extra = _simple_reports([community], [level], [title], [f"{title}: synthetic report."], [5.0])
    s.reports = pd.concat([s.reports, extra], ignore_index=True)


def orphan_report(spec: IndexSpec, community: int | None = None, level: int = 1) -> IndexSpec:
    """A report whose community does not exist (default number: max + 1000)."""
    s = spec.copy()
    if community is None:
        community = int(s.communities["community"].max()) + 1000
    _append_report(s, community, level, f"Orphan community {community}")
    return s


def report_level_mismatch(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """A report whose level differs from its community's level (+1)."""
    s = spec.copy()
    if community is None:
        c = s.communities
        rows = np.flatnonzero(c["level"].to_numpy() == 1)
        community = int(c.loc[rows[0] if len(rows) else 0, "community"])
    r = s.reports
    r.loc[r["community"] == community, "level"] += 1
    return s


def minus_one_report(spec: IndexSpec) -> IndexSpec:
    """A report for community -1 at level 0 (graphrag 0.5.x, issue #1422)."""
    s = spec.copy()
    _append_report(s, -1, 0, "Unclustered entities")
    return s


def unclustered_entities(spec: IndexSpec, n: int = 2) -> IndexSpec:
    """Entities in no community (use_lcc, #1808): n new entities without any membership."""
    s = spec.copy()
    _add_entities(s, [f"LONER {i}" for i in range(n)])
    return s


def non_depth_ordered(spec: IndexSpec, community: int | None = None) -> IndexSpec:
    """A child numbered lower than its parent: a deep leaf gets a fresh number below its
    parent's (the smallest unused non-negative number, shifting all numbers up by one if 0 is
    taken).  Breaks graphrag < 2.0's "max id = deepest" roll-up."""
    s = spec.copy()
    c = s.communities
    if community is None:
        leaves = _leaf_rows(s)
        lv = c["level"].to_numpy()[leaves]
        community = int(c.loc[leaves[np.argmax(lv)], "community"])
    used = set(int(x) for x in c["community"])
    free = next(i for i in range(len(used) + 1) if i not in used)
    row = s.row_of(community)
    parent = int(c.loc[row, "parent"])
    if free >= parent:
        c["community"] += 1
        c.loc[c["parent"] >= 0, "parent"] += 1
        s.reports.loc[s.reports["community"] >= 0, "community"] += 1
        community += 1
        free = 0
    c.loc[row, "community"] = free
    c.loc[c["parent"] == community, "parent"] = free
    r = s.reports
    r.loc[r["community"] == community, "community"] = free
    return s


#: name -> (helper, layout used for its fixture)
DAMAGES = {
    "no-level-0": (drop_level0, "3.x"),
    "level-gap": (level_gap, "3.x"),
    "parent-cycle": (parent_cycle, "3.x"),
    "multi-parent": (multi_parent, "0.5-0.9"),
    "level-not-parent-plus-one": (level_not_parent_plus_one, "3.x"),
    "child-not-subset": (child_not_subset, "3.x"),
    "children-mismatch": (children_mismatch, "3.x"),
    "two-forests": (two_forests, "3.x"),
    "duplicate-numbers": (duplicate_numbers, "3.x"),
    "missing-report": (drop_report, "3.x"),
    "orphan-report": (orphan_report, "3.x"),
    "report-level-mismatch": (report_level_mismatch, "3.x"),
    "minus-one-report": (minus_one_report, "0.5-0.9"),
    "unclustered-entities": (unclustered_entities, "3.x"),
    "non-depth-ordered": (non_depth_ordered, "1.0-1.2"),
}

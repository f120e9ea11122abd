"""The persistent cache of exact token counts (graphrag_audit.graphrag.token_cache).

Expectations come from the backend counter itself (``get_token_counter(...).count`` on each
string, which the cache never touches) and from the same CLI run with ``--no-token-cache``.
conftest.py points GRAPHRAG_AUDIT_CACHE_DIR at a temporary directory for every test; the tests
here use their own directories under tmp_path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from synthetic import leiden_like, write_index

import graphrag_audit.graphrag.token_cache as token_cache
from graphrag_audit.graphrag.token_cache import (
    MIN_CHARS,
    CachedTokenCounter,
    TokenCountStore,
    counter_for,
    default_cache_dir,
    token_cache_session,
)
from graphrag_audit.graphrag.tokens import BPETokenCounter, get_token_counter

CACHE_FILE = "tokens-v1-cl100k_base.bin"

LONG = [
    "Community report about TAILSPIN and its partners. " * 12,
    "中文社区报告：研究资助与合作网络。" * 30,
    "Отчёт сообщества о партнёрах и финансировании. " * 10,
    "x" * MIN_CHARS,
    "<|endoftext|> special text is ordinary text here " * 8,
    "lone surrogate \ud800 inside a long report " * 10,
]
SHORT = ["", "a", "1|Title|", "0.25", "x" * (MIN_CHARS - 1)]


def direct(texts):
    inner = get_token_counter("cl100k_base")
    return [inner.count(t) for t in texts]


def cached(path: Path, **kw) -> CachedTokenCounter:
    return CachedTokenCounter(get_token_counter("cl100k_base"), TokenCountStore(path, "cl100k_base", **kw))


def test_cached_counts_equal_direct_counts_cold_warm_and_after_a_change(tmp_path):
    path = tmp_path / CACHE_FILE
    texts = LONG + SHORT + LONG[:2]  # repeats in one batch
    want = direct(texts)
    cold = cached(path)
    assert cold.measure_many(texts).tolist() == want
    # a call with at most SMALL_CALL short strings caches them too
    assert cold.store.hits == 0 and cold.store.misses == len(texts)
    cold.store.save()
    assert path.is_file()

    warm = cached(path)
    assert warm.count_many(texts).tolist() == want
    assert warm.store.misses == 0 and warm.store.hits == len(texts)
    assert not warm.store.dirty  # nothing new: the file is not rewritten

    changed = [t + " One more sentence." for t in LONG]  # a report's text changed: a new key
    again = cached(path)
    assert again.count_many(changed + LONG).tolist() == direct(changed + LONG)
    assert again.store.misses == len(LONG) and again.store.hits == len(LONG)


def test_many_short_strings_in_one_call_are_counted_not_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(token_cache, "SMALL_CALL", 3)
    path = tmp_path / CACHE_FILE
    texts = LONG + SHORT  # 5 short strings > SMALL_CALL: only the long ones are cached
    c = cached(path)
    assert c.count_many(texts).tolist() == direct(texts)
    assert c.store.misses == len(LONG)
    c.store.save()
    warm = cached(path)
    assert warm.count_many(texts).tolist() == direct(texts) and warm.store.hits == len(LONG)
    small = cached(path)  # 3 short strings: cached, then found
    assert small.count_many(SHORT[:3]).tolist() == direct(SHORT[:3]) and small.store.misses == 3
    assert (
        small.count(SHORT[3]) == direct(SHORT[3:4])[0] and small.store.misses == 4
    )  # count() goes through it
    small.store.save()
    assert cached(path).count_many(SHORT[:4]).tolist() == direct(SHORT[:4])


def test_a_warm_store_never_loads_the_backend(tmp_path):
    """The backend is loaded on the first count the store cannot answer, never before."""
    real = get_token_counter("cl100k_base")
    loads = []

    def load():
        loads.append(1)
        return real._count_fn

    texts = LONG + SHORT + ["0.5", "1|A|"]
    path = tmp_path / CACHE_FILE
    cold = CachedTokenCounter(BPETokenCounter("cl100k_base", load=load), TokenCountStore(path, "cl100k_base"))
    assert not cold.inner.loaded and not loads
    assert cold.count_many(texts).tolist() == direct(texts) and loads == [1]
    cold.store.save()
    lazy = BPETokenCounter("cl100k_base", load=load)
    warm = CachedTokenCounter(lazy, TokenCountStore(path, "cl100k_base"))
    assert warm.count_many(texts).tolist() == direct(texts) and warm.count(texts[0]) == direct(texts[:1])[0]
    assert loads == [1] and not lazy.loaded
    assert warm.count_many(["a new string"]).tolist() == direct(["a new string"]) and loads == [1, 1]


def test_store_lookup_against_a_dict(tmp_path):
    """Entries read from a file are found by binary search over sorted digests: the same answers
    as a dict, on digests that differ only in their last byte or end in NUL bytes."""
    import numpy as np

    rng = np.random.default_rng(7)
    keys = [bytes(rng.integers(0, 256, 20, dtype=np.uint8)) for _ in range(300)]
    keys += [k[:19] + b"\x00" for k in keys[:50]] + [k[:18] + b"\x00\x00" for k in keys[50:80]]
    keys += [k[:19] + bytes([(k[19] + 1) % 256]) for k in keys[:40]]
    keys = list(dict.fromkeys(keys))
    entries = {k: int(rng.integers(0, 2**32 - 1)) for k in keys[::2]}
    store = TokenCountStore(tmp_path / CACHE_FILE, "cl100k_base")
    store._entries = token_cache._Entries(added=dict(entries))
    store._added = 1
    store.save()
    back = TokenCountStore(tmp_path / CACHE_FILE, "cl100k_base")._load()
    assert back.get_many(keys) == [entries.get(k) for k in keys]
    assert back.as_dict() == entries and len(back) == len(entries)


@pytest.mark.parametrize("damage", ["garbage", "flipped byte", "truncated", "empty"])
def test_a_damaged_cache_file_is_ignored_with_one_note(tmp_path, capsys, damage):
    path = tmp_path / CACHE_FILE
    first = cached(path)
    first.count_many(LONG)
    first.store.save()
    data = bytearray(path.read_bytes())
    if damage == "garbage":
        data = bytearray(b"not a cache at all\n" * 10)
    elif damage == "flipped byte":
        data[len(data) // 2] ^= 0x01  # a count or a digest: the checksum no longer holds
    elif damage == "truncated":
        data = data[: len(data) - 7]
    else:
        data = bytearray()
    path.write_bytes(bytes(data))
    capsys.readouterr()

    c = cached(path)
    assert c.count_many(LONG).tolist() == direct(LONG)
    assert c.store.hits == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "token cache" in err and str(path) in err
    c.store.save()  # replaced by a valid file
    again = cached(path)
    assert again.count_many(LONG).tolist() == direct(LONG) and again.store.hits == len(LONG)


def test_an_unreadable_cache_file_is_a_note(tmp_path, capsys):
    path = tmp_path / CACHE_FILE
    path.mkdir()  # reading a directory fails with an OSError
    c = cached(path)
    assert c.count_many(LONG[:2]).tolist() == direct(LONG[:2])
    assert "cannot read" in capsys.readouterr().err
    c.store.save()  # cannot replace a directory: a note, not a crash
    assert "not written" in capsys.readouterr().err


def test_the_cache_is_bounded_keeping_what_the_last_run_used(tmp_path):
    path = tmp_path / CACHE_FILE
    a = cached(path, max_entries=4)
    a.count_many(LONG[:4])
    a.store.save()
    b = cached(path, max_entries=4)
    b.count_many(LONG[4:])  # two new entries: two old ones must go
    b.store.save()
    assert path.stat().st_size < 2 * 1024
    c = cached(path, max_entries=4)
    assert c.count_many(LONG[4:]).tolist() == direct(LONG[4:]) and c.store.hits == 2
    d = cached(path, max_entries=4)
    assert d.count_many(LONG[:4]).tolist() == direct(LONG[:4]) and d.store.hits == 2


def test_default_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("GRAPHRAG_AUDIT_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("GRAPHRAG_AUDIT_CACHE_DIR")
    if sys.platform not in ("win32", "darwin"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert default_cache_dir() == tmp_path / "xdg" / "graphrag-audit"


def test_a_cache_dir_inside_the_index_is_refused(tmp_path, capsys):
    index = tmp_path / "index"
    index.mkdir()
    with token_cache_session(True, index_dir=index, cache_dir=index / "cache") as d:
        assert d is None
        assert capsys.readouterr().err == ""  # said only when an exact count is needed
        counter = counter_for("cl100k_base")
        assert counter is get_token_counter("cl100k_base")  # uncached
        counter_for("cl100k_base")
    assert capsys.readouterr().err.count("inside the index directory") == 1
    assert not (index / "cache").exists()
    with token_cache_session(True, index_dir=index, cache_dir=tmp_path / "elsewhere") as d:
        assert d == tmp_path / "elsewhere"


# ---- the CLI ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_index(tmp_path_factory):
    spec = leiden_like(400, max_cluster_size=24, seed=3)
    base = tmp_path_factory.mktemp("tc-index")
    write_index(spec, base / "a", "3.x")
    changed = spec.copy()
    reps = changed.reports
    reps.loc[reps.index[0], "full_content"] = reps["full_content"].iloc[0] + " 中文 one changed report text."
    write_index(changed, base / "b", "3.x")
    return base


def levels(index: Path, cache: Path, *extra):
    """``levels INDEX -f json --tokenizer cl100k_base`` in this process (CliRunner: one import for all runs)."""
    from typer.testing import CliRunner

    from graphrag_audit.cli import app

    res = CliRunner().invoke(
        app,
        ["levels", str(index), "-f", "json", "--fail-on", "never", "--tokenizer", "cl100k_base", *extra],
        env={"GRAPHRAG_AUDIT_CACHE_DIR": str(cache)},
    )
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    res.returncode = res.exit_code
    return res


def listing(d: Path):
    return sorted((str(p.relative_to(d)), p.stat().st_size, p.stat().st_mtime_ns) for p in d.rglob("*"))


def test_cli_output_is_identical_with_and_without_the_cache(small_index, tmp_path):
    cache = tmp_path / "cache"
    plain = levels(small_index / "a", cache, "--no-token-cache")
    assert plain.returncode == 0, plain.stderr
    assert not cache.exists()  # --no-token-cache neither reads nor writes
    cold = levels(small_index / "a", cache)
    assert (cold.returncode, cold.stderr) == (0, "")
    assert (cache / CACHE_FILE).is_file()
    warm = levels(small_index / "a", cache)
    assert cold.stdout == plain.stdout == warm.stdout

    # one report's text changed: its row is a new key, counted afresh
    changed_plain = levels(small_index / "b", tmp_path / "unused", "--no-token-cache")
    changed_warm = levels(small_index / "b", cache)
    assert changed_warm.stdout == changed_plain.stdout != plain.stdout


def test_cli_with_a_corrupt_cache_and_a_cache_inside_the_index(small_index, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / CACHE_FILE).write_bytes(b"GRAUTOK1" + os.urandom(200))
    plain = levels(small_index / "a", tmp_path / "unused", "--no-token-cache")
    res = levels(small_index / "a", cache)
    assert res.returncode == 0 and res.stdout == plain.stdout
    assert res.stderr.count("\n") == 1 and "token cache" in res.stderr and "ignored" in res.stderr
    assert (cache / CACHE_FILE).read_bytes().startswith(b"GRAUTOK1")
    assert levels(small_index / "a", cache).stderr == ""  # rewritten valid

    before = listing(small_index / "a")
    inside = levels(small_index / "a", small_index / "a" / "cache")
    assert inside.returncode == 0 and inside.stdout == plain.stdout
    assert "inside the index directory" in inside.stderr
    assert listing(small_index / "a") == before

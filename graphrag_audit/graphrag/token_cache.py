"""A persistent cache of exact token counts, keyed by tokenizer and content hash.

Exact cl100k_base counting runs at ~60 MB/s on one core (the Rust ``bpe-openai`` backend
holds the GIL); at 1M entities it is most of an audit's time. A report's text rarely changes
between audits, so ``levels`` (CLI) remembers the count of every long string it counted:

* **where**: ``$GRAPHRAG_AUDIT_CACHE_DIR`` when set, else the user cache directory
  (``$XDG_CACHE_HOME/graphrag-audit``, else ``~/.cache/graphrag-audit``; macOS
  ``~/Library/Caches/graphrag-audit``; Windows ``%LOCALAPPDATA%\\graphrag-audit``). One file
  per tokenizer: ``tokens-v1-<tokenizer>.bin``. A cache directory that is, or lies inside,
  the index directory being audited is refused (one stderr note, the audit runs uncached),
  and the write itself goes through :func:`graphrag_audit.io.safe_write.write_file` with the
  index's guard (atomic: temp file + rename; never into an index).
* **key**: the 20-byte BLAKE2b digest of the exact string counted (UTF-8, lone surrogates
  kept), in the file of its tokenizer, whose header also names the backend and its version.
  The count is a function of that string alone, so an entry can never be stale: a changed
  report is a different string, hence a miss, counted afresh. A file written by another
  backend version is ignored as a whole.
* **what**: strings of at least :data:`MIN_CHARS` characters (report rows). Short strings
  such as weights and headers are counted directly, which is as fast as hashing, except in a
  call with at most :data:`SMALL_CALL` of them: those are cached too, so that a small index's
  second audit takes every count from the cache and never loads the tokenizer (the backend is
  loaded on the first count it is asked for, :class:`~graphrag_audit.graphrag.tokens.BPETokenCounter`).
* **size bound**: at most :data:`MAX_ENTRIES` entries per tokenizer (24 bytes each, so at most
  ~48 MB); when a run would exceed it, the entries least recently written are dropped first
  (entries this run used are kept).
* **damage**: a cache file that cannot be read or fails its checksum is ignored with a
  one-line note on stderr and replaced by the next write; it never stops an audit and never
  gives a count (each entry is used only from a file whose checksum holds).
* **concurrency**: two audits writing at once each replace the file atomically; the last one
  wins (the other's new entries are lost, nothing is corrupted).

Counts with and without the cache are identical by construction (a hit returns what the
backend returned for the same string); ``tests/test_token_cache.py`` checks it.

Use: :func:`token_cache_session` (a context manager the CLI opens around an audit) makes
:func:`counter_for` return a :class:`CachedTokenCounter` for exact tokenizers; outside a
session :func:`counter_for` is :func:`~graphrag_audit.graphrag.tokens.get_token_counter`.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from graphrag_audit.graphrag.tokens import TokenCounter, get_token_counter

__all__ = [
    "CACHE_DIR_ENV",
    "MAX_ENTRIES",
    "MIN_CHARS",
    "SMALL_CALL",
    "CachedTokenCounter",
    "TokenCountStore",
    "counter_for",
    "default_cache_dir",
    "digest",
    "seeded_token_session",
    "token_cache_session",
]

#: environment variable naming the cache directory (overrides the platform default)
CACHE_DIR_ENV = "GRAPHRAG_AUDIT_CACHE_DIR"
#: strings shorter than this are counted directly, not cached (unless a call has few of them)
MIN_CHARS = 256
#: a call with at most this many short strings caches them too, so that a small index's warm run
#: takes every count from the cache and never loads the tokenizer (~1 s of rank-table decoding)
SMALL_CALL = 4096
#: entries kept per tokenizer file
MAX_ENTRIES = 2_000_000
DIGEST_SIZE = 20
_MAGIC = b"GRAUTOK1"
_SUM_SIZE = 16


def default_cache_dir() -> Path:
    """``$GRAPHRAG_AUDIT_CACHE_DIR``, else the platform's user cache directory + ``graphrag-audit``."""
    env = os.environ.get(CACHE_DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.join(os.path.expanduser("~"), "AppData", "Local")
    elif sys.platform == "darwin":
        base = os.path.join(os.path.expanduser("~"), "Library", "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME", "").strip()
        if not base or not os.path.isabs(base):  # the XDG spec: a relative value is ignored
            base = os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "graphrag-audit"


def _backend_id() -> str:
    try:
        from importlib.metadata import version

        return f"bpe-openai {version('bpe-openai')}"
    except Exception:  # pragma: no cover - not installed as a distribution
        return "bpe-openai ?"


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_SIZE).digest()


def _note(message: str) -> None:
    from graphrag_audit.sanitise.secrets import scrub

    print(scrub(f"graphrag-audit: note: {message}"), file=sys.stderr)


class _Entries:
    """A store's entries, digest -> count: those read from its file as digest-sorted arrays (found
    by binary search: reading a file of 10^6 entries is one sort, not a dict of 10^6 bytes keys),
    then those added since (a dict). Entries are unique: a digest is added only when not found."""

    def __init__(
        self, digests: bytes = b"", counts: np.ndarray | None = None, *, added: dict[bytes, int] | None = None
    ):
        self._file = digests  # the file's digests, DIGEST_SIZE bytes each, in file order
        keys = np.frombuffer(digests, dtype=f"V{DIGEST_SIZE}")  # raw bytes, compared bytewise
        order = (
            np.argsort(keys.view(f"S{DIGEST_SIZE}"), kind="stable") if len(keys) else np.empty(0, np.int64)
        )
        self._order = order
        self._sorted = keys.view(f"S{DIGEST_SIZE}")[order]
        self._counts = np.empty(0, np.uint32) if counts is None else np.asarray(counts, dtype=np.uint32)
        self.added: dict[bytes, int] = {} if added is None else added

    def __len__(self) -> int:
        return len(self._sorted) + len(self.added)

    def get_many(self, keys: list[bytes]) -> list[int | None]:
        """The count of each digest in ``keys``, None where there is none."""
        got: list[int | None] = [self.added.get(k) for k in keys]
        if len(self._sorted) and keys:
            probe = np.frombuffer(b"".join(keys), dtype=f"V{DIGEST_SIZE}").view(f"S{DIGEST_SIZE}")
            pos = np.minimum(np.searchsorted(self._sorted, probe), len(self._sorted) - 1)
            hit = self._sorted[pos] == probe
            found = self._counts[self._order[pos]].tolist()
            for j in np.flatnonzero(hit).tolist():
                got[j] = found[j]
        return got

    def as_dict(self) -> dict[bytes, int]:
        """Every entry, the file's in file order, then the added ones in the order they came."""
        size, d = DIGEST_SIZE, self._file
        out = dict(zip((d[i : i + size] for i in range(0, len(d), size)), self._counts.tolist()))
        out.update(self.added)
        return out


class TokenCountStore:
    """The entries of one tokenizer's cache file: digest -> count, loaded lazily, written by
    :meth:`save` when the run added entries."""

    def __init__(self, path: Path | None, tokenizer: str, *, guard=None, max_entries: int = MAX_ENTRIES):
        self.path = None if path is None else Path(path)  # None: in memory only, never read or written
        self.tokenizer = tokenizer
        self.guard = guard
        self.max_entries = int(max_entries)
        self.backend = _backend_id()
        self._entries: _Entries | None = None
        self._used: set[bytes] = set()
        self._added = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    # ---- reading ----------------------------------------------------------------------
    def _load(self) -> _Entries:
        if self._entries is None:
            self._entries = self._read()
        return self._entries

    def _read(self) -> _Entries:
        if self.path is None:
            return _Entries()
        from graphrag_audit.errors import IndexInputError
        from graphrag_audit.io.bounded import read_bytes

        try:
            data = read_bytes(self.path, "token cache")
        except FileNotFoundError:
            return _Entries()
        except OSError as exc:
            _note(f"token cache {self.path}: cannot read ({exc.strerror or exc}); counting without it")
            return _Entries()
        except IndexInputError as exc:  # a FIFO, a device, too large: never read
            _note(
                f"token cache {self.path}: cannot read ({exc.problem.removesuffix(': not read')}); counting without it"
            )
            return _Entries()
        try:
            return self._parse(data)
        except ValueError as exc:
            _note(f"token cache {self.path}: ignored ({exc}); it will be rewritten")
            return _Entries()

    def _parse(self, data: bytes) -> _Entries:
        if len(data) < len(_MAGIC) + 4 + _SUM_SIZE or not data.startswith(_MAGIC):
            raise ValueError("not a graphrag-audit token cache")
        body, check = data[:-_SUM_SIZE], data[-_SUM_SIZE:]
        if hashlib.blake2b(body, digest_size=_SUM_SIZE).digest() != check:
            raise ValueError("checksum mismatch")
        (hlen,) = struct.unpack_from("<I", body, len(_MAGIC))
        start = len(_MAGIC) + 4
        try:
            header = json.loads(body[start : start + hlen].decode("utf-8"))
            n = int(header["entries"])
            ok = header.get("digest_size") == DIGEST_SIZE and n >= 0
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError):
            raise ValueError("bad header") from None
        if not ok or len(body) != start + hlen + n * (DIGEST_SIZE + 4):
            raise ValueError("bad size")
        if header.get("tokenizer") != self.tokenizer or header.get("backend") != self.backend:
            return _Entries()  # another tokenizer or backend version: start afresh (replaced on save)
        off = start + hlen
        digests = body[off : off + n * DIGEST_SIZE]
        return _Entries(digests, np.frombuffer(body, dtype="<u4", count=n, offset=off + n * DIGEST_SIZE))

    # ---- counting ---------------------------------------------------------------------
    def measure(self, texts: list[str], count_many: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Counts of ``texts`` (``count_many`` of the uncached ones), caching the long ones (and the
        short ones too when there are at most :data:`SMALL_CALL` of them, in a file store)."""
        out = np.empty(len(texts), dtype=np.int64)
        long_idx = [i for i, t in enumerate(texts) if len(t) >= MIN_CHARS]
        if self.path is not None and len(texts) - len(long_idx) <= SMALL_CALL:  # few short strings:
            long_idx = list(range(len(texts)))  # cached too (in a file store; see SMALL_CALL)
        long_set = set(long_idx)
        short_idx = [i for i in range(len(texts)) if i not in long_set] if long_idx else range(len(texts))
        if len(short_idx):
            short = [texts[i] for i in short_idx]
            out[np.asarray(short_idx, dtype=np.int64)] = count_many(short)
        if not long_idx:
            return out
        keys = [_digest(texts[i]) for i in long_idx]
        with self._lock:
            got = self._load().get_many(keys)
        miss = [j for j, v in enumerate(got) if v is None]
        if miss:
            counted = count_many([texts[long_idx[j]] for j in miss]).tolist()
            for j, c in zip(miss, counted):
                got[j] = c
        with self._lock:
            for j, c in zip(miss, (got[j] for j in miss)):
                # a miss is not in the file; another thread may have added it since
                if 0 <= c < 2**32 and keys[j] not in self._entries.added:
                    self._entries.added[keys[j]] = c
                    self._added += 1
            self._used.update(keys)
            self.hits += len(keys) - len(miss)
            self.misses += len(miss)
        out[np.asarray(long_idx, dtype=np.int64)] = got
        return out

    # ---- writing ----------------------------------------------------------------------
    @property
    def dirty(self) -> bool:
        return bool(self._added)

    def save(self) -> None:
        """Write the entries atomically when this run added any (a failure is a note, not an error)."""
        with self._lock:
            if not self._added or self._entries is None or self.path is None:
                return
            entries = self._entries.as_dict()
            if len(entries) > self.max_entries:  # drop the oldest entries not used in this run
                used = self._used
                old = [k for k in entries if k not in used]
                drop = len(entries) - self.max_entries
                for k in old[:drop]:
                    del entries[k]
                if len(entries) > self.max_entries:  # this run alone used more than the bound
                    for k in list(entries)[: len(entries) - self.max_entries]:
                        del entries[k]
            # the entries used in this run go last (most recent), the rest keep their order
            keys = [k for k in entries if k not in self._used] + [k for k in entries if k in self._used]
            header = json.dumps(
                {
                    "tokenizer": self.tokenizer,
                    "backend": self.backend,
                    "digest_size": DIGEST_SIZE,
                    "entries": len(keys),
                }
            ).encode("utf-8")
            counts = np.fromiter((entries[k] for k in keys), dtype="<u4", count=len(keys))
            body = b"".join(
                [_MAGIC, struct.pack("<I", len(header)), header, b"".join(keys), counts.tobytes()]
            )
            data = body + hashlib.blake2b(body, digest_size=_SUM_SIZE).digest()
            self._entries = _Entries(added=entries)
            self._added = 0
        from graphrag_audit.io.safe_write import WriteError, write_file

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_file(self.path, data, self.guard)
        except (OSError, WriteError) as exc:
            _note(f"token cache {self.path}: not written ({getattr(exc, 'problem', None) or exc})")


class CachedTokenCounter(TokenCounter):
    """An exact counter whose ``count_many``/``measure_many`` go through a :class:`TokenCountStore`."""

    def __init__(self, inner: TokenCounter, store: TokenCountStore):
        self.inner = inner
        self.store = store
        self.name = inner.name
        self.exact = inner.exact
        self.additive = inner.additive

    def count(self, text: str) -> int:
        return int(self.store.measure([text], self.inner.count_many)[0])

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        return self.store.measure(list(texts), self.inner.count_many)

    def measure_many(self, texts: Iterable[str]) -> np.ndarray:
        return self.count_many(texts)

    def tokens_from_measure(self, measures: np.ndarray) -> np.ndarray:
        return self.inner.tokens_from_measure(measures)


# --------------------------------------------------------------------------------------
# the session the CLI opens around an audit
# --------------------------------------------------------------------------------------
_session_lock = threading.Lock()
_session: dict | None = None  # {"dir": Path, "guard": Guard | None, "stores": {tokenizer: store}}


def counter_for(tokenizer: str) -> TokenCounter:
    """The counter an audit uses for ``tokenizer``: cached inside an open session, for exact
    tokenizers; otherwise :func:`get_token_counter`."""
    inner = get_token_counter(tokenizer)
    with _session_lock:
        s = _session
        if s is None or not inner.exact:
            return inner
        if s["dir"] is None:  # refused: say so once, when an exact count is first needed
            if s.pop("note", None):
                _note(s["why"])
            return inner
        store = s["stores"].get(inner.name)
        if store is None:
            path = None if s.get("memory") else s["dir"] / f"tokens-v1-{inner.name}.bin"
            store = TokenCountStore(path, inner.name, guard=s["guard"])
            s["stores"][inner.name] = store
    return CachedTokenCounter(inner, store)


@contextmanager
def token_cache_session(
    enabled: bool = True, index_dir=None, cache_dir=None, guard=None
) -> Iterator[Path | None]:
    """Open the token cache for the audit of ``index_dir`` (yields the cache directory, or None
    when it is disabled or refused). On a normal exit the new entries are written."""
    global _session
    if not enabled:
        yield None
        return
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    why = None
    if index_dir is not None and not _is_remote(index_dir):
        try:
            inside = Path(os.path.realpath(directory)).is_relative_to(os.path.realpath(index_dir))
        except (OSError, ValueError):  # a path the audit itself will report on (e.g. a NUL byte)
            inside = False
        if inside:
            why = (
                f"token cache {directory} is inside the index directory {index_dir}: not used "
                f"(set {CACHE_DIR_ENV} elsewhere, or pass --no-token-cache)"
            )
    with _session_lock:
        # a refused cache is noted only when an exact count is needed (not before a bad-input error)
        _session = {
            "dir": None if why else directory,
            "guard": guard,
            "stores": {},
            "why": why,
            "note": bool(why),
        }
    ok = False
    try:
        yield None if why else directory
        ok = True
    finally:
        with _session_lock:
            s, _session = _session, None
        if ok and s is not None:
            dirty = [store for store in s["stores"].values() if store.dirty]
            if dirty and guard is None and index_dir is not None:
                guard = _guard_for(index_dir)
            for store in dirty:
                store.guard = guard
                store.save()


@contextmanager
def seeded_token_session(
    seeds: dict[str, dict[bytes, int]] | None = None,
) -> Iterator[dict[str, TokenCountStore]]:
    """A session whose stores live in memory only (no file is read or written, the user's cache
    is not touched), seeded with ``{tokenizer: {digest: count}}`` counted elsewhere: the bundle's
    audit of OUT (``bundle/precount.py``). Yields the stores (their ``hits``/``misses``)."""
    global _session
    stores = {}
    for name, entries in (seeds or {}).items():
        store = TokenCountStore(None, name)
        store._entries = _Entries(added=dict(entries))
        stores[name] = store
    with _session_lock:
        previous = _session
        _session = {
            "dir": Path("."),
            "memory": True,
            "guard": None,
            "stores": stores,
            "why": None,
            "note": False,
        }
    try:
        yield stores
    finally:
        with _session_lock:
            _session = previous  # a caller's own session (library use) is back as it was


def digest(text: str) -> bytes:
    """The key of ``text``'s count in a store (20-byte BLAKE2b of its UTF-8, lone surrogates kept)."""
    return _digest(text)


def _guard_for(index_dir):
    """The write guard of the index (the cache file is never written inside it)."""
    from graphrag_audit.errors import IndexInputError
    from graphrag_audit.io.safe_write import Guard

    try:
        return Guard.for_index(index_dir)
    except (IndexInputError, OSError):  # pragma: no cover - the audit located it a moment ago
        return Guard()


def _is_remote(index_dir) -> bool:
    from graphrag_audit.io.remote import location_of

    try:
        return location_of(index_dir) is not None
    except Exception:  # pragma: no cover - defensive: a path that cannot be parsed is local
        return False

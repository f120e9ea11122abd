"""graphrag's seed-86 report shuffle, computed with numpy instead of Python's per-item loop.

Global search shuffles the selected reports with ``random.seed(86); random.shuffle(reports)``
before packing them into map batches, so the batches (and their token counts) depend on that
exact permutation. ``random.shuffle`` walks i = n-1 .. 1 and swaps x[i] with x[j], where
j = randbelow(i + 1): the top k bits (k = (i + 1).bit_length()) of the Mersenne Twister's next
32-bit output, drawn again while they are >= i + 1. :func:`permutation` gives the same result:

1. **The 32-bit outputs** come from numpy's ``MT19937`` started from Python's own state for the
   seed (the same generator, so the same stream).
2. **The draws j**, one bit length at a time. At stream position t of a run with the same k,
   the target is m - (t - rej(t)) for the run's first target m, where rej(t) counts the
   rejections before t; position t is rejected when rej(t) <= r_t - m + t. That recurrence
   has one solution, the fixed point of "count the rejections that the current counts
   imply", which a few vectorised passes over a window reach (a decision can only change where
   r_t is within the counts' error of the target: rare when 2**k is large). Short runs (small
   k) and windows that do not settle fast go through the plain loop.
3. **The swaps.** Position i is final once step i is done, and holds what position j_i held
   then: the value left there by the latest earlier step that targeted j_i, which in turn is
   what that step's own position held before it, and so on. Those chains are resolved by
   pointer jumping.

Below :data:`NUMPY_FROM` items ``random.shuffle`` itself is faster and is used. The first use
of the numpy path checks it against ``random.shuffle`` (a list of 3,000); if this interpreter
draws differently, the module falls back to ``random.shuffle`` for good.
"""

from __future__ import annotations

import random
import threading
from functools import lru_cache

import numpy as np

#: runs of draws with fewer steps than this use the plain loop (vectorising them costs more)
_LOOP_STEPS = 256
#: fixed-point passes tried on one window before it is drawn with the plain loop instead
_MAX_PASSES = 48


def python_permutation(n: int, seed: int) -> np.ndarray:
    """The reference: what ``random.seed(seed); random.shuffle(list(range(n)))`` leaves."""
    idx = list(range(n))
    random.Random(seed).shuffle(idx)
    return np.array(idx, dtype=np.int64)


#: below this many items ``random.shuffle`` itself is faster than the numpy draws. Measured
#: (best of 30-60, 2-core EPYC, Python 3.11, numpy 2.4): 1,000 items 0.45 ms vs 1.2 ms, 4,000
#: 2.0 vs 3.2 ms, 6,000 3.4 vs 3.5 ms, 8,000 3.4 vs 2.6 ms, 12,000 4.5 vs 3.6 ms, 100,000 331 vs
#: 77 ms, 1,000,000 3.9 s vs 0.80 s.
NUMPY_FROM = 6000


def permutation(n: int, seed: int) -> np.ndarray:
    """Positions ``0..n-1`` in the order ``random.seed(seed); random.shuffle(x)`` leaves a list
    ``x`` of length ``n`` (a new array each call): ``random.shuffle`` itself below
    :data:`NUMPY_FROM` items, :func:`numpy_permutation` from there on."""
    if n < NUMPY_FROM or not _agrees_with_random():
        return python_permutation(n, seed)
    return numpy_permutation(n, seed)


def numpy_permutation(n: int, seed: int) -> np.ndarray:
    """:func:`python_permutation`, computed with numpy (see the module docstring)."""
    if n < 2:
        return np.arange(n, dtype=np.int64)
    return _resolve_swaps(_draws(n, seed))


_CHECK_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _agrees_with_random() -> bool:
    with _CHECK_LOCK:
        try:
            return all(
                np.array_equal(_resolve_swaps(_draws(n, seed)), python_permutation(n, seed))
                for n, seed in ((3000, 86), (2, 86), (1025, 7))
            )
        except Exception:  # noqa: BLE001 - any surprise here means: use the standard library
            return False


def _generator(seed: int) -> np.random.MT19937:
    """numpy's MT19937 in the state ``random.Random(seed)`` starts from."""
    _version, state, _gauss = random.Random(seed).getstate()
    bits = np.random.MT19937()
    bits.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": int(state[624])},
    }
    return bits


class _Stream:
    """The generator's 32-bit outputs, read in order (as int64)."""

    def __init__(self, seed: int, hint: int):
        self._bits = _generator(seed)
        self.buf = self._bits.random_raw(hint).astype(np.int64)
        self.pos = 0

    def window(self, size: int) -> np.ndarray:
        if self.pos + size > len(self.buf):
            more = self._bits.random_raw(max(size, len(self.buf) // 2) + 1024).astype(np.int64)
            self.buf = np.concatenate([self.buf[self.pos :], more])
            self.pos = 0
        return self.buf[self.pos : self.pos + size]


def _draws(n: int, seed: int) -> np.ndarray:
    """j for i = n-1, n-2, ..., 1 (randbelow(i + 1) each), in that order."""
    out = np.empty(n - 1, dtype=np.int64)
    stream = _Stream(seed, 2 * n + 1024)
    done = 0
    m_hi = n  # the first target (i + 1) of the current bit length
    while m_hi >= 2:
        k = m_hi.bit_length()
        m_lo = max(2, 1 << (k - 1))
        steps = m_hi - m_lo + 1
        if steps < _LOOP_STEPS:
            _loop(stream, out, done, m_hi, m_lo, k)
        else:
            _vectorised(stream, out, done, m_hi, m_lo, k)
        done += steps
        m_hi = m_lo - 1
    return out


def _loop(stream: _Stream, out: np.ndarray, done: int, m_hi: int, m_lo: int, k: int) -> None:
    """Targets m_hi down to m_lo, as random.shuffle draws them."""
    shift = 32 - k
    m = m_hi
    while m >= m_lo:
        vals = (stream.window(2 * (m - m_lo + 1) + 64) >> shift).tolist()
        used = 0
        for r in vals:
            used += 1
            if r < m:
                out[done] = r
                done += 1
                m -= 1
                if m < m_lo:
                    break
        stream.pos += used


def _vectorised(stream: _Stream, out: np.ndarray, done: int, m_hi: int, m_lo: int, k: int) -> None:
    shift = 32 - k
    # a window's first pass is off by at most its rejections (about a quarter of it): keep that
    # well below 2**k so that few decisions change between passes
    size = max(64, min(1 << 15, 1 << max(k - 3, 0)))
    m = m_hi
    while m >= m_lo:
        need = m - m_lo + 1
        w = min(size, 2 * need + 64)
        r = stream.window(w) >> shift
        s = r - m + np.arange(w, dtype=np.int64)  # position t is rejected when rej(t) <= s[t]
        rej = np.zeros(w, dtype=np.int64)
        settled = False
        for _ in range(_MAX_PASSES):
            rejected = rej <= s
            nxt = np.zeros(w, dtype=np.int64)
            np.cumsum(rejected[:-1], out=nxt[1:])
            if np.array_equal(nxt, rej):
                settled = True
                break
            rej = nxt
        if not settled:
            _loop(stream, out, done, m, max(m_lo, m - w // 4 + 1), k)
            taken = m - max(m_lo, m - w // 4 + 1) + 1
            done += taken
            m -= taken
            continue
        accepted = np.flatnonzero(~rejected)
        take = min(len(accepted), need)
        out[done : done + take] = r[accepted[:take]]
        done += take
        m -= take
        stream.pos += int(accepted[take - 1]) + 1 if take == need else w


def _resolve_swaps(draws: np.ndarray) -> np.ndarray:
    """The list ``random.shuffle`` leaves, from its draws (j for i = n-1 .. 1)."""
    n = len(draws) + 1
    j = np.empty(n, dtype=np.int64)
    j[0] = 0
    j[1:] = draws[::-1]  # j[i]: the position step i swaps with (j[i] <= i)
    key = np.sort(j[1:] * n + np.arange(1, n, dtype=np.int64))  # by target, then step
    tgt, st = np.divmod(key, n)
    same = tgt[1:] == tgt[:-1]
    succ = np.full(n - 1, -1, dtype=np.int64)
    succ[:-1][same] = st[1:][same]
    next_same = np.full(n, -1, dtype=np.int64)
    next_same[st] = succ  # by step: the next larger step that targets the same position
    # the smallest step > p that targets p: the group's first step, or its second when the
    # first is p itself (a swap of p with itself)
    head = np.ones(n - 1, dtype=bool)
    head[1:] = ~same
    first = np.full(n, -1, dtype=np.int64)
    first[tgt[head]] = st[head]
    mnext = np.where(first == np.arange(n), next_same[np.maximum(first, 0)], first)
    # what position p holds just before step p: follow the steps that targeted it to the end
    held = np.where(mnext >= 0, mnext, np.arange(n, dtype=np.int64))
    while True:
        jumped = held[held]
        if np.array_equal(jumped, held):
            break
        held = jumped
    q = next_same[1:]  # the next larger step that targeted the position step i takes from
    out = np.empty(n, dtype=np.int64)
    out[0] = held[0]
    out[1:] = np.where(q >= 0, held[np.maximum(q, 0)], j[1:])
    return out


class PermutationCache:
    """:func:`permutation` results kept by (n, seed) while they hold at most ``budget`` positions
    in all (beyond it the least recently asked for go first; the last one is always kept).
    The audit packs graphrag >= 2.0's, < 2.0's and the level-only selections of every level, and
    their sizes repeat across behaviours: a fixed count of entries (an LRU of 8) drops them
    between one behaviour and the next on a deep tree. Thread-safe; positions stored as int32
    when they fit, handed out as a fresh int64 array."""

    def __init__(self, budget: int = 1 << 23):
        self.budget = int(budget)
        self._kept: dict[tuple[int, int], np.ndarray] = {}
        self._size = 0
        self._lock = threading.Lock()

    def get(self, n: int, seed: int) -> np.ndarray:
        key = (int(n), int(seed))
        with self._lock:
            got = self._kept.pop(key, None)
            if got is not None:
                self._kept[key] = got  # now the newest
                return got.astype(np.int64)
        perm = permutation(key[0], key[1])
        small = perm.astype(np.int32) if key[0] < 2**31 else perm.copy()
        with self._lock:
            if key not in self._kept:
                self._kept[key] = small
                self._size += len(small)
                while self._size > self.budget and len(self._kept) > 1:
                    oldest = next(iter(self._kept))
                    self._size -= len(self._kept.pop(oldest))
        return perm

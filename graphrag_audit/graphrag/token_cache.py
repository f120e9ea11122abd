"""An opt-in cache of exact token counts (``--token-cache DIR``), passed to the costs explicitly.

One JSON file, ``DIR/graphrag-audit-token-counts.json``: ``{"version": 1, "counts": {tokenizer:
{blake2b-128 hex of the text: count}}}``. A count depends on the tokenizer and the text only, so an
entry is never stale. A hit needs no tokenizer: a fully warm run never imports ``bpe_openai``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable

import numpy as np

from graphrag_audit.errors import IndexInputError
from graphrag_audit.graphrag.tokens import TokenCounter
from graphrag_audit.io.bounded import loads_json, read_bytes
from graphrag_audit.io.safe_write import Guard, WriteError, check_file_target, write_file

FILE_NAME = "graphrag-audit-token-counts.json"
VERSION = 1


def _key(text: str | None) -> str:
    return hashlib.blake2b((text or "").encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class TokenCache:
    """The counts kept in ``folder``; ``guard``: what :meth:`save` may not write over (the index)."""

    def __init__(self, folder: str | os.PathLike, guard: Guard | None = None):
        self.path = os.path.join(os.fspath(folder), FILE_NAME)
        self.guard = guard if guard is not None else Guard()
        self.counts: dict[str, dict[str, int]] = {}
        self.added = 0

    def load(self) -> str | None:
        """Read the file. A target :meth:`save` would refuse raises :class:`WriteError` (before any
        work); a file that cannot be used returns a warning and the cache starts empty."""
        why = self.guard.refusal(self.path)
        if why:
            raise WriteError(self.path, why)
        if os.path.lexists(self.path):
            check_file_target(self.path, self.guard)  # a link, FIFO, device or folder: exit 2
        try:
            data = loads_json(self.path, "token cache", read_bytes(self.path, "token cache"))
        except FileNotFoundError:
            return None
        except IndexInputError as exc:
            return f"{self.path}: {exc.problem}; the cache starts empty"
        except OSError as exc:
            return f"{self.path}: cannot read the token cache ({exc.strerror or exc}); the cache starts empty"
        counts = data.get("counts") if isinstance(data, dict) and data.get("version") == VERSION else None
        if not isinstance(counts, dict) or not all(
            isinstance(d, dict) and all(type(v) is int and v >= 0 for v in d.values())
            for d in counts.values()
        ):
            return (
                f"{self.path}: not a graphrag-audit token cache (version {VERSION}); the cache starts empty"
            )
        self.counts = counts
        return None

    def counter(self, inner: TokenCounter) -> TokenCounter:
        """``inner`` (an exact counter) answering from the cache first."""
        return CachedCounter(inner, self.counts.setdefault(inner.name, {}), self)

    def save(self) -> None:
        """Write the file atomically when this run added counts (never into the guarded index)."""
        if not self.added:
            return
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
        except OSError as exc:
            raise WriteError(self.path, f"cannot write ({exc.strerror or exc})") from None
        write_file(self.path, json.dumps({"version": VERSION, "counts": self.counts}), self.guard)
        self.added = 0


class CachedCounter(TokenCounter):
    """An exact counter whose counts come from ``known`` (text key -> count) when there."""

    exact = True
    additive = True

    def __init__(self, inner: TokenCounter, known: dict[str, int], cache: TokenCache):
        self.name, self.inner, self.known, self.cache = inner.name, inner, known, cache

    def count(self, text: str) -> int:
        return int(self.count_many([text])[0])

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        texts = texts if isinstance(texts, (list, tuple)) else list(texts)
        keys = [_key(t) for t in texts]
        got = [self.known.get(k) for k in keys]
        miss = [i for i, n in enumerate(got) if n is None]
        if miss:
            counted = self.inner.count_many([texts[i] for i in miss]).tolist()
            for i, n in zip(miss, counted):
                got[i] = self.known[keys[i]] = n
            self.cache.added += len(miss)
        return np.array(got, dtype=np.int64)

"""Token counters: exact ``cl100k_base`` / ``o200k_base`` (offline) and ``estimate``.

``cl100k_base`` (default) is what graphrag counts with in every version (1.x ``tiktoken.get_encoding``
default; 2.x/3.x LiteLLM's OpenAI fallback); ``o200k_base`` for ``encoding_model: o200k_base``. Both come
from ``bpe-openai``, which bundles the vocabularies (tiktoken would download them); its counts equal a plain
tiktoken reference (tests/graphrag_tests/test_context.py). Special tokens count as text (LiteLLM's
``disallowed_special=()``); lone surrogates become U+FFFD, as in tiktoken. ``estimate`` is
``ceil(utf8_bytes / 4)``, 0.6x-1.3x of cl100k: never a verdict near a budget edge.

Additive measures (context.py counts a report's fixed text once): for BPE the measure is the token count,
for the estimate the UTF-8 byte count, turned into tokens at the end (``ceil(sum / 4)``).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from functools import cache, cached_property
from importlib.machinery import EXTENSION_SUFFIXES
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from graphrag_audit.graphrag.token_cache import TokenCache

DEFAULT_TOKEN_COUNTER = "cl100k_base"
TOKEN_COUNTER_NAMES: tuple[str, ...] = ("cl100k_base", "o200k_base", "estimate")


class TokenCounter:
    """Counts tokens of strings. ``additive``: ``tokens(a + b) = tokens_from_measure(m(a) + m(b))`` at a
    pre-tokenisation boundary (a test counter leaves it False and gets whole strings counted)."""

    name: str = ""
    exact: bool = False
    additive: bool = False

    def count(self, text: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        texts = list(texts)
        return np.fromiter(map(self.count, texts), dtype=np.int64, count=len(texts))

    def measure_many(self, texts: Iterable[str]) -> np.ndarray:
        return self.count_many(texts)

    def tokens_from_measure(self, measures: np.ndarray) -> np.ndarray:
        return np.asarray(measures, dtype=np.int64)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r} exact={self.exact}>"


class BPETokenCounter(TokenCounter):
    """Exact BPE counter backed by ``bpe-openai`` (cl100k_base or o200k_base)."""

    exact = True
    additive = True

    def __init__(self, name: str):
        self.name = name

    @cached_property
    def _count_fn(self) -> Callable[[str], int]:
        """bpe-openai's ``str -> int`` counter (no token list built), loaded on the first count."""
        count = _bpe_bindings().tokenizer_for_encoding(self.name).count
        count("probe")
        return count

    def count(self, text: str) -> int:
        if not text:
            return 0
        try:
            return self._count_fn(text)
        except UnicodeEncodeError:  # lone surrogates: U+FFFD, as tiktoken does
            return self._count_fn(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        texts = list(texts)
        try:  # one tight loop, no per-item branching
            return np.array(list(map(self._count_fn, texts)), dtype=np.int64)
        except (UnicodeEncodeError, TypeError):
            return super().count_many(texts)


class EstimateTokenCounter(TokenCounter):
    """``ceil(utf8_bytes / 4)``; not exact."""

    name = "estimate"
    exact = False
    additive = True

    def count(self, text: str) -> int:
        return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        return self.tokens_from_measure(self.measure_many(texts))

    def measure_many(self, texts: Iterable[str]) -> np.ndarray:
        texts = list(texts)
        return np.fromiter((len(t.encode("utf-8", "surrogatepass")) for t in texts), np.int64, len(texts))

    def tokens_from_measure(self, measures: np.ndarray) -> np.ndarray:
        return (np.asarray(measures, dtype=np.int64) + 3) // 4


def _bpe_bindings():
    """bpe-openai's Rust bindings without ``bpe_openai/__init__.py``, which decodes every bundled vocabulary
    in Python (0.55 s CPU; the bindings load in 0.02 s). Any other install layout: the plain import."""
    name = "bpe_openai._bindings"
    if name in sys.modules:
        return sys.modules[name]
    package = importlib.util.find_spec("bpe_openai")
    folders = (package.submodule_search_locations or []) if package else []
    for path in (os.path.join(f, "_bindings" + x) for f in folders for x in EXTENSION_SUFFIXES):
        spec = importlib.util.spec_from_file_location(name, path) if os.path.isfile(path) else None
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            sys.modules[name] = module
            return module
    with warnings.catch_warnings():  # its deprecated importlib.resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        from bpe_openai import _bindings
    return _bindings


@cache
def _make_counter(name: str) -> TokenCounter:
    if name == "estimate":
        return EstimateTokenCounter()
    return BPETokenCounter(name)


def get_token_counter(
    name: str = DEFAULT_TOKEN_COUNTER, token_cache: TokenCache | None = None
) -> TokenCounter:
    """The shared counter called ``name`` (ValueError for another name); an exact one answers from
    ``token_cache`` first."""
    key = str(name).strip().lower() if name is not None else ""
    if key not in TOKEN_COUNTER_NAMES:
        raise ValueError(
            f"unknown token counter {name!r}; valid names are: " + ", ".join(TOKEN_COUNTER_NAMES)
        )
    counter = _make_counter(key)
    return token_cache.counter(counter) if token_cache is not None and counter.exact else counter

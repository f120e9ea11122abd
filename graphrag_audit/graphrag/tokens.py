"""Token counters: exact cl100k_base / o200k_base (offline) and a fast estimate.

``get_token_counter(name)`` returns a :class:`TokenCounter` with ``.name``, ``.exact``,
``count(text) -> int`` and ``count_many(texts) -> numpy int64 array``.

=============== ======= ==============================================================
name            exact   what it is
=============== ======= ==============================================================
``cl100k_base`` yes     the encoding graphrag effectively uses in every version (1.x:
                        ``tiktoken.get_encoding(config.encoding_model)``, default
                        ``cl100k_base``; 2.x/3.x: LiteLLM's tokenizer, whose OpenAI
                        fallback is ``cl100k_base``). Default.
``o200k_base``  yes     for users who pin ``encoding_model: o200k_base``.
``estimate``    no      ``ceil(utf8_bytes / 4)``: no tokenizer at all, ~80x faster.
=============== ======= ==============================================================

The exact counters use ``bpe-openai`` (the Rust ``bpe-openai`` crate behind a tiktoken-compatible
API), which bundles both encodings, so it works offline where ``tiktoken`` would download them; its
counts equal a plain tiktoken-algorithm reference (tests/graphrag_tests/test_context.py).

Special tokens (``"<|endoftext|>"``) are counted as ordinary text, like ``encode(text,
disallowed_special=())``, which is what LiteLLM does (graphrag 2.x/3.x); graphrag 1.x's
``encode(text)`` would raise instead. Lone surrogates are replaced by U+FFFD, as tiktoken does.

The estimate is rough in both directions against cl100k: 0.85x on English technical prose, 1.27x on
English report markdown, 1.30x on Chinese reports, 0.59x on pure CJK prose. Never use it for a verdict
near a budget edge.

Additive measures (context.py counts a report's fixed text once): ``measure_many(texts)`` and
``tokens_from_measure(measures)``. For BPE the measure *is* the token count; for the estimate it is
the UTF-8 byte count, turned into tokens only at the end (``ceil(sum / 4)`` is not the sum of ceilings).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import warnings
from collections.abc import Callable, Iterable
from functools import cache
from importlib.machinery import EXTENSION_SUFFIXES
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from graphrag_audit.graphrag.token_cache import TokenCache

DEFAULT_TOKEN_COUNTER = "cl100k_base"
TOKEN_COUNTER_NAMES: tuple[str, ...] = ("cl100k_base", "o200k_base", "estimate")


def _sanitize(text: str) -> str:
    """Replace lone surrogates with U+FFFD (what tiktoken does before encoding)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class TokenCounter:
    """Counts tokens of strings. Subclasses set ``name``/``exact`` and implement ``count``.

    ``measure_many``/``tokens_from_measure`` define an *additive* measure: for strings
    ``a``, ``b`` whose junction is a pre-tokenisation boundary (see
    :mod:`graphrag_audit.graphrag.context`), ``tokens(a + b) = tokens_from_measure(m(a) + m(b))``.
    """

    name: str = ""
    exact: bool = False
    #: True when ``measure_many``/``tokens_from_measure`` are additive across
    #: pre-tokenisation boundaries (true for BPE and for the byte estimate; a duck-typed
    #: or test counter leaves it False and gets the exact, whole-string path).
    additive: bool = False

    def count(self, text: str) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        """Token counts of many strings as an int64 array (same order)."""
        count = self.count
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        return np.fromiter((count(t) for t in texts), dtype=np.int64, count=len(texts))

    # additive measure; default: the token count itself (correct for BPE counters)
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

    def __init__(self, name: str, count_fn: Callable[[str], int] | None = None):
        """``count_fn`` counts one string; by default bpe-openai's, loaded on the first count."""
        self.name = name
        self._fn = count_fn

    @property
    def _count_fn(self) -> Callable[[str], int]:
        if self._fn is None:
            self._fn = _bpe_count_fn(self.name)
        return self._fn

    def count(self, text: str) -> int:
        if not text:
            return 0
        try:
            return self._count_fn(text)
        except UnicodeEncodeError:
            return self._count_fn(_sanitize(text))

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        fn = self._count_fn
        out = np.empty(len(texts), dtype=np.int64)
        try:  # fast path: one tight loop, no per-item Python-level branching
            out[:] = list(map(fn, texts))
        except (UnicodeEncodeError, TypeError):
            count = self.count
            for i, t in enumerate(texts):
                out[i] = count(t)
        return out


class EstimateTokenCounter(TokenCounter):
    """``ceil(utf8_bytes / 4)``; not exact (see the module docstring)."""

    name = "estimate"
    exact = False
    additive = True

    def count(self, text: str) -> int:
        return (len(text.encode("utf-8", "surrogatepass")) + 3) // 4

    def count_many(self, texts: Iterable[str]) -> np.ndarray:
        return self.tokens_from_measure(self.measure_many(texts))

    def measure_many(self, texts: Iterable[str]) -> np.ndarray:
        if not isinstance(texts, (list, tuple)):
            texts = list(texts)
        return np.fromiter(
            (len(t.encode("utf-8", "surrogatepass")) for t in texts),
            dtype=np.int64,
            count=len(texts),
        )

    def tokens_from_measure(self, measures: np.ndarray) -> np.ndarray:
        return (np.asarray(measures, dtype=np.int64) + 3) // 4


def _bpe_bindings():
    """bpe-openai's Rust bindings, loaded without running ``bpe_openai/__init__.py``.

    That ``__init__`` decodes every bundled vocabulary in Python for a model registry the audit
    does not use: 0.55 s CPU, as much as reading a small index. The bindings alone load in 0.02 s
    (``python -X importtime``; docs/performance.md). Any other install layout: the plain import.
    """
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


def _bpe_count_fn(encoding: str) -> Callable[[str], int]:
    """bpe-openai's ``str -> int`` counter for ``encoding`` (counts without building a token list)."""
    try:
        count = _bpe_bindings().tokenizer_for_encoding(encoding).count
    except ImportError as exc:  # pragma: no cover - dependency declared in pyproject
        raise ImportError(
            f"token counter {encoding!r} needs the 'bpe-openai' package "
            "(pip install bpe-openai); or use get_token_counter('estimate')"
        ) from exc
    count("probe")
    return count


@cache
def _make_counter(name: str) -> TokenCounter:
    if name == "estimate":
        return EstimateTokenCounter()
    return BPETokenCounter(name)


def get_token_counter(
    name: str = DEFAULT_TOKEN_COUNTER, token_cache: TokenCache | None = None
) -> TokenCounter:
    """Return the (shared) token counter called ``name``; an exact one answers from ``token_cache`` first.

    Valid names: ``"cl100k_base"`` (default, exact), ``"o200k_base"`` (exact),
    ``"estimate"`` (``ceil(utf8_bytes/4)``). Raises ``ValueError`` for anything else.
    """
    key = str(name).strip().lower() if name is not None else ""
    if key not in TOKEN_COUNTER_NAMES:
        raise ValueError(
            f"unknown token counter {name!r}; valid names are: " + ", ".join(TOKEN_COUNTER_NAMES)
        )
    counter = _make_counter(key)
    return token_cache.counter(counter) if token_cache is not None and counter.exact else counter

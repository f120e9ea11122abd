"""Filler text with the exact cl100k_base token count of the text it replaces (graphrag's batching and map
calls depend only on those counts).

cl100k_base splits a text into pre-tokens with one regular expression (:data:`PRETOKEN`, tiktoken's) and
encodes each on its own, so the filler works per pre-token: a letter run keeps its leading character and
becomes one-token words (:data:`FILLER_WORDS`) with the same count; digits become zeros (:data:`NUMERALS`);
punctuation, whitespace and contractions stay; any other character (symbols, emoji, tag characters, private
use) becomes ASCII punctuation with the same count, or as a leading character one of :data:`SAFE_LEADS`.
A field's first letter run is chosen so that the count also holds after a ``|`` (graphrag's report rows).
Every cell is counted again alone and between ``|``, a mismatch fixed by adding or removing words, else
:class:`FillerError`; the one known exception, exact alone only: a text opening with a quote whose letters
read as a contraction (``'DEPENDENCE'``; 4 report findings over the 22 shared indexes, and graphrag puts no
findings in report rows).
"""

from __future__ import annotations

import itertools
import unicodedata

import regex

from graphrag_audit.graphrag.tokens import get_token_counter

#: tiktoken's cl100k_base pre-tokenisation pattern
PRETOKEN = regex.compile(
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|(?P<lead>[^\r\n\p{L}\p{N}]?)(?P<letters>\p{L}+)|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
#: the words filler text is made of (each one cl100k token alone and after a space)
FILLER_WORDS: tuple[str, ...] = tuple(
    "and any all also are but can for from have her his into just how one our out new now over about after each even good great first other work year way".split()
)
#: a text opening with a quote whose first letters read as a contraction ('s, 't, 'm, 'd, 're, 've, 'll)
_QUOTED = regex.compile(r"'((?i:s|t|m|d|re|ve|ll)\p{L}*)")
_DIGITS = str.maketrans("123456789", "000000000")
#: the places before a space between two non-space characters: no pre-token crosses one, so a text's
#: pre-tokens are its chunks' and each chunk's filler can be cached on its own
_CHUNK = regex.compile(r"(?<=\S)(?= \S)")


#: the characters that may lead a run of filler words in place of an unsafe one
SAFE_LEADS = "#*-=_~/.:;!?@$%&+<>^"
#: zero digits of several scripts: a run of non-ASCII digits becomes as many of these with its count
NUMERALS = "0\u2080\uff10\u0660\U0001d7ce"
#: the suffixes of a replaced punctuation run (after ``*#`` repeated: two tokens per repetition)
_PUNCT = "!#$%&()*+,-./:;<=>?@[\\]^_{}~"
_SUFFIXES = ("", "*", "#", "-", "=", ".", "/", "_", "!", "~", "**", "-*", "*-", "=*", "#*", ".*", "*.", "/*")
#: every suffix of one or two ASCII punctuation characters (tried when those above fail)
_MORE_SUFFIXES = tuple(a + b for a in _PUNCT for b in ("",) + tuple(_PUNCT))


def unsafe(ch: str) -> bool:
    """A character filler never keeps: not ASCII, not Unicode punctuation (P*), not a separator (Z*)."""
    if ch.isascii() or ch in NUMERALS:
        return False
    cat = unicodedata.category(ch)
    return not (cat[0] == "P" or cat[0] == "Z")


class FillerError(ValueError):
    """A text for which no filler with the same token count was found."""


class Filler:
    """Deterministic filler: the same text always gives the same filler."""

    def __init__(self, encoding: str = "cl100k_base"):
        self.counter = get_token_counter(encoding)
        c = self.counter.count
        self.words = tuple(w for w in FILLER_WORDS if c(w) == 1 and c(" " + w) == 1)
        # first words after a lead character: the words, capitalised, and two one-letter words
        self.firsts = self.words + tuple(w.capitalize() for w in self.words) + ("A", "I")
        if len(self.words) < 8:  # pragma: no cover - a tokenizer that splits common words
            raise FillerError(f"{encoding}: too few one-token filler words")
        self._lead_cost: dict[tuple[str, str], int] = {}
        self._runs: dict[tuple[str, str, int], str] = {}
        self._texts: dict[str, str] = {}
        self._pieces: dict[str, str] = {}
        self._chunks: dict[str, str] = {}
        self._pipe: dict[tuple[str, str], list[tuple[str, int, int]]] = {}

    # -- pieces ------------------------------------------------------------------------------
    def _cost(self, lead: str, word: str) -> int:
        key = (lead, word)
        n = self._lead_cost.get(key)
        if n is None:
            n = self._lead_cost[key] = self.counter.count(lead + word)
        return n

    def _words(self, k: int, start: int) -> list[str]:
        ws = self.words
        return [ws[(start + i) % len(ws)] for i in range(k)]

    def _run(self, lead: str, letters: str, *, first: bool) -> str:
        """Filler for one letter pre-token ``lead + letters``; ``first``: the field's first one,
        which may also sit after a ``|`` (its count must then hold in both places)."""
        key = (lead, letters, int(first))
        got = self._runs.get(key)
        if got is not None:
            return got
        c = self.counter.count
        n = c(lead + letters)
        start = len(letters) % len(self.words)
        if lead and unsafe(lead):
            safe = self._runs[key] = self._unsafe_lead(lead, letters, n, start, first)
            return safe
        out: str | None = None
        firsts = self.firsts
        if first and lead != " ":
            # the field's first run also sits after a '|' in a row: there no lead joins it (''), or
            # its lead joins the '|' in a run of punctuation; the count must hold in both places
            other = "|" if lead == "" else ""
            out = self._first_fit(lead, other, n, start, c(lead + letters) - c(other + letters))
        if out is None:
            out = self._fill(lead, n, start)
        if out is None:
            if len(letters) <= 2 and letters.isascii():  # a short run stays (no word of 3+ letters)
                out = lead + letters
            else:  # the cheapest first word, one token too many here: _fix takes it from another run
                rotated = [firsts[(start + j) % len(firsts)] for j in range(len(firsts))]
                out = lead + min(rotated, key=lambda w: self._cost(lead, w))
        self._runs[key] = out
        return out

    def _unsafe_lead(self, lead: str, letters: str, n: int, start: int, first: bool) -> str:
        """Filler for a letter run led by an unsafe character: a safe lead (:data:`SAFE_LEADS`) and words
        with the count ``n`` (a field's first run: also after a ``|``, when some lead and piece allow it)."""
        c = self.counter.count
        if first:
            want = n - c("|" + lead) - c(letters)
            for safe in SAFE_LEADS:
                out = self._first_fit(safe, "", n, start, want + c("|" + safe))
                if out is not None:
                    return out
        # "A": one token for lead and letters, _fix mends the count
        return self._fill(SAFE_LEADS[0], n, start) or SAFE_LEADS[0] + "A"

    def _fill(self, lead: str, n: int, start: int) -> str | None:
        """``lead`` and words with the count ``n``, the first word from :attr:`firsts` (None: none fits)."""
        firsts = self.firsts
        for j in range(len(firsts)):
            w = firsts[(start + j) % len(firsts)]
            k = n - self._cost(lead, w) + 1  # words after the first
            if k >= 1:
                return lead + " ".join([w] + self._words(k - 1, start + j + 1))
        return None

    def _symbols(self, s: str) -> str:
        """A punctuation run holding an unsafe character: ``*#`` repeated and a short suffix, with its
        leading space and line breaks, with the count of ``s`` alone and beside a ``|`` (else alone only)."""
        c = self.counter.count
        m = regex.fullmatch(r"( ?)(.*?)([\r\n]*)", s, flags=regex.S)
        sp, body, trail = m.group(1), m.group(2), m.group(3)
        want = (c(s), c("|" + s), c(s + "|"))
        n = want[0]
        alone = None
        a_range = range(max(0, n // 2 - 3), n // 2 + 3)
        phases = (
            (("",), _SUFFIXES),
            (tuple(_PUNCT), _SUFFIXES),
            (("",), _MORE_SUFFIXES),
            (tuple(_PUNCT), _MORE_SUFFIXES),
        )
        for prefixes, suffixes in phases:
            for pre in prefixes:
                for a in a_range:
                    for suf in suffixes:
                        cand = pre + "*#" * a + suf
                        if not cand or (len(body) >= 2 and len(cand) < 2):
                            continue
                        t = sp + cand + trail
                        k = c(t)
                        if k != n:
                            continue
                        if (k, c("|" + t), c(t + "|")) == want:
                            return t
                        if alone is None:
                            alone = t
        if alone is not None:
            return alone
        raise FillerError("no filler for a run of symbols")

    def _numerals(self, s: str) -> str:
        """A run of one to three non-ASCII digits: as many zeros (:data:`NUMERALS`) with its count."""
        c = self.counter.count
        n = c(s)
        for combo in itertools.product(NUMERALS, repeat=len(s)):
            t = "".join(combo)
            if c(t) == n:
                return t
        raise FillerError("no filler for a run of digits")

    def _first_fit(self, lead: str, other: str, n: int, start: int, diff: int) -> str | None:
        """``lead``, the cheapest first piece whose count after ``lead`` less its count after ``other`` is
        ``diff``, and words up to the count ``n`` (None: no piece fits)."""
        for piece, cost, alt in self._first_pieces(lead, other):
            if cost - alt == diff and cost <= n:
                return lead + " ".join([piece] + self._words(n - cost, start + 1))
        return None

    def _first_pieces(self, lead: str, other: str) -> list[tuple[str, int, int]]:
        """Candidate first pieces (one run of letters) with their counts after ``lead`` and after
        ``other``, cheapest first."""
        key = (lead, other)
        got = self._pipe.get(key)
        if got is None:
            c = self.counter.count
            # after "'" a piece starting with s, t, m, d, r, v or l would read as a contraction
            caps = [chr(x) for x in range(65, 91) if lead != "'" or chr(x) not in "STMDRVL"]
            cands = list(self.firsts) + caps + [x + w for x in caps for w in self.words[:6]]
            got = sorted({(p, c(lead + p), c(other + p)) for p in cands}, key=lambda t: (t[1], t[0]))
            self._pipe[key] = got
        return got

    # -- whole texts ---------------------------------------------------------------------------
    def text(self, value: str) -> str:
        """Filler for ``value`` with its token count alone and between ``|`` separators."""
        if not value:
            return value
        got = self._texts.get(value)
        if got is not None:
            return got
        head, end = self._head(value)
        rest = value[end:]
        parts = [head, "".join(map(self._chunk, _CHUNK.split(rest))) if rest else ""]
        out = self._fix("".join(parts), value)
        if len(self._texts) < 200_000:
            self._texts[value] = out
        return out

    def _head(self, value: str) -> tuple[str, int]:
        """The filler of a text's first pre-token and where that pre-token ends in ``value``."""
        m = PRETOKEN.match(value)
        letters = m.group("letters")
        end = m.end()
        quoted = _QUOTED.match(value) if letters is None else None
        if letters is not None:  # the first run: its count must also hold after a '|'
            return self._run(m.group("lead"), letters, first=True), end
        if quoted is not None:  # "'Two": a contraction ('T) alone, "|'" + "Two" after a '|'
            try:
                return self._quoted(quoted.group(1)), quoted.end()
            except FillerError:  # exact alone; after a '|' possibly not (see _fix)
                pass
        return self._piece(m), end

    def _quoted(self, letters: str) -> str:
        """Filler for a text's leading ``'`` + letters that start with a contraction (``'Two``)."""
        c = self.counter.count
        out = self._first_fit("'", "", c("'" + letters), 0, c("'" + letters) - c(letters))
        if out is not None:
            return out
        raise FillerError("no filler for a quoted word at the start of a text")

    def _chunk(self, chunk: str) -> str:
        """The filler of one chunk (see ``_CHUNK``): its pre-tokens' fillers, cached per chunk."""
        got = self._chunks.get(chunk)
        if got is None:
            got = PRETOKEN.sub(self._piece, chunk)
            if len(self._chunks) < 1_000_000:
                self._chunks[chunk] = got
        return got

    def _piece(self, m) -> str:
        """The filler of one pre-token (``regex`` match): letter runs replaced, digits zeroed."""
        s = m.group(0)
        got = self._pieces.get(s)
        if got is None:
            letters = m.group("letters")
            if letters is not None:
                got = self._run(m.group("lead"), letters, first=False)
            elif s.isascii() and s.isdigit():
                got = s.translate(_DIGITS)
            elif regex.fullmatch(r"\p{N}+", s):
                got = self._numerals(s)
            elif any(unsafe(ch) for ch in s):
                got = self._symbols(s)
            else:
                got = s
            if len(self._pieces) < 1_000_000:
                self._pieces[s] = got
        return got

    def _fix(self, out: str, value: str) -> str:
        """Check the counts (alone and between ``|``); add or drop words at the end of the last
        letter run to fix a difference."""
        c = self.counter.count
        want = (c(value), c("|" + value + "|"))
        got = (c(out), c("|" + out + "|"))
        if got == want:
            return out
        delta = want[0] - got[0]
        if delta != want[1] - got[1]:
            if delta == 0:  # exact alone, not after a '|' (a text opening with a quoted contraction)
                return out
            raise FillerError("filler count differs between contexts")
        # whole words added to the last letter run, or dropped from runs of several words
        runs = list(regex.finditer(r"(?:\p{L}+ )+\p{L}+|\p{L}+", out))
        if not runs:
            raise FillerError("filler count differs and the text holds no word")
        pieces = [m.group(0).split(" ") for m in runs]
        if delta > 0:
            pieces[-1] += self._words(delta, len(pieces[-1]))
        else:
            need = -delta
            for ws in reversed(pieces):
                take = min(need, len(ws) - 1)
                if take:
                    del ws[len(ws) - take :]
                    need -= take
                if not need:
                    break
        parts, at = [], 0
        for m, ws in zip(runs, pieces):
            parts.append(out[at : m.start()])
            parts.append(" ".join(ws))
            at = m.end()
        parts.append(out[at:])
        fixed = "".join(parts)
        if (c(fixed), c("|" + fixed + "|")) != want:
            raise FillerError("no filler with the same token count")
        return fixed

"""The convention every sanitiser applies first: a character that is invisible, moves the cursor or reorders
the line (:data:`INVISIBLE`: Default_Ignorable_Code_Point, C0/C1 controls other than white space, surrogates,
U+FFF9..U+FFFB, noncharacters; Trojan Source, Boucher & Anderson 2021, and tag smuggling) is written as its
Python escape (``\\x1b``, ``\\u202e``), white space runs become one space. Inside ``output_charset("cp1252")``
:func:`plain` also escapes what that encoding cannot hold.
"""

from __future__ import annotations

import codecs
import re
from contextlib import contextmanager
from contextvars import ContextVar

_BMP = (
    "\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f"  # C0/C1 controls; \t\n\v\f\r and NEL are white space
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"
    "\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff"
)
_ASTRAL = "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff" + "".join(
    f"{chr(p * 0x10000 + 0xFFFE)}{chr(p * 0x10000 + 0xFFFF)}" for p in range(1, 17)
)  # noncharacters
#: characters that are never written as they are in human output (see the module docstring)
INVISIBLE = re.compile(f"[{_BMP}{_ASTRAL}]")
# the same test, ten times faster on ordinary titles: the BMP set, or any astral character at all
# (sre checks a class of many astral ranges one range at a time)
_CANDIDATE = re.compile(f"[{_BMP}\U00010000-\U0010ffff]")
#: the GitHub Actions runner reads a legacy ``##[command]`` anywhere in a log line
LEGACY_COMMAND = "##["
LEGACY_COMMAND_ESCAPED = "#\\x23["
#: one escape written by :func:`escape_char` (a cut never ends inside one)
_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})")

_CHARSET: ContextVar[str | None] = ContextVar("graphrag_audit_output_charset", default=None)


def escape_char(ch: str) -> str:
    """One character as its Python escape: ``\\x1b``, ``\\u202e``, ``\\U000e0041``."""
    o = ord(ch)
    if o < 0x100:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def show(text: str) -> str:
    """``text`` with every :data:`INVISIBLE` character written as its escape, nothing else changed."""
    if not _CANDIDATE.search(text):
        return text
    return INVISIBLE.sub(lambda m: "".join(escape_char(ch) for ch in m.group()), text)


def unicode_charset(encoding: str | None) -> str | None:
    """The codec name of ``encoding``, or None when it holds every character (UTF-8/16/32)."""
    if encoding is None:
        return None
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return "ascii"  # an encoding Python does not know: assume the least
    return None if name.startswith("utf") else name


@contextmanager
def output_charset(encoding: str | None):
    """Render for a stream of this encoding: :func:`plain` also escapes what it cannot hold (not UTF)."""
    token = _CHARSET.set(unicode_charset(encoding))
    try:
        yield
    finally:
        _CHARSET.reset(token)


def current_charset() -> str | None:
    """The codec name set by :func:`output_charset` (None: every character can be written)."""
    return _CHARSET.get()


def plain(text, limit: int | None = None) -> str:
    """One line of visible text (module docstring); a legacy ``##[`` workflow command becomes ``#\\x23[``;
    cut to ``limit`` characters with '…' (never inside an escape)."""
    if text is None:
        return ""
    s = text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)
    s = show(s)  # first: \x1c-\x1f are white space to str.split()
    s = " ".join(s.split())  # str.split() splits at str.isspace(), as the regex \s does
    s = s.replace(LEGACY_COMMAND, LEGACY_COMMAND_ESCAPED)
    charset = _CHARSET.get()
    if charset is not None and not s.isascii():
        try:
            s.encode(charset)
        except UnicodeEncodeError:  # the escapes are ASCII: the result always encodes
            s = s.encode(charset, "backslashreplace").decode(charset)
    if limit is None or len(s) <= limit:
        return s
    return s[: cut_point(s, max(limit - 1, 0))] + "…"  # never inside an escape


def cut_point(s: str, n: int) -> int:
    """``n``, or the start of the escape (:func:`escape_char`) that ``s[:n]`` would cut in half."""
    start = s.rfind("\\", max(n - 9, 0), n)  # the longest escape has 10 characters
    if start >= 0:
        m = _ESCAPE.match(s, start)
        if m and m.end() > n:
            return start
    return n

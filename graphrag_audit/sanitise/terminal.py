"""Terminal text (the rich renderers) and CI logs: :func:`for_log` keeps rich's wrapping from starting a
line with a ``::`` workflow command; :func:`visible` escapes every unsafe character of one-line stderr messages.
"""

from __future__ import annotations

import re

from graphrag_audit.sanitise.common import INVISIBLE, LEGACY_COMMAND, LEGACY_COMMAND_ESCAPED, plain

_WORD_COMMAND = re.compile(r"(?<!\S)::")
_COMMAND_START = re.compile(r"^((?:[ \t]|\x1b\[[0-9;]*m)*):(?=:)", re.M)

# every control character (line breaks and tabs included), plus what common.INVISIBLE lists
# (bidi controls, zero-width characters, lone surrogates, ...): shown as escapes, so that a
# hostile file name or cell value cannot drive the terminal, hide text, or break the line
_UNSAFE = re.compile(f"{INVISIBLE.pattern}|[\\x09-\\x0d\\x85\\u2028\\u2029]")


def visible(text: str) -> str:
    """``text`` with every unsafe character written as a Python escape (``\\x1b``, ``\\n``,
    ``\\u202e``) and a legacy ``##[`` workflow command as ``#\\x23[``."""
    s = _UNSAFE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)
    return s.replace(LEGACY_COMMAND, LEGACY_COMMAND_ESCAPED)


def inert_log_lines(text: str) -> str:
    """No line of ``text`` starts (after blanks and colour codes) with ``::``: its first colon is
    written ``\\x3a``. Index text is one-line and escaped by ``plain``, but rich wraps it anywhere."""
    return _COMMAND_START.sub(lambda m: m.group(1) + "\\x3a", text) if "::" in text else text


def for_log(text, limit: int | None = None) -> str:
    """:func:`plain` for text that rich may wrap: a ``::`` starting a word is ``\\x3a:``."""
    s = plain(text, limit)
    return _WORD_COMMAND.sub(r"\\x3a:", s) if "::" in s else s

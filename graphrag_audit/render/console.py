"""Writing rendered text to a console whose encoding may not be UTF-8, and terminals that take no
escape sequences.

Renderers produce ``str``. Whatever reaches stdout goes through :func:`encode_for_stream`, so
``PYTHONIOENCODING=cp1252`` or ``ascii``, a Windows redirect (the ANSI code page) or ``LANG=C``
with ``PYTHONUTF8=0`` never ends in ``UnicodeEncodeError``:

1. Index text (titles, paths, messages) was already escaped for the stream's encoding while
   rendering (the CLI renders inside ``sanitise.common.output_charset(stream_encoding(stdout))``),
   so a Chinese title on a cp1252 console reads ``\\u9ad8\\u5c14\\u592b`` and the columns around
   it still line up.
2. The renderers' own glyphs that the encoding lacks become ASCII, one character for one so
   that tables keep their alignment: rules and tree guides ``─ │ ├ └`` -> ``- | | ```, ``·`` ->
   ``/``, ``—`` and ``–`` -> ``-``, ``…`` -> ``~``, ``› ▸`` -> ``>`` (:data:`GLYPH_FALLBACK`). A
   glyph the encoding has (``·``, ``—`` and ``…`` are in cp1252) is kept.
   The footnote markers ``¹ ² ³ …`` of the per-level tables are chosen before layout instead:
   ``^1 ^2 ^3`` where the encoding lacks them (``render.cells.Footnotes``), so columns stay put; and
   our own text that goes through ``plain`` (the plan's cells) takes the fallbacks first
   (:func:`own_glyphs`), so ``…`` and ``–`` are not written as escapes there.
3. Anything else the encoding cannot hold becomes its Python escape (``errors="backslashreplace"``).

Files written with ``-o`` are always UTF-8 and bypass all of this. On a UTF-8 stream the text is
written unchanged (only lone surrogates, which no encoding holds, would become escapes).

The rich renderers' output may land in a CI log, where the GitHub Actions runner reads a line
that starts (after blanks) with ``::`` as a workflow command, and wrapping can move a ``::`` from
the middle of a title to the start of a line. ``plain_for_log`` (``sanitise.terminal.for_log``)
writes a ``::`` that starts a word (where rich may break the line) as ``\\x3a:`` before layout, so
widths stay exact; ``inert_log_lines`` (``sanitise.terminal``) does the same after layout for the
rare word longer than a line that rich folds right before a ``::``.
"""

from __future__ import annotations

import os
import re

from graphrag_audit.sanitise.common import current_charset, escape_char
from graphrag_audit.sanitise.common import unicode_charset as _unicode_charset

#: ASCII stand-ins for the renderers' own glyphs (one character each: table columns stay put)
GLYPH_FALLBACK = {
    "─": "-",
    "━": "-",
    "═": "=",
    "│": "|",
    "┃": "|",
    "║": "|",
    "├": "|",
    "└": "`",
    "┌": "+",
    "┐": "+",
    "┘": "+",
    "┤": "|",
    "┬": "+",
    "┴": "+",
    "┼": "+",
    "╶": "-",
    "╴": "-",
    "·": "/",
    "—": "-",
    "–": "-",
    "−": "-",
    "…": "~",
    "›": ">",
    "▸": ">",
    "▶": ">",
    "×": "x",
    # not in tables (Markdown, HTML): two characters are fine
    "≥": ">=",
    "≤": "<=",
    "→": "->",
    "∝": "~",
}
_SURROGATE = re.compile("[\ud800-\udfff]")


def own_glyphs(text: str) -> str:
    """Our own text (numbers and words of ours) with the glyphs the current output charset
    (``sanitise.common.output_charset``) lacks already written as their :data:`GLYPH_FALLBACK`,
    before layout: for text that then goes through ``plain`` (which would write them as escapes)."""
    charset = current_charset()
    if charset is None or text.isascii():
        return text
    table = {}
    for ch in set(text):
        if ch in GLYPH_FALLBACK:
            try:
                ch.encode(charset)
            except UnicodeEncodeError:
                table[ord(ch)] = GLYPH_FALLBACK[ch]
    return text.translate(table) if table else text


def stream_encoding(stream) -> str:
    """The encoding a text stream writes with (``utf-8`` when it does not say)."""
    return getattr(stream, "encoding", None) or "utf-8"


def encode_for_stream(text: str, stream) -> str:
    """``text`` made writable to ``stream`` without an encoding error (steps 2 and 3 of the module
    docstring); unchanged when the stream's encoding holds all of it."""
    if text.isascii():
        return text
    charset = _unicode_charset(stream_encoding(stream))
    if charset is None:
        return _SURROGATE.sub(lambda m: escape_char(m.group()), text) if _SURROGATE.search(text) else text
    try:
        text.encode(charset)
        return text
    except UnicodeEncodeError:
        pass
    table = {}
    for ch in set(text):
        if ch.isascii():
            continue
        try:
            ch.encode(charset)
        except UnicodeEncodeError:
            table[ord(ch)] = GLYPH_FALLBACK.get(ch) or escape_char(ch)
    return text.translate(table)


def write_stream(text: str, stream) -> None:
    """Write ``text`` to ``stream`` through :func:`encode_for_stream` and flush."""
    stream.write(encode_for_stream(text, stream))
    stream.flush()


_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.M)


def no_trailing_blanks(text: str) -> str:
    """Every line without its trailing blanks (rich pads tables and wrapped lines), colour codes kept."""
    return _TRAILING.sub(r"\1", text)


def dumb_terminal() -> bool:
    """``TERM=dumb``: the terminal takes no escape sequence (no colour, no cursor movement)."""
    return os.environ.get("TERM", "") == "dumb"

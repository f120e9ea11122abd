"""Writing rendered text to any console encoding (:func:`encode_for_stream`: the renderers' glyphs the
encoding lacks become one ASCII character each, :data:`GLYPH_FALLBACK`; anything else its Python escape)
and to terminals that take no escape sequences. Files written with ``-o`` are always UTF-8."""

from __future__ import annotations

import os
import re

from graphrag_audit.sanitise.common import current_charset, escape_char, unicode_charset

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
    charset = unicode_charset(stream_encoding(stream))
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

"""Writing rendered text to any console encoding: the renderers' glyphs the encoding lacks become
:data:`GLYPH_FALLBACK` (one ASCII character in tables), anything else its Python escape. Files written
with ``-o`` are always UTF-8."""

from __future__ import annotations

import os
import re

from graphrag_audit.sanitise.common import current_charset, escape_char, unicode_charset

#: ASCII stand-ins for the renderers' own glyphs; the last four are never in tables (two characters)
GLYPH_FALLBACK = {
    **dict(zip("─━═│┃║├└┌┐┘┤┬┴┼╶╴·—–−…›▸▶×", "--=||||`+++|+++--/---~>>>x")),
    **{"≥": ">=", "≤": "<=", "→": "->", "∝": "~"},
}
_SURROGATE = re.compile("[\ud800-\udfff]")
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.M)


def _unencodable(text: str, charset: str) -> set[str]:
    """The characters of ``text`` that ``charset`` cannot hold."""
    missing = set()
    for ch in set(text):
        try:
            ch.encode(charset)
        except UnicodeEncodeError:
            missing.add(ch)
    return missing


def own_glyphs(text: str) -> str:
    """Our own text with the glyphs the current output charset lacks written as their
    :data:`GLYPH_FALLBACK`, for text that then goes through ``plain`` (which would escape them)."""
    charset = current_charset()
    if charset is None or text.isascii():
        return text
    return text.translate(
        {ord(ch): GLYPH_FALLBACK[ch] for ch in _unencodable(text, charset) if ch in GLYPH_FALLBACK}
    )


def stream_encoding(stream) -> str:
    """The encoding a text stream writes with (``utf-8`` when it does not say)."""
    return getattr(stream, "encoding", None) or "utf-8"


def encode_for_stream(text: str, stream) -> str:
    """``text`` made writable to ``stream`` without an encoding error; unchanged when the stream's
    encoding holds all of it."""
    if text.isascii():
        return text
    charset = unicode_charset(stream_encoding(stream))
    if charset is None:
        return _SURROGATE.sub(lambda m: escape_char(m.group()), text)
    return text.translate(
        {ord(ch): GLYPH_FALLBACK.get(ch) or escape_char(ch) for ch in _unencodable(text, charset)}
    )


def write_stream(text: str, stream) -> None:
    stream.write(encode_for_stream(text, stream))
    stream.flush()


def no_trailing_blanks(text: str) -> str:
    """Every line without its trailing blanks (rich pads tables and wrapped lines), colour codes kept."""
    return _TRAILING.sub(r"\1", text)


def dumb_terminal() -> bool:
    """``TERM=dumb``: the terminal takes no escape sequence (no colour, no cursor movement)."""
    return os.environ.get("TERM", "") == "dumb"

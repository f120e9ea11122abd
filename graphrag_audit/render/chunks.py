"""Streamed output: small text pieces joined into chunks of about 64 KiB, for renderers that hand
out a document piece by piece (``levels -f json``, ``tree -f json``/``graphml``) instead of one string."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

#: pieces are handed out joined up to about this many characters
CHUNK_CHARS = 1 << 16


def joined(pieces: Iterable[str]) -> Iterator[str]:
    """``pieces`` concatenated into consecutive chunks of at least :data:`CHUNK_CHARS` characters
    (the last may be shorter; read at each call, so tests can make chunks small); ``"".join`` of
    the chunks is ``"".join(pieces)``."""
    buf: list[str] = []
    n = 0
    for piece in pieces:
        buf.append(piece)
        n += len(piece)
        if n >= CHUNK_CHARS:
            yield "".join(buf)
            buf, n = [], 0
    if buf:
        yield "".join(buf)

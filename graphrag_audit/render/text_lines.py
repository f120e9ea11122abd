"""Plain-text lines at a width, for the text renderers that do not use rich (``diff``,
``update-run``): terminal cell widths, wrapping between words, counted nouns.

A line is measured in terminal cells (a CJK character takes two, a combining mark none), so that
``--width`` holds for index paths and messages in any script. Text is wrapped between words; a
word wider than the line (a long path) is cut into pieces that fit. The text must already be
made visible for the terminal (``sanitise.terminal.for_log``): no control characters.
"""

from __future__ import annotations

import unicodedata

from graphrag_audit.render.numbers import number


def cell_width(text: str) -> int:
    """Terminal cells ``text`` takes: 2 per wide or full-width character, 0 per combining mark."""
    if text.isascii():
        return len(text)
    n = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in "WF" else 1
    return n


def wrap(text: str, width: int, indent: str = "", subsequent: str | None = None) -> list[str]:
    """``text`` as lines of at most ``width`` cells, broken between words (a run of spaces counts
    as one): the first line starts with ``indent``, the others with ``subsequent`` (default:
    ``indent`` plus two spaces). A word wider than a line is cut into pieces that fit."""
    rest = indent + "  " if subsequent is None else subsequent
    lines: list[str] = []
    cur, used, empty = indent, cell_width(indent), True
    for word in (w for w in text.split(" ") if w):
        w = cell_width(word)
        if not empty and used + 1 + w <= width:
            cur, used = cur + " " + word, used + 1 + w
            continue
        if not empty:
            lines.append(cur)
            cur, used, empty = rest, cell_width(rest), True
        if used + w <= width:
            cur, used, empty = cur + word, used + w, False
            continue
        for ch in word:  # wider than a line: cut where the line is full
            cw = cell_width(ch)
            if not empty and used + cw > width:
                lines.append(cur)
                cur, used = rest, cell_width(rest)
            cur, used, empty = cur + ch, used + cw, False
    lines.append(cur)
    return lines


def wrap_all(lines: list[str], width: int) -> list[str]:
    """Each line wrapped at ``width`` (:func:`wrap`), its own leading spaces kept as the indent and
    two more for its continuation lines; empty lines kept."""
    out: list[str] = []
    for line in lines:
        if cell_width(line) <= width:
            out.append(line)
            continue
        body = line.lstrip(" ")
        indent = line[: len(line) - len(body)]
        out += wrap(body, width, indent)
    return out


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 community``, ``2,340 communities``: the count with thousands separators and the noun
    in the singular for exactly one (``plural`` default: the noun + ``s``, ``y`` -> ``ies``)."""
    if n == 1:
        return f"{number(n)} {noun}"
    if plural is None:
        plural = noun[:-1] + "ies" if noun.endswith("y") and noun[-2:-1] not in "aeiou" else noun + "s"
    return f"{number(n)} {plural}"

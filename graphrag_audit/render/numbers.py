"""Number formatting shared by every renderer (text, Markdown, HTML, GitHub, plan).

``number`` is the cell format: thousands separators, two decimals for floats, "—" for a value
that does not exist, yes/no for a flag; ``count`` a number with the word that agrees with it. ``share`` is a whole percentage of a total,
``level_label`` a community_level (None: no level filter).
"""

from __future__ import annotations

MISSING = "—"


def number(v) -> str:
    """``1,234``; ``1,234.50`` for a float; ``yes``/``no`` for a bool; ``—`` for None."""
    if v is None:
        return MISSING
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.2f}"
    return f"{v:,}"


def count(n: int, one: str, many: str | None = None) -> str:
    """``n`` with thousands separators and the word that agrees with it: ``1 community``,
    ``2,345 communities`` (``many`` defaults to ``one`` + "s")."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def share(num, den) -> str:
    """``num`` as a whole percentage of ``den`` (``—`` when ``den`` is 0)."""
    return f"{num / den:.0%}" if den else MISSING


def level_label(n) -> str:
    """A community_level: ``2``, or ``None`` for no level filter."""
    return "None" if n is None else str(n)

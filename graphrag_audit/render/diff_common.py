"""What every ``diff`` renderer says the same way: the matching sentence, the before -> after cells."""

from __future__ import annotations

from graphrag_audit.render.numbers import MISSING, level_label, number
from graphrag_audit.results.diff import BY_ID

BEHAVIOUR = {"v2": "graphrag >= 2.0", "v1": "graphrag < 2.0"}


def matching_sentence(diff) -> str:
    c = diff.communities
    key = "titles" if c.entity_key == "title" else "the membership's entity keys"
    if c.matching == BY_ID:
        return (f"communities matched by community number ({c.id_agreement:.0%} of the numbers both indexes hold "
                f"keep a similar member entity set at the same level; entities told apart by {key})")
    agree = "no number in common" if c.id_agreement is None else \
        f"only {c.id_agreement:.0%} of the numbers both hold keep a similar member set"
    return (f"communities matched by member entities (the numbers were reallocated: {agree}; a community matches "
            f"the one with the same member entities at the same level; entities told apart by {key})")


def community_sentence(diff) -> str:
    c = diff.communities
    reasons = ", ".join(f"{k} {v:,}" for k, v in c.reasons.items() if v)
    changed = f"{len(c.changed):,} changed" + (f" ({reasons})" if reasons else "")
    return (f"communities: {c.old_communities:,} before, {c.new_communities:,} after; {len(c.added):,} added, "
            f"{len(c.removed):,} removed, {changed}, {c.matched - len(c.changed):,} unchanged")


def arrow(old, new, fmt=number) -> str:
    a = MISSING if old is None else fmt(old)
    b = MISSING if new is None else fmt(new)
    return a if a == b else f"{a} -> {b}"


def pct(v) -> str:
    return f"{v:.1%}"


def selection_cells(s) -> list[str]:
    """level, behaviour, reports, +added, -removed, ~changed, tokens, map calls, coverage."""
    o, n = s.old, s.new

    def get(side, name):
        return None if side is None else getattr(side, name)

    return [level_label(s.community_level), BEHAVIOUR.get(s.behaviour, s.behaviour),
            arrow(get(o, "reports"), get(n, "reports")), f"+{len(s.added):,}", f"-{len(s.removed):,}",
            f"~{len(s.changed):,}", arrow(get(o, "tokens"), get(n, "tokens")),
            arrow(get(o, "map_calls"), get(n, "map_calls")), arrow(get(o, "coverage"), get(n, "coverage"), pct)]


HEADERS = ["level", "behaviour", "reports", "added", "removed", "changed", "tokens", "map calls", "coverage"]


def verdict(diff) -> str:
    if diff.unchanged:
        return "no change: both indexes send the same reports at every community_level"
    k = len(diff.regressions)
    return f"{k} regression{'s' if k != 1 else ''} at community_level {diff.level}" if k else \
        f"no regression at community_level {diff.level}"

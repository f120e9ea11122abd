"""What every ``diff`` renderer says the same way, ``hyp.`` marking what no real graphrag sends."""

from __future__ import annotations

from graphrag_audit.render.cells import BEHAVIOUR_WHO, MISSING, count, level_label, number
from graphrag_audit.results.audit import EXACT
from graphrag_audit.results.diff import BY_ID

HYP = "hyp."
HEADERS = ["level", "behaviour", "reports", "added", "removed", "changed", "tokens", "map calls", "coverage"]


def matching_sentence(diff) -> str:
    c = diff.communities
    key = "titles" if c.entity_key == "title" else "the membership's entity keys"
    if c.matching == BY_ID:
        return (
            f"communities matched by community number ({c.id_agreement:.0%} of the numbers both indexes hold "
            f"keep a similar member entity set at the same level; entities told apart by {key})"
        )
    agree = (
        "no number in common"
        if c.id_agreement is None
        else f"only {c.id_agreement:.0%} of the numbers both hold keep a similar member set"
    )
    return (
        f"communities matched by member entities (the numbers were reallocated: {agree}; a community matches "
        f"the one with the same member entities at the same level; entities told apart by {key})"
    )


def community_sentence(diff) -> str:
    c = diff.communities
    reasons = ", ".join(f"{k} {v:,}" for k, v in c.reasons.items() if v)
    changed = f"{len(c.changed):,} changed" + (f" ({reasons})" if reasons else "")
    return (
        f"communities: {c.old_communities:,} before, {c.new_communities:,} after; {len(c.added):,} added, "
        f"{len(c.removed):,} removed, {changed}, {c.matched - len(c.changed):,} unchanged"
    )


def _hyp(side) -> bool:
    """That index's selection is not one a real graphrag sends."""
    return side is not None and side.status is not None and side.status != EXACT


def selection_cells(s) -> list[str]:
    """The cells under :data:`HEADERS`: ``old -> new``, or one value when both read the same."""

    def arrow(name, fmt=number, marked=False):
        sides = [
            MISSING
            if x is None or getattr(x, name) is None
            else (f"{HYP} " if marked and _hyp(x) else "") + fmt(getattr(x, name))
            for x in (s.old, s.new)
        ]
        return sides[0] if sides[0] == sides[1] else " -> ".join(sides)

    return [
        level_label(s.community_level),
        BEHAVIOUR_WHO.get(s.behaviour, s.behaviour),
        arrow("reports", marked=True),
        f"+{len(s.added):,}",
        f"-{len(s.removed):,}",
        f"~{len(s.changed):,}",
        arrow("tokens"),
        arrow("map_calls"),
        arrow("coverage", lambda v: f"{v:.1%}"),
    ]


def hyp_legend(diff) -> str | None:
    """The line under the table explaining ``hyp.`` (None when no cell is marked)."""
    if not any(_hyp(s.old) or _hyp(s.new) for s in diff.selections):
        return None
    judged = (
        "Judged as regressions all the same (--include-hypothetical)."
        if diff.limits.include_hypothetical
        else "Their changes are shown, never judged as regressions (--include-hypothetical judges them)."
    )
    return (
        f"{HYP} = hypothetical: no real graphrag of that line sends this selection on that index; the row's "
        f"numbers are its rule applied to the rebuilt tree (levels says why). {judged}"
    )


def hypothetical_heading(diff) -> str:
    return (
        f"hypothetical changes at community_level {diff.level}, not judged (--include-hypothetical "
        f"judges them): {number(len(diff.hypothetical_changes))}"
    )


def verdict(diff) -> str:
    if diff.unchanged:
        return "no change: both indexes send the same reports at every community_level"
    k = len(diff.regressions)
    head = (
        f"{count(k, 'regression')} at community_level {diff.level}"
        if k
        else f"no regression at community_level {diff.level}"
    )
    h = len(diff.hypothetical_changes)
    return head + (f" ({count(h, 'hypothetical change')} not judged, {HYP})" if h else "")

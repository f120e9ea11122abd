"""``graphrag-audit explain``: one rule's page (or the list of rules) as plain text, wrapped at
word boundaries. The text is the package's own (rules.py), the same docs/rules.md is made from."""

from __future__ import annotations

import textwrap

from graphrag_audit.rules import RULE_NOTES, RULES, Rule


def _para(label: str, text: str, width: int) -> list[str]:
    body = f"{label}{text}" if label else text
    return textwrap.wrap(
        body, width=width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    ) or [label.rstrip()]


def rule_page(rule: Rule, width: int = 100) -> str:
    """The page of one rule: id and title (what it means, said once), severity, the notes, how to
    fix it."""
    width = max(40, width)
    lines = _para("", f"{rule.id}: {rule.title}", width) + ["", f"severity: {rule.severity}"]
    note = RULE_NOTES.get(rule.id)
    if note:
        lines += [""] + _para("", note, width)
    lines += [""] + _para("How to fix: ", rule.fix, width)
    lines += ["", "docs/rules.md has every rule; `graphrag-audit explain` lists them."]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def rule_list(width: int = 100) -> str:
    """Every rule: id, severity and title, one rule a line (wrapped under the title when narrow)."""
    width = max(40, width)
    idw = max(len(r) for r in RULES)
    lines = [f"{len(RULES)} rules (graphrag-audit explain RULE prints one):", ""]
    for r in sorted(RULES.values(), key=lambda r: r.id):
        head = f"{r.id:<{idw}}  {r.severity:<7}  "
        lines += textwrap.wrap(
            head + r.title,
            width=width,
            subsequent_indent=" " * len(head),
            break_long_words=False,
            break_on_hyphens=False,
        )
    return "\n".join(line.rstrip() for line in lines) + "\n"

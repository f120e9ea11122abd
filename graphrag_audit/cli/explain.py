"""``graphrag-audit explain [RULE]``: a finding rule's page (severity, what it means, how to fix
it), or every rule's id, severity and title when no rule is given."""

from __future__ import annotations

from typing import Annotated

import typer

from graphrag_audit.cli.options import Width


def explain_cmd(
    rule: Annotated[
        str | None,
        typer.Argument(
            metavar="[RULE]", help="A rule id as findings show it (e.g. v2-inflation); none lists every rule."
        ),
    ] = None,
    width: Width = None,
):
    """Explain a finding rule: its severity, what it means and how to fix it (no RULE: list the rules)."""
    from graphrag_audit.cli.run import fail, text_width, write_payload
    from graphrag_audit.render.text import rule_list, rule_page
    from graphrag_audit.rules import RULES

    cols = text_width(width, None)
    if rule is None:
        write_payload(rule_list(cols), None)
        return
    found = RULES.get(rule.strip().lower())
    if found is None:
        raise fail(f"explain: unknown rule {rule[:60]!r} ({_close(rule)})")
    write_payload(rule_page(found, cols), None)


def _close(name: str) -> str:
    """'did you mean a, b?' from the rule ids close to ``name``, else where the list is."""
    import difflib

    from graphrag_audit.rules import RULES

    key = name.strip().lower()
    ids = sorted(RULES)
    near = difflib.get_close_matches(key, ids, n=3, cutoff=0.6)
    near += [i for i in ids if key and len(key) >= 3 and key in i and i not in near][: 3 - len(near)]
    if near:
        return "did you mean " + ", ".join(near) + "?"
    return "graphrag-audit explain lists every rule"

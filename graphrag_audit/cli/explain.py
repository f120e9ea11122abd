"""``graphrag-audit explain [RULE]``: a finding rule's page (severity, what it means, how to fix
it), or every rule's id, severity and title when no rule is given."""

from __future__ import annotations

from typing import Annotated

import typer

import graphrag_audit.cli.options as options


def explain_cmd(
    rule: Annotated[
        str | None,
        typer.Argument(
            metavar="[RULE]", help="A rule id as findings show it (e.g. v2-inflation); none lists every rule."
        ),
    ] = None,
    width: options.Width = None,
):
    """Explain a finding rule: its severity, what it means and how to fix it (no RULE: list the rules)."""
    from graphrag_audit.cli.run import fail, text_width, write_payload
    from graphrag_audit.render.text import rule_list, rule_page
    from graphrag_audit.rules import RULES

    cols = text_width(width, None)
    if rule is None:
        write_payload(rule_list(cols), None)
        return
    key = rule.strip().lower()
    found = RULES.get(key)
    if found is None:  # 'did you mean a, b?' from the rule ids close to the name, else where the list is
        import difflib

        near = difflib.get_close_matches(key, sorted(RULES), n=3, cutoff=0.6)
        near += [i for i in sorted(RULES) if len(key) >= 3 and key in i and i not in near][: 3 - len(near)]
        hint = "did you mean " + ", ".join(near) + "?" if near else "graphrag-audit explain lists every rule"
        raise fail(f"explain: unknown rule {rule[:60]!r} ({hint})")
    write_payload(rule_page(found, cols), None)

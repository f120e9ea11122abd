"""The words of a ``--verify`` result, shared by the text and Markdown renderers: "agrees" only when graphrag
returned the audit's selection at every level. ``clean`` escapes untrusted text, ``code`` command names."""

from __future__ import annotations

from collections.abc import Callable

from graphrag_audit.render.cells import level_label, number
from graphrag_audit.results.verify import (
    DynamicLevelCheck,
    DynamicScenarioCheck,
    LevelCheck,
    VerifyResult,
)


def result_word(x: LevelCheck) -> str:
    """One word or two for a level's row: what happened on the Python API path."""
    s = x.selection.status
    if s == "graphrag_raised":
        return "graphrag raised"
    if s == "differs":
        return "differs"
    if x.selection.expected_error_not_raised:
        return "no error (one was predicted)"
    if x.map_calls is not None and (not x.map_calls.agrees or x.map_calls.context_error):
        return "map calls differ"
    if x.graphrag_query is not None and x.graphrag_query.status != "agrees":
        return "agrees (Python API)"
    return "agrees" if x.agree else "differs"


def _levels_phrase(levels: list, all_levels: list) -> str:
    if len(all_levels) > 1 and len(levels) == len(all_levels):
        return "every community_level"
    return "N=" + ", ".join(level_label(n) for n in levels)


def _context_problem(x: LevelCheck, clean: Callable) -> str | None:
    """What disagrees in graphrag's context building at one level."""
    m = x.map_calls
    if m is None:
        return None
    head = f"N={level_label(x.community_level)}: "
    if m.context_error:
        return head + f"graphrag's context building failed ({clean(m.context_error, 80)})"
    if m.map_calls_agree is False:
        return head + (
            f"graphrag {number(m.graphrag_map_calls)} vs audit {number(m.audit_map_calls)} map "
            f"call{'' if m.audit_map_calls == 1 else 's'}"
        )
    if m.context_tokens_agree is False or m.batches_agree is False:
        first = m.first_differing_batch
        return head + (
            f"same {number(m.graphrag_map_calls)} map call{'' if m.graphrag_map_calls == 1 else 's'} but graphrag "
            f"counts {number(m.graphrag_context_tokens)} vs audit {number(m.audit_context_tokens)} tokens"
            + ("" if first is None else f" (first differing batch {first})")
        )
    if m.texts_agree is False:
        batches = ", ".join(str(k) for k in m.texts_differ_in_batches)
        return head + f"same batches, but the text sent differs in batch(es) {batches}"
    if m.context_error_expected is False:
        return head + "graphrag's context building did not fail where the audit predicted it would"
    return None


def _path_parts(rows, path: str, who_raises: str, who_count: str, clean: Callable) -> tuple[list[str], bool]:
    """(problems, any real disagreement) on the load path ``path``: "selection" (Python API) or "graphrag_query"."""
    raised: dict[str, list[LevelCheck]] = {}  # exception type -> the levels where graphrag raised it
    for x in rows:
        sel = getattr(x, path)
        if sel.status == "graphrag_raised":
            raised.setdefault(str(sel.graphrag_error or "").split(":", 1)[0] or "an error", []).append(x)
    all_levels = [x.community_level for x in rows]
    parts = []
    for etype, xs in raised.items():
        first = getattr(xs[0], path)
        note = clean(first.graphrag_error or etype, 240)
        if first.expected:
            note += "; the audit predicted " + clean(first.expected, 200)
        where = _levels_phrase([x.community_level for x in xs], all_levels)
        parts.append(f"{who_raises} raises {clean(etype, 60)} at {where} ({note})")
    disagree = False
    for x in rows:
        sel, head = getattr(x, path), f"N={level_label(x.community_level)}: "
        problem = None
        if sel.status == "differs":
            only = [f"{len(sel.only_graphrag)} only in graphrag's"] if sel.only_graphrag else []
            only += [f"{len(sel.only_audit)} only in the audit's"] if sel.only_audit else []
            problem = (
                f"{head}{who_count}{number(sel.graphrag_count)} vs audit {number(x.audit_count)} reports"
                + (f" ({', '.join(only)})" if only else "")
            )
        elif sel.status == "agrees" and sel.expected_error_not_raised:
            problem = (
                f"{head}{who_count}returned the audit's selection "
                f"where the audit predicted an error ({clean(sel.expected, 120)})"
            )
        elif sel.status == "agrees" and path == "selection":
            problem = _context_problem(x, clean)
        if problem is not None:
            parts.append(problem)
            disagree = True
    return parts, disagree


DYNAMIC_STATUS_WORD = {
    "agrees": "agrees",
    "differs": "DIFFERS",
    "graphrag_raised": "graphrag raised",
    "not_run": "not run",
}
SCENARIO_LABEL = {"none_relevant": "none relevant", "all_relevant": "all relevant", "what_if": "what-if"}


def _scenario_problem(name: str, sc: DynamicScenarioCheck, clean: Callable) -> str:
    """What one scenario's comparison found when it is not agreement."""
    label = SCENARIO_LABEL.get(name, clean(name, 40))
    if sc.status == "not_run":
        return f"{label}: not run ({clean(sc.reason, 160)})"
    if sc.status == "graphrag_raised":
        note = clean(sc.graphrag_error, 160)
        if sc.expected:
            note += "; the audit predicted " + clean(sc.expected, 120)
        return f"{label}: graphrag raised {note}"
    if sc.expected_error_not_raised:
        return (
            f"{label}: graphrag returned {number(sc.graphrag_kept)} reports after "
            f"{number(sc.graphrag_rating_calls)} rating calls where the audit predicted "
            + clean(sc.expected, 120)
        )
    parts = []
    if sc.graphrag_rating_calls != sc.audit_rating_calls:
        parts.append(
            f"graphrag {number(sc.graphrag_rating_calls)} vs audit "
            f"{number(sc.audit_rating_calls)} rating calls"
        )
    if sc.graphrag_waves != sc.audit_waves:
        g, a = ([int(x) for x in w or []] for w in (sc.graphrag_waves, sc.audit_waves))
        parts.append(f"waves {g} vs {a}")
    if sc.only_graphrag_kept or sc.only_audit_kept or sc.graphrag_kept != sc.audit_kept:
        parts.append(
            f"kept {number(sc.graphrag_kept)} vs {number(sc.audit_kept)} reports"
            f" ({len(sc.only_graphrag_kept or ())} only graphrag's, "
            f"{len(sc.only_audit_kept or ())} only the audit's)"
        )
    return f"{label}: " + ("; ".join(parts) or "differs")


def _dynamic_level_phrase(level: int | None, d: DynamicLevelCheck, clean: Callable) -> str:
    """One level of the dynamic comparison: "N=1 agrees (none relevant 88, all relevant 88 rating calls)"."""
    head = f"N={level_label(level)} "
    scen = d.scenarios
    if d.status == "not_run" and not scen:
        return head + "not run (" + clean(d.reason, 160) + ")"
    if d.status == "agrees":
        calls = ", ".join(
            f"{SCENARIO_LABEL.get(k, clean(k, 40))} {number(sc.graphrag_rating_calls)}"
            for k, sc in scen.items()
        )
        return head + f"agrees ({calls} rating calls)"
    problems = [_scenario_problem(k, sc, clean) for k, sc in scen.items() if sc.status != "agrees"]
    return head + DYNAMIC_STATUS_WORD.get(d.status, clean(d.status, 40)) + ": " + "; ".join(problems)


def dynamic_summary(v: VerifyResult, clean: Callable) -> tuple[str, str] | None:
    """(kind: "agrees", "raised", "disagrees" or "not_run", sentence) of the dynamic comparison, or None."""
    dyn = v.dynamic
    if dyn is None:
        return None
    version = clean(v.graphrag_version)
    if not dyn.compared:
        return "not_run", f"dynamic selection not compared: {clean(dyn.reason, 240)}"
    st = dyn.settings
    knobs = (
        ""
        if st is None
        else f"threshold {st.threshold}, num_repeats {st.num_repeats}, max_level {st.max_level}"
        f", keep_parent {'on' if st.keep_parent else 'off'}"
    )
    rows = [(x.community_level, x.dynamic) for x in v.levels if x.dynamic is not None]
    statuses = [d.status for _, d in rows]
    scenarios = ", ".join(SCENARIO_LABEL.get(s, clean(s, 40)) for s in dyn.scenarios)
    who = (
        f"graphrag {version}'s DynamicCommunitySelection (the {clean(dyn.family)} line, "
        f"stub rater; {scenarios}; {knobs})"
    )
    all_levels = [lv for lv, _ in rows]
    raised: dict[tuple, list] = {}  # levels where every scenario raised the same error, grouped by it
    parts: list = []
    for lv, d in rows:
        errors = {sc.graphrag_error for sc in d.scenarios.values()}
        if d.status == "graphrag_raised" and len(errors) == 1 and None not in errors:
            key = (next(iter(errors)), d.expected)
            if key not in raised:
                raised[key] = []
                parts.append(key)
            raised[key].append(lv)
        else:
            parts.append(_dynamic_level_phrase(lv, d, clean))
    out = []
    for p in parts:
        if isinstance(p, tuple):
            note = "; the audit predicted " + clean(p[1], 120) if p[1] else "; the audit predicted no error"
            out.append(f"graphrag raised {clean(p[0], 160)} at {_levels_phrase(raised[p], all_levels)}{note}")
        else:
            out.append(p)
    per_level = "; ".join(out)
    if "differs" in statuses:
        kind, verb = "disagrees", "DISAGREES with the audit's simulation"
    elif "graphrag_raised" in statuses:
        kind, verb = "raised", "does not select at every community_level"
    else:
        kind, verb = "agrees", "gives the audit's waves, rating calls and kept reports"
    return kind, f"{who} {verb}: {per_level}"


def summary(v: VerifyResult, label: str, clean: Callable, code: Callable) -> tuple[str, str]:
    """(kind, sentence) of an available verify result; kind is "agrees", "raised" or "disagrees"."""
    version = clean(v.graphrag_version)
    mc, rows, qp = v.map_calls, v.levels, v.graphrag_query
    mc_compared = bool(mc is not None and mc.compared)
    q_loaded = bool(qp and qp.loaded)
    q_note = ""
    if qp and not q_loaded:
        q_note = f"; {code('graphrag query')} cannot load this index ({clean(qp.load_error, 160)})"
    if v.static_agree:
        line = f"graphrag {version}'s read_indexer_reports agrees with the {label} selection at every community_level"
        if q_loaded:
            line += (
                ", with the tables loaded both as its Python API does (pd.read_parquet) and as "
                f"{code('graphrag query')} does (its typed DataReader)"
            )
        elif qp:
            line += " (tables read with pd.read_parquet, as its Python API does)"
        if mc is not None and mc.compared:
            line += (
                ", and its build_community_context makes the same map calls (same reports, tokens and text "
                f"in every batch; {clean(mc.tokenizer)}, {number(mc.max_context_tokens)} tokens per batch)"
            )
        elif mc is not None and mc.reason and "--no-costs" not in mc.reason:
            line += f" (map calls not compared: {clean(mc.reason, 120)})"
        return "agrees", line + q_note
    if qp:
        pandas = f", pandas {clean(v.pandas_version)}" if v.pandas_version else ""
        api_who, api_count = (
            f"its Python API (tables read with pd.read_parquet{pandas})",
            "Python API: graphrag ",
        )
    else:
        api_who, api_count = "its read_indexer_reports", "graphrag "
    parts, disagree = _path_parts(rows, "selection", api_who, api_count, clean)
    q_rows = [x for x in rows if x.graphrag_query is not None]
    if q_loaded and q_rows:
        q_who = code("graphrag query") + " (typed DataReader, ids cast to int64)"
        q_parts, q_disagree = _path_parts(
            q_rows, "graphrag_query", q_who, code("graphrag query") + ": graphrag ", clean
        )
        disagree = disagree or q_disagree
        parts += q_parts
        if not q_parts and not all(x.selection.status == "agrees" for x in rows):
            via_query = [
                m for x in rows if (m := x.map_calls) is not None and m.load_path == "graphrag_query"
            ]
            same_calls = len(via_query) == len(rows) and all(
                m.map_calls_agree and m.batches_agree and m.texts_agree for m in via_query
            )
            same = " and, on it, the same map calls" if same_calls else ""
            parts.append(f"{q_who} reads it: the audit's selection at every community_level{same}")
    elif qp and not q_loaded:
        parts.append(q_note[2:])
    if not parts:
        parts.append("no community_level was compared")
    if not disagree:
        kind, head = "raised", f"graphrag {version} does not return a selection at every community_level"
    else:
        what = "audit" if mc_compared else "selection"
        kind, head = "disagrees", f"graphrag {version} DISAGREES with the {label} {what}"
    return kind, head + ": " + "; ".join(parts)

"""The words of a ``--verify`` result, shared by the text and Markdown renderers.

Rules the wording keeps (issue 13):

* "agrees at every community_level" is said only when graphrag returned a selection at every
  level and each equals the audit's (``verify.agree``); a level where graphrag raised is reported
  as "raises ...", never as agreement, even where the audit predicted the failure.
* When graphrag loads tables two ways (the Python API's plain ``pd.read_parquet`` and
  ``graphrag query``'s typed reader, graphrag >= 3.0.2), both are named where they differ.

Untrusted text (versions, error messages) goes through ``clean``; ``code`` formats the fixed
command name (backticks in Markdown)."""

from __future__ import annotations

from typing import Callable

from graphrag_audit.render.numbers import level_label, number

SELECTION_STATUSES = ("agrees", "differs", "graphrag_raised")
_CONTEXT_KEYS = ("map_calls_agree", "context_tokens_agree", "batches_agree", "texts_agree",
                 "context_error_expected")


def status_of(x: dict) -> str:
    """A level's selection status; derived for dicts written before ``status`` existed."""
    s = x.get("status")
    if s in SELECTION_STATUSES:
        return s
    if x.get("graphrag_error"):
        return "graphrag_raised"
    return "agrees" if x.get("selection_agree", x.get("agree")) else "differs"


def result_word(x: dict) -> str:
    """One word or two for a level's row: what happened on the Python API path."""
    s = status_of(x)
    if s == "graphrag_raised":
        return "graphrag raised"
    if s == "differs":
        return "differs"
    if x.get("expected_error_not_raised"):
        return "no error (one was predicted)"
    if any(x.get(k) is False for k in _CONTEXT_KEYS) or x.get("context_error"):
        return "map calls differ"
    q = x.get("graphrag_query")
    if isinstance(q, dict) and status_of(q) != "agrees":
        return "agrees (Python API)"
    return "agrees" if x.get("agree", True) else "differs"


def query_path(v: dict) -> dict | None:
    return (v.get("load_paths") or {}).get("graphrag_query")


def _levels_phrase(levels: list, all_levels: list) -> str:
    if len(all_levels) > 1 and len(levels) == len(all_levels):
        return "every community_level"
    return "N=" + ", ".join(level_label(n) for n in levels)


def _raised_parts(rows: list[dict], all_levels: list, who: str, clean: Callable) -> list[str]:
    """"{who} raises {Type} at N=..., (first message; predicted: ...)", one part per exception type."""
    groups: dict[str, list[dict]] = {}
    for x in rows:
        err = str(x.get("graphrag_error") or "")
        groups.setdefault(err.split(":", 1)[0] or "an error", []).append(x)
    parts = []
    for etype, xs in groups.items():
        first = xs[0]
        note = clean(first.get("graphrag_error") or etype, 240)
        if first.get("expected"):
            note += "; the audit predicted " + clean(first["expected"], 200)
        parts.append(f"{who} raises {clean(etype, 60)} at "
                     f"{_levels_phrase([x['community_level'] for x in xs], all_levels)} ({note})")
    return parts


def _differ_part(x: dict, who: str) -> str:
    head = f"N={level_label(x['community_level'])}: "
    extra = []
    if x.get("only_graphrag"):
        extra.append(f"{len(x['only_graphrag'])} only in graphrag's")
    if x.get("only_audit"):
        extra.append(f"{len(x['only_audit'])} only in the audit's")
    return (head + f"{who}{number(x.get('graphrag_count'))} vs audit {number(x.get('audit_count'))} reports"
            + (f" ({', '.join(extra)})" if extra else ""))


def context_problem(x: dict, clean: Callable) -> str | None:
    """What disagrees in graphrag's context building at one level (the selection agreeing)."""
    head = f"N={level_label(x['community_level'])}: "
    if x.get("context_error"):
        return head + f"graphrag's context building failed ({clean(x['context_error'], 80)})"
    if x.get("map_calls_agree") is False:
        return head + f"graphrag {x.get('graphrag_map_calls')} vs audit {x.get('audit_map_calls')} map calls"
    if x.get("context_tokens_agree") is False or x.get("batches_agree") is False:
        return (head + f"same {x.get('graphrag_map_calls')} map calls but graphrag counts "
                f"{number(x.get('graphrag_context_tokens'))} vs audit {number(x.get('audit_context_tokens'))} tokens"
                + (f" (first differing batch {x['first_differing_batch']})"
                   if x.get("first_differing_batch") is not None else ""))
    if x.get("texts_agree") is False:
        return head + "same batches, but the text sent differs in batch(es) " + ", ".join(
            str(k) for k in x.get("texts_differ_in_batches", []))
    if x.get("context_error_expected") is False:
        return head + "graphrag's context building did not fail where the audit predicted it would"
    return None


def _path_parts(rows: list[dict], who_raises: str, who_count: str, clean: Callable,
                with_context: bool) -> tuple[list[str], bool]:
    """Problems on one load path: (parts, any real disagreement)."""
    all_levels = [x["community_level"] for x in rows]
    raised = [x for x in rows if status_of(x) == "graphrag_raised"]
    parts = _raised_parts(raised, all_levels, who_raises, clean) if raised else []
    disagree = False
    for x in rows:
        s = status_of(x)
        if s == "differs":
            parts.append(_differ_part(x, who_count))
            disagree = True
        elif s == "agrees" and x.get("expected_error_not_raised"):
            parts.append(f"N={level_label(x['community_level'])}: {who_count}returned the audit's selection "
                         f"where the audit predicted an error ({clean(x.get('expected'), 120)})")
            disagree = True
        elif s == "agrees" and with_context:
            p = context_problem(x, clean)
            if p is not None:
                parts.append(p)
                disagree = True
    return parts, disagree


def static_agree(v: dict) -> bool:
    """Did the selection and map-call comparisons agree at every level (``verify.agree`` without the
    dynamic-selection comparison, which ``dynamic_summary`` words)?"""
    if "dynamic" not in v:
        return bool(v.get("agree"))
    rows = v.get("levels") or []
    return bool(rows) and all(x.get("agree") for x in rows)


DYNAMIC_STATUS_WORD = {"agrees": "agrees", "differs": "DIFFERS", "graphrag_raised": "graphrag raised",
                       "not_run": "not run"}
SCENARIO_LABEL = {"none_relevant": "none relevant", "all_relevant": "all relevant", "what_if": "what-if"}


def _waves(w) -> str:
    return "[" + ", ".join(str(int(x)) for x in (w or [])) + "]"


def scenario_problem(name: str, sc: dict, clean: Callable) -> str:
    """What one scenario's comparison found, when it is not agreement."""
    label = SCENARIO_LABEL.get(name, clean(name, 40))
    if sc.get("status") == "not_run":
        return f"{label}: not run ({clean(sc.get('reason'), 160)})"
    if sc.get("status") == "graphrag_raised":
        note = clean(sc.get("graphrag_error"), 160)
        if sc.get("expected"):
            note += "; the audit predicted " + clean(sc["expected"], 120)
        return f"{label}: graphrag raised {note}"
    if sc.get("expected_error_not_raised"):
        return (f"{label}: graphrag returned {number(sc.get('graphrag_kept'))} reports after "
                f"{number(sc.get('graphrag_rating_calls'))} rating calls where the audit predicted "
                + clean(sc.get("expected"), 120))
    parts = []
    if sc.get("graphrag_rating_calls") != sc.get("audit_rating_calls"):
        parts.append(f"graphrag {number(sc.get('graphrag_rating_calls'))} vs audit "
                     f"{number(sc.get('audit_rating_calls'))} rating calls")
    if sc.get("graphrag_waves") != sc.get("audit_waves"):
        parts.append(f"waves {_waves(sc.get('graphrag_waves'))} vs {_waves(sc.get('audit_waves'))}")
    if sc.get("only_graphrag_kept") or sc.get("only_audit_kept") or sc.get("graphrag_kept") != sc.get("audit_kept"):
        parts.append(f"kept {number(sc.get('graphrag_kept'))} vs {number(sc.get('audit_kept'))} reports"
                     f" ({len(sc.get('only_graphrag_kept') or [])} only graphrag's, "
                     f"{len(sc.get('only_audit_kept') or [])} only the audit's)")
    return f"{label}: " + ("; ".join(parts) or "differs")


def dynamic_level_phrase(x: dict, clean: Callable) -> str:
    """One level of the dynamic comparison: "N=1 agrees (none relevant 88, all relevant 88 rating calls)"."""
    d = x.get("dynamic") or {}
    head = f"N={level_label(x['community_level'])} "
    status = d.get("status")
    scen = d.get("scenarios") or {}
    if status == "not_run" and not scen:
        return head + "not run (" + clean(d.get("reason"), 160) + ")"
    if status == "agrees":
        calls = ", ".join(f"{SCENARIO_LABEL.get(k, clean(k, 40))} {number(sc.get('graphrag_rating_calls'))}"
                          for k, sc in scen.items())
        return head + f"agrees ({calls} rating calls)"
    errors = {sc.get("graphrag_error") for sc in scen.values()}
    if status == "graphrag_raised" and len(errors) == 1 and None not in errors and all(
            sc.get("status") == "graphrag_raised" for sc in scen.values()):
        note = clean(next(iter(errors)), 160)
        if d.get("expected"):
            note += "; the audit predicted " + clean(d["expected"], 120)
        return head + f"graphrag raised {note}"
    problems = [scenario_problem(k, sc, clean) for k, sc in scen.items() if sc.get("status") != "agrees"]
    return head + DYNAMIC_STATUS_WORD.get(status, clean(status, 40)) + ": " + "; ".join(problems)


def dynamic_summary(v: dict, clean: Callable) -> tuple[str, str] | None:
    """(kind, sentence) of the dynamic-selection comparison, or None when the result has none;
    kind is "agrees", "raised", "disagrees" or "not_run"."""
    dyn = v.get("dynamic")
    if not isinstance(dyn, dict):
        return None
    version = clean(v.get("graphrag_version"))
    if not dyn.get("compared"):
        return "not_run", f"dynamic selection not compared: {clean(dyn.get('reason'), 240)}"
    st = dyn.get("settings") or {}
    knobs = (f"threshold {st.get('threshold')}, num_repeats {st.get('num_repeats')}, max_level {st.get('max_level')}"
             f", keep_parent {'on' if st.get('keep_parent') else 'off'}")
    rows = [x for x in v.get("levels") or [] if isinstance(x.get("dynamic"), dict)]
    statuses = [x["dynamic"].get("status") for x in rows]
    scenarios = ", ".join(SCENARIO_LABEL.get(s, clean(s, 40)) for s in dyn.get("scenarios") or [])
    who = (f"graphrag {version}'s DynamicCommunitySelection (the {clean(dyn.get('family'))} line, "
           f"stub rater; {scenarios}; {knobs})")
    all_levels = [x["community_level"] for x in rows]
    raised: dict[tuple, list] = {}  # levels where every scenario raised the same error, grouped by it
    parts: list = []
    for x in rows:
        d = x["dynamic"]
        errors = {sc.get("graphrag_error") for sc in (d.get("scenarios") or {}).values()}
        if d.get("status") == "graphrag_raised" and len(errors) == 1 and None not in errors:
            key = (next(iter(errors)), d.get("expected"))
            if key not in raised:
                raised[key] = []
                parts.append(key)
            raised[key].append(x["community_level"])
        else:
            parts.append(dynamic_level_phrase(x, clean))
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


def summary(v: dict, label: str, clean: Callable, code: Callable) -> tuple[str, str]:
    """(kind, sentence) of an available verify result; kind is "agrees", "raised" or "disagrees"."""
    version = clean(v.get("graphrag_version"))
    mc = v.get("map_calls") or {}
    rows = v.get("levels") or []
    qp = query_path(v)
    q_loaded = bool(qp and qp.get("loaded"))
    q_rows = [dict(x["graphrag_query"], community_level=x["community_level"]) for x in rows
              if isinstance(x.get("graphrag_query"), dict)]
    q_note = ""
    if qp and not q_loaded:
        q_note = f"; {code('graphrag query')} cannot load this index ({clean(qp.get('load_error'), 160)})"
    map_note = ""
    if mc.get("compared"):
        map_note = ("same reports, tokens and text in every batch; "
                    f"{clean(mc.get('tokenizer'))}, {number(mc.get('max_context_tokens'))} tokens per batch")
    if static_agree(v):
        line = f"graphrag {version}'s read_indexer_reports agrees with the {label} selection at every community_level"
        if q_loaded:
            line += (", with the tables loaded both as its Python API does (pd.read_parquet) and as "
                     f"{code('graphrag query')} does (its typed DataReader)")
        elif qp:
            line += " (tables read with pd.read_parquet, as its Python API does)"
        if mc.get("compared"):
            line += f", and its build_community_context makes the same map calls ({map_note})"
        elif mc.get("reason") and "--no-costs" not in mc["reason"]:
            line += f" (map calls not compared: {clean(mc['reason'], 120)})"
        return "agrees", line + q_note
    pandas = clean(v.get("pandas_version")) if v.get("pandas_version") else None
    if qp:
        api_who = ("its Python API (tables read with pd.read_parquet" + (f", pandas {pandas}" if pandas else "")
                   + ")")
        api_count = "Python API: graphrag "
    else:
        api_who, api_count = "its read_indexer_reports", "graphrag "
    api_parts, disagree = _path_parts(rows, api_who, api_count, clean, with_context=True)
    parts = list(api_parts)
    if q_loaded and q_rows:
        q_who = code("graphrag query") + " (typed DataReader, ids cast to int64)"
        q_parts, q_disagree = _path_parts(q_rows, q_who, code("graphrag query") + ": graphrag ", clean,
                                          with_context=False)
        disagree = disagree or q_disagree
        if not q_parts:
            api_ok = all(status_of(x) == "agrees" for x in rows)
            via_query = [x for x in rows if x.get("map_calls_load_path") == "graphrag_query"]
            same_calls = bool(via_query) and all(x.get("map_calls_agree") and x.get("batches_agree")
                                                 and x.get("texts_agree") for x in via_query)
            if not api_ok:
                parts.append(f"{q_who} reads it: the audit's selection at every community_level"
                             + (" and, on it, the same map calls" if same_calls and len(via_query) == len(rows)
                                else ""))
        else:
            parts.extend(q_parts)
    elif qp and not q_loaded:
        parts.append(q_note[2:])
    if not parts:
        parts.append("no community_level was compared")
    if not disagree:
        kind, head = "raised", f"graphrag {version} does not return a selection at every community_level"
    else:
        what = "audit" if mc.get("compared") else "selection"
        kind, head = "disagrees", f"graphrag {version} DISAGREES with the {label} {what}"
    return kind, head + ": " + "; ".join(parts)

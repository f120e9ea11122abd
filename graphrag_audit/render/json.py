"""JSON output of every command, 7-bit and inert (``sanitise.json``); schemas in graphrag_audit/schema/."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import fields

from graphrag_audit.render.cells import joined
from graphrag_audit.render.graph import FORMAT_VERSION, tree_items
from graphrag_audit.results.audit import CommunityIds
from graphrag_audit.results.tree import TREE_SCHEMA_VERSION, ForestView, TreeView
from graphrag_audit.results.update_run import UPDATE_RUN_SCHEMA_VERSION, UpdateRunReport
from graphrag_audit.sanitise.common import plain
from graphrag_audit.sanitise.json import json_inert

JSON_IDS = ("full", "level")
_CHUNK_IDS = 65536  # ids formatted per slice


def _clean(o):
    """``o`` as plain JSON values: id lists as lists, non-finite floats as null, numpy scalars unwrapped."""
    if type(o) is CommunityIds:
        return o.tolist()
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, float):
        return o if math.isfinite(o) else None
    if isinstance(o, str):
        return o.encode("utf-8", "replace").decode("utf-8")
    if hasattr(o, "item"):  # numpy scalars
        return _clean(o.item())
    return o


def _dumps(o) -> str:
    """Compact and 7-bit, ``##[`` written ``#\\u0023[`` (sanitise.json.json_inert) inside each value."""
    return json_inert(json.dumps(_clean(o), separators=(",", ":"), ensure_ascii=True, allow_nan=False))


def _ids(ids: CommunityIds) -> Iterator[str]:
    a = ids.array
    yield "["
    for start in range(0, len(a), _CHUNK_IDS):
        yield ("," if start else "") + ",".join(map(str, a[start : start + _CHUNK_IDS].tolist()))
    yield "]"


#: where the stream descends into the document (every other value is encoded in one piece):
#: a dict maps keys to the spec of their value ("*": any key), a 1-tuple is a list of items
_LEVEL: dict = {"selected": {"*": {"extra_vs_v1": {}}}}
_DOCUMENT = {"levels": (_LEVEL,)}


def _stream(o, spec) -> Iterator[str]:
    if type(o) is CommunityIds:
        yield from _ids(o)
    elif isinstance(spec, dict) and isinstance(o, dict):
        yield "{"
        for i, (k, v) in enumerate(o.items()):
            yield ("," if i else "") + json.dumps(str(k), ensure_ascii=True) + ":"
            yield from _stream(v, spec.get(k, spec.get("*")))
        yield "}"
    elif isinstance(spec, tuple) and isinstance(o, (list, tuple)):
        yield "["
        for i, v in enumerate(o):
            if i:
                yield ","
            yield from _stream(v, spec[0])
        yield "]"
    else:
        yield _dumps(o)


def iter_json(report, *, json_ids: str = "full") -> Iterator[str]:
    """The JSON document of ``report`` as text chunks; ``json_ids="level"``: id lists only in
    ``options.level``'s entry."""
    if json_ids not in JSON_IDS:
        raise ValueError(f"json_ids must be one of {JSON_IDS}, not {json_ids!r}")
    doc = _with_json_ids(report.to_dict(), json_ids)
    yield from joined(_stream(doc, _DOCUMENT))
    yield "\n"


def render_json(report, *, json_ids: str = "full") -> str:
    return "".join(iter_json(report, json_ids=json_ids))


#: inside a selection, id lists kept in every form (what graphrag returned, --verify)
_IDS_AS_THEY_ARE = frozenset({"graphrag_returns", "python_api"})


def _with_json_ids(doc: dict, json_ids: str) -> dict:
    """``doc``, or for ``"level"`` every id list left out except in ``options.level``'s entry, and
    ``"json_ids": "level"`` after the schema version."""
    if json_ids != "level":
        return doc
    want = (doc.get("options") or {}).get("level")

    def entry(d: dict, keep: bool) -> dict:
        return {
            k: entry(v, keep) if isinstance(v, dict) and k not in _IDS_AS_THEY_ARE else v
            for k, v in d.items()
            if keep or not (k.endswith("_ids") and type(v) in (CommunityIds, list))
        }

    levels = [
        {**r, "selected": {b: entry(sd, r.get("community_level") == want) for b, sd in r["selected"].items()}}
        for r in doc["levels"]
    ]
    out = {}
    for k, v in doc.items():
        out[k] = levels if k == "levels" else v
        if k == "schema_version":
            out["json_ids"] = "level"
    return out


def to_json(forest: ForestView, view: TreeView | None = None) -> str:
    """``tree -f json``: ``json.dumps(doc, indent=2, ensure_ascii=True)``, inert."""
    from graphrag_audit import __version__

    order, _edges, more, hidden = tree_items(forest, view)
    communities = [
        {
            "community": nd.community,
            "level": nd.level,
            "parent": nd.parent,
            "children": list(nd.children),
            "other_parents": list(nd.other_parents),
            "entities": nd.entities,
            "title": plain(nd.title),
            "reports": nd.reports,
            "leaf": nd.leaf,
            "sent": nd.sent,
            "subtree_communities": nd.size,
            "subtree_leaves": nd.leaves,
            "hidden_below": hidden.get(nd.community, 0),
        }
        for nd in (forest.nodes[n] for n in order)
    ]
    doc = {
        "schema_version": TREE_SCHEMA_VERSION,
        "tool": {"name": "graphrag-audit", "version": __version__},
        "format": "graphrag-audit community forest",
        "format_version": FORMAT_VERSION,
        "community_level": forest.community_level,
        "selection_level": forest.selection_level,
        "sent_reports": forest.sent_reports if forest.community_level is not None else None,
        "sent_status": (
            {b: forest.status(b) for b in ("v2", "v1")}
            if forest.community_level is not None and forest.outcomes
            else None
        ),
        "roots": list(forest.roots) if view is None else list(view.tops),
        "root": None if view is None else view.root,
        "depth": None if view is None else view.depth,
        "complete": view is None or not view.hidden,
        "communities": communities,
        "collapsed": [
            {
                "under": r.community if r.community >= 0 else None,
                "subtrees": r.more,
                "communities": r.more_communities,
                "leaves": r.more_leaves,
            }
            for r in more
        ],
        "reports_outside_tree": [
            {"community": o.community, "level": o.level, "title": plain(o.title), "sent": o.sent}
            for o in forest.outside_reports
        ],
    }
    return json_inert(json.dumps(doc, indent=2, ensure_ascii=True)) + "\n"


def render_plan_json(report, **_ignored) -> str:
    return (
        json_inert(json.dumps(_clean(report.to_dict()), indent=2, ensure_ascii=True, allow_nan=False)) + "\n"
    )


def render_diff_json(diff, **_ignored) -> str:
    return _dumps(diff.to_dict()) + "\n"


def _fields(obj) -> dict:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def render_update_run_json(report: UpdateRunReport) -> str:
    o = report.offset
    doc = {
        "schema_version": UPDATE_RUN_SCHEMA_VERSION,
        **_fields(report),
        "parts": [{**_fields(p), "findings": [f.to_dict() for f in p.findings]} for p in report.parts],
        "offset": None if o is None else {**_fields(o), "holds": o.holds},
    }
    return json_inert(json.dumps(doc, indent=2, ensure_ascii=False, default=str)) + "\n"

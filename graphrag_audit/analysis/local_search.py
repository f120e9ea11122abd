"""Local search's community context per community_level and graphrag line (issue 41), for ``levels[]``.

The engine is :mod:`graphrag_audit.graphrag.local`; this module reads its settings, decides the status
of each line as :mod:`graphrag_audit.graphrag.compat` does for the selection local search reads
(``read_indexer_reports``: ``v1`` for 1.x, ``v2`` since 2.0) and turns the probes into JSON and findings.

Settings (``local_search`` section; the same names in ``config/models/local_search_config.py`` and
``query/factory.py`` ``get_local_search_engine`` @v1.2.0, @v2.7.2 and @v3.3.0): ``community_prop``,
``top_k_entities`` (passed as ``top_k_mapped_entities``), and the budget ``max_context_tokens``
(2.x/3.x) or ``max_tokens`` (1.x, ``Fragment.max_tokens`` in ``config/create_graphrag_config.py``
@v1.2.0, which also reads a 0 as its default). Defaults: graphrag/local.py.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from graphrag_audit.errors import IndexInputError
from graphrag_audit.findings import Finding, finding
from graphrag_audit.graphrag.compat import behaviour_outcomes
from graphrag_audit.graphrag.dynamic import FAMILIES
from graphrag_audit.graphrag.local import (
    DEFAULT_COMMUNITY_PROP,
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_TOP_K,
    VERSION_LINES,
    ContextReport,
    LocalSearch,
    Probe,
    local_budget,
    summarise,
    what_if,
)
from graphrag_audit.graphrag.tokens import TokenCounter, get_token_counter
from graphrag_audit.io.settings import DEFAULT_CHAT_MODEL_ID, query_settings_data
from graphrag_audit.model.index import IndexModel
from graphrag_audit.results.audit import EXACT

#: the graphrag releases each line stands for (1.x: compat's ``v1`` outcome, 1.0-1.2)
GRAPHRAG = {**FAMILIES, "1.x": "1.0-1.2"}
#: above this many leaf communities the probes are an evenly spaced sample (the 1M-entity index has
#: 91,571 leaves: ~4 s of CPU for every N and line at 1,000; every shared index has fewer than this)
MAX_PROBES = 1_000
#: ``local-context-coarse`` fires when more than this share of the probes gets a finest report coarser
#: than min(N, its leaf's level): depth-mismatch's default (--max-unreachable), the same symptom seen from
#: the tree. At N=2 it fires on verbs-v2 (0.42), verbs-v3 (0.33), real-datasaur-medical-v3 (0.41), not on
#: real-insurance-v3 (0.14) or real-b2b-gaps-v2 (0.22)
MAX_COARSE = 0.25
#: ``local-context-empty`` fires when more than this share of the probes gets no report at all because
#: the first one does not fit the budget (one query in ten answered without community context)
MAX_EMPTY = 0.1


@dataclass(frozen=True)
class LocalSettings:
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS
    community_prop: float = DEFAULT_COMMUNITY_PROP
    top_k: int = DEFAULT_TOP_K
    tokenizer: str | None = None  # the encoding the settings name for local search's model (None: default)
    origin: dict = field(default_factory=dict)  # knob -> "option" / "<file> <key>" / "graphrag default"

    @property
    def budget(self) -> int:
        return local_budget(self.max_context_tokens, self.community_prop)


def read_local_settings(model: IndexModel) -> LocalSettings:
    """The ``local_search`` settings of the project the index was reached through, else graphrag's defaults."""
    keys = (
        ("max_context_tokens", "max_context_tokens", int),
        ("max_context_tokens", "max_tokens", int),
        ("community_prop", "community_prop", float),
        ("top_k", "top_k_entities", int),
    )
    values, origin = read_section(model, "local_search", keys)
    if model.settings_file is not None:
        data = query_settings_data(model.settings_file)
        # the tokenizer: 1.x's top-level encoding_model, as global search's (query/factory.py
        # get_local_search_engine @v1.2.0); 2.x's models.<local_search.chat_model_id>.encoding_model, which
        # may name another model than global_search.chat_model_id (get_tokenizer(model_settings) @v2.7.2);
        # 3.x: the model's LiteLLM tokenizer (chat_model.tokenizer @v3.3.0), cl100k_base as for global search
        if isinstance(data.get("models"), dict):
            model_id = (data.get("local_search") or {}).get("chat_model_id") or DEFAULT_CHAT_MODEL_ID
            chosen = data["models"].get(model_id)
            encoding = chosen.get("encoding_model") if isinstance(chosen, dict) else None
            key = f"models.{model_id}.encoding_model"
        else:
            encoding = data.get("encoding_model") if "completion_models" not in data else None
            key = "encoding_model"
        if isinstance(encoding, str) and encoding.strip():
            values["tokenizer"] = encoding.strip()
            origin["tokenizer"] = f"{model.settings_file.name} {key}"
    return LocalSettings(**values, origin=origin)


def read_section(
    model: IndexModel, name: str, keys: Sequence[tuple[str, str, type]], positive: bool = False
) -> tuple[dict, dict]:
    """(knob -> value, knob -> where it came from) of the settings section ``name``: ``keys`` are (knob,
    settings key, int or float), the first key set wins for a knob; knobs not set say "graphrag default".
    Values are numbers >= 0, or with ``positive`` integers >= 1."""
    values: dict = {}
    origin = {knob: "graphrag default" for knob, _, _ in keys}
    if model.settings_file is not None:
        section = query_settings_data(model.settings_file).get(name)
        if section is not None and not isinstance(section, dict):
            raise IndexInputError(model.settings_file, f"{name} must be a mapping")
        for knob, key, kind in keys:
            value = (section or {}).get(key)
            if knob in values or value is None:
                continue
            number = r"\s*\d+\s*" if positive else r"\s*[+-]?\d+(\.\d*)?\s*"
            if isinstance(value, str) and re.fullmatch(number, value):
                value = int(value) if positive else kind(float(value))
            if positive:
                valid, must = isinstance(value, int) and value >= 1, "a positive integer"
            else:
                valid, must = isinstance(value, (int, float)) and value >= 0, "a number >= 0"
            if isinstance(value, bool) or not valid:
                raise IndexInputError(model.settings_file, f"{name}.{key} must be {must}")
            values[knob] = kind(value)
            origin[knob] = f"{model.settings_file.name} {name}.{key}"
    return values, origin


def line_statuses(model: IndexModel) -> dict[str, str]:
    """Per version line, compat's status of the selection it reads (1.x: ``v1``, 2.x/3.x: ``v2``)."""
    outcomes = behaviour_outcomes(model)
    return {line: outcomes["v1" if line == "1.x" else "v2"].status for line in VERSION_LINES}


@dataclass
class LocalAudit:
    """``by_level``: N -> the ``local_search`` JSON of that ``levels[]`` entry; ``probes``: line ->
    N -> the probes (for the findings)."""

    settings: LocalSettings
    by_level: dict  # N -> JSON (community_level None: none)
    probes: dict[str, dict[int, list[Probe]]]
    statuses: dict[str, str]
    sampled: tuple[int, int] | None
    counter: TokenCounter
    drift_probes: dict[str, dict[int, list[Probe]]] = field(default_factory=dict)  # DRIFT's local steps


def local_search_audit(
    model: IndexModel,
    settings: LocalSettings | None = None,
    counter: TokenCounter | str | None = None,
    max_probes: int | None = MAX_PROBES,
    drift: tuple[int, int] | None = None,
    drift_counter: TokenCounter | None = None,
) -> LocalAudit | None:
    """Every N and every line the engine can read (None without entities or reports). 2.x and 3.x
    read the same tables the same way: computed once. ``drift``: (budget, top_k) of DRIFT's local steps,
    the same probes packed again from the same reads (``drift_probes``), counted with ``drift_counter``
    (default: ``counter``)."""
    if model.entities is None or not model.has_reports_table:
        return None
    settings = settings or read_local_settings(model)
    if not isinstance(counter, TokenCounter):
        counter = get_token_counter(counter) if counter else get_token_counter()
    statuses = line_statuses(model)
    probes: dict[str, dict[int, list[Probe]]] = {}
    drift_probes: dict[str, dict[int, list[Probe]]] = {}
    drift_counter = drift_counter or counter
    same_counter = drift_counter.name == counter.name
    same = same_counter and drift == (settings.budget, settings.top_k)  # DRIFT's figures are local search's
    sampled = None
    for line in ("1.x", "2.x"):
        local: dict[int, list[Probe]] = {}
        steps: dict[int, list[Probe]] = {}
        try:
            search = LocalSearch(model, line, counter, max_probes)
            stepper = search if same_counter else LocalSearch(model, line, drift_counter, max_probes)
            for n in model.levels:  # one N read at a time: both budgets pack from the same read
                local[n] = search.probes(n, settings.budget, settings.top_k)
                if drift is not None:
                    steps[n] = local[n] if same else stepper.probes(n, *drift)
        except ValueError:  # the layout lacks what this line reads (entity ids)
            continue
        probes[line], drift_probes[line], sampled = local, steps, search.sampled
    for found in (probes, drift_probes):
        if "2.x" in found:
            found["3.x"] = found["2.x"]
    by_level = {}
    for n in model.levels:
        versions = {
            line: {"graphrag": GRAPHRAG[line], "status": statuses[line], **summarise(by_n[n])}
            for line, by_n in probes.items()
        }
        entry: dict = {"budget_tokens": settings.budget, "by_version": versions}
        if sampled:
            entry["sampled"] = {"probes": sampled[0], "of": sampled[1]}
        by_level[n] = entry
    return LocalAudit(settings, by_level, probes, statuses, sampled, counter, drift_probes if drift else {})


def local_what_if(model: IndexModel, audit: LocalAudit, n: int, entities: Sequence[str]) -> dict:
    """``local_search.what_if`` at N: per line computed, the reports local search puts in context for
    ``entities`` (ids or titles), in graphrag's order, the first that did not fit, and the names it does
    not read at N (2.x computed once for 3.x). Each report with its title (the last row wins, as in
    graphrag's dict of reports; None when missing)."""
    r = model.reports
    titles = dict(zip(r["community"].tolist(), r["title"].tolist()))

    def described(report: ContextReport | None) -> dict | None:
        if report is None:
            return None
        title = titles.get(report.community)
        return {**asdict(report), "title": title if isinstance(title, str) else None}

    by_version: dict[str, dict] = {}
    for line in audit.probes:
        if line != "3.x" or "2.x" not in audit.probes:  # 3.x reads as 2.x
            context, missing = what_if(model, line, n, entities, audit.settings.budget, audit.counter)
        by_version[line] = {
            "graphrag": GRAPHRAG[line],
            "status": audit.statuses[line],
            "reports": [described(r) for r in context.reports],
            "did_not_fit": described(context.did_not_fit),
            "not_read": missing,
        }
    return {"entities": list(entities), "by_version": by_version}


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def local_findings(
    audit: LocalAudit, level: int, max_coarse: float = MAX_COARSE, max_empty: float = MAX_EMPTY
) -> list[Finding]:
    """``local-context-coarse`` and ``local-context-empty`` at the queried N (``--level``; the deepest
    level when beyond the tree), for the lines whose status is exact, else for every line computed."""
    lines = [line for line in audit.probes if audit.statuses[line] == EXACT] or list(audit.probes)
    if not audit.probes:
        return []
    n = min(level, max(next(iter(audit.probes.values()))))
    coarse, empty = {}, {}
    for line in lines:
        probes = audit.probes[line][n]
        stuck = [
            p
            for p in probes
            if p.context.reports and max(r.level for r in p.context.reports) < min(n, p.leaf_level)
        ]
        blocked = [p for p in probes if not p.context.reports and p.context.did_not_fit is not None]
        if _share(len(stuck), len(probes)) > max_coarse:
            coarse[line] = (stuck, len(probes))
        if _share(len(blocked), len(probes)) > max_empty:
            empty[line] = (blocked, len(probes))
    budget = audit.settings.budget

    def behaviours(hits: dict, key: str) -> dict:
        return {k: {"probes": t, key: len(s), "share": _share(len(s), t)} for k, (s, t) in hits.items()}

    out = []
    if coarse:
        stuck, total = next(iter(coarse.values()))
        out.append(
            finding(
                "local-context-coarse",
                f"At community_level {n}, local search's finest community report is coarser than the probe's "
                f"own level for {len(stuck):,} of {total:,} probes (graphrag {', '.join(coarse)}): ancestors "
                f"match as many entities and take the {budget:,}-token budget first",
                [p.leaf for p in stuck],
                level=n,
                behaviours=behaviours(coarse, "coarse"),
                threshold=max_coarse,
                budget_tokens=budget,
            )
        )
    if empty:
        blocked, total = next(iter(empty.values()))
        first = [p.context.did_not_fit for p in blocked if p.context.did_not_fit is not None]
        largest = max(first, key=lambda r: r.tokens)
        out.append(
            finding(
                "local-context-empty",
                f"At community_level {n}, local search puts no community report in context for "
                f"{len(blocked):,} of {total:,} probes (graphrag {', '.join(empty)}): the first report does not "
                f"fit the {budget:,}-token budget (community_prop x max_context_tokens); the largest, community "
                f"{largest.community}, takes {largest.tokens:,} tokens",
                [p.leaf for p in blocked],
                level=n,
                behaviours=behaviours(empty, "empty"),
                threshold=max_empty,
                budget_tokens=budget,
                largest_report={"community": largest.community, "tokens": largest.tokens},
            )
        )
    return out


def unclustered_for_local(findings: list[Finding], statuses: dict[str, str]) -> list[Finding]:
    """``findings`` with ``unclustered-entities`` raised to a warning when graphrag >= 2.0 reads the
    index (status exact): its ``read_indexer_entities`` keeps ``level <= N`` and an entity in no community
    (NaN level) fails that, so local and DRIFT search never see it (microsoft/graphrag#1808, #2348).
    ``statuses``: :func:`line_statuses` (no token count needed: it holds with ``--no-costs`` too)."""
    if statuses.get("2.x") != EXACT:
        return findings
    out = []
    for f in findings:
        if f.rule == "unclustered-entities" and f.severity != "warning":
            count, total = f.evidence.get("count", 0), f.evidence.get("total", 0)
            f = Finding(
                f.rule,
                "warning",
                f"{f.message}, nor local or DRIFT search in graphrag >= 2.0 ({_share(count, total):.1%} of the "
                "entities)",
                f.communities,
                {**f.evidence, "share": _share(count, total), "local_search": "dropped"},
            )
        out.append(f)
    return out

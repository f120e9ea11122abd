"""--verify, dynamic community selection: graphrag's own ``DynamicCommunitySelection.select()`` against the
audit's simulation (graphrag/dynamic.py), level by level.

The selector is built as global search builds it with ``--dynamic-community-selection``
(``graphrag/api/query.py`` ``global_search``): 1.1.1-1.2.x ``read_indexer_communities(communities, nodes,
reports)``, ``read_indexer_reports(reports, nodes, N, dynamic_community_selection=True)``,
``llm=``/``token_encoder=``; 2.x/3.x the same on ``communities`` with ``model=``/``tokenizer=``; the audit's
``dynamic_search_*`` settings, ``use_summary`` False. The chat model is a stub that never leaves the process:
it finds the rated report by its text in the rating prompt (``RATE_QUERY``) and answers ``threshold`` for a
relevant report, ``threshold - 1`` otherwise. A wave is one ``asyncio.gather`` of ``select()``; rating calls
are graphrag's ``llm_calls``. On 3.x the selector imports LiteLLM, told to use its bundled cost map.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import logging
import os
import re
import types
from dataclasses import replace
from typing import Any
from unittest import mock

from graphrag_audit.results.verify import (
    DynamicCheckSummary,
    DynamicLevelCheck,
    DynamicScenarioCheck,
    DynamicSettings,
)

#: the question put to the rater (its text is not looked at)
QUERY = "graphrag-audit --verify: which reports matter?"
HOW = (
    "graphrag's DynamicCommunitySelection built as global search builds it (read_indexer_communities, "
    "read_indexer_reports(..., dynamic_community_selection=True), tables read with pd.read_parquet) with a "
    "stub chat model that rates each report from the scenario's relevance set (identified by its text); "
    "waves = coroutines per asyncio.gather, rating calls = graphrag's llm_calls, kept = the reports "
    "select() returns"
)


def short_error(exc: BaseException) -> str:
    """``Type: message`` on one line, long messages (pandas prints whole arrays) cut in the middle."""
    s = " ".join(f"{type(exc).__name__}: {exc}".split())
    return s if len(s) <= 160 else s[:90] + " … " + s[-60:]


def id_key(x) -> object:
    """A row id as a comparable value: the community number (``"5"``, ``5``, ``"5.0"`` -> 5); other
    text as it is (``"1_0"``, which float() reads as 10)."""
    if isinstance(x, str) and "_" in x:
        return x
    try:
        f = float(x)
        return int(f) if f.is_integer() else str(x)
    except (TypeError, ValueError):
        return str(x)


def family_of(version: str | None) -> tuple[str | None, str | None]:
    """(family, None) for the graphrag releases the simulator covers, else (None, why not)."""
    from graphrag_audit.graphrag.dynamic import BROKEN_LINES

    parts = [re.match(r"\d*", p).group() for p in (version or "").split(".")[:3]]  # type: ignore[union-attr]
    if not all(parts):
        return None, f"graphrag version {version!r} cannot be read"
    v = (*map(int, parts), 0, 0)[:3]
    if (1, 1, 1) <= v < (1, 3, 0):
        return "1.x", None
    if (2, 0, 0) <= v <= (2, 7, 2):
        return "2.x", None
    if v >= (3, 0, 0):
        return "3.x", None
    if v < (1, 1, 1):
        line = BROKEN_LINES[0] if v[:2] == (0, 5) else BROKEN_LINES[1] if v >= (0, 9, 0) else None
        return None, (
            f"graphrag {version} is older than 1.1.1, whose dynamic selection the audit does not simulate"
            + (f" (broken in another way there: {line[0]}: {line[1]})" if line else "")
        )
    return None, (
        f"graphrag {version} is a release the audit's dynamic simulation does not cover "
        "(1.1.1-1.2.x, 2.0.0-2.7.2, 3.0.0 and later)"
    )


def sorted_ids(values) -> list:
    return sorted(
        (id_key(x) for x in values),
        key=lambda v: (isinstance(v, str), v if isinstance(v, int) else 0, str(v)),
    )


class _Waves:
    """Stands in for the selector module's ``asyncio`` during ``select()``: counts each gather."""

    def __init__(self):
        self.sizes: list[int] = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    def gather(self, *aws, **kw):
        self.sizes.append(len(aws))
        return asyncio.gather(*aws, **kw)


#: tokenizer / token encoder stand-in: rating prompts' token counts are not compared
_NO_TOKENS = types.SimpleNamespace(
    encode=lambda *a, **k: [],
    decode=lambda *a, **k: "",
    num_tokens=lambda *a, **k: 0,
    num_prompt_tokens=lambda *a, **k: 0,
)


class StubError(RuntimeError):
    """The stub rater could not do its part: a failure of the check, not of graphrag."""


class StubRater:
    """A chat model for every graphrag line that answers a rating prompt from a relevance set: ``texts``
    maps each report text to its community key; ``head``/``tail``: the template's text around it."""

    def __init__(
        self,
        texts: dict[str, str],
        relevant,
        threshold: int,
        head: str,
        tail: str,
        max_calls: int | None = None,
    ):
        self.texts = texts
        self.relevant = relevant
        self.threshold = int(threshold)
        self.head, self.tail = head, tail
        self.max_calls = max_calls
        self.calls = 0

    def answer(self, prompt: str) -> str:
        if not (
            prompt.startswith(self.head)
            and prompt.endswith(self.tail)
            and len(prompt) >= len(self.head) + len(self.tail)
        ):
            raise StubError("the stub rater got a prompt that is not graphrag's rating template")
        text = prompt[len(self.head) : len(prompt) - len(self.tail)]
        key = self.texts.get(text)
        if key is None:
            raise StubError("the stub rater got a report text it cannot attribute to one report")
        self.calls += 1
        if self.max_calls is not None and self.calls > self.max_calls:
            raise StubError(
                f"graphrag made more than {self.max_calls:,} rating calls (far beyond the audit's "
                "count): stopped"
            )
        rating = self.threshold if self.relevant(key) else self.threshold - 1
        return json.dumps({"reason": "graphrag-audit stub", "rating": rating})

    # graphrag 1.x: BaseLLM.agenerate(messages=..., **kwargs) -> str
    async def agenerate(self, messages, **kwargs):
        return self.answer(_content(messages[0]))

    # graphrag 2.x: ChatModel.achat(prompt, history, model_parameters, json) -> .output.content
    async def achat(self, prompt, history=None, **kwargs):
        text = self.answer(_content(history[0]))
        return types.SimpleNamespace(output=types.SimpleNamespace(content=text))

    # graphrag 3.x: LLMCompletion.completion_async(messages=...) -> .choices[0].message.content
    async def completion_async(self, messages, **kwargs):
        text = self.answer(_content(messages[0]))
        msg = types.SimpleNamespace(content=text)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])


def _content(message) -> str:
    content = message["content"] if isinstance(message, dict) else message.content
    if not isinstance(content, str):
        raise StubError("the stub rater got a rating prompt that is not one string")
    return content


def mark_shared_texts(reports) -> dict[str, str]:
    """A marker appended to every ``full_content`` two reports share (in place); text -> community key."""
    counts: dict[str, int] = {}
    for r in reports:
        counts[r.full_content] = counts.get(r.full_content, 0) + 1
    texts: dict[str, str] = {}
    for i, r in enumerate(reports):
        if counts[r.full_content] > 1:
            marked = f"{r.full_content}\n[graphrag-audit marker {i}]"
            while marked in counts or marked in texts:
                marked += "*"
            r.full_content = marked
        texts[r.full_content] = r.community_id
    return texts


class GraphragDynamic:
    """graphrag's own selector on one index: built once per community_level, run per scenario."""

    def __init__(self, family: str, frames: dict, settings: dict):
        from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_reports

        key = "LITELLM_LOCAL_MODEL_COST_MAP"  # LiteLLM (3.x) with its bundled cost map: no network
        with mock.patch.dict(os.environ, {key: os.environ.get(key, "True")}):
            import graphrag.query.context_builder.dynamic_community_selection as mod
        self.mod = mod
        self.family = family
        self.frames = frames
        self.settings = settings
        self.read_reports = read_indexer_reports
        params = inspect.signature(self.mod.DynamicCommunitySelection.__init__).parameters
        if "llm" in params and "token_encoder" in params:
            self.model_kw, self.tok_kw = "llm", "token_encoder"
        elif "model" in params and "tokenizer" in params:
            self.model_kw, self.tok_kw = "model", "tokenizer"
        else:
            raise TypeError("this graphrag's DynamicCommunitySelection has an unknown signature")
        missing = [k for k in settings if k not in params]
        if missing:
            raise TypeError(f"this graphrag's DynamicCommunitySelection lacks {', '.join(missing)}")
        template = self.mod.RATE_QUERY
        sentinel = "\x00graphrag-audit-description\x00"
        filled = template.format(description=sentinel, question=QUERY)
        if filled.count(sentinel) != 1:
            raise TypeError("graphrag's rating prompt does not hold the report text once")
        self.head, self.tail = filled.split(sentinel)
        self._by_level: dict = {}
        tables = ("communities", "nodes", "reports") if family == "1.x" else ("communities", "reports")
        self.communities, self.communities_error = None, None
        try:
            self.communities = read_indexer_communities(*(copy.deepcopy(frames[t]) for t in tables))
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            self.communities_error = short_error(exc)

    def run(self, n, relevant, max_calls: int | None = None) -> dict:
        """One ``select()`` at community_level ``n``; ``relevant``: community numbers (None: every
        report); ``max_calls``: stop graphrag beyond that many rating calls. Returns ``{"error"}``,
        ``{"not_run"}`` (the stub could not rate) or ``{"rating_calls", "waves", "kept_ids"}``."""
        if self.communities_error is not None:
            return {"error": self.communities_error}
        if n not in self._by_level:  # graphrag's candidate reports, shared texts marked
            f = self.frames
            other = f["nodes"] if self.family == "1.x" else f["communities"]
            try:
                reports = self.read_reports(
                    copy.deepcopy(f["reports"]), copy.deepcopy(other), n, dynamic_community_selection=True
                )
                self._by_level[n] = (reports, mark_shared_texts(reports), None)
            except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
                self._by_level[n] = (None, None, short_error(exc))
        reports, texts, error = self._by_level[n]
        if error is not None:
            return {"error": error}

        def is_relevant(key):
            return relevant is None or id_key(key) in relevant

        if max_calls is None:  # the audit predicted no selection: bound graphrag anyway
            max_calls = 8 * len(texts) * max(1, self.settings["num_repeats"]) + 10_000
        rater = StubRater(texts, is_relevant, self.settings["threshold"], self.head, self.tail, max_calls)
        kw = {self.model_kw: rater, self.tok_kw: _NO_TOKENS, "use_summary": False, **self.settings}
        waves = _Waves()
        saved = self.mod.asyncio
        self.mod.asyncio = waves
        try:
            selector = self.mod.DynamicCommunitySelection(
                community_reports=reports, communities=self.communities, **kw
            )
            got, info = asyncio.run(selector.select(QUERY))
        except StubError as exc:
            return {"not_run": str(exc)}
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is a result too
            return {"error": short_error(exc)}
        finally:
            self.mod.asyncio = saved
        return {
            "rating_calls": int(info["llm_calls"]),
            "waves": list(waves.sizes),
            "kept_ids": sorted_ids(r.community_id for r in got),
            "stub_calls": rater.calls,
        }


def compare_scenario(expected, got: dict, audit_error: str | None) -> DynamicScenarioCheck:
    """One scenario at one level: the audit's ``DynamicScenario`` (None when it predicts an error)
    against graphrag's run (``GraphragDynamic.run``)."""
    if got.get("not_run") is not None:
        return DynamicScenarioCheck(status="not_run", reason=got["not_run"])
    if got.get("error") is not None:
        return DynamicScenarioCheck(
            status="graphrag_raised", graphrag_error=got["error"], expected=audit_error or None
        )
    check = DynamicScenarioCheck(
        status="differs",
        graphrag_rating_calls=got["rating_calls"],
        graphrag_waves=tuple(got["waves"]),
        graphrag_kept=len(got["kept_ids"]),
    )
    if expected is None:
        return replace(check, expected=audit_error or "no scenario", expected_error_not_raised=True)
    audit_kept = sorted_ids(expected.kept_ids)
    check = replace(
        check,
        audit_rating_calls=int(expected.rating_calls),
        audit_waves=tuple(int(w) for w in expected.waves),
        audit_kept=len(audit_kept),
    )
    if (
        check.graphrag_rating_calls == check.audit_rating_calls
        and check.graphrag_waves == check.audit_waves
        and got["kept_ids"] == audit_kept
    ):
        return replace(check, status="agrees")
    g, a = set(got["kept_ids"]), set(audit_kept)
    return replace(
        check,
        only_graphrag_kept=tuple(sorted(g - a, key=repr)[:50]),
        only_audit_kept=tuple(sorted(a - g, key=repr)[:50]),
    )


def combine(scenarios: dict) -> str:
    """A level's status from its scenarios': a raise first, then a difference, then a scenario not run,
    else agreement."""
    statuses = [s.status for s in scenarios.values()]
    for status in ("graphrag_raised", "differs", "not_run"):
        if status in statuses:
            return status
    return "agrees" if statuses else "not_run"


def compare_level(version, runner, n, relevant) -> DynamicLevelCheck:
    """The dynamic comparison at one community_level: the audit's ``DynamicVersion`` of the family
    (``version``) against graphrag's ``select()`` (``runner``: ``run(n, relevant_set_or_None)``)."""
    if version.error and version.error.startswith("never ends"):
        return DynamicLevelCheck(
            status="not_run",
            family=version.family,
            expected=version.error,
            reason="the audit predicts graphrag's select() never returns here: not run",
        )
    scen: dict[str, tuple[Any, set[int] | None]] = {
        "none_relevant": (version.none_relevant, set()),
        "all_relevant": (version.all_relevant, None),
    }
    if relevant is not None:
        scen["what_if"] = (version.what_if, set(int(x) for x in relevant))
    results = {}
    for name, (expected, rel) in scen.items():
        bound = None if expected is None else 2 * int(expected.rating_calls) + 1000
        results[name] = compare_scenario(expected, runner(n, rel, bound), version.error)
    return DynamicLevelCheck(
        status=combine(results), family=version.family, expected=version.error or None, scenarios=results
    )


def verify_dynamic(report, version: str, frames: dict) -> tuple[DynamicCheckSummary, dict]:
    """(summary, {community_level: per-level result}) of the dynamic comparison; ``frames``: the
    tables as read for the Python API (``reports``, ``communities``, 1.x also ``nodes``)."""
    opts = report.options
    settings = DynamicSettings(
        threshold=int(opts.threshold),
        keep_parent=bool(opts.keep_parent),
        num_repeats=int(opts.num_repeats),
        max_level=int(opts.max_level),
    )
    relevant = None if opts.relevant is None else tuple(int(x) for x in opts.relevant)
    family, why = family_of(version)
    summary = DynamicCheckSummary(
        compared=False,
        agree=None,
        family=family,
        settings=settings,
        scenarios=("none_relevant", "all_relevant") + (() if relevant is None else ("what_if",)),
    )
    levels = [r.community_level for r in report.levels]

    def all_not_run(reason):
        return replace(summary, reason=reason), {
            n: DynamicLevelCheck(status="not_run", reason=reason) for n in levels
        }

    if family is None:
        return all_not_run(why)
    from graphrag_audit.graphrag.dynamic import FAMILIES

    summary = replace(summary, graphrag=FAMILIES[family])
    if (
        frames.get("reports") is None
        or frames.get("communities") is None
        or (family == "1.x" and frames.get("nodes") is None)
    ):
        need = "create_final_communities, create_final_nodes" if family == "1.x" else "communities"
        return all_not_run(
            f"this index lacks the tables graphrag {version}'s dynamic selection reads "
            f"(community reports, {need})"
        )
    by_level = {
        r.community_level: r.selected["dynamic"].by_version for r in report.levels if "dynamic" in r.selected
    }
    if not any(bv is not None and family in bv.versions for bv in by_level.values()):
        layout = "create_final_* tables" if family == "1.x" else "communities table with children"
        return all_not_run(
            f"the audit simulates the {family} line only on the layout that line reads ({layout}); "
            "this index has another"
        )
    rows = {}
    log = logging.getLogger("graphrag")  # read_indexer_communities warns about every report-less community
    saved = log.level
    log.setLevel(logging.CRITICAL + 1)
    try:
        try:
            runner = GraphragDynamic(family, frames, settings.to_dict())
        except Exception as exc:  # noqa: BLE001 - an unknown graphrag layout: not run, with the reason
            return all_not_run(f"cannot build graphrag's DynamicCommunitySelection here ({short_error(exc)})")
        for n in levels:
            bv = by_level.get(n)
            if bv is None or family not in bv.versions:
                rows[n] = DynamicLevelCheck(
                    status="not_run",
                    reason="the audit did not simulate dynamic selection at this community_level "
                    "(a deep tree is simulated at --level and N=None only)",
                )
                continue
            rows[n] = compare_level(bv.versions[family], runner.run, n, relevant)
    finally:
        log.setLevel(saved)
    compared = [r.status for r in rows.values() if r.status != "not_run"]
    return replace(
        summary,
        compared=True,
        how=HOW,
        levels_compared=len(compared),
        agree=bool(compared) and all(s == "agrees" for s in compared),
    ), rows

"""Runs graphrag's own ``DynamicCommunitySelection.select()`` on a batch of cases; executed by
tests/graphrag_tests/test_dynamic_selection.py in a side interpreter with graphrag installed (1.2.x, 2.7.2, 3.x).

Usage: ``python dynamic_graphrag_runner.py CASES.json OUT.json``. CASES.json holds
``{"tables": {key: {"layout": "v1"|"v2", "files": {name: parquet path}}}, "cases": [{"id", "tables",
"community_level", "settings": {...}, "ratings": {community: rating}}]}``.

The selector is built as ``graphrag query --method global --dynamic-community-selection`` builds it
(graphrag/api/query.py global_search -> read_indexer_communities(...) and read_indexer_reports(...,
dynamic_community_selection=True) -> GlobalCommunityContext -> DynamicCommunitySelection), with the
tables read by ``pandas.read_parquet``. The chat model is a stub: it finds the rated report by the
text in the rating prompt (``---Information---`` ... ``---Question---``; reports sharing a text get a
marker appended first, so every text names one row) and answers ``{"rating": r}`` from the case's
ratings (0 when absent). Each ``asyncio.gather`` of the selector is one wave: the module's
``asyncio`` is wrapped to record the community keys of each wave.

A case with ``"tokens": {"encoding", "query", "rating"}`` checks the rating calls' prompt tokens
instead: the selector gets the unmarked reports, the query given, a real tiktoken tokenizer of that
encoding (as each line builds one: 1.x ``tiktoken.get_encoding``, 2.x
``graphrag.tokenizer.tiktoken_tokenizer.TiktokenTokenizer``, 3.x
``graphrag_llm.tokenizer.tiktoken_tokenizer.TiktokenTokenizer``) and a rater answering ``rating`` to
every prompt; the output adds ``prompt_tokens`` (graphrag's ``llm_info["prompt_tokens"]``).

Output per case: ``error`` (``"Type: message"`` of an exception raised while building or selecting),
``waves`` (rated community keys per wave, as ints in queue order), ``llm_calls``, ``kept`` (the
returned reports' community numbers, sorted)."""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import sys
import types

import graphrag.query.context_builder.dynamic_community_selection as dcs_mod
import pandas as pd
from graphrag.query.context_builder.dynamic_community_selection import (
    DynamicCommunitySelection,
)
from graphrag.query.indexer_adapters import (
    read_indexer_communities,
    read_indexer_reports,
)

INFO, QUESTION = "---Information---\n", "\n---Question---"
QUERY = "what matters here?"


class _Waves:
    """Stands in for the selector module's ``asyncio``: records each gather's size."""

    def __init__(self):
        self.sizes: list[int] = []

    def __getattr__(self, name):
        return getattr(asyncio, name)

    def gather(self, *aws, **kw):
        self.sizes.append(len(aws))
        return asyncio.gather(*aws, **kw)


class _Rater:
    def __init__(self, text_to_community: dict[str, int], ratings: dict[int, int]):
        self.text_to_community = text_to_community
        self.ratings = ratings
        self.rated: list[int] = []

    def answer(self, prompt: str) -> str:
        start = prompt.index(INFO) + len(INFO)
        end = prompt.rindex(QUESTION)
        community = self.text_to_community[prompt[start:end]]
        self.rated.append(community)
        return json.dumps({"reason": "stub", "rating": int(self.ratings.get(community, 0))})

    # graphrag 1.x: BaseLLM.agenerate(messages=..., **kwargs) -> str
    async def agenerate(self, messages, **kwargs):
        return self.answer(messages[0]["content"])

    # graphrag 2.x: ChatModel.achat(prompt, history, model_parameters, json) -> .output.content
    async def achat(self, prompt, history=None, **kwargs):
        text = self.answer(history[0]["content"])
        return types.SimpleNamespace(output=types.SimpleNamespace(content=text))

    # graphrag 3.x: LLMCompletion.completion_async(messages=...) -> .choices[0].message.content
    async def completion_async(self, messages, **kwargs):
        m = messages[0]
        text = self.answer(m["content"] if isinstance(m, dict) else m.content)
        msg = types.SimpleNamespace(content=text)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=msg)])


class _Constant(_Rater):
    """Answers one rating to every prompt (no need to tell reports apart)."""

    def __init__(self, rating: int):
        super().__init__({}, {})
        self.rating = rating

    def answer(self, prompt: str) -> str:
        self.rated.append(-1)
        return json.dumps({"reason": "stub", "rating": self.rating})


def _tokenizer(params, encoding: str):
    """graphrag's own tiktoken-backed tokenizer of this line (see the module docstring)."""
    if "token_encoder" in params:  # 1.x
        import tiktoken

        return "token_encoder", tiktoken.get_encoding(encoding)
    try:  # 3.x
        from graphrag_llm.tokenizer.tiktoken_tokenizer import TiktokenTokenizer

        return "tokenizer", TiktokenTokenizer(encoding_name=encoding)
    except ImportError:  # 2.x
        from graphrag.tokenizer.tiktoken_tokenizer import TiktokenTokenizer

        return "tokenizer", TiktokenTokenizer(encoding_name=encoding)


class _Tokens:
    """Tokenizer / token encoder stand-in (token counts are not compared)."""

    def encode(self, text, *a, **k):
        return str(text).split()

    def decode(self, tokens, *a, **k):
        return " ".join(tokens)

    def num_tokens(self, text):
        return len(str(text).split())

    def num_prompt_tokens(self, messages):
        return sum(len(str(m.get("content", "")).split()) for m in messages)


def _unique_texts(reports: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Reports with a marker appended to every text shared by two rows (or missing), and the map
    text -> community number."""
    reports = reports.copy()
    text = reports["full_content"].map(lambda t: "None" if t is None else str(t))
    dup = text.duplicated(keep=False).to_numpy()
    marked = [f"{t}\n[row {i}]" if d else t for i, (t, d) in enumerate(zip(text.tolist(), dup))]
    reports["full_content"] = marked
    return reports, {t: int(c) for t, c in zip(marked, reports["community"].tolist())}


def _load(spec: dict) -> dict:
    return {name: pd.read_parquet(path) for name, path in spec["files"].items()}


def _build(layout: str, frames: dict, level, rater, settings: dict, encoding: str | None = None):
    """The selector for one case; the adapters' output is computed once per community_level (the
    selector only reads it). With ``encoding``: the unmarked reports and a real tokenizer."""
    key = (level, encoding is not None)
    if key not in frames["_read"]:
        frames["_read"][key] = _read(layout, frames, level, raw=encoding is not None)
    communities, selected = frames["_read"][key]
    kw = dict(settings)
    params = inspect.signature(DynamicCommunitySelection.__init__).parameters
    if encoding is not None:
        name, tok = _tokenizer(params, encoding)
        kw.update({"llm" if "llm" in params else "model": rater, name: tok})
    elif "llm" in params:
        kw.update(llm=rater, token_encoder=_Tokens())
    elif "tokenizer" in params:
        kw.update(model=rater, tokenizer=_Tokens())
    else:
        kw.update(model=rater, token_encoder=_Tokens())
    return DynamicCommunitySelection(community_reports=selected, communities=communities, **kw)


def _read(layout: str, frames: dict, level, raw: bool = False):
    reports = frames["community_reports"] if raw else frames["_reports"]
    if layout == "v1":
        communities = read_indexer_communities(
            copy.deepcopy(frames["communities"]), copy.deepcopy(frames["nodes"]), copy.deepcopy(reports)
        )
        selected = read_indexer_reports(
            copy.deepcopy(reports), copy.deepcopy(frames["nodes"]), level, dynamic_community_selection=True
        )
    else:
        communities = read_indexer_communities(copy.deepcopy(frames["communities"]), copy.deepcopy(reports))
        selected = read_indexer_reports(
            copy.deepcopy(reports),
            copy.deepcopy(frames["communities"]),
            level,
            dynamic_community_selection=True,
        )
    return communities, selected


def run_case(layout: str, frames: dict, case: dict) -> dict:
    ratings = {int(k): int(v) for k, v in case["ratings"].items()}
    tokens = case.get("tokens")
    rater = _Rater(frames["_texts"], ratings) if tokens is None else _Constant(int(tokens["rating"]))
    waves = _Waves()
    saved = dcs_mod.asyncio
    dcs_mod.asyncio = waves
    try:
        sel = _build(
            layout,
            frames,
            case["community_level"],
            rater,
            case["settings"],
            None if tokens is None else tokens["encoding"],
        )
        reports, info = asyncio.run(sel.select(QUERY if tokens is None else tokens["query"]))
    except Exception as exc:  # noqa: BLE001 - graphrag's own failure is the result
        return {"id": case["id"], "error": f"{type(exc).__name__}: {exc}"}
    finally:
        dcs_mod.asyncio = saved
    if tokens is not None:
        return {
            "id": case["id"],
            "error": None,
            "wave_sizes": waves.sizes,
            "llm_calls": int(info["llm_calls"]),
            "prompt_tokens": int(info["prompt_tokens"]),
            "kept": sorted(int(r.community_id) for r in reports),
        }
    # the repeats of one community and the communities of a wave interleave under asyncio.gather:
    # each wave is the multiset of rated communities, each counted once per num_repeats calls
    out_waves = _waves_by_count(rater.rated, waves.sizes, int(case["settings"].get("num_repeats", 1)))
    return {
        "id": case["id"],
        "error": None,
        "waves": out_waves,
        "llm_calls": int(info["llm_calls"]),
        "kept": sorted(int(r.community_id) for r in reports),
    }


def _waves_by_count(rated: list[int], sizes: list[int], reps: int) -> list[list[int]]:
    out, i = [], 0
    for size in sizes:
        chunk = rated[i : i + size * reps]
        i += size * reps
        counts: dict[int, int] = {}
        for c in chunk:
            counts[c] = counts.get(c, 0) + 1
        out.append(sorted(c for c, n in counts.items() for _ in range(n // reps)))
    return out


def main(cases_path: str, out_path: str) -> None:
    with open(cases_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    loaded: dict[str, dict] = {}
    results = []
    for case in spec["cases"]:
        key = case["tables"]
        tab = spec["tables"][key]
        if key not in loaded:
            try:
                frames = _load(tab)
                frames["_reports"], frames["_texts"] = _unique_texts(frames["community_reports"])
                frames["_read"] = {}
                loaded[key] = frames
            except Exception as exc:  # noqa: BLE001
                loaded[key] = {"_error": f"{type(exc).__name__}: {exc}"}
        frames = loaded[key]
        if "_error" in frames:
            results.append({"id": case["id"], "error": "load: " + frames["_error"]})
            continue
        results.append(run_case(tab["layout"], frames, case))
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"results": results}, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Runs graphrag's own global-search reduce step on stub map answers; executed by
tests/graphrag_tests/test_reduce.py in a side interpreter with graphrag installed (1.2.0, 2.7.2, 3.3.0).

Usage: ``python reduce_runner.py CASES.json OUT.json``. CASES.json holds ``{"encoding": str, "cases":
[{"id", "data_max_tokens": int, "answers": [[score, text], ...]}]}``: one map answer per item, each one
point.

``GlobalSearch._reduce_response`` (query/structured_search/global_search/search.py) with a real tiktoken
tokenizer and a stub model that records the messages it is sent and raises (graphrag then returns the
context it built). Output per case: ``{"id", "kept": [answer index, ...] in the context's order,
"sent": bool (the stub received that context)}``, or ``{"id", "error"}``."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import sys

from graphrag.query.structured_search.base import SearchResult
from graphrag.query.structured_search.global_search.search import GlobalSearch


class StubModel:
    """Any model method records its arguments and raises instead of calling a service."""

    def __init__(self):
        self.sent: list[str] = []

    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.sent.append(json.dumps([args, kwargs], default=str))
            raise RuntimeError(f"stub model: {name} calls no service")

        return call


def _engine(encoding: str, stub: StubModel, data_max_tokens: int) -> GlobalSearch:
    params = inspect.signature(GlobalSearch.__init__).parameters
    if "token_encoder" in params:  # 1.x
        import tiktoken

        return GlobalSearch(
            llm=stub,
            context_builder=None,
            token_encoder=tiktoken.get_encoding(encoding),
            max_data_tokens=data_max_tokens,
        )
    try:  # 3.x
        from graphrag_llm.tokenizer.tiktoken_tokenizer import TiktokenTokenizer
    except ImportError:  # 2.x
        from graphrag.tokenizer.tiktoken_tokenizer import TiktokenTokenizer
    return GlobalSearch(
        model=stub,
        context_builder=None,
        tokenizer=TiktokenTokenizer(encoding_name=encoding),
        max_data_tokens=data_max_tokens,
    )


def run_case(case: dict, encoding: str) -> dict:
    stub = StubModel()
    engine = _engine(encoding, stub, case["data_max_tokens"])
    answers = [
        SearchResult(
            response=[{"answer": text, "score": score}],
            context_data="",
            context_text="",
            completion_time=0.0,
            llm_calls=1,
            prompt_tokens=0,
            output_tokens=0,
        )
        for score, text in case["answers"]
    ]
    result = asyncio.run(engine._reduce_response(answers, query="What are the main themes?"))
    context = result.context_data
    kept = [int(n) - 1 for n in re.findall(r"^----Analyst (\d+)----$", context, flags=re.M)]
    return {
        "id": case["id"],
        "kept": kept,
        "sent": bool(stub.sent) and json.dumps(context)[1:-1] in stub.sent[0],
    }


def main(cases_path: str, out_path: str) -> None:
    with open(cases_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    results = []
    for case in spec["cases"]:
        try:
            results.append(run_case(case, spec["encoding"]))
        except Exception as exc:  # noqa: BLE001 - graphrag's own failure is the result
            results.append({"id": case["id"], "error": f"{type(exc).__name__}: {exc}"})
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"results": results}, fh)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])

"""Global search's reduce step (graphrag_audit.graphrag.reduce): hand-worked cases, and graphrag's own
``GlobalSearch._reduce_response`` on stub map answers in the side environments (tests/reduce_runner.py)."""

from __future__ import annotations

import json
from itertools import cycle, islice

import graphrag_side as side
import pytest
from conftest import ROOT

from graphrag_audit.graphrag.reduce import answers_fit, point_header, reduce_keeps
from graphrag_audit.graphrag.tokens import get_token_counter

COUNTER = get_token_counter("cl100k_base")


def test_header_tokens():
    # "----", "Analyst", " ", "1", "----\n", "Importance", " Score", ":", " ", "100", "\n": 13 in cl100k_base
    assert COUNTER.count(point_header(0)) == COUNTER.count(point_header(8, 5)) == 13
    assert COUNTER.count(point_header(999)) == 14  # "1000" is two tokens


def test_hand_worked_packing():
    # score 0 is dropped; ties keep map order; each point is 13 + its answer's tokens
    assert reduce_keeps([(0, 10), (50, 100), (90, 100), (50, 5000)], 300, COUNTER) == [2, 1]
    assert reduce_keeps([(0, 10), (50, 100), (90, 100), (50, 5000)], 225, COUNTER) == [2]  # 113 + 113 > 225
    # graphrag stops at the first point that does not fit: the small one after it is dropped too
    assert reduce_keeps([(90, 100), (80, 5000), (70, 10)], 300, COUNTER) == [0]
    assert reduce_keeps([], 12_000, COUNTER) == []


def test_hand_worked_headroom():
    # 2.x/3.x: 1,000 words x 1.33 = 1,330 tokens + 13 = 1,343 a point; 8 x 1,343 = 10,744 <= 12,000 < 9 x 1,343
    assert answers_fit(1330, 12_000, COUNTER) == 8
    # 1.x: 1,000 tokens + 13 = 1,013; 11 x 1,013 = 11,143 <= 12,000 < 12 x 1,013
    assert answers_fit(1000, 12_000, COUNTER) == 11
    # 24,000 tokens: 17 x 1,343 = 22,831 <= 24,000 < 18 x 1,343
    assert answers_fit(1330, 24_000, COUNTER) == 17


# ---------------------------------------------------------------------------------------------
# against graphrag's own _reduce_response

WORDS = "Analysts found that the community reports describe several key themes across regions, with".split()


def _words(n: int) -> str:
    return " ".join(islice(cycle(WORDS), n)) + "."


def _formatted(i: int, score: int, text: str) -> int:
    """A point's tokens as graphrag counts them (its own format, counted whole)."""
    return COUNTER.count("\n".join([f"----Analyst {i + 1}----", f"Importance Score: {score}", text]))


def _cases() -> list[dict]:
    long_answer = _words(1000)  # map_max_length words (2.x/3.x)
    token_answer = "Report" + " report" * 999  # map_max_tokens tokens (1.x)
    assert COUNTER.count(token_answer) == 1000
    full = [(100, long_answer)] * 11
    first_four = sum(_formatted(i, 100, long_answer) for i in range(4))
    mixed = [(0, _words(50)), (40, _words(300)), (90, long_answer), (40, _words(20)), (75, _words(700))]
    small = [(60, "Yes.")] * 1005  # analyst numbers past 999 take one more token
    return [
        {"id": "words", "data_max_tokens": 12_000, "answers": full},
        {"id": "tokens", "data_max_tokens": 12_000, "answers": [(100, token_answer)] * 14},
        {"id": "boundary", "data_max_tokens": first_four, "answers": full},
        {"id": "boundary-1", "data_max_tokens": first_four - 1, "answers": full},
        {"id": "mixed", "data_max_tokens": 3000, "answers": mixed},
        {"id": "mixed-wide", "data_max_tokens": 6000, "answers": mixed},
        {
            "id": "past-999",
            "data_max_tokens": sum(_formatted(i, 60, "Yes.") for i in range(1002)),
            "answers": small,
        },
    ]


@pytest.mark.side
@pytest.mark.parametrize("python", side.side_params(min_major=1))
def test_matches_graphrag(python, tmp_path):
    python = side.need(python, min_major=1)
    cases = _cases()
    (tmp_path / "cases.json").write_text(json.dumps({"encoding": "cl100k_base", "cases": cases}))
    env = side.tiktoken_env(tmp_path)
    runner = str(ROOT / "tests" / "reduce_runner.py")
    proc = side.run_side(
        python, runner, str(tmp_path / "cases.json"), str(tmp_path / "out.json"), env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {r["id"]: r for r in json.loads((tmp_path / "out.json").read_text())["results"]}
    for case in cases:
        res = got[case["id"]]
        assert "error" not in res, res
        answers = [(score, COUNTER.count(text)) for score, text in case["answers"]]
        assert res["kept"] == reduce_keeps(answers, case["data_max_tokens"], COUNTER), case["id"]
        assert res["sent"], case["id"]  # the stub model received exactly that context
    # the audit's figures for the same inputs: full-length answers, equal scores
    for name, unit in (("words", "words"), ("tokens", "tokens")):
        case = next(c for c in cases if c["id"] == name)
        tokens = COUNTER.count(case["answers"][0][1])
        answer = round(1000 * (tokens / 1000)) if unit == "words" else 1000  # as analysis/reduce.py
        fit = answers_fit(answer, 12_000, COUNTER)
        assert got[name]["kept"] == list(range(min(len(case["answers"]), fit)))
    assert len(got["boundary"]["kept"]) == 4 and len(got["boundary-1"]["kept"]) == 3
    assert len(got["past-999"]["kept"]) == 1002

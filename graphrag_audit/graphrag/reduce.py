"""Global search's reduce step: how many map answers fit its window, and which it drops without a word.

No graphrag import. Sources (``query/structured_search/global_search/search.py`` ``_reduce_response``,
L297-372 @v1.2.0, L296-380 @v2.7.2, L306-390 @v3.3.0; ``_stream_reduce_response`` packs alike):

- Every map answer is a list of points ``{"answer", "score"}``; the points of all answers are collected
  in map order (``analyst`` = the answer's index), those with ``score > 0`` kept, then ``sorted(key=score,
  reverse=True)`` (stable: ties keep map order).
- Each point is ``"\\n".join([f"----Analyst {analyst + 1}----", f"Importance Score: {score}", answer])``;
  packing stops at the first point with ``total + tokens(point) > max_data_tokens`` (``break``: every
  later point is dropped, nothing is logged). Tokens: the query tokenizer's ``encode`` (1.x
  ``query/llm/text_utils.py`` ``num_tokens``).
- ``max_data_tokens`` is ``global_search.data_max_tokens`` (``query/factory.py`` L137 @v1.2.0, L170
  @v2.7.2, L158 @v3.3.0), 12,000 by default (``config/defaults.py`` ``GLOBAL_SEARCH_DATA_MAX_TOKENS``
  L126 @v1.2.0, ``GlobalSearchDefaults.data_max_tokens`` L261 @v2.7.2, L201 @v3.3.0).
- A map answer's length: 2.x/3.x tell the model "Limit your response length to {max_length} words."
  (``prompts/query/global_search_map_system_prompt.py`` L45 @v2.7.2 and @v3.3.0) with
  ``global_search.map_max_length``, 1,000 by default (``config/defaults.py`` L262 @v2.7.2, L202 @v3.3.0).
  1.x's prompt sets no length; its map call passes ``max_tokens=global_search.map_max_tokens``
  (``query/factory.py`` L139 @v1.2.0), 1,000 by default (``config/defaults.py`` L127 @v1.2.0): at most
  1,000 output tokens for the whole JSON reply, so the answer text is a little shorter.

The audit's full-length answer is one point of the limit (words x tokens per word in 2.x/3.x, the token
limit in 1.x), every answer with the same score: graphrag then keeps the first answers in map order.
"""

from __future__ import annotations

from collections.abc import Sequence

from graphrag_audit.graphrag.tokens import TokenCounter

DEFAULT_DATA_MAX_TOKENS = 12_000
DEFAULT_MAP_MAX_LENGTH = 1_000  # words, 2.x/3.x
DEFAULT_MAP_MAX_TOKENS = 1_000  # tokens, 1.x
#: OpenAI's rule of thumb for English, 1 token ~ 3/4 word (help.openai.com, "What are tokens and how to
#: count them?"); cl100k_base on the English report text of the shared indexes gives 1.32-1.34
#: (real-textbook-v1 1.321, real-insurance-v3 1.335, verbs-v3 1.343), more on technical or non-English
#: text (real-technip-safety-v2 1.47, real-b2b-gaps-v2 1.66, real-datasaur-medical-v3 2.06)
DEFAULT_TOKENS_PER_WORD = 1.33
#: every point's score: 1-100 is one token in cl100k_base and o200k_base, so its value does not matter
SCORE = 100


def point_header(analyst: int, score: int = SCORE) -> str:
    """The text graphrag puts before a point's answer (``analyst`` counted from 0, as graphrag holds it)."""
    return f"----Analyst {analyst + 1}----\nImportance Score: {score}\n"


def reduce_keeps(
    answers: Sequence[tuple[int, int]], data_max_tokens: int, counter: TokenCounter
) -> list[int]:
    """graphrag's reduce on one point per map answer, each ``(score, tokens of its answer text)``: the
    answers it keeps (indexes, in its order). An answer's text must start with a letter, so that its
    tokens add to the header's."""
    order = sorted((i for i, (score, _) in enumerate(answers) if score > 0), key=lambda i: -answers[i][0])
    kept, total = [], 0
    for i in order:
        score, tokens = answers[i]
        tokens += counter.count(point_header(i, score))
        if total + tokens > data_max_tokens:
            break
        kept.append(i)
        total += tokens
    return kept


def answers_fit(answer_tokens: int, data_max_tokens: int, counter: TokenCounter) -> int:
    """How many full-length map answers of ``answer_tokens`` tokens (equal scores) the reduce keeps."""
    enough = data_max_tokens // (answer_tokens + 1) + 1  # a point takes more than its answer's tokens
    return len(reduce_keeps([(SCORE, answer_tokens)] * enough, data_max_tokens, counter))

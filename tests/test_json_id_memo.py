"""render/json: id lists written again from the memo of equal ones read exactly as the plain
encoder writes them (equal lists, equal values in other dtypes, different lists of one length)."""

from __future__ import annotations

import json

import numpy as np

from graphrag_audit.render import json as rjson
from graphrag_audit.results.audit import CommunityIds


def test_memoised_id_lists_equal_the_plain_encoder(monkeypatch):
    monkeypatch.setattr(rjson, "_CHUNK_IDS", 300)  # several chunks per list
    monkeypatch.setattr(rjson, "_MEMO_FROM", 4)
    rng = np.random.default_rng(3)
    a = np.sort(rng.integers(-5, 10**6, 1000))
    b = a.copy()
    b[500] += 1  # same length, one id different
    lists = [a, a.copy(), b, a[:3], a.astype(np.int32), np.zeros(0, dtype=np.int64), b, a, a[:999], a]
    doc = {
        "levels": [{"selected": {str(i): {"community_ids": CommunityIds(x)}}} for i, x in enumerate(lists)]
    }
    memo = rjson._IdTexts()
    got = "".join(rjson._stream(doc, rjson._DOCUMENT, memo))
    plain = {"levels": [{"selected": {str(i): {"community_ids": x.tolist()}}} for i, x in enumerate(lists)]}
    assert got == json.dumps(plain, separators=(",", ":"))
    assert [len(x) for x, _ in memo._kept] == [999, 1000, 1000]  # equal lists were found, not kept twice

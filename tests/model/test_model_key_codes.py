"""IndexModel.member_key_codes / rollup_key_codes: key_codes of the entity keys, as pd.factorize
gives them, and of the frame the model holds. Reference: key_codes itself and pd.factorize."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from graphrag_audit.io.load import load_index
from graphrag_audit.model.keys import key_codes
from tests.synthetic import leiden_like, write_index


@pytest.mark.parametrize("layout", ["3.x", "1.0-1.2"])
def test_shared_codes_equal_key_codes_and_pandas(tmp_path, layout):
    write_index(leiden_like(400, seed=11), tmp_path / layout, layout)
    model = load_index(tmp_path / layout)
    for frame, get in ((model.members, model.member_key_codes), (model.rollup_rows, model.rollup_key_codes)):
        codes, n = get()
        want, uniques = pd.factorize(frame["entity"].to_numpy(dtype=object))
        assert np.array_equal(codes, want) and n == len(uniques)
        assert np.array_equal(codes, key_codes(frame["entity"])[0])


def test_replaced_members_are_factorized_again(tmp_path):
    write_index(leiden_like(200, seed=2), tmp_path / "i", "3.x")
    model = load_index(tmp_path / "i")
    model = replace(model, members=model.members.iloc[::-1].reset_index(drop=True))
    after, n = model.member_key_codes()
    want, uniques = pd.factorize(model.members["entity"].to_numpy(dtype=object))
    assert np.array_equal(after, want) and n == len(uniques)

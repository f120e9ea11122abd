"""--verify against graphrag's own read_indexer_reports, on every real index.

graphrag is an optional extra and not installed by the test extra. These tests run against
Python interpreters that have graphrag (and this project) installed, listed in the
environment variable GRAPHRAG_VERIFY_PYTHONS (os.pathsep-separated); .ci/run prepares
graphrag 3.3.0 and 1.2.0 environments when the package registry allows.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import real_index_params, shared_index


def _pythons():
    raw = os.environ.get("GRAPHRAG_VERIFY_PYTHONS", "")
    return [p for p in raw.split(os.pathsep) if p and os.path.exists(p)]


PYTHONS = _pythons()


@pytest.mark.skipif(not PYTHONS, reason="no interpreter with graphrag installed (set GRAPHRAG_VERIFY_PYTHONS; "
                                        ".ci/run builds graphrag 3.3.0 and 1.2.0 environments)")
@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("name", real_index_params())
def test_graphrag_agrees_on_real_index(python, name):
    folder = shared_index(name)
    proc = subprocess.run([python, "-m", "graphrag_audit", "levels", str(folder), "--verify", "--no-costs",
                           "-f", "json", "--fail-on", "never"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    v = json.loads(proc.stdout)["verify"]
    if not v["available"]:
        assert "lacks the tables" in v["reason"], v
        return
    assert v["agree"], v


def test_verify_without_graphrag_says_so(tmp_path):
    pytest.importorskip("pandas")
    try:
        import graphrag  # noqa: F401
        pytest.skip("graphrag is installed here")
    except ImportError:
        pass
    from builders import SEED, write_v3
    from graphrag_audit.audit import AuditOptions, audit
    from graphrag_audit.verify import verify_with_graphrag

    report = audit(write_v3(tmp_path / "i", SEED), AuditOptions(costs=False))
    v = verify_with_graphrag(report)
    assert v["available"] is False and "not installed" in v["reason"]

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_INDEXES = ROOT.parent / "shared" / "indexes"
FIXTURES = ROOT / "fixtures"


def shared_index(name: str) -> Path:
    """Path of a real index under ../shared/indexes, or skip the test with the reason."""
    path = SHARED_INDEXES / name
    if not path.is_dir():
        pytest.skip(f"real index {name!r} not available: {SHARED_INDEXES} is absent (CI provides ../shared)")
    return path


def shared_folders() -> list[str]:
    if not SHARED_INDEXES.is_dir():
        return []
    return sorted(p.name for p in SHARED_INDEXES.iterdir() if p.is_dir())


#: The shared indexes of the default tier, one per graphrag generation (0.1 create_final, 0.5, 1.x,
#: 2.x, 3.x); real_index_params marks every other one ``large``.
SMOKE_INDEXES = ("dulce-v0.1-create_final", "verbs-v0.5", "verbs-v1", "verbs-v2", "dulce-v3")


def real_index_params():
    """Parametrize over every real index (those beyond SMOKE_INDEXES marked ``large``); one skipped
    param with a reason when absent."""
    names = shared_folders()
    if not names:
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"{SHARED_INDEXES} is absent: real-index tests need ../shared/indexes beside the repo"
                ),
            )
        ]
    return [pytest.param(n, marks=() if n in SMOKE_INDEXES else pytest.mark.large) for n in names]


def pytest_collection_modifyitems(items):
    """A test that takes the storage emulators (tests/test_remote.py's fixtures) is ``emulator``."""
    for item in items:
        if {"azurite", "moto"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.emulator)


@pytest.fixture(scope="session")
def _token_cache_root(tmp_path_factory):
    return tmp_path_factory.mktemp("token-cache")


@pytest.fixture(autouse=True)
def _token_cache_in_tmp(_token_cache_root, monkeypatch):
    """The exact-token-count cache (graphrag_audit.graphrag.token_cache) of every test, in-process
    or in a child, lives in a temporary directory: the suite never writes into the user's home.
    XDG_CACHE_HOME too, for children whose environment drops GRAPHRAG_AUDIT_* variables."""
    monkeypatch.setenv("GRAPHRAG_AUDIT_CACHE_DIR", str(_token_cache_root / "graphrag-audit"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_token_cache_root))

"""The Python interpreters with graphrag installed that tests run graphrag's own code in.

graphrag is an optional extra, never installed by the test extra: it pins its own pandas and
hundreds of packages. ``.ci/run`` builds side environments with graphrag 3.3.0, 2.7.2 and 1.2.0 and lists
their interpreters in ``GRAPHRAG_VERIFY_PYTHONS`` (os.pathsep-separated). Tests that need graphrag
take one of those interpreters as a parameter and run this checkout's ``graphrag_audit`` (or a
small script) in it.

Without them a test skips with the reason, except under CI (``CI=true``): there it fails, so a
green CI has always compared against the real graphrag."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REASON = (
    "no interpreter with graphrag installed: set GRAPHRAG_VERIFY_PYTHONS (os.pathsep-separated "
    "interpreters); .ci/run builds graphrag 3.3.0, 2.7.2 and 1.2.0 environments"
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def side_pythons(dynamic: bool = False) -> list[str]:
    """``GRAPHRAG_VERIFY_PYTHONS``; with ``dynamic`` also ``GRAPHRAG_DYNAMIC_PYTHONS`` (.ci/run's graphrag
    2.7.2, which .ci/run also lists among the verify interpreters; used by tests/graphrag_tests/test_dynamic_selection.py).
    Each interpreter once, in order."""
    raw = os.environ.get("GRAPHRAG_VERIFY_PYTHONS", "")
    if dynamic:
        raw += os.pathsep + os.environ.get("GRAPHRAG_DYNAMIC_PYTHONS", "")
    return list(dict.fromkeys(p for p in raw.split(os.pathsep) if p.strip()))


@functools.cache
def versions(python: str) -> tuple[str | None, str | None]:
    """(graphrag version, pandas version) installed in ``python``; None where absent."""
    code = (
        "from importlib.metadata import version as v\n"
        "def g(n):\n  try: return v(n)\n  except Exception: return ''\n"
        "print(g('graphrag')); print(g('pandas'))"
    )
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=120)
    except OSError:
        return None, None
    lines = proc.stdout.split("\n")
    if proc.returncode != 0 or len(lines) < 2:
        return None, None
    return lines[0].strip() or None, lines[1].strip() or None


def major(version: str | None) -> int:
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else -1


def side_params(min_major: int = 0) -> list:
    """One pytest parameter per side interpreter whose graphrag major version is >= ``min_major``
    (a listed interpreter without graphrag is kept: its test fails, naming it), or a single None
    parameter when there is none (the test then skips, or fails under CI). Each is marked ``side``."""
    out = []
    for p in side_pythons():
        gv, _ = versions(p)
        if gv is None:
            out.append(pytest.param(p, id=f"unusable-{Path(p).parent.parent.name}", marks=pytest.mark.side))
        elif major(gv) >= min_major:
            out.append(pytest.param(p, id=f"graphrag-{gv}", marks=pytest.mark.side))
    none_id = f"no-graphrag>={min_major}" if min_major else "no-graphrag"
    return out or [pytest.param(None, id=none_id, marks=pytest.mark.side)]


def need(python: str | None, min_major: int = 0, reason: str | None = None) -> str:
    """The interpreter to run graphrag in; skip (fail under CI) when there is none (``reason`` names
    what is missing instead of the default)."""
    if python is None:
        what = REASON if not min_major else REASON + f" (none with graphrag >= {min_major}.0)"
        if reason:
            what = "no interpreter with " + reason + "; .ci/run builds them"
        if in_ci():
            pytest.fail("CI=true but " + what + ": a green CI must have compared against graphrag")
        pytest.skip(what)
    if versions(python)[0] is None:
        pytest.fail(f"{python} is listed in GRAPHRAG_VERIFY_PYTHONS but has no importable graphrag metadata")
    return python


def side_env(*first_on_path: str) -> dict:
    """The environment for a side interpreter: this checkout (and ``first_on_path``) first on
    sys.path, so it runs this worktree's graphrag_audit whatever is installed there."""
    env = dict(os.environ)
    parts = [*first_on_path, str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


def tiktoken_env(tmp: Path, name: str = "cl100k_base") -> dict:
    """:func:`side_env` with a tiktoken cache in ``tmp`` holding bpe-openai's bundled copy of the encoding
    file (tiktoken checks its sha256), so the side interpreters need no download."""
    import gzip
    import hashlib

    import bpe_openai.data

    url = f"https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
    cache = tmp / "tiktoken-cache"
    cache.mkdir(exist_ok=True)
    src = Path(bpe_openai.data.__file__).with_name(f"{name}.tiktoken.gz")
    (cache / hashlib.sha1(url.encode()).hexdigest()).write_bytes(gzip.decompress(src.read_bytes()))
    return {**side_env(), "TIKTOKEN_CACHE_DIR": str(cache)}


def run_tool(
    python: str,
    *args: str,
    timeout: int = 600,
    extra_path: tuple[str, ...] = (),
    env_extra: dict | None = None,
):
    """``python -m graphrag_audit ARGS`` from the repository root."""
    return subprocess.run(
        [python, "-m", "graphrag_audit", *args],
        cwd=ROOT,
        env={**side_env(*extra_path), **(env_extra or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_side(python: str, *argv: str, env: dict | None = None, timeout: int = 300):
    """``python ARGV`` from the repository root with :func:`side_env` (or ``env``), output captured."""
    return subprocess.run(
        [python, *argv], cwd=ROOT, env=env or side_env(), capture_output=True, text=True, timeout=timeout
    )


def run_script(python: str, code: str, *args: str, timeout: int = 300):
    return run_side(python, "-c", code, *args, timeout=timeout)

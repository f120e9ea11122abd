"""The opt-in token cache (``--token-cache DIR``, graphrag/token_cache.py): same output, explicit,
written only when asked, atomically and never inside the index; a damaged file is a warning."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphrag_audit.cli import app
from graphrag_audit.graphrag.token_cache import FILE_NAME, TokenCache
from graphrag_audit.graphrag.tokens import get_token_counter

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "fixtures" / "seed-v3"

# runs the CLI with argv[1] (a JSON list); stderr's last line says whether the bpe_openai tokenizer was loaded
_PROBE = """
import json, sys
sys.argv = ["graphrag-audit", *json.loads(sys.argv[1])]
try:
    from graphrag_audit.cli import main
    main()
except SystemExit:
    pass
sys.stderr.write("\\nBPE " + json.dumps("bpe_openai._bindings" in sys.modules) + "\\n")
"""


def _probe(*args: str) -> tuple[str, bool]:
    """(stdout, whether the tokenizer was imported) of ``graphrag-audit ARGS`` in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_AUDIT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(list(args))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc.stdout, json.loads(proc.stderr.splitlines()[-1].removeprefix("BPE "))


def _levels(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, ["levels", *map(str, args), "-f", "json"], env=env)


@pytest.fixture(scope="module")
def plain() -> str:
    """levels -f json on seed-v3 without the cache."""
    res = _levels(SEED)
    assert res.exit_code == 0, res.output
    return res.stdout


def test_a_warm_run_gives_the_same_output_without_loading_the_tokenizer(tmp_path, plain):
    cache = tmp_path / "cache"
    cold, cold_bpe = _probe("levels", str(SEED), "-f", "json", "--token-cache", str(cache))
    warm, warm_bpe = _probe("levels", str(SEED), "-f", "json", "--token-cache", str(cache))
    assert cold_bpe and not warm_bpe
    assert cold == warm == plain
    assert os.listdir(cache) == [FILE_NAME]  # one file, no temporary left


def test_nothing_is_written_without_the_option(tmp_path, monkeypatch):
    index = shutil.copytree(SEED, tmp_path / "index")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    out = _levels(index).stdout
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    # the environment variable is the option
    res = _levels(index, env={"GRAPHRAG_AUDIT_TOKEN_CACHE": str(tmp_path / "c")})
    assert res.stdout == out and (tmp_path / "c" / FILE_NAME).is_file()


def test_never_inside_the_index(tmp_path):
    index = shutil.copytree(SEED, tmp_path / "index")
    res = _levels(index, "--token-cache", index / "cache")
    assert res.exit_code == 2 and "refusing to write inside the index directory" in res.stderr
    assert not (index / "cache").exists()


def test_a_fifo_is_refused_before_the_run(tmp_path):
    os.mkfifo(tmp_path / FILE_NAME)
    res = _levels(SEED, "--token-cache", tmp_path)
    assert res.exit_code == 2 and res.stdout == ""
    assert f"{tmp_path / FILE_NAME}: not a regular file" in res.stderr


def test_a_damaged_file_is_one_warning_then_replaced(tmp_path, plain):
    path = tmp_path / FILE_NAME
    for text in ("{not json", "[]", '{"version": 1, "counts": {"cl100k_base": {"k": "7"}}}'):
        path.write_text(text)
        res = _levels(SEED, "--token-cache", tmp_path)
        assert res.exit_code == 0 and res.stdout == plain
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"graphrag-audit: warning: {path}: "), lines
        assert json.loads(path.read_text())["version"] == 1


def test_counts_equal_the_tokenizer_s_and_are_kept(tmp_path):
    texts = ["", "hello world", "日本語のテキスト", "a\ud800b", "<|endoftext|>"]
    exact = get_token_counter("cl100k_base").count_many(texts).tolist()
    cache = TokenCache(tmp_path)
    assert cache.load() is None
    counter = get_token_counter("cl100k_base", cache)
    assert counter.count_many(texts).tolist() == exact and cache.added == len(texts)
    assert counter.count_many(iter(texts)).tolist() == exact and cache.added == len(texts)
    assert get_token_counter("estimate", cache) is get_token_counter("estimate")
    cache.save()
    again = TokenCache(tmp_path)
    assert again.load() is None and again.counts == cache.counts


def test_report_takes_the_option_too(tmp_path):
    runs = [["--token-cache", str(tmp_path / "c")], ["--token-cache", str(tmp_path / "c")], []]
    pages = []
    for i, extra in enumerate(runs):
        res = CliRunner().invoke(app, ["report", str(SEED), "-o", str(tmp_path / f"{i}.html"), *extra])
        assert res.exit_code == 0, res.output
        pages.append((tmp_path / f"{i}.html").read_bytes())
    assert pages[0] == pages[1] == pages[2] and (tmp_path / "c" / FILE_NAME).is_file()

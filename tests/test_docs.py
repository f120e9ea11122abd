"""Docs stay true to the code."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_rules_doc_is_generated_from_the_rules():
    spec = importlib.util.spec_from_file_location("gen_rules", ROOT / "docs" / "gen_rules.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == mod.render(), \
        "docs/rules.md is stale: run python docs/gen_rules.py"


def test_readme_quick_start_commands_are_the_ci_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_cmd = 'python -m pip install ".[test]" && python -m pytest'
    assert test_cmd in readme and ci.rstrip().endswith(test_cmd)
    assert "python -m pip install . && python -m graphrag_audit levels fixtures/seed-v3" in readme


def test_readme_command_table_lists_every_cli_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "graphrag_audit", "--help"], capture_output=True, text=True,
                         timeout=60).stdout
    from graphrag_audit.cli import app
    import typer.main

    names = sorted(typer.main.get_command(app).commands)
    for name in names:
        assert f"`{name} " in readme or f"`{name}`" in readme, name
        assert name in out


# ----------------------------------------------------------------------------------------
# the domain reference (docs/graphrag-semantics.md) and portable paths
# ----------------------------------------------------------------------------------------
import re  # noqa: E402
import shutil  # noqa: E402

import pytest  # noqa: E402

SEMANTICS = ROOT / "docs" / "graphrag-semantics.md"
# an absolute path on the machines this project was developed on; real indexes are ../shared/indexes
MACHINE_PATH = re.compile(r"(^|[^A-Za-z0-9_.])/(work|farm)/", re.M)
OLD_BRIEF = "GRAPHRAG" + ".md"  # the brief outside the repository that the code used to cite
CITED_ANCHOR = re.compile(r"graphrag-semantics\.md#([A-Za-z0-9_-]+)")


def _tracked_files() -> list[Path]:
    if shutil.which("git") is None:
        pytest.skip("git is not installed: cannot list the repository's tracked files")
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip(f"not a git checkout ({proc.stderr.decode(errors='replace').strip()[:200]})")
    files = [ROOT / name for name in proc.stdout.decode("utf-8").split("\0") if name]
    return [f for f in files if f.is_file()]


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def test_no_tracked_file_cites_the_outside_brief_or_a_machine_path():
    files = _tracked_files()
    assert any(f.suffix == ".py" for f in files) and SEMANTICS in files
    bad = []
    for f in files:
        text = _text(f)
        rel = f.relative_to(ROOT).as_posix()
        for lineno, line in enumerate(text.splitlines(), 1):
            if OLD_BRIEF in line:
                bad.append(f"{rel}:{lineno}: cites {OLD_BRIEF!r} (cite a section of docs/graphrag-semantics.md)")
            if MACHINE_PATH.search(line):
                bad.append(f"{rel}:{lineno}: absolute machine path (use ../shared/indexes or a relative path)")
    assert bad == [], "\n".join(bad)


def _semantics_anchors() -> set[str]:
    text = SEMANTICS.read_text(encoding="utf-8")
    ids = re.findall(r'<a id="([A-Za-z0-9_-]+)"></a>', text)
    assert len(ids) == len(set(ids)), "duplicate anchor ids in docs/graphrag-semantics.md"
    return set(ids)


def test_every_cited_semantics_anchor_exists():
    anchors = _semantics_anchors()
    cited: dict[str, list[str]] = {}
    for f in _tracked_files():
        rel = f.relative_to(ROOT).as_posix()
        text = _text(f)
        for m in CITED_ANCHOR.finditer(text):
            cited.setdefault(m.group(1), []).append(rel)
        if f == SEMANTICS:  # links inside the page: [text](#anchor)
            for m in re.finditer(r"\]\(#([A-Za-z0-9_-]+)\)", text):
                cited.setdefault(m.group(1), []).append(rel)
    # the code and tests do cite the page (so this test cannot pass on nothing)
    assert {"selection", "dynamic", "tree", "numbers", "context", "frontier"} <= set(cited)
    missing = {a: sorted(set(where)) for a, where in cited.items() if a not in anchors}
    assert missing == {}, f"anchors cited but not defined in docs/graphrag-semantics.md: {missing}"


def test_fixtures_readme_is_what_the_generator_writes():
    spec = importlib.util.spec_from_file_location("fixtures_generate", ROOT / "fixtures" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    readme = (ROOT / "fixtures" / "README.md").read_text(encoding="utf-8")
    version = re.search(r"written with pyarrow (\S+)\)", readme)
    assert version, "fixtures/README.md does not name the pyarrow version it was written with"
    assert readme == mod._readme(version.group(1)), "fixtures/README.md is stale: run python fixtures/generate.py"


# ----------------------------------------------------------------------------------------
# the README's sample output is the real command's output
# ----------------------------------------------------------------------------------------
README_SAMPLE_ARGS = ["levels", "../shared/indexes/verbs-v3", "--width", "110", "--color", "never"]
README_SAMPLE = re.compile(r"<!-- sample: graphrag-audit (?P<args>[^>]*?) -->\n```\n(?P<body>.*?)```\n", re.S)


def sample_output(args: list[str]) -> str:
    """What ``graphrag-audit ARGS`` prints, run from the repository root with NO_COLOR (a doc's
    ``<!-- sample: ... -->`` block shows it verbatim, trailing spaces stripped)."""
    proc = subprocess.run([sys.executable, "-m", "graphrag_audit", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env={**__import__("os").environ,
                                                                             "NO_COLOR": "1"})
    assert proc.returncode in (0, 1), proc.stderr
    return "\n".join(line.rstrip() for line in proc.stdout.splitlines()) + "\n"


def readme_sample_output() -> str:
    return sample_output(README_SAMPLE_ARGS)


SAMPLE_DOCS = ["README.md", "docs/user-guide.md", "docs/plan.md"]


@pytest.mark.parametrize("doc", SAMPLE_DOCS)
def test_doc_samples_are_the_real_output(doc):
    if not (ROOT.parent / "shared" / "indexes" / "verbs-v3").is_dir():
        pytest.skip("../shared/indexes/verbs-v3 is absent: the sample output cannot be regenerated")
    text = (ROOT / doc).read_text(encoding="utf-8")
    blocks = list(README_SAMPLE.finditer(text))
    assert blocks, f"{doc} has no '<!-- sample: graphrag-audit ... -->' block"
    if doc == "README.md":
        assert blocks[0].group("args").split() == README_SAMPLE_ARGS
    for m in blocks:
        assert m.group("body") == sample_output(m.group("args").split()), \
            f"{doc}'s sample output is stale: run python tests/test_docs.py --write-readme-sample"


# ----------------------------------------------------------------------------------------
# the per-version dynamic tables of README.md and docs/user-guide.md are the real numbers
# ----------------------------------------------------------------------------------------
DYNAMIC_TABLE = re.compile(r"<!-- dynamic-by-version: graphrag-audit (?P<args>[^>]*?) -->\n(?P<table>(?:\|.*\n)+)")


@pytest.mark.parametrize("doc", ["README.md", "docs/user-guide.md"])
def test_dynamic_by_version_tables_are_the_real_output(doc):
    """Each marked table's cells are what its command's JSON says at community_level 2, and the 2.x line
    (the one that never descends) is the bold one."""
    if not (ROOT.parent / "shared" / "indexes" / "verbs-v3").is_dir():
        pytest.skip("../shared/indexes/verbs-v3 is absent: the dynamic tables cannot be checked")
    text = (ROOT / doc).read_text(encoding="utf-8")
    tables = list(DYNAMIC_TABLE.finditer(text))
    assert tables, f"{doc} has no '<!-- dynamic-by-version: graphrag-audit ... -->' table"
    for m in tables:
        args = m.group("args").split()
        proc = subprocess.run([sys.executable, "-m", "graphrag_audit", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode in (0, 1), proc.stderr
        bv = next(r for r in json.loads(proc.stdout)["levels"]
                  if r["community_level"] == 2)["selected"]["dynamic"]["by_version"]
        rows = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in m.group("table").splitlines()[2:]]
        assert [r[0].strip("*").split(" ")[0] for r in rows] == list(bv)
        for row, (fam, v) in zip(rows, bv.items()):
            bold = [c.startswith("**") and c.endswith("**") for c in row]
            assert bold[0] == bold[1] == (not v["descends"]), (doc, row)  # the line that never descends stands out
            cells = [c.strip("*") for c in row]
            wi = v["what_if"]
            assert cells == [f"{fam} ({v['graphrag']})", "yes" if v["descends"] else "never",
                             f"{v['all_relevant']['rating_calls']} / {len(v['all_relevant']['kept_ids'])}",
                             str(v["none_relevant"]["rating_calls"]),
                             f"{wi['rating_calls']} / [{', '.join(map(str, wi['kept_ids']))}]", str(v["cut_off"])], doc


if __name__ == "__main__" and "--write-readme-sample" in sys.argv:
    for name in SAMPLE_DOCS:  # every sample block of every doc, from the last so offsets hold
        text = (ROOT / name).read_text(encoding="utf-8")
        for m in reversed(list(README_SAMPLE.finditer(text))):
            text = text[:m.start("body")] + sample_output(m.group("args").split()) + text[m.end("body"):]
        (ROOT / name).write_text(text, encoding="utf-8")

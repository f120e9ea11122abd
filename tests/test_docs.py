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
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == mod.render(), (
        "docs/rules.md is stale: run python docs/gen_rules.py"
    )


def test_readme_quick_start_commands_are_the_ci_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    test_cmd = 'python -m pip install ".[test]" && python -m pytest'
    assert test_cmd in readme and f"\n{test_cmd} && python -m pytest -n 2 -m " in ci
    assert "python -m pip install . && python -m graphrag_audit levels fixtures/seed-v3" in readme


def test_readme_command_table_lists_every_cli_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    out = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", "--help"], capture_output=True, text=True, timeout=60
    ).stdout
    import typer.main

    from graphrag_audit.cli import app

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
                bad.append(
                    f"{rel}:{lineno}: cites {OLD_BRIEF!r} (cite a section of docs/graphrag-semantics.md)"
                )
            if MACHINE_PATH.search(line):
                bad.append(
                    f"{rel}:{lineno}: absolute machine path (use ../shared/indexes or a relative path)"
                )
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
    assert readme == mod._readme(version.group(1)), (
        "fixtures/README.md is stale: run python fixtures/generate.py"
    )


# ----------------------------------------------------------------------------------------
# every fenced block of README.md and docs/*.md: an output sample is the real output, a command runs
# (or is marked not runnable, and then at least names a command and options that exist), a copied
# file is the file (docs/regen_samples.py says how each is marked and checked)
# ----------------------------------------------------------------------------------------
_spec = importlib.util.spec_from_file_location("regen_samples", ROOT / "docs" / "regen_samples.py")
regen = sys.modules.setdefault("regen_samples", importlib.util.module_from_spec(_spec))
if not hasattr(regen, "check_block"):
    _spec.loader.exec_module(regen)  # registered first: its dataclasses look their module up

DOC_BLOCKS = [b for doc in regen.doc_paths() for b in regen.blocks_of(doc)]
README_SAMPLE = "graphrag-audit levels ../shared/indexes/verbs-v3 --width 110 --color never"


@pytest.mark.parametrize("block", DOC_BLOCKS, ids=lambda b: b.where)
def test_every_fenced_block_of_the_docs_holds(block):
    """A sample is regenerated and compared (stale: the doc, its line and ``python docs/regen_samples.py``);
    a command is run (exit 0 or 1, no internal error) or only parsed when marked not runnable."""
    try:
        problem = regen.check_block(block)
    except regen.Skip as e:
        pytest.skip(str(e))
    assert problem is None, problem


def test_the_docs_show_samples_and_commands():
    """The marker scan finds what the docs show (it cannot pass on nothing)."""
    kinds = {}
    for b in DOC_BLOCKS:
        kinds.setdefault(b.doc, set()).add(b.kind)
    for doc in ("README.md", "docs/user-guide.md", "docs/plan.md", "docs/ci.md", "docs/hierarchy.md"):
        assert "sample" in kinds[doc], doc
    assert [b.rest for b in DOC_BLOCKS if b.doc == "README.md" and b.kind == "sample"][0] == README_SAMPLE
    assert len([b for b in DOC_BLOCKS if b.kind == "sample"]) >= 15
    assert len([b for b in DOC_BLOCKS if b.kind == "run"]) >= 8


def _seed_sample() -> regen.Block:
    return next(b for b in DOC_BLOCKS if b.kind == "sample" and "fixtures/seed-v3" in b.rest)


def test_a_stale_sample_fails_naming_the_doc_the_line_and_the_command():
    b = _seed_sample()  # needs no shared index
    assert regen.check_block(b) is None
    import dataclasses

    stale = dataclasses.replace(
        b,
        body=b.body.replace(
            "Community 20 report          2       52", "Community 20 report          2       53", 1
        ),
    )
    assert stale.body != b.body
    problem = regen.check_block(stale)
    assert problem and problem.startswith(f"{b.doc}:{b.line}: the sample of `{b.rest}` is stale")
    assert "python docs/regen_samples.py" in problem and "'  20       1   Community 20 report" in problem


def test_unmarked_unclosed_and_wrong_blocks_fail():
    blocks = regen.fenced_blocks(
        "text\n\n```sh\ngraphrag-audit levels x\n```\n\n<!-- text: a diagram -->\n```\n"
        "graphrag-audit levels x\n```\n<!-- not run: a synopsis -->\n```\n"
        "graphrag-audit levels DIR [--no-such-option]\n```\n<!-- run -->\n```\n"
        "graphrag-audit frobnicate\n```\n<!-- sample: levels x -->\n```\n```\n"
        "~~~\nnever closed\n``` (not a closing fence for ~~~)\n",
        "t.md",
    )
    problems = [regen.check_block(b) for b in blocks]
    assert "without a marker line" in problems[0]
    assert "a text block holds command lines" in problems[1]
    assert "graphrag-audit levels has no option --no-such-option" in problems[2]
    assert "graphrag-audit has no command 'frobnicate'" in problems[3]
    assert "a sample marker names its command" in problems[4]
    assert "never closed" in problems[5] and len(blocks) == 6


def test_not_runnable_commands_still_parse():
    assert (
        regen.check_parses("graphrag-audit plan DIR [--reports K] [--objective granularity|rank|text-units]")
        == []
    )
    assert regen.check_parses("python -m pip install . && python -m graphrag_audit levels x --lvl 2") == [
        "graphrag-audit levels has no option --lvl"
    ]
    assert regen.check_parses("graphrag-audit diff OLD NEW --list-reports") == [
        "graphrag-audit diff has no option --list-reports"
    ]
    assert regen.check_parses("python benchmarks/bench_levels.py --no-such-flag") == [
        "python benchmarks/bench_levels.py --help does not name --no-such-flag"
    ]


@pytest.mark.parametrize("doc", regen.doc_paths())
def test_every_command_in_the_prose_names_a_command_and_options_that_exist(doc):
    """`graphrag-audit ...` code spans in running text (not run: they name placeholders and fragments)."""
    spans = regen.inline_commands(doc)
    problems = [f"{doc}:{line}: `{cmd}`: {p}" for line, cmd in spans for p in regen.check_parses(cmd)]
    assert problems == []


def test_the_example_workflow_commands_parse():
    """The shipped workflow's audit step (docs/ci.md shows the file and runs the same command as a sample)."""
    import yaml

    wf = yaml.safe_load(
        (ROOT / "examples" / "github-actions" / "graphrag-audit.yml").read_text(encoding="utf-8")
    )
    runs = [
        s["run"]
        for job in wf["jobs"].values()
        for s in job["steps"]
        if "graphrag-audit levels" in s.get("run", "")
    ]
    assert runs and all(regen.check_parses(r) == [] for r in runs), runs
    samples = {b.rest for b in DOC_BLOCKS if b.doc == "docs/ci.md" and b.kind == "sample"}
    assert {r.strip() for r in runs} <= samples


# ----------------------------------------------------------------------------------------
# every doc as GitHub renders it (cmark-gfm): every fence closed, no heading swallowed by a code block
# ----------------------------------------------------------------------------------------
HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*?)(?:[ \t]+#+)?[ \t]*$")
COMMENTING = {"sh", "bash", "console", "python", "yaml"}  # where "# text" is a comment


def render_problems(doc: str, text: str) -> list[str]:
    """What GitHub's renderer does that the source does not mean: a fence never closed, a fenced block
    cmark-gfm sees differently from the scanner, a heading line inside a code block (only a Markdown
    sample, regenerated from the tool, or a one-# comment in a shell/Python/YAML block may hold one),
    and a rendered heading that is not a source heading line outside every block."""
    import html

    import cmarkgfm

    rendered = cmarkgfm.github_flavored_markdown_to_html(text)
    blocks = regen.fenced_blocks(text, doc)
    problems = [
        f"{b.where}: the {b.fence} fence opened here is never closed (it swallows the rest of the file)"
        for b in blocks
        if not b.closed
    ]
    codes = [
        (lang, html.unescape(body))
        for lang, body in re.findall(r'<pre(?: lang="([^"]*)")?><code>(.*?)</code></pre>', rendered, re.S)
    ]
    if [c for _, c in codes] != [b.body for b in blocks]:
        problems.append(
            f"{doc}: cmark-gfm renders {len(codes)} code blocks, the fence scanner finds {len(blocks)}"
        )
    for b in blocks:
        lang = b.info.split()[0] if b.info else ""
        for k, line in enumerate(b.body.splitlines()):
            m = HEADING.match(line)
            if not m:
                continue
            if lang in ("markdown", "md") and b.kind == "sample":
                continue
            if lang in COMMENTING and len(m.group(1)) == 1:
                continue
            problems.append(
                f"{doc}:{b.line + 1 + k}: {line.strip()!r} is a heading in the source but GitHub renders it "
                f"inside the code block opened at line {b.line}"
            )
    inside = {ln for b in blocks for ln in range(b.line, b.line + b.body.count("\n") + 2)}
    source = [
        HEADING.match(ln).group(2)
        for n, ln in enumerate(text.splitlines(), 1)
        if n not in inside and HEADING.match(ln)
    ]
    shown = [
        html.unescape(re.sub(r"<[^>]+>", "", h))
        for h in re.findall(r"<h[1-6][^>]*>(.*?)</h[1-6]>", rendered, re.S)
    ]
    strip = lambda h: re.sub(r"[`*_\\]", "", h)  # noqa: E731  (inline markup)
    if [strip(h) for h in source] != [strip(h) for h in shown]:
        diff = [(a, b) for a, b in zip(source, shown) if strip(a) != strip(b)][:1] or [
            (len(source), len(shown))
        ]
        problems.append(
            f"{doc}: the headings GitHub renders are not the source's heading lines (first: {diff[0]})"
        )
    return problems


@pytest.mark.parametrize("doc", regen.doc_paths())
def test_github_renders_every_heading_outside_code(doc):
    assert render_problems(doc, (ROOT / doc).read_text(encoding="utf-8")) == []


def test_a_heading_swallowed_by_a_code_block_is_caught():
    """docs/ci.md before issue 38: a section pasted right under the opening fence of the ```markdown step
    summary sample; its own ``` block closed the sample, and the sample's closing fence opened a block
    that swallowed the rest of the sample."""
    text = (
        "# Doc\n\n<!-- sample: graphrag-audit levels x -->\n```markdown\n## Re-indexing pipelines\n\nrun\n\n```\n"
        "graphrag-audit levels output/ --baseline baseline.json\n```\n\n## graphrag-audit report\n\n"
        "### Community tree\n```\n\n## pre-commit\n"
    )
    problems = render_problems("t.md", text)
    assert any("'## graphrag-audit report' is a heading in the source" in p for p in problems), problems
    assert any("'### Community tree'" in p for p in problems)
    assert render_problems("t.md", "# Doc\n\n```sh\n# a comment\nx\n```\n\n## Two\n") == []
    assert "never closed" in render_problems("t.md", "# Doc\n\n````\nx\n```\n")[0]


# ----------------------------------------------------------------------------------------
# the per-version dynamic tables of README.md and docs/user-guide.md are the real numbers
# ----------------------------------------------------------------------------------------
DYNAMIC_TABLE = re.compile(
    r"<!-- dynamic-by-version: graphrag-audit (?P<args>[^>]*?) -->\n(?P<table>(?:\|.*\n)+)"
)


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
        proc = subprocess.run(
            [sys.executable, "-m", "graphrag_audit", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode in (0, 1), proc.stderr
        bv = next(r for r in json.loads(proc.stdout)["levels"] if r["community_level"] == 2)["selected"][
            "dynamic"
        ]["by_version"]
        rows = [
            [c.strip() for c in ln.strip().strip("|").split("|")] for ln in m.group("table").splitlines()[2:]
        ]
        assert [r[0].strip("*").split(" ")[0] for r in rows] == list(bv)
        for row, (fam, v) in zip(rows, bv.items()):
            bold = [c.startswith("**") and c.endswith("**") for c in row]
            assert bold[0] == bold[1] == (not v["descends"]), (
                doc,
                row,
            )  # the line that never descends stands out
            cells = [c.strip("*") for c in row]
            wi = v["what_if"]
            assert cells == [
                f"{fam} ({v['graphrag']})",
                "yes" if v["descends"] else "never",
                f"{v['all_relevant']['rating_calls']} / {len(v['all_relevant']['kept_ids'])}",
                str(v["none_relevant"]["rating_calls"]),
                f"{wi['rating_calls']} / [{', '.join(map(str, wi['kept_ids']))}]",
                str(v["cut_off"]),
            ], doc

"""GitHub Actions renderer: one annotation per finding, nothing from the index can start another
workflow command, a cap with a count, a plain summary line; and the CLI's $GITHUB_STEP_SUMMARY.

How the runner reads a log line (actions/runner ``ActionCommandManager.TryProcessCommand``):
``ActionCommand.TryParseV2`` (``::name k=v,k=v::data`` after trimming leading whitespace) and,
failing that, the legacy ``ActionCommand.TryParse`` (``##[name k=v;k=v]data`` *anywhere* in the
line). ``runner_commands`` below re-implements both, plainly, so the tests check what a runner
would execute, not just what the output looks like.
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from graphrag_audit.analysis.audit import AuditOptions, audit
from graphrag_audit.cli import app
from graphrag_audit.findings import Finding
from graphrag_audit.render.github import render_github
from graphrag_audit.sanitise.github import workflow_data, workflow_log, workflow_property

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_render_markdown import EXPECTED_RULES, tables, write_index  # noqa: E402

SHARED = Path(__file__).parents[2] / ".." / "shared" / "indexes"
REGISTERED = {
    "error",
    "warning",
    "notice",
    "debug",
    "group",
    "endgroup",
    "set-env",
    "set-output",
    "add-path",
    "add-mask",
    "save-state",
    "add-matcher",
    "remove-matcher",
    "echo",
    "stop-commands",
}
# the default fixture has one period value: no multiple-periods finding
BASE_RULES = [r for r in EXPECTED_RULES if r != "multiple-periods"]
ANNOTATION = re.compile(r"^::(error|warning|notice) title=([^:,\r\n]*)::([^\r\n]*)$")


def unescape_data(s: str) -> str:  # the runner's order: %0D, %0A, then %25
    return s.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(s: str) -> str:
    return (
        s.replace("%0D", "\r")
        .replace("%0A", "\n")
        .replace("%3A", ":")
        .replace("%2C", ",")
        .replace("%25", "%")
    )


def runner_commands(output: str):
    """[(command, properties, data)] a GitHub runner would execute for this stdout."""
    cmds = []
    for line in re.split(r"\r\n|\r|\n", output):  # .NET ReadLine line breaks
        s = line.lstrip()
        if s.startswith("::"):
            end = s.find("::", 2)
            if end >= 0:
                info = s[2:end]
                name, _, props = info.partition(" ")
                if name.lower() in REGISTERED:
                    kv = dict(p.split("=", 1) for p in props.split(",") if "=" in p)
                    cmds.append(
                        (name, {k: unescape_property(v) for k, v in kv.items()}, unescape_data(s[end + 2 :]))
                    )
                    continue
        i = line.find("##[")
        if i >= 0:
            j = line.find("]", i)
            if j >= 0 and line[i + 3 : j].split(" ")[0].lower() in REGISTERED:
                cmds.append((line[i + 3 : j].split(" ")[0], {}, line[j + 1 :]))
    return cmds


INJECTIONS = [
    "x\n::error::injected",
    "x\r::error::injected",
    "x\r\n  ::error::injected",
    "x%0A::error::injected",
    "x%0D%0A::set-env name=X::Y",
    "x\n::set-env name=X::Y",
    "x\n::add-mask::secret",
    "x\n##[error]injected",
    "x\u2028::error::injected\u0085::warning::again\x0b::notice::more",
    "x\x1b[2K\r::error::after an ANSI erase",
]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_untrusted_text_cannot_create_a_second_command(tmp_path, payload):
    # the payload reaches a finding message (a community period value) and the summary (the path)
    path = write_index(
        tmp_path / "idx", periods={1: payload}, report_titles={4: payload}, entity_titles={"e7": payload}
    )
    report = audit(path, AuditOptions(level=2, costs=False))
    out = render_github(report)
    lines = out.split("\n")
    assert lines[-1] == ""  # ends with a newline
    lines = lines[:-1]
    # exactly one line per finding starts a command, then the summary line
    assert len(lines) == len(EXPECTED_RULES) + 1
    for line, rule in zip(lines, EXPECTED_RULES):
        m = ANNOTATION.match(line)
        assert m and m.group(2) == rule, line
    assert not lines[-1].lstrip().startswith("::") and "##[" not in lines[-1]
    # no other line break of any kind (Python's splitlines knows them all)
    assert out.splitlines() == lines
    # what a runner would do: exactly our five annotations, nothing else
    cmds = runner_commands(out)
    assert [(c, p["title"]) for c, p, _ in cmds] == [
        ("warning", "depth-mismatch"),
        ("warning", "multiple-periods"),
        ("warning", "unclustered-entities"),  # graphrag >= 2.0's local search cannot see it
        ("warning", "v2-inflation"),
        ("notice", "dynamic-no-descent"),
        ("notice", "single-child-chain"),
    ]
    # the period value survives, flattened, inside the multiple-periods message
    msg = cmds[1][2]
    assert "\n" not in msg and "\r" not in msg
    assert payload.split()[-1].replace("##[", "#\\x23[") in msg  # a legacy command shown as #\x23[


def test_injection_through_the_index_path(tmp_path):
    path = write_index(tmp_path / "idx\n::error::pwned ##[warning]legacy")
    report = audit(path, AuditOptions(level=2, costs=False))
    out = render_github(report, include_titles=True)
    assert [c for c, _, _ in runner_commands(out)] == ["warning"] * 3 + ["notice"] * 2
    summary = out.splitlines()[-1]
    assert summary.startswith("graphrag-audit: 0 errors, 3 warnings, 2 info at community_level 2 (")
    assert "idx ::error::pwned #\\x23[warning]legacy" in summary
    # by default the absolute path is not shown at all
    hidden = render_github(report).splitlines()[-1]
    assert hidden.endswith("; generation 3.x; (absolute path hidden))") and "pwned" not in hidden


def test_summary_line_and_messages(tmp_path):
    report = audit(write_index(tmp_path / "idx"), AuditOptions(level=2, costs=False))
    out = render_github(report)
    lines = out.splitlines()
    assert lines[-1] == (
        "graphrag-audit: 0 errors, 3 warnings, 2 info at community_level 2 "
        "(graphrag >= 2.0 sends 5 reports, the graphrag < 2.0 rule selects 3 (hypothetical); "
        "generation 3.x; (absolute path hidden))"
    )  # graphrag < 2.0 cannot read a 3.x layout
    assert render_github(report, include_titles=True).splitlines()[-1].endswith(f"; {tmp_path / 'idx'})")
    cmds = runner_commands(out)
    depth = cmds[0][2]
    # the message, then the rule's documented fix; '%' escaped on the wire, restored by the runner
    assert depth.startswith(
        "at community_level 2, 1/2 roots (50%) and 4/6 entities (67%) cannot reach level 2"
    )
    assert "Fix: " in depth
    assert "(50%25)" in lines[0]


def test_no_findings_prints_only_the_summary(tmp_path):
    tree = {0: (0, -1, ["a", "b", "c", "d"]), 1: (1, 0, ["a", "b"]), 2: (1, 0, ["c", "d"])}
    report = audit(
        write_index(tmp_path / "idx", tree=tree, entities=["a", "b", "c", "d"]),
        AuditOptions(level=0, costs=False),
    )
    out = render_github(report, include_titles=True)
    assert out.splitlines() == [
        f"graphrag-audit: 0 errors, 0 warnings, 0 info at community_level 0 "
        f"(graphrag >= 2.0 sends 1 report, the graphrag < 2.0 rule selects 1 "
        f"(hypothetical); generation 3.x; {tmp_path / 'idx'})"
    ]


def _with_findings(report, n_error, n_warning, n_info):
    fs = (
        [Finding("parent-cycle", "error", f"error {i}") for i in range(n_error)]
        + [Finding("multiple-parents", "warning", f"warning {i}") for i in range(n_warning)]
        + [Finding("single-child-chain", "info", f"info {i}") for i in range(n_info)]
    )
    return replace(report, findings=fs)


@pytest.mark.parametrize(
    "counts, shown, left_out",
    [
        # GitHub shows 10 of each kind per step; a notice slot is kept for the overflow line
        ((12, 12, 12), (10, 10, 9), 2 + 2 + 3),
        ((12, 0, 0), (10, 0, 0), 2),
        ((0, 0, 11), (0, 0, 9), 2),
        ((3, 4, 10), (3, 4, 10), 0),
    ],
)
def test_annotations_are_capped_per_kind_with_a_count(tmp_path, counts, shown, left_out):
    report = _with_findings(audit(write_index(tmp_path / "idx"), AuditOptions(level=2, costs=False)), *counts)
    cmds = runner_commands(render_github(report))
    kinds = [c for c, p, _ in cmds if p.get("title") != "graphrag-audit"]
    assert (kinds.count("error"), kinds.count("warning"), kinds.count("notice")) == shown
    overflow = [d for c, p, d in cmds if p.get("title") == "graphrag-audit"]
    if left_out:
        assert len(overflow) == 1 and overflow[0].startswith(f"… {left_out} more findings not shown")
        assert [c for c, _, _ in cmds].count("notice") == min(counts[2], 9) + 1
    else:
        assert overflow == []
    assert (
        render_github(report)
        .splitlines()[-1]
        .startswith(f"graphrag-audit: {counts[0]} errors, {counts[1]} warnings, {counts[2]} info")
    )


def test_escape_helpers_follow_github():
    # vectors from actions/toolkit packages/core/__tests__/command.test.ts
    assert (
        workflow_data("percent % percent % cr \r cr \r lf \n lf \n")
        == "percent %25 percent %25 cr %0D cr %0D lf %0A lf %0A"
    )
    assert (
        workflow_property("percent % percent % cr \r cr \r lf \n lf \n colon : colon : comma , comma ,")
        == "percent %25 percent %25 cr %0D cr %0D lf %0A lf %0A colon %3A colon %3A comma %2C comma %2C"
    )
    assert unescape_data(workflow_data("a%0A\n%25%")) == "a%0A\n%25%"
    assert workflow_log("::error::x") == "%3A:error::x"
    assert workflow_log("  \n ::error::x") == "%3A:error::x"
    assert workflow_log("a ##[error]b ###[c") == "a #\\x23[error]b ##\\x23[c"


# ---- the CLI: -f github and $GITHUB_STEP_SUMMARY --------------------------------------------
def test_cli_appends_markdown_to_step_summary(tmp_path):
    path = write_index(tmp_path / "idx", report_titles={4: "a | b\n::error::x"})
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n", encoding="utf-8")
    res = CliRunner().invoke(
        app,
        ["levels", str(path), "--no-costs", "-f", "github", "--fail-on", "warning"],
        env={"GITHUB_STEP_SUMMARY": str(summary), "NO_COLOR": None},
    )
    assert res.exit_code == 1  # three warnings at or above --fail-on warning
    assert [c for c, _, _ in runner_commands(res.stdout)] == ["warning"] * 3 + ["notice"] * 2
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("previous step\n## graphrag-audit report\n")
    md = written[len("previous step\n") :]
    tabs = tables(MarkdownIt("commonmark").enable("table").parse(md))
    # + coverage (--no-costs: no local search tables)
    assert len(tabs) == 10 and all(len(r) == len(h) for h, rows in tabs for r in rows)
    assert "## graphrag-audit" not in res.stdout  # the Markdown goes to the summary file only


def test_cli_github_without_step_summary_and_fail_on(tmp_path):
    path = write_index(tmp_path / "idx")
    runner = CliRunner()
    res = runner.invoke(
        app, ["levels", str(path), "--no-costs", "-f", "github"], env={"GITHUB_STEP_SUMMARY": None}
    )
    assert res.exit_code == 0  # default --fail-on error; only warnings and info here
    assert len(runner_commands(res.stdout)) == len(BASE_RULES)
    res = runner.invoke(
        app,
        ["levels", str(path), "--no-costs", "--fail-on", "info"],
        env={"GRAPHRAG_AUDIT_FORMAT": "github", "GITHUB_STEP_SUMMARY": None},
    )
    assert res.exit_code == 1 and len(runner_commands(res.stdout)) == len(BASE_RULES)


def test_cli_github_on_verbs_v3(tmp_path):
    path = SHARED / "verbs-v3"
    if not path.is_dir():
        pytest.skip(f"{SHARED} is absent: this test needs ../shared/indexes/verbs-v3 beside the repo")
    summary = tmp_path / "summary.md"
    res = CliRunner().invoke(
        app,
        ["levels", str(path), "--level", "2", "--no-costs", "-f", "github", "--fail-on", "warning"],
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert res.exit_code == 1
    titles = [p["title"] for _, p, _ in runner_commands(res.stdout)]
    assert "depth-mismatch" in titles
    assert res.stdout.splitlines()[-1].startswith("graphrag-audit: ")
    # graphrag 1.2.0 cannot read verbs-v3 (no create_final_nodes): the < 2.0 count is its rule, hypothetical
    assert (
        "graphrag >= 2.0 sends 120 reports, the graphrag < 2.0 rule selects 97 (hypothetical)"
        in res.stdout.splitlines()[-1]
    )
    assert summary.read_text(encoding="utf-8").startswith("## graphrag-audit report\n")

"""``report`` takes the finding thresholds of ``levels`` (one option each, one help text) and says
on stderr what it wrote: the path and its size in bytes, nothing with ``-o -`` (issue 17)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from conftest import FIXTURES

SEED = FIXTURES / "seed-v3"
REPO = FIXTURES.parent
LOOSE = ("--max-unreachable", "1", "--max-inflation", "100")


def run(*args, cwd=None):
    p = subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        cwd=cwd or REPO,
        timeout=300,
        env={
            **os.environ,
            "NO_COLOR": "1",  # this checkout's package, whatever the cwd
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        },
    )
    return p.returncode, p.stdout.decode("utf-8"), p.stderr.decode("utf-8")


def _levels_rules(*opts) -> list[str]:
    code, out, err = run("levels", SEED, "--no-costs", "-f", "json", "--fail-on", "never", *opts)
    assert code == 0, err
    return sorted(f["rule"] for f in json.loads(out)["findings"])


def _html_rules(html: str) -> list[str]:
    section = re.search(r'<section id="findings"><h2>Findings \((\d+)\)</h2>(.*?)</section>', html, re.S)
    rules = sorted(re.findall(r"<li class=\"\w+\"><b>\w+</b> <code>([\w-]+)</code>", section.group(2)))
    assert len(rules) == int(section.group(1))
    return rules


@pytest.mark.parametrize("opts", [(), LOOSE, ("--max-inflation", "100"), ("--max-unreachable", "1")])
def test_report_findings_follow_the_thresholds_like_levels(tmp_path, opts):
    out = tmp_path / "r.html"
    code, stdout, err = run("report", SEED, "--no-costs", "-o", out, *opts)
    assert code == 0, err
    assert _html_rules(out.read_text(encoding="utf-8")) == _levels_rules(*opts)


def test_the_thresholds_change_what_report_finds(tmp_path):
    # the seed's defaults find depth-mismatch and v2-inflation; loose thresholds drop both
    assert {"depth-mismatch", "v2-inflation"} <= set(_levels_rules())
    assert not {"depth-mismatch", "v2-inflation"} & set(_levels_rules(*LOOSE))


def test_report_threshold_errors_are_usage_errors(tmp_path):
    code, _, err = run("report", SEED, "--no-costs", "-o", tmp_path / "r.html", "--min-coverage", "2")
    assert code == 2 and "--min-coverage" in err and not (tmp_path / "r.html").exists()


def test_report_says_what_it_wrote(tmp_path):
    (tmp_path / "sub dir").mkdir()
    code, stdout, err = run("report", SEED.resolve(), "--no-costs", "-o", "sub dir/r.html", cwd=tmp_path)
    assert code == 0 and stdout == ""
    size = (tmp_path / "sub dir" / "r.html").stat().st_size
    assert size > 1000
    assert err == f"graphrag-audit: wrote sub dir/r.html ({size:,} bytes)\n"


def test_report_to_stdout_says_nothing():
    code, stdout, err = run("report", SEED.resolve(), "--no-costs", "-o", "-")
    assert code == 0 and err == ""
    assert stdout.rstrip().endswith("</html>")

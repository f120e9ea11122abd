"""Colour and width of the text output: NO_COLOR, --color auto|always|never, --width, and no
escape sequences from index text. ``auto`` only means something on a terminal, so those tests run
the CLI in a subprocess whose stdout is a pseudo-terminal."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphrag_audit.cli import app

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_render_markdown import write_index  # noqa: E402

SHARED = Path(__file__).parents[2] / ".." / "shared" / "indexes"
ESC = "\x1b"
SGR = re.compile(r"\x1b\[[0-9;]*m")


def columns(line: str) -> int:
    """Terminal columns of a line (wide East Asian characters take two, combining marks none)."""
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in line
    )


def run(args, env=None):
    res = CliRunner().invoke(
        app,
        ["levels", *args],
        env={
            "NO_COLOR": None,
            "GRAPHRAG_AUDIT_COLOR": None,
            "COLUMNS": None,
            "GRAPHRAG_AUDIT_WIDTH": None,
            **(env or {}),
        },
    )
    assert res.exit_code in (0, 1), res.output
    return res.stdout


@pytest.fixture
def index(tmp_path):
    return write_index(tmp_path / "idx")


def test_color_never_and_always(index):
    assert ESC not in run([str(index), "--no-costs", "--color", "never"])
    assert SGR.search(run([str(index), "--no-costs", "--color", "always"]))
    # an explicit flag beats NO_COLOR (no-color.org: command-line flags override it)
    assert SGR.search(run([str(index), "--no-costs", "--color", "always"], env={"NO_COLOR": "1"}))
    assert SGR.search(run([str(index), "--no-costs"], env={"GRAPHRAG_AUDIT_COLOR": "always"}))


def test_piped_output_has_no_color_by_default(index):
    assert ESC not in run([str(index), "--no-costs"])


@pytest.mark.parametrize("fmt", ["json", "markdown", "github"])
def test_machine_formats_never_carry_color(index, fmt):
    assert ESC not in run([str(index), "--no-costs", "-f", fmt, "--color", "always"])


def test_escape_sequences_in_titles_never_reach_the_terminal(tmp_path):
    evil = "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b[2J cleared \x9b31m"
    path = write_index(
        tmp_path / "idx",
        report_titles={c: evil for c in range(5)},
        periods={1: evil},
        entity_titles={"e7": evil},
    )
    out = run([str(path), "--no-costs", "--level", "2", "--list-reports", "--color", "never"])
    assert "red" in out and "cleared" in out  # the titles are listed (focus tables at --level 2)
    assert ESC not in out and "\x9b" not in out and "\x07" not in out
    colored = run([str(path), "--no-costs", "--level", "2", "--list-reports", "--color", "always"])
    # with colour on, every escape sequence is one of rich's SGR codes, none from the titles
    assert "\x1b]" not in colored and "\x1b[2J" not in colored and "\x9b" not in colored
    assert "\x1b[31mred" not in colored


def _on_a_terminal(args, env, cols=120):
    """Run the CLI with stdout on a pseudo-terminal of ``cols`` columns; return what it printed."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    full_env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in ("NO_COLOR", "GRAPHRAG_AUDIT_COLOR", "GRAPHRAG_AUDIT_WIDTH", "COLUMNS", "TERM", "FORCE_COLOR")
    }
    full_env.update({"TERM": "xterm-256color", **env})
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphrag_audit", "levels", *args],
        stdout=slave,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=full_env,
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode in (0, 1), err.decode()
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_no_color_on_a_terminal(index):
    # control: on a terminal, --color auto colours, and the terminal's width is followed...
    out = _on_a_terminal([str(index), "--no-costs", "--level", "2", "--list-reports"], {}, cols=72)
    assert SGR.search(out)
    assert max(columns(SGR.sub("", line)) for line in out.splitlines()) <= 72
    # ... NO_COLOR (any non-empty value) turns colour off, and so does --color never
    assert ESC not in _on_a_terminal([str(index), "--no-costs"], {"NO_COLOR": "1"})
    assert ESC not in _on_a_terminal([str(index), "--no-costs", "--color", "never"], {})


@pytest.mark.parametrize("width", [40, 60, 100])
def test_width_bounds_every_line(index, width):
    out = run([str(index), "--no-costs", "--level", "2", "--list-reports", "--width", str(width)])
    assert max(columns(line) for line in out.splitlines()) <= width
    via_env = run(
        [str(index), "--no-costs", "--level", "2", "--list-reports"], env={"GRAPHRAG_AUDIT_WIDTH": str(width)}
    )
    assert via_env == out


def test_piped_default_width_is_100(index):
    out = run([str(index), "--no-costs", "--level", "2", "--list-reports"])
    assert max(columns(line) for line in out.splitlines()) <= 100


@pytest.mark.parametrize("width", [60, 100])
def test_width_on_verbs_v3(width):
    path = SHARED / "verbs-v3"
    if not path.is_dir():
        pytest.skip(f"{SHARED} is absent: this test needs ../shared/indexes/verbs-v3 beside the repo")
    out = run([str(path), "--no-costs", "--level", "2", "--list-reports", "--width", str(width)])
    lines = out.splitlines()
    assert len(lines) > 100  # the three focus tables at level 2 are there
    assert max(columns(line) for line in lines) <= width


@pytest.mark.parametrize("width", [60, 100])
def test_focus_tables_keep_their_number_columns(tmp_path, width):
    """At --level 2 the report list of graphrag >= 2.0 is communities 0-4 (every report with
    level <= 2) with 4, 2, 2, 2, 2 entities; long titles are cut, never ids or counts."""
    long_title = "The Cratchit Family, Their Christmas Community and the Spirits of Redemption " * 2
    index = write_index(tmp_path / "idx", report_titles={c: long_title for c in range(5)})
    lines = run(
        [str(index), "--no-costs", "--level", "2", "--list-reports", "--width", str(width)]
    ).splitlines()
    start = next(
        i for i, line in enumerate(lines) if line.startswith("community_level 2 · graphrag >= 2.0: 5")
    )
    head = next(i for i in range(start, len(lines)) if lines[i].split()[:1] == ["id"])
    assert lines[head].split() == ["id", "level", "title", "entities", "tokens"]
    rows = [line.split() for line in lines[head + 2 : head + 7]]
    assert [(r[0], r[1], r[-2], r[-1]) for r in rows] == [
        ("0", "0", "4", "—"),
        ("1", "0", "2", "—"),
        ("2", "1", "2", "—"),
        ("3", "1", "2", "—"),
        ("4", "2", "2", "—"),
    ]

"""Issue 13 part 5: output never fails on the console's encoding, and TERM=dumb gets no escape
sequence.

A Windows redirect writes in the ANSI code page (cp1252), ``PYTHONIOENCODING=ascii`` and
``LANG=C`` with ``PYTHONUTF8=0`` give an ASCII stdout. The CLI must exit 0 there and write
something the encoding holds: index text it cannot hold as backslash escapes (``\\u6d01``), the
renderers' own glyphs as ASCII stand-ins. Files written with ``-o`` stay UTF-8.

The real-index tests run the CLI as a fresh interpreter under each environment (the encoding of
stdout is fixed at start-up); the hostile-index tests run in process under click's CliRunner,
whose stdout is a strict TextIOWrapper of the given charset.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import shared_index
from hostile import REPO, Index, clean_env
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from graphrag_audit.cli import app
from graphrag_audit.render.console import encode_for_stream

REAL = "real-cleanroom-specs-zh"  # graphrag 2.x, Chinese report titles
ZH_COMMUNITY = 0  # its report title is Chinese (洁净厂房及其关键安全与控制系统)

# the environments of a non-UTF-8 stdout and the codec each must give Python's stdout
NON_UTF8 = {
    "cp1252": ({"PYTHONIOENCODING": "cp1252"}, "cp1252"),
    "ascii": ({"PYTHONIOENCODING": "ascii"}, "ascii"),
    # LC_ALL=C disables PEP 538 locale coercion; PYTHONUTF8=0 disables PEP 540's UTF-8 mode
    "LANG=C,PYTHONUTF8=0": ({"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0"}, "ascii"),
}
COMMANDS = {
    "levels-text": ["levels", "{dir}", "--level", "1", "--list-reports", "--no-costs", "--fail-on", "never"],
    "levels-markdown": [
        "levels",
        "{dir}",
        "--level",
        "1",
        "--no-costs",
        "--fail-on",
        "never",
        "-f",
        "markdown",
        "--include-titles",
    ],
    "tree-text": ["tree", "{dir}", "--level", "1"],
    "plan-text": ["plan", "{dir}", "--reports", "100", "--no-costs"],
    "plan-markdown": [
        "plan",
        "{dir}",
        "--reports",
        "100",
        "--no-costs",
        "-f",
        "markdown",
        "--include-titles",
    ],
}


def _env(extra: dict) -> dict:
    env = clean_env(extra)
    for k in ("PYTHONUTF8", "PYTHONCOERCECLOCALE", "LC_ALL", "LC_CTYPE", "LANG"):
        if k not in extra:
            env.pop(k, None)
    env.setdefault("LANG", "C.UTF-8")
    return env


def _run(args: list, extra: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        capture_output=True,
        env=_env(extra),
        cwd=str(REPO),
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _stdout_codec(extra: dict) -> str:
    r = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.stdout.encoding)"],
        capture_output=True,
        env=_env(extra),
        text=True,
        check=True,
    )
    return codecs.lookup(r.stdout.strip()).name


def _zh_title(path: Path) -> str:
    t = pq.read_table(path / "community_reports.parquet", columns=["community", "title"]).to_pylist()
    return next(r["title"] for r in t if r["community"] == ZH_COMMUNITY)


_ROW_RIGHT = re.compile(
    r"(\d+)  +([\d,]+)  (leaf|[>▸] [\d,]+ hidden|[\d,]+ hidden|)\s*(both|v2 only|v1 only|—|-|)\s*$"
)


def _level_column_aligned(text: str) -> None:
    """In ``tree`` text, the header's 'level' column and every community row's level number end in
    the same column (so escaped titles were cut to the same width as the others)."""
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if "level  entities" in line)
    end = lines[head].index("level") + len("level")
    rows = [m for m in map(_ROW_RIGHT.search, lines[head + 1 :]) if m]
    assert len(rows) >= 5
    for m in rows:
        assert _cells(m.string[: m.end(1)]) == end, m.string


def _cells(s: str) -> int:
    """Terminal columns (wide East Asian characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


@pytest.fixture(scope="module")
def real():
    return shared_index(REAL)


@pytest.mark.parametrize("case", list(NON_UTF8))
def test_the_environment_really_gives_a_non_utf8_stdout(case):
    extra, codec = NON_UTF8[case]
    assert _stdout_codec(extra) == codec


@pytest.mark.parametrize("cmd", list(COMMANDS))
@pytest.mark.parametrize("case", list(NON_UTF8))
def test_real_chinese_index_on_a_non_utf8_stdout(real, case, cmd):
    extra, codec = NON_UTF8[case]
    r = _run([a.replace("{dir}", str(real)) for a in COMMANDS[cmd]], extra)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    assert r.stderr == b""  # no "internal error (UnicodeEncodeError ...)"
    text = r.stdout.decode(codec)  # strict: every byte is valid in the console's encoding
    assert len(text.splitlines()) > 10
    if codec == "ascii":
        assert r.stdout.isascii()
    title = _zh_title(real)
    escaped = title.encode("ascii", "backslashreplace").decode("ascii")  # Python's own escapes
    assert escaped.startswith("\\u6d01\\u51c0")
    if cmd.startswith("levels-text") or cmd == "tree-text":
        assert escaped[:30] in text  # cut by the column width, but whole escapes
    elif cmd == "levels-markdown":
        assert escaped.replace("\\", "\\\\") in text  # a Markdown-escaped backslash: renders \u6d01
    if cmd == "tree-text":
        _level_column_aligned(text)
    if codec == "cp1252" and cmd in ("levels-text", "plan-text", "tree-text"):
        assert "·" in text  # a glyph cp1252 holds is kept
    if cmd in ("levels-text", "plan-text"):
        assert re.search(r"^ -{20,} ?$", text, re.M)  # the tables' rule, '─' -> '-'


def test_tree_has_the_same_lines_on_every_console(real):
    """The ASCII fallback changes glyphs one for one and escapes titles before layout: the same
    rows, and the level column where the UTF-8 output has it."""
    utf8 = _run(["tree", real, "--level", "1", "--max-lines", "0"], {"PYTHONIOENCODING": "utf-8"})
    asc = _run(["tree", real, "--level", "1", "--max-lines", "0"], {"PYTHONIOENCODING": "ascii"})
    assert utf8.returncode == asc.returncode == 0
    u, a = utf8.stdout.decode("utf-8"), asc.stdout.decode("ascii")
    assert len(u.splitlines()) == len(a.splitlines()) > 280
    _level_column_aligned(u)
    _level_column_aligned(a)
    assert "├── " in u and "|-- " in a and "`-- " in a and "洁净厂房" in u


def test_lang_c_alone_is_utf8_mode(real):
    """LANG=C without PYTHONUTF8=0: Python 3.7+ coerces the locale / uses UTF-8 mode, so the
    titles are written as they are."""
    extra = {"LANG": "C", "LC_ALL": "C"}
    assert _stdout_codec(extra) == "utf-8"
    r = _run(["tree", real, "--level", "1"], extra)
    assert r.returncode == 0 and r.stderr == b""
    assert _zh_title(real)[:8] in r.stdout.decode("utf-8")


def test_output_file_stays_utf8_on_an_ascii_console(real, tmp_path):
    out = tmp_path / "tree.txt"
    r = _run(["tree", real, "--level", "1", "-o", out], {"PYTHONIOENCODING": "ascii"})
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b""
    text = out.read_bytes().decode("utf-8")
    assert _zh_title(real)[:8] in text and "├── " in text and "\\u6d01" not in text


# ---- every format, hostile titles, in process ------------------------------------------------
HOSTILE = [
    "高尔夫 \u202eRLO\u202c zero\u200bwidth",
    "##[error]LEGACY ::error::CMD",
    "\x1b[31mANSI\x1b[0m · — … ≥",
    "line\nbreak\ttab",
    "Ёлка — Россия",
    "émigré café",
]


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    idx = Index.base()
    idx.reports["title"] = HOSTILE
    return idx.write(tmp_path_factory.mktemp("enc") / "idx ünï 高")


IN_PROCESS = {
    "levels-text": ["levels", "{dir}", "--level", "1", "--list-reports", "--no-costs", "--width", "120"],
    "levels-markdown": ["levels", "{dir}", "--level", "1", "--no-costs", "-f", "markdown"],
    "levels-github": ["levels", "{dir}", "--level", "1", "--no-costs", "-f", "github"],
    "levels-json": ["levels", "{dir}", "--level", "1", "--no-costs", "-f", "json"],
    "tree-text": ["tree", "{dir}", "--level", "1"],
    "tree-mermaid": ["tree", "{dir}", "-f", "mermaid"],
    "tree-dot": ["tree", "{dir}", "-f", "dot"],
    "tree-graphml": ["tree", "{dir}", "-f", "graphml"],
    "tree-json": ["tree", "{dir}", "-f", "json"],
    "plan-text": ["plan", "{dir}", "--reports", "6", "--no-costs"],
    "plan-markdown": ["plan", "{dir}", "--reports", "6", "--no-costs", "-f", "markdown", "--include-titles"],
    "plan-json": ["plan", "{dir}", "--reports", "6", "--no-costs", "-f", "json"],
}


@pytest.mark.parametrize("cmd", list(IN_PROCESS))
@pytest.mark.parametrize("charset", ["cp1252", "ascii", "latin-1", "cp437"])
def test_every_format_on_a_strict_non_utf8_stdout(hostile_dir, charset, cmd):
    args = [a.replace("{dir}", str(hostile_dir)) for a in IN_PROCESS[cmd]]
    res = CliRunner(charset=charset).invoke(
        app,
        args,
        env={"NO_COLOR": None, "GRAPHRAG_AUDIT_COLOR": None, "GRAPHRAG_AUDIT_WIDTH": None, "TERM": None},
    )
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code in (0, 1), res.output
    text = res.stdout_bytes.decode(charset)  # strict
    assert "internal error" not in text and "\x1b" not in text
    if cmd in ("levels-text", "tree-text"):
        # the Chinese title: escaped (no charset here holds it), the Cyrillic one too except cp437
        assert "\\u9ad8\\u5c14\\u592b" in text and "\\u202eRLO\\u202c" in text
        for word in ("Ёлка", "émigré"):  # as they are where the charset holds them, else escaped
            assert word.encode(charset, "backslashreplace").decode(charset) in text


# ---- the fallback itself --------------------------------------------------------------------
def _stream(encoding: str, errors: str = "strict"):
    return io.TextIOWrapper(io.BytesIO(), encoding=encoding, errors=errors)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60),
    encoding=st.sampled_from(["ascii", "cp1252", "latin-1", "cp437", "cp866", "shift_jis", "koi8-r"]),
)
def test_encode_for_stream_always_encodes(text, encoding):
    out = encode_for_stream(text, _stream(encoding))
    out.encode(encoding)  # strict: no UnicodeEncodeError
    # what the encoding holds is kept
    if all(_holds(encoding, ch) for ch in text):
        assert out == text


def _holds(encoding: str, ch: str) -> bool:
    try:
        ch.encode(encoding)
        return True
    except UnicodeEncodeError:
        return False


def test_encode_for_stream_on_utf8_is_identity_but_for_lone_surrogates():
    s = "洁净 · ─│├└ … ≥ Ёлка \u202e"
    assert encode_for_stream(s, _stream("utf-8")) == s
    assert encode_for_stream("a\udcffb", _stream("utf-8", "surrogateescape")) == "a\\udcffb"
    # the renderers' glyphs on ASCII: one character each, so table columns keep their place
    assert (
        encode_for_stream("├── a │ b └── c ─── · — – … › ▸", _stream("ascii"))
        == "|-- a | b `-- c --- / - - ~ > >"
    )
    assert encode_for_stream("≥ 高", _stream("ascii")) == ">= \\u9ad8"
    assert encode_for_stream("· — … ─ 高", _stream("cp1252")) == "· — … - \\u9ad8"


# ---- TERM=dumb --------------------------------------------------------------------------------
def _on_a_pty(args: list, env: dict) -> bytes:
    """Run the CLI with stdout and stderr on one pseudo-terminal; everything it wrote there."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 120, 0, 0))
    full = _env({})
    full.update(env)
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphrag_audit", *map(str, args)],
        stdout=slave,
        stderr=slave,
        stdin=subprocess.DEVNULL,
        env=full,
        cwd=str(REPO),
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
    proc.wait(timeout=300)
    assert proc.returncode in (0, 1)
    return b"".join(chunks)


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
@pytest.mark.parametrize(
    "cmd",
    [
        ["levels", "{dir}", "--level", "1", "--list-reports"],
        ["tree", "{dir}", "--level", "1"],
        ["plan", "{dir}", "--reports", "100", "--no-costs"],
    ],
)
def test_term_dumb_gets_no_escape_sequences(real, cmd):
    args = [a.replace("{dir}", str(real)) for a in cmd]
    # control: the same command on an xterm is coloured (stdout and the stderr progress share the pty)
    assert b"\x1b[" in _on_a_pty(args, {"TERM": "xterm-256color"})
    out = _on_a_pty(args, {"TERM": "dumb"}).decode("utf-8")
    assert "\x1b" not in out and "\x9b" not in out  # no CSI, 7-bit or 8-bit
    assert "洁净厂房" in out or cmd[0] == "plan"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_term_dumb_yields_to_an_explicit_color_always(real):
    assert b"\x1b[" in _on_a_pty(["tree", real, "--color", "always"], {"TERM": "dumb"})

"""The self-contained HTML report (render/html.py, ``graphrag-audit report``).

Static checks parse the HTML with the standard library. Browser checks open it in headless
Chromium (the Debian ``chromium`` package; skipped with the reason when it is not installed):
``--dump-dom`` for the rendered DOM, ``--screenshot`` for a picture, and the DevTools protocol
over ``--remote-debugging-pipe`` (stdlib only: two pipes, NUL-separated JSON) to record every
network request and every console/log message while the page loads.
"""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import struct
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from builders import SEED, write_v3
from conftest import shared_index

from graphrag_audit.analysis.audit import AuditOptions
from graphrag_audit.render.html import CSP, ICICLE_GUTTER, ICICLE_W
from graphrag_audit.render.text import render_text
from graphrag_audit.sanitise.common import plain

REPO = Path(__file__).resolve().parents[2]


def audited_html(index, options: AuditOptions):
    """(the audit report, what ``graphrag-audit report`` writes: its tree coloured at options.level)."""
    from graphrag_audit.analysis.audit import audit_with_model
    from graphrag_audit.analysis.treeview import build_forest
    from graphrag_audit.render.html import render_html

    model, report = audit_with_model(index, options)
    return report, render_html(report, build_forest(model, options.level, report.selections_by_level()))


def audit_html(index, options: AuditOptions) -> str:
    return audited_html(index, options)[1]


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
_no_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (apt-get install "
    "chromium; .ci/run installs it): browser checks of the HTML report skipped",
)


def needs_chromium(test):
    """The ``browser`` tier; skipped with the reason where chromium is not installed."""
    return pytest.mark.browser(_no_chromium(test))


CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
HOSTILE = {
    5: '<script>alert("x")</script> & "quotes"',
    20: "<img src=x onerror=alert(1)>",
    21: "洁净厂房 \x1b[31m\nline",
    77: "</title><b>bold</b>",
    78: "it's <svg onload=alert(2)>",
}
# hand-worked at community_level 2 (see test_treeview.py): 5, 6, 20 only >= 2.0; the rest both
SEED_SENT_2 = {5: "v2-only", 6: "v2-only", 20: "v2-only", 21: "both", 22: "both", 77: "both", 78: "both"}


class Doc(HTMLParser):
    """Every start tag with its attributes, the text inside each data-community element's
    <title>, and the cells of each table row."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.tips: dict[str, str] = {}
        self.rows: list[list[str]] = []
        self._community = None
        self._in_title = False
        self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "data-community" in a:
            self._community = a["data-community"]
        if tag == "title" and self._community is not None:
            self._in_title = True
            self.tips[self._community] = ""
        if tag == "tr":
            self.rows.append([])
        if tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag == "rect":
            self._community = None
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._in_title and self._community is not None:
            self.tips[self._community] += data
        if self._cell is not None:
            self._cell += data

    def with_attr(self, name):
        return [(t, a) for t, a in self.tags if name in a]


@pytest.fixture()
def hostile_html(tmp_path):
    idx = write_v3(tmp_path / "hostile", SEED, report_titles=HOSTILE)
    return audit_html(idx, AuditOptions(level=2, costs=False))


# ---- static checks -----------------------------------------------------------------------------
def test_self_contained_and_escaped(hostile_html):
    doc = Doc(hostile_html)
    tags = [t for t, _ in doc.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    metas = [a for t, a in doc.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert [m["content"] for m in metas] == [CSP]
    assert CSP.startswith("default-src 'none'; style-src 'unsafe-inline'; img-src data:")
    for _, a in doc.tags:  # nothing that could load anything
        assert not {"src", "href", "srcset", "action", "xlink:href"} & set(a), a
        assert not any(k.startswith("on") for k in a), a
    assert not re.search(r"url\(|@import|https?://(?!www\.w3\.org/2000/svg)", hostile_html)
    comm = doc.with_attr("data-community")
    assert sorted(int(a["data-community"]) for _, a in comm) == sorted(SEED)
    assert {int(a["data-community"]): a["data-sent"] for _, a in comm} == SEED_SENT_2
    for c, title in HOSTILE.items():  # the tooltip holds the title as text, nothing else
        assert f"report: {plain(title)}" in doc.tips[str(c)]
    assert "<script>" not in hostile_html and "<img" not in hostile_html


def test_seed_levels_table(tmp_path):
    doc = Doc(audit_html(write_v3(tmp_path / "seed", SEED), AuditOptions(level=2, costs=False)))
    table = next(r for r in doc.rows if r and r[0] == "N")
    i = doc.rows.index(table)
    body = {r[0]: (r[1], r[2]) for r in doc.rows[i + 1 : i + 5]}
    # v2: reports with level <= N; v1: the frontier (N=0: 5, 6; N=1: 20, 21, 22; N>=2 and None:
    # 77, 78, 21, 22)
    # (a 3.x layout: graphrag < 2.0 cannot read it, so its counts are its rule, marked hypothetical)
    assert body == {
        "0": ("2", "hyp. 2¹"),
        "1": ("5", "hyp. 3¹"),
        "2": ("7", "hyp. 4¹"),
        "None": ("7", "hyp. 4¹"),
    }


def _text_table_rows(text: str, title_start: str, count: int) -> list[list[str]]:
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith(title_start))
    # the --level row carries the marker column's "▶" first
    rows = [
        ln.replace("▶", " ").split() for ln in lines[start + 1 :] if re.match(r"^\s+(▶\s+)?(\d+|None)\s", ln)
    ]
    return rows[:count]


@pytest.mark.parametrize("costs", [False, True])
def test_levels_table_matches_the_text_renderer(costs):
    """Same content as render/text.py's two levels tables, joined on N, in the same formats."""
    report, html = audited_html(
        shared_index("verbs-v3"), AuditOptions(level=2, costs=costs, tokenizer="estimate")
    )
    doc = Doc(html)
    head = next(r for r in doc.rows if r and r[0] == "N")
    i = doc.rows.index(head)
    html_rows = [" ".join(r).split() for r in doc.rows[i + 1 : i + 1 + len(report.levels)]]
    text = render_text(report, width=200)
    sel = _text_table_rows(text, "What each community_level N sends", len(report.levels))
    depth = _text_table_rows(text, "Depth", len(report.levels))
    cover = _text_table_rows(text, "Coverage per N", len(report.levels))
    assert (
        [a[0] for a in sel] == [b[0] for b in depth] == [c[0] for c in cover] == ["0", "1", "2", "3", "None"]
    )
    # + the entity coverage of >= 2.0 and < 2.0 ("504 (100%)": two words each)
    assert html_rows == [a + b[1:] + c[1:5] for a, b, c in zip(sel, depth, cover)]
    # docs/graphrag-semantics.md#numbers: verbs-v3 at community_level 2 sends 120 (>= 2.0) and 97 (< 2.0) reports
    # (graphrag < 2.0 cannot read a 3.x layout: its count is marked hypothetical)
    assert html_rows[2][:4] == ["2", "120", "hyp.", "97¹"]
    assert (len(head) == 13) is costs


def test_icicle_widths_are_proportional_to_entities():
    """verbs-v3 is clean (each community's children cover its entities), so every community's
    width is the drawing span × its entities / the clustered entities (504, per the parquet)."""
    path = shared_index("verbs-v3")
    comm = pd.read_parquet(path / "communities.parquet", columns=["community", "parent", "entity_ids"])
    ents = dict(zip(comm["community"], comm["entity_ids"].map(len)))
    total = sum(ents[c] for c in comm.loc[comm["parent"] == -1, "community"])
    assert total == 504
    doc = Doc(audit_html(path, AuditOptions(level=2, costs=False)))
    rects = {int(a["data-community"]): a for _, a in doc.with_attr("data-community")}
    assert set(rects) == set(ents)
    span = ICICLE_W - ICICLE_GUTTER
    for c, a in rects.items():
        assert float(a["width"]) == pytest.approx(span * ents[c] / total, abs=0.002)
    parent = dict(zip(comm["community"], comm["parent"]))
    for c, a in rects.items():  # a child lies inside its parent's span
        p = parent[c]
        if p >= 0:
            px, pw = float(rects[p]["x"]), float(rects[p]["width"])
            assert px - 0.002 <= float(a["x"]) and float(a["x"]) + float(a["width"]) <= px + pw + 0.002


def test_cli_report(tmp_path):
    idx = write_v3(tmp_path / "seed", SEED)
    out = tmp_path / "audit.html"

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "graphrag_audit", "report", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=REPO,
        )

    res = run(idx, "-o", out, "--level", "1", "--no-costs")
    assert res.returncode == 0, res.stderr
    doc = Doc(out.read_text(encoding="utf-8"))
    assert len(doc.with_attr("data-community")) == 7
    assert "community_level 1" in out.read_text(encoding="utf-8")
    res = run(idx)
    assert res.returncode == 2 and res.stderr == "graphrag-audit: error: report: -o FILE.html is required\n"
    res = run(idx, "-o", idx / "audit.html")
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and not (idx / "audit.html").exists()
    res = run(tmp_path / "nope", "-o", out)
    assert res.returncode == 2 and res.stderr.count("\n") == 1


# ---- dynamic community selection per graphrag line ---------------------------------------------
def dynamic_section(html: str) -> Doc:
    start = html.index('<section id="dynamic">')
    return Doc(html[start : html.index("</section>", start)])


def _table_rows(doc: Doc, first: str) -> list[list[str]]:
    """The rows after the header row whose first cell is ``first``, up to the next header-like row."""
    i = next(k for k, r in enumerate(doc.rows) if r and r[0] == first)
    out = []
    for r in doc.rows[i + 1 :]:
        if r and r[0] in ("", "N", "graphrag", "community"):
            break
        out.append(r)
    return out


def _waves(ws) -> str:
    return "/".join(str(w) for w in ws) if ws else "—"


def test_dynamic_section_tokens_equal_the_json():
    """With costs: each scenario's rating prompt tokens and the what-if's map calls and tokens over the
    kept reports are the JSON's."""
    from graphrag_audit.render import render

    report, html = audited_html(
        shared_index("real-b2b-gaps-v2"),
        AuditOptions(level=2, tokenizer="estimate", relevant=tuple(range(0, 400, 3))),
    )
    doc = dynamic_section(html)
    bv = next(r for r in json.loads(render(report, "json"))["levels"] if r["community_level"] == 2)[
        "selected"
    ]["dynamic"]["by_version"]
    details = {r[0]: r[1:] for r in _table_rows(doc, "")}

    def span(v, r):
        return f"{v:,}" if r[0] == r[1] else f"{v:,} ({r[0]:,}–{r[1]:,})"

    for k, v in enumerate(bv.values()):
        for name, key in (
            ("none relevant", "none_relevant"),
            ("all relevant", "all_relevant"),
            ("what-if", "what_if"),
        ):
            assert details[f"{name}: rating prompt tokens"][k] == f"{v[key]['prompt_tokens']:,}"
        w = v["what_if"]
        assert details["what-if: map calls over the kept"][k] == span(w["map_calls"], w["map_calls_range"])
        assert details["what-if: map tokens over the kept"][k] == span(w["tokens"], w["tokens_range"])
        assert w["prompt_tokens"] > 0 and w["tokens"] > 0


def test_dynamic_section_numbers_equal_the_json():
    """verbs-v3 at N=2 with a what-if: every number of the section is the JSON's by_version, the
    per-version table is the text renderer's, and the 2.x line is marked as never descending."""
    from graphrag_audit.render import render

    rel = (0, 23, 24, 90)
    report, html = audited_html(shared_index("verbs-v3"), AuditOptions(level=2, costs=False, relevant=rel))
    doc = dynamic_section(html)
    levels = json.loads(render(report, "json"))["levels"]
    bv = next(r for r in levels if r["community_level"] == 2)["selected"]["dynamic"]["by_version"]
    assert list(bv) == ["2.x", "3.x"]
    main = _table_rows(doc, "graphrag")
    assert [r[0] for r in main] == [bv[f]["graphrag"] for f in bv] == ["2.0.0-2.7.2", "3.0.0-3.x"]
    for row, (f, v) in zip(main, bv.items()):
        assert row[1:] == [
            "yes" if v["descends"] else "never",
            str(v["all_relevant"]["rating_calls"]),
            str(len(v["all_relevant"]["kept_ids"])),
            str(v["none_relevant"]["rating_calls"]),
            str(v["what_if"]["rating_calls"]),
            str(len(v["what_if"]["kept_ids"])),
        ]
    # the numbers issue 16 measured with the real graphrag 2.7.2 and 3.3.0 on verbs-v3 at N=2
    assert [r[2] for r in main] == ["23", "120"] and [r[4] for r in main] == ["120", "120"]
    # the same cells as `levels` prints
    text = render(report, "text", width=200, color=False)
    block = text[text.index("Dynamic selection by graphrag version at N=2") :].splitlines()
    # two title lines, two header lines ("all relevant" over "calls"), then one row per line
    assert [ln.split() for ln in block[4:6]] == main
    # the 2.x line is marked (class and a note), the 3.x line is not
    marks = {a["data-family"]: a.get("class") for t, a in doc.tags if t == "tr" and "data-family" in a}
    assert marks == {"2.x": "no-descent", "3.x": None}
    assert "graphrag 2.0.0-2.7.2 never descends" in html and "graphrag 3.0.0-3.x never descends" not in html
    details = {r[0]: r[1:] for r in _table_rows(doc, "")}
    for k, (f, v) in enumerate(bv.items()):
        got = {label: cells[k] for label, cells in details.items()}
        want = {
            "error": v["error"] or "none",
            "descends below level 0": "yes" if v["descends"] else "never",
            "start reports (level 0)": str(len(v["start_ids"])),
            "cut off when all are relevant": str(v["cut_off"]),
            "never rated (unreachable)": str(v["unreachable"]),
        }
        for name, key in (
            ("none relevant", "none_relevant"),
            ("all relevant", "all_relevant"),
            ("what-if", "what_if"),
        ):
            sc = v[key]
            want |= {
                f"{name}: rating calls": str(sc["rating_calls"]),
                f"{name}: kept reports": str(len(sc["kept_ids"])),
                f"{name}: waves (rated per round)": _waves(sc["waves"]),
            }
        assert got == want, f
    # beside every static level: the per-N rating calls of each line
    per_n = _table_rows(doc, "N")
    assert [r[0] for r in per_n] == ["0", "1", "2", "3", "None"]
    for row, lv in zip(per_n, levels):
        d = lv["selected"]["dynamic"]
        assert row[1] == f"{d['rating_calls']['min']}–{d['rating_calls']['max']}"
        assert row[2:] == [
            f"{v['all_relevant']['rating_calls']} / {v['none_relevant']['rating_calls']}"
            for v in d["by_version"].values()
        ]
    # the related finding, and nothing else
    assert "<code>dynamic-no-descent</code>" in html.split('<section id="dynamic">')[1].split("</section>")[0]
    assert "<code>depth-mismatch</code>" not in html.split('<section id="dynamic">')[1].split("</section>")[0]


def test_dynamic_section_escapes_hostile_titles(tmp_path):
    """The start reports and the what-if's kept reports are listed with their (hostile) titles as text.
    By hand on SEED with 5, 20 and 77 relevant: 2.x keeps 5 (it never descends, and something is kept, so
    no fallback); 3.x descends 5 -> 20 -> 77 and keeps 77 alone (a kept child drops its parent)."""
    idx = write_v3(tmp_path / "hostile", SEED, report_titles=HOSTILE)
    html = audit_html(idx, AuditOptions(level=2, costs=False, relevant=(5, 20, 77)))
    section = html.split('<section id="dynamic">')[1].split("</section>")[0]
    doc = dynamic_section(html)
    assert not [t for t, _ in doc.tags if t in ("script", "img", "svg", "iframe", "title")]
    assert (
        "<script>" not in section
        and "<img" not in section
        and "<svg" not in section
        and "<b>bold" not in section
    )
    listed = {r[0]: r[1] for r in doc.rows if len(r) == 2 and r[0].isdigit()}
    assert listed == {"5": plain(HOSTILE[5]), "6": "Report 6", "77": plain(HOSTILE[77])}
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &quot;quotes&quot;" in section
    assert "&lt;/title&gt;&lt;b&gt;bold&lt;/b&gt;" in section
    summaries = re.findall(r"<summary>(.*?)</summary>", section)
    assert summaries == [
        "Start reports: the level-0 reports rated first (2)",
        "What-if: reports graphrag 2.0.0-2.7.2 keeps (1)",
        "What-if: reports graphrag 3.0.0-3.x keeps (1)",
    ]
    blocks = section.split("<details>")[1:]
    assert ">5<" in blocks[1] and ">77<" not in blocks[1] and ">77<" in blocks[2] and ">5<" not in blocks[2]


def test_dynamic_section_on_a_keyerror_and_a_1x_index(tmp_path):
    from test_dynamic_audit import hand_index

    failing = hand_index(tmp_path, "v2", drop_reports=(0, 1), name="nl0")
    html = audit_html(failing, AuditOptions(level=2, costs=False))
    doc = dynamic_section(html)
    main = _table_rows(doc, "graphrag")
    assert [r[:3] for r in main] == [
        ["2.0.0-2.7.2", "—", "fails: KeyError: '0'"],
        ["3.0.0-3.x", "—", "fails: KeyError: '0'"],
    ]
    marks = {a["data-family"]: a.get("class") for t, a in doc.tags if t == "tr" and "data-family" in a}
    assert marks == {"2.x": "fails", "3.x": "fails"}  # an error is not "never descends"
    assert "never descends" not in html.split('<section id="dynamic">')[1].split("</section>")[0]
    assert "<code>dynamic-no-level-0-report</code>" in html
    one = hand_index(tmp_path, "v1", name="one")
    doc = dynamic_section(audit_html(one, AuditOptions(level=2, costs=False)))
    assert [r[0] for r in _table_rows(doc, "graphrag")] == ["1.1.1-1.2.x"]
    empty = write_v3(tmp_path / "noreports", SEED, reports=[])
    (empty / "community_reports.parquet").unlink()
    html = audit_html(empty, AuditOptions(level=2, costs=False))
    assert "No community_reports table: dynamic community selection has nothing to rate." in html


def test_cli_report_takes_the_dynamic_options(tmp_path):
    """report has levels' dynamic options (one definition in cli/options.py) and passes them on."""
    idx = write_v3(tmp_path / "seed", SEED)
    out = tmp_path / "audit.html"
    rel = tmp_path / "rel.txt"
    rel.write_text("5\n20, 77\n")

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "graphrag_audit", "report", *map(str, args)],
            capture_output=True,
            text=True,
            timeout=180,
            cwd=REPO,
        )

    res = run(idx, "-o", out, "--no-costs", "--relevant", f"@{rel}", "--num-repeats", "3")
    assert res.returncode == 0, res.stderr
    main = _table_rows(dynamic_section(out.read_text(encoding="utf-8")), "graphrag")
    # 3 repeats; 2.x rates 5, 6; 3.x rates 5, 6 then 20, 21 then 77, 78 (the what-if above)
    assert main == [
        ["2.0.0-2.7.2", "never", "6", "2", "21", "6", "1"],
        ["3.0.0-3.x", "yes", "21", "4", "21", "18", "1"],
    ]
    res = run(idx, "-o", out, "--relevant", "5,x")
    assert (
        res.returncode == 2
        and res.stderr == "graphrag-audit: error: --relevant: 'x' is not a community number\n"
    )
    before = out.read_bytes()
    res = run(
        idx, "-o", out, "--no-costs", "--relevant", "5,23"
    )  # the seed's communities: 5, 6, 20-22, 77, 78
    assert (
        res.returncode == 2
        and res.stderr == "graphrag-audit: error: --relevant: not a community of this index: 23\n"
    )
    assert out.read_bytes() == before  # nothing written


# ---- headless Chromium -------------------------------------------------------------------------
def _high_fd(fd: int) -> int:
    import fcntl

    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class DevTools:
    """Chromium's DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out)."""

    def __init__(self, user_dir: Path, extra: list[str]):
        cmd_r, self._cmd_w = os.pipe()
        self._res_r, res_w = os.pipe()
        # the child's ends must not be fds 3 or 4 themselves, or the shell's "3<&N 4>&M" would
        # overwrite one with the other: move them to fds >= 10 first
        cmd_r, res_w = [_high_fd(fd) for fd in (cmd_r, res_w)]
        args = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={user_dir}", "--remote-debugging-pipe", *extra]
        # bash, not sh: dash reads only one-digit file descriptors in redirections
        self.proc = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{cmd_r} 4>&{res_w}', *args],
            pass_fds=(cmd_r, res_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(cmd_r)
        os.close(res_w)
        self._buf, self._id, self.events = b"", 0, []

    def call(self, method, params=None, session=None, timeout=30.0):
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._cmd_w, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            self.events.append(m)

    def wait_for(self, method, timeout=30.0):
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self._read(deadline))

    def _read(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer")
            if select.select([self._res_r], [], [], left)[0]:
                chunk = os.read(self._res_r, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._cmd_w)
        os.close(self._res_r)


def load_page(
    url: str,
    user_dir: Path,
    shot: Path | None = None,
    evaluate: dict | None = None,
    width: int = 1400,
    clip: str | None = None,
) -> dict:
    """Open ``url``; return the requests made, console/log messages, exceptions, the number of
    [data-community] elements, (``shot``) a width x 1000 screenshot (``clip``: of the element this CSS
    selector finds, whole, scrolled or not) and (``evaluate``: name -> JavaScript expression, run by DevTools
    on the loaded page, which has no script of its own) their values."""
    dt = DevTools(user_dir, [f"--window-size={width},1000", "--hide-scrollbars"])
    try:
        target = dt.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = dt.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Network", "Runtime", "Log", "Page"):
            dt.call(f"{domain}.enable", session=s)
        dt.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
            session=s,
        )
        dt.call("Page.navigate", {"url": url}, session=s)
        dt.wait_for("Page.loadEventFired")
        count = dt.call(
            "Runtime.evaluate",
            {"expression": "document.querySelectorAll('[data-community]').length", "returnByValue": True},
            session=s,
        )["result"]["value"]
        values = {
            name: dt.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=s)[
                "result"
            ].get("value")
            for name, expr in (evaluate or {}).items()
        }
        if shot is not None:
            params = {"format": "png"}
            if clip is not None:
                box = dt.call(
                    "Runtime.evaluate",
                    {
                        "expression": (
                            f"(() => {{ const r = document.querySelector({json.dumps(clip)}).getBoundingClientRect(); "
                            "return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()"
                        ),
                        "returnByValue": True,
                    },
                    session=s,
                )["result"]["value"]
                params |= {
                    "clip": dict(zip(("x", "y", "width", "height"), box), scale=1),
                    "captureBeyondViewport": True,
                }
            shot.write_bytes(base64.b64decode(dt.call("Page.captureScreenshot", params, session=s)["data"]))
        time.sleep(0.5)  # late messages (a blocked subresource) arrive before the next answer
        dt.call("Runtime.evaluate", {"expression": "0"}, session=s)
        ev = [e for e in dt.events if e.get("sessionId") == s]
    finally:
        dt.close()
    return {
        "requests": [e["params"]["request"]["url"] for e in ev if e["method"] == "Network.requestWillBeSent"],
        "console": [e["params"] for e in ev if e["method"] == "Runtime.consoleAPICalled"],
        "exceptions": [e["params"] for e in ev if e["method"] == "Runtime.exceptionThrown"],
        "log": [e["params"]["entry"] for e in ev if e["method"] == "Log.entryAdded"],
        "count": count,
        "values": values,
    }


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@needs_chromium
def test_harness_sees_requests_and_console_errors(tmp_path):
    """The recorder is not blind: a page that loads an image and logs is caught."""
    no_csp = tmp_path / "leak.html"
    no_csp.write_text(
        '<html><body><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script></body></html>'
    )
    got = load_page(no_csp.as_uri(), tmp_path / "u1")
    assert "http://127.0.0.1:9/x.png" in got["requests"]
    assert [c["type"] for c in got["console"]] == ["error"]
    with_csp = tmp_path / "blocked.html"
    with_csp.write_text(
        f'<html><head><meta http-equiv="Content-Security-Policy" content="{CSP}"></head>'
        '<body><img src="http://127.0.0.1:9/x.png"></body></html>'
    )
    got = load_page(with_csp.as_uri(), tmp_path / "u2")
    assert any(e["level"] == "error" and "Content Security Policy" in e["text"] for e in got["log"])


@needs_chromium
def test_verbs_v3_report_in_chromium(tmp_path):
    path = shared_index("verbs-v3")
    html_file = tmp_path / "audit.html"
    html_file.write_text(audit_html(path, AuditOptions(level=2, costs=False)), encoding="utf-8")
    shot = tmp_path / "report.png"
    got = load_page(html_file.as_uri(), tmp_path / "u", shot)
    communities = pd.read_parquet(path / "communities.parquet", columns=["community"])["community"].nunique()
    assert got["count"] == communities == 122
    assert got["requests"] == [html_file.as_uri()]  # the document itself, nothing else
    assert got["console"] == [] and got["exceptions"] == []
    assert [e for e in got["log"] if e["level"] in ("error", "warning")] == []
    assert png_size(shot) == (1400, 1000)
    # the dynamic section renders: its cells are the JSON's, the 2.x line is painted apart from the 3.x line
    report, html = audited_html(path, AuditOptions(level=2, costs=False, relevant=(0, 23, 24, 90)))
    html_file.write_text(html, encoding="utf-8")
    rows = (
        "Array.from(document.querySelectorAll('#dynamic-by-version tbody tr')).map(tr => [tr.dataset.family, "
        "getComputedStyle(tr.cells[0]).backgroundColor, getComputedStyle(tr.cells[1]).fontWeight, "
        "tr.getBoundingClientRect().height].concat(Array.from(tr.cells).map(c => c.innerText)))"
    )
    got = load_page(
        html_file.as_uri(),
        tmp_path / "u2",
        evaluate={
            "rows": rows,
            "section": "document.getElementById('dynamic').getBoundingClientRect().height",
            "note": "Array.from(document.querySelectorAll('.no-descent-note')).map(p => p.innerText)",
        },
    )
    assert got["requests"] == [html_file.as_uri()] and got["console"] == [] and got["exceptions"] == []
    from graphrag_audit.render import render

    bv = next(r for r in json.loads(render(report, "json"))["levels"] if r["community_level"] == 2)[
        "selected"
    ]["dynamic"]["by_version"]
    v = got["values"]
    assert [r[0] for r in v["rows"]] == list(bv) == ["2.x", "3.x"]
    for r, x in zip(v["rows"], bv.values()):
        assert r[3] > 0  # laid out, not hidden
        assert r[4:] == [
            x["graphrag"],
            "yes" if x["descends"] else "never",
            str(x["all_relevant"]["rating_calls"]),
            str(len(x["all_relevant"]["kept_ids"])),
            str(x["none_relevant"]["rating_calls"]),
            str(x["what_if"]["rating_calls"]),
            str(len(x["what_if"]["kept_ids"])),
        ]
    (_, bg2, weight2, *_), (_, bg3, weight3, *_) = v["rows"]
    assert bg2 != bg3 and int(weight2) > int(weight3)
    assert (
        v["section"] > 100
        and len(v["note"]) == 1
        and v["note"][0].startswith("graphrag 2.0.0-2.7.2 never descends")
    )
    blank = tmp_path / "blank.html"
    blank.write_text("<html><body></body></html>")
    blank_shot = tmp_path / "blank.png"
    load_page(blank.as_uri(), tmp_path / "u3", blank_shot)
    assert shot.stat().st_size > 5 * blank_shot.stat().st_size  # something was drawn


@needs_chromium
def test_dump_dom_and_screenshot_flags(tmp_path, hostile_html):
    page = tmp_path / "hostile.html"
    page.write_text(hostile_html, encoding="utf-8")
    base = [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'u'}", "--window-size=1400,1000"]
    res = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    dom = Doc(res.stdout)
    assert sorted(int(a["data-community"]) for _, a in dom.with_attr("data-community")) == sorted(SEED)
    assert not [t for t, _ in dom.tags if t in ("script", "img", "iframe")]
    svgs = [a.get("id") for t, a in dom.tags if t == "svg"]
    assert svgs == ["icicle", "depth-histogram", "entities-per-report"]  # no injected <svg onload>
    for c, title in HOSTILE.items():
        assert f"report: {plain(title)}" in dom.tips[str(c)]
    # the dynamic section's start reports (level 0: 5 and 6) keep their hostile titles as text
    start = res.stdout.index('<section id="dynamic">')
    dyn = Doc(res.stdout[start : res.stdout.index("</section>", start)])
    assert {r[0]: r[1] for r in dyn.rows if len(r) == 2 and r[0].isdigit()} == {
        "5": plain(HOSTILE[5]),
        "6": "Report 6",
    }
    assert not [t for t, _ in dyn.tags if t in ("script", "img", "svg", "iframe")]
    shot = tmp_path / "shot.png"
    res = subprocess.run(
        [*base, f"--screenshot={shot}", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0 and png_size(shot) == (1400, 1000)


# ---- hypothetical selections marked in the sent lists; the dynamic section's findings (issue 38 §2) ----
# fixtures/seed-v01 (string ids, a 0.1-0.4 layout; graphrag/compat.py, confirmed with the real graphrag):
# graphrag >= 2.0 cannot read it, graphrag 1.0-1.2 selects 0 reports; the rules' selections at N=1 are the
# seed's: >= 2.0 5 (5, 6, 20, 21, 22), < 2.0 3 (20, 21, 22). graphrag 1.1-1.2's dynamic selection stops on
# its missing create_final_communities (dynamic-fails), and graphrag < 1.1 has none (dynamic-old-graphrag).
def test_sent_lists_mark_hypothetical_and_dynamic_findings_listed(tmp_path):
    _, doc = audited_html(REPO / "fixtures" / "seed-v01", AuditOptions(level=1, costs=False))
    summaries = re.findall(r'<details data-behaviour="(v[12])"><summary>(.*?)</summary>', doc)
    assert summaries == [
        (
            "v2",
            "hyp.: the graphrag &gt;= 2.0 rule selects the reports of 5 communities (hypothetical: graphrag "
            "&gt;= 2.0 cannot read this index)",
        ),
        (
            "v1",
            "hyp.: the graphrag &lt; 2.0 rule selects the reports of 3 communities (hypothetical: graphrag "
            "1.0-1.2 selects 0 here)",
        ),
    ]
    dynamic = doc[doc.index('<section id="dynamic">') :]
    dynamic = dynamic[: dynamic.index("</section>")]
    related = dynamic[dynamic.index("Related findings") :]
    assert related.startswith("Related findings (2)")
    assert "<code>dynamic-fails</code>" in related and "<code>dynamic-old-graphrag</code>" in related
    # a 3.x seed: graphrag >= 2.0 sends its list as is, graphrag < 2.0's is its rule
    _, doc3 = audited_html(write_v3(tmp_path / "seed", SEED), AuditOptions(level=1, costs=False))
    assert re.findall(r'<details data-behaviour="(v[12])"><summary>(.*?)</summary>', doc3) == [
        ("v2", "graphrag &gt;= 2.0 sends the reports of 5 communities"),
        (
            "v1",
            "hyp.: the graphrag &lt; 2.0 rule selects the reports of 3 communities (hypothetical: not what "
            "graphrag &lt; 2.0 sends here)",
        ),
    ]

"""The HTML report from 100 to 20,000 communities (issue 17): the ``--level`` cut on the icicle, narrow
siblings aggregated into "+K" blocks (so deep branches stay visible and the file stays small), tables that
scroll at 800 px, a colour-blind-safe palette, the reports sent at N listed, the size at 20,000
communities, and the screenshots in docs/images (written there with GRAPHRAG_AUDIT_WRITE_SCREENSHOTS=1).

Expectations come from the parquet files (brute force over the communities table) or by hand, never
from the renderer. The synthetic indexes are tests/synthetic.py's ``leiden_like`` with fixed seeds.
"""

from __future__ import annotations

import itertools
import os
import struct
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builders import SEED, write_v3
from synthetic import leiden_like, write_index
from test_html_report import HOSTILE, SEED_SENT_2, Doc, audit_html, load_page, needs_chromium

from graphrag_audit.analysis.audit import AuditOptions
from graphrag_audit.render.html import AGG_MIN_W, CUT_COLOUR, MIN_W, NO_REPORT_COLOUR, OKABE_ITO, SENT_COLOURS
from graphrag_audit.sanitise.common import plain

pytestmark = pytest.mark.large  # a heavy tier: pytest -m large
REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "docs" / "images"
#: communities wanted -> entities given to leiden_like (seed 1, max_cluster_size 10: ~3.9 entities a community)
SIZES = {100: 380, 2000: 8000, 20000: 80000}
MAX_BYTES = 1_500_000


@pytest.fixture(scope="module")
def scaled(tmp_path_factory):
    """{target: (index dir, number of communities, the HTML at community_level 2)} for 100, 2,000, 20,000."""
    out = {}
    base = tmp_path_factory.mktemp("scaled")
    for target, n in SIZES.items():
        idx = base / f"c{target}"
        write_index(leiden_like(n, seed=1, content_bytes=(60, 120)), idx, "3.x")
        communities = pd.read_parquet(idx / "communities.parquet", columns=["community", "level", "parent"])
        out[target] = (idx, communities, audit_html(idx, AuditOptions(level=2, costs=False)))
    return out


def _drawn(doc: Doc):
    """(rects of single communities, "+K" aggregate rects) of the icicle."""
    rects = [a for t, a in doc.tags if t == "rect" and "data-community" in a]
    aggs = [a for t, a in doc.tags if t == "rect" and "data-aggregate" in a]
    return rects, aggs


# ---- the cut line -----------------------------------------------------------------------------
@pytest.mark.parametrize("level", [0, 1, 2, 5])
def test_cut_line_lies_between_level_n_and_the_rows_below(tmp_path, level):
    """SEED by hand: levels 0 (5, 6), 1 (20, 21, 22), 2 (77, 78); --level 5 is deeper than the index (as 2)."""
    html = audit_html(write_v3(tmp_path / "seed", SEED), AuditOptions(level=level, costs=False))
    doc = Doc(html)
    cut = [a for t, a in doc.tags if t == "g" and a.get("id") == "cut-line"]
    assert len(cut) == 1 and cut[0]["data-community-level"] == str(level)
    as_level = min(level, 2)
    assert cut[0]["data-cut-level"] == str(as_level)
    line = next(a for t, a in doc.tags if t == "line" and a.get("stroke") == CUT_COLOUR)
    y = float(line["y1"])
    assert line["y1"] == line["y2"] and float(line["stroke-width"]) >= 3
    rects, _ = _drawn(doc)
    for a in rects:  # every row of level <= N above the line, every deeper row below it
        top, bottom = float(a["y"]), float(a["y"]) + float(a["height"])
        assert (bottom < y) if int(a["data-level"]) <= as_level else (top > y), a
    assert f"community_level {level}" in html.split('<g id="cut-line"')[1].split("</g>")[0]
    # the legend names it, in the cut's colour
    assert f'border-top-color:{CUT_COLOUR}"></span>the community_level {level} cut' in html


def test_no_cut_line_without_reports(tmp_path):
    empty = write_v3(tmp_path / "noreports", SEED, reports=[])
    (empty / "community_reports.parquet").unlink()
    html = audit_html(empty, AuditOptions(level=2, costs=False))
    assert 'id="cut-line"' not in html and '<section id="sent">' not in html


# ---- the reports sent at N ---------------------------------------------------------------------
def _sent_section(html: str) -> Doc:
    start = html.index('<section id="sent">')
    return Doc(html[start : html.index("</section>", start)])


def _listed_ids(doc: Doc, behaviour: str) -> dict[int, list[int]]:
    """{level: ids} of the <p class="ids"> lines of one behaviour (their text: "level L (k): a, b, ...")."""
    out = {}
    for p in doc.raw_ids:
        if p[0] == behaviour:
            out[p[1]] = [int(x) for x in p[2].split(": ", 1)[1].split(", ")]
    return out


class SentDoc(Doc):
    def __init__(self, text):
        self.raw_ids, self._ids = [], None
        super().__init__(text)

    def handle_starttag(self, tag, attrs):
        super().handle_starttag(tag, attrs)
        a = dict(attrs)
        if tag == "p" and "data-behaviour" in a:
            self._ids = [a["data-behaviour"], int(a["data-level"]), ""]

    def handle_endtag(self, tag):
        super().handle_endtag(tag)
        if tag == "p" and self._ids is not None:
            self.raw_ids.append(self._ids)
            self._ids = None

    def handle_data(self, data):
        super().handle_data(data)
        if self._ids is not None:
            self._ids[2] += data


def test_sent_reports_listed_with_escaped_titles(tmp_path):
    """SEED at community_level 2, by hand (test_html_report.SEED_SENT_2): >= 2.0 sends 5, 6 (level 0), 20, 21,
    22 (level 1), 77, 78 (level 2); < 2.0 sends 21, 22, 77, 78. The hostile titles are text, never markup."""
    idx = write_v3(tmp_path / "hostile", SEED, report_titles=HOSTILE)
    html = audit_html(idx, AuditOptions(level=2, costs=False))
    section = html[html.index('<section id="sent">') :]
    section = section[: section.index("</section>")]
    doc = SentDoc(section)
    v2 = {c for c, s in SEED_SENT_2.items() if s in ("both", "v2-only")}
    v1 = {c for c, s in SEED_SENT_2.items() if s in ("both", "v1-only")}
    assert _listed_ids(doc, "v2") == {0: [5, 6], 1: [20, 21, 22], 2: [77, 78]}
    assert _listed_ids(doc, "v1") == {1: [21, 22], 2: [77, 78]}
    assert {c for cs in _listed_ids(doc, "v2").values() for c in cs} == v2
    assert {c for cs in _listed_ids(doc, "v1").values() for c in cs} == v1
    rows = [r for r in doc.rows if len(r) == 3 and r[0].isdigit()]
    assert [(int(r[0]), int(r[1])) for r in rows] == [
        (5, 0),
        (6, 0),
        (20, 1),
        (21, 1),
        (22, 1),
        (77, 2),
        (78, 2),
        (21, 1),
        (22, 1),
        (77, 2),
        (78, 2),
    ]
    titles = {int(r[0]): r[2] for r in rows}
    for c in (5, 20, 21, 77, 78):
        assert titles[c] == plain(HOSTILE[c])
    assert not [t for t, _ in doc.tags if t in ("script", "img", "svg", "title")]
    assert [t for t, _ in doc.tags].count("b") == len(doc.raw_ids)  # only the renderer's "<b>level L</b>"
    assert "<script>" not in section and "<img" not in section and "<svg" not in section
    assert "<b>bold</b>" not in section and "&lt;/title&gt;&lt;b&gt;bold&lt;/b&gt;" in section
    summaries = [a for t, a in doc.tags if t == "details"]
    assert [a["data-behaviour"] for a in summaries] == ["v2", "v1"]


# ---- 100 to 20,000 communities -----------------------------------------------------------------
def test_every_community_is_drawn_or_counted_in_a_block(scaled):
    """Per level, the communities drawn one by one plus those counted in "+K" blocks are the communities of
    that level in the parquet; every level, the deepest too, has something at least AGG_MIN_W wide; what
    each level sends follows the rule (all synthetic communities have a report: >= 2.0 sends level <= 2)."""
    for target, (_idx, comm, html) in scaled.items():
        doc = Doc(html)
        rects, aggs = _drawn(doc)
        per_level = Counter(int(a["data-level"]) for a in rects)
        for a in aggs:
            per_level[int(a["data-level"])] += int(a["data-aggregate"])
        assert dict(per_level) == comm["level"].value_counts().to_dict(), target
        assert sorted(int(a["data-community"]) for a in rects) == sorted(
            set(int(a["data-community"]) for a in rects)
        )
        for a in rects + aggs:
            assert float(a["width"]) >= AGG_MIN_W - 1e-9, (target, a)
            lv = int(a["data-level"])
            assert a["data-sent"] in (("both", "v2-only") if lv <= 2 else ("neither",)), (target, a)
        deepest = int(comm["level"].max())
        assert any(int(a["data-level"]) == deepest for a in rects + aggs)
        if target == 100:
            assert not aggs or len(rects) > 0.8 * len(comm)
        else:  # the drawing is bounded: a few hundred pieces per level at most
            assert len(rects) + len(aggs) < (deepest + 1) * 1300 / MIN_W
            if target == 20000:
                assert len(rects) + len(aggs) < len(comm) / 10


def test_size_under_the_limit_at_20000_communities(scaled):
    sizes = {t: len(html.encode("utf-8")) for t, (_i, _c, html) in scaled.items()}
    counts = {t: len(c) for t, (_i, c, _h) in scaled.items()}
    for t, n in counts.items():  # the generated indexes are the sizes they are named after (within 10 %)
        assert 0.95 * t <= n <= 1.05 * t, counts
    assert counts[20000] >= 20000
    assert sizes[20000] < MAX_BYTES, sizes
    print("HTML bytes per community count:", {counts[t]: sizes[t] for t in sizes})


def test_every_sent_report_listed_at_20000(scaled):
    """All the ids >= 2.0 and < 2.0 send, from the parquet: >= 2.0 every report of level <= 2; < 2.0 (the
    frontier rule) those of level 2 and the leaves above it."""
    _idx, comm, html = scaled[20000]
    doc = SentDoc(html[html.index('<section id="sent">') :])
    has_children = set(comm.loc[comm["parent"] >= 0, "parent"])
    v2 = set(comm.loc[comm["level"] <= 2, "community"])
    v1 = {
        c for c, lv in zip(comm["community"], comm["level"]) if lv == 2 or (lv < 2 and c not in has_children)
    }
    for b, want in (("v2", v2), ("v1", v1)):
        got = _listed_ids(doc, b)
        assert sorted(c for cs in got.values() for c in cs) == sorted(want)
        assert all(
            int(lv) == level
            for level, cs in got.items()
            for lv in comm.set_index("community").loc[cs[:50], "level"]
        )


# ---- the palette -------------------------------------------------------------------------------
#: Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB
CVD = {
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
    "normal vision": np.eye(3).tolist(),
}


def _lab(hex_colour: str, matrix) -> np.ndarray:
    c = np.array([int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)]) / 255
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    lin = np.clip(np.array(matrix) @ lin, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > 0.008856, np.cbrt(f), 7.787 * f + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _delta_e(a: str, b: str, matrix) -> float:
    return float(np.linalg.norm(_lab(a, matrix) - _lab(b, matrix)))


def _palette_ok(colours: dict) -> list[str]:
    """What fails: every two sent marks at least ΔE 15 apart under each simulation, and the pair on every
    icicle (sent by both vs only by >= 2.0) at least ΔE 60 apart; the --level cut at least 15 from each."""
    bad = []
    for name, m in CVD.items():
        for (ka, a), (kb, b) in itertools.combinations(colours.items(), 2):
            if _delta_e(a, b, m) < 15:
                bad.append(f"{name}: {ka} {a} vs {kb} {b}")
        if _delta_e(colours["both"], colours["v2-only"], m) < 60:
            bad.append(f"{name}: both vs v2-only")
        for k, c in colours.items():
            if _delta_e(CUT_COLOUR, c, m) < 15:
                bad.append(f"{name}: cut vs {k}")
    return bad


def test_palette_is_okabe_ito_and_survives_colour_blindness():
    assert {SENT_COLOURS[k] for k in ("both", "v2-only", "v1-only")} | {CUT_COLOUR} <= set(OKABE_ITO.values())
    assert _palette_ok(SENT_COLOURS) == []
    # the check can fail: the palette before issue 17 (green / orange / purple) loses both vs >= 2.0 only
    old = {"both": "#74c476", "v2-only": "#fd8d3c", "v1-only": "#9e9ac8", "neither": "#d9d9d9"}
    assert "protanopia: both vs v2-only" in _palette_ok(old)


def test_rects_use_only_the_palette(scaled):
    allowed = set(SENT_COLOURS.values()) | {NO_REPORT_COLOUR}
    for _t, (_i, _c, html) in scaled.items():
        doc = Doc(html)
        rects, aggs = _drawn(doc)
        assert {a["fill"] for a in rects + aggs} <= allowed


# ---- Chromium: screenshots, the cut line's pixels, 800 px ---------------------------------------
def png_pixels(path: Path) -> np.ndarray:
    """An 8-bit RGB(A) non-interlaced PNG (what Chromium writes) as a height x width x 3 array (stdlib only)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _c, _f, interlace = head
    assert depth == 8 and ctype in (2, 6) and interlace == 0, head
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    out = np.zeros((h, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=y * (stride + 1) + 1).astype(np.int32)
        if f == 0:
            cur = line
        elif f == 2:
            cur = (line + prev) & 0xFF
        else:
            cur = np.zeros(stride, dtype=np.int32)
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if f == 1:
                    p = a
                elif f == 3:
                    p = (a + b) // 2
                else:  # Paeth
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + p) & 0xFF
        out[y] = cur
        prev = cur
    return out.reshape(h, w, bpp)[:, :, :3]


def _cut_rows(pixels: np.ndarray) -> list[int]:
    """Rows of the picture where at least half the width is exactly the cut line's colour."""
    rgb = np.array([int(CUT_COLOUR[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)
    hit = (pixels == rgb).all(axis=2).sum(axis=1)
    return [int(y) for y in np.flatnonzero(hit >= pixels.shape[1] // 2)]


def test_png_reader_finds_a_drawn_line(tmp_path):
    """The pixel check is not blind: a hand-made PNG with a line of the cut colour at row 3 (Sub filter)."""
    w, h = 20, 6
    rgb = bytes(int(CUT_COLOUR[i : i + 2], 16) for i in (1, 3, 5))
    rows = []
    for y in range(h):
        px = [rgb if (y == 3 and x < 15) else b"\xff\xff\xff" for x in range(w)]
        flat = b"".join(px)
        sub = bytes((flat[i] - (flat[i - 3] if i >= 3 else 0)) & 0xFF for i in range(len(flat)))
        rows.append(b"\x01" + sub)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )
    (tmp_path / "l.png").write_bytes(png)
    assert _cut_rows(png_pixels(tmp_path / "l.png")) == [3]


@needs_chromium
def test_screenshots_show_the_cut_line(scaled, tmp_path):
    """At 100, 2,000 and 20,000 communities: the tree section's screenshot (into docs/images with
    GRAPHRAG_AUDIT_WRITE_SCREENSHOTS=1) has a row of the cut colour where the DOM puts the line, below
    the level-2 rects; the page makes no request, logs nothing; the 2,000 page at 800 px: no page-wide
    horizontal scroll, and the wide tables scroll inside their own box."""
    write = os.environ.get("GRAPHRAG_AUDIT_WRITE_SCREENSHOTS") == "1"
    if write:
        SHOTS.mkdir(parents=True, exist_ok=True)
    geometry = (
        "(() => { const t = document.getElementById('tree').getBoundingClientRect(); "
        "const l = document.querySelector('#cut-line line').getBoundingClientRect(); "
        "const r2 = Array.from(document.querySelectorAll('#icicle rect[data-level=\"2\"]'))"
        ".map(r => r.getBoundingClientRect().bottom); "
        "return [l.top - t.top, l.bottom - t.top, Math.max(...r2) - t.top, l.width, "
        "document.querySelector('#cut-line text').textContent]; })()"
    )
    for target, (_idx, _comm, html) in scaled.items():
        page = tmp_path / f"report-{target}.html"
        page.write_text(html, encoding="utf-8")
        shot = (SHOTS if write else tmp_path) / f"report-{target}.png"
        got = load_page(
            page.as_uri(), tmp_path / f"u{target}", shot, evaluate={"geo": geometry}, clip="#tree"
        )
        assert got["requests"] == [page.as_uri()] and got["console"] == [] and got["exceptions"] == []
        top, bottom, level2_bottom, width, label = got["values"]["geo"]
        assert level2_bottom < top and width > 1000 and label.startswith("community_level 2: graphrag >= 2.0")
        pixels = png_pixels(shot)
        rows = _cut_rows(pixels)
        assert rows, f"no cut line in the {target} screenshot"
        # (a <line>'s box has no height: the stroke, 3 px wide, is centred on it)
        assert all(abs(y + 0.5 - (top + bottom) / 2) <= 2.5 for y in rows), (rows, top, bottom)
        assert shot.stat().st_size < 200_000
    page = tmp_path / "report-2000.html"
    narrow = (
        "(() => { const w = Array.from(document.querySelectorAll('div.scroll')); "
        "const wide = w.filter(d => d.scrollWidth > d.clientWidth + 1); "
        "return [document.documentElement.scrollWidth, w.length, wide.length, "
        "wide.every(d => getComputedStyle(d).overflowX === 'auto'), "
        "wide.every(d => d.querySelector('table').getBoundingClientRect().width <= d.scrollWidth + 1), "
        "document.querySelectorAll('table').length]; })()"
    )
    got = load_page(page.as_uri(), tmp_path / "u800", evaluate={"narrow": narrow}, width=800)
    page_width, boxes, wide, scrolls, whole, tables = got["values"]["narrow"]
    assert page_width <= 800 and boxes == tables and wide >= 1 and scrolls and whole

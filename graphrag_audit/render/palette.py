"""The HTML report's colours: a colour-blind-safe palette (Okabe & Ito, "Color Universal Design", 2008).

What a community_level N sends is told apart by hue that stays distinct under deuteranopia,
protanopia and tritanopia (tests/test_html_report.py simulates them); "no report" is told by a dashed
outline, not by colour alone, and the ``--level`` cut by a thick dashed line with a label.
"""

from __future__ import annotations

from graphrag_audit.results.tree import SENT_BOTH, SENT_NEITHER, SENT_V1_ONLY, SENT_V2_ONLY

#: the Okabe-Ito colours this report uses (names as in the paper)
OKABE_ITO = {
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "black": "#000000",
}
#: fill per ``sent`` mark; "not sent" is a light neutral grey (outside the hues)
SENT_COLOURS = {
    SENT_BOTH: OKABE_ITO["sky blue"],
    SENT_V2_ONLY: OKABE_ITO["orange"],
    SENT_V1_ONLY: OKABE_ITO["reddish purple"],
    SENT_NEITHER: "#DDDDDD",
}
NO_REPORT_COLOUR = "#FFFFFF"  # with a dashed outline
NO_REPORTS_TABLE_COLOUR = "#BBBBBB"  # no community_reports table at all: nothing is sent
#: the --level cut drawn on the icicle (used by nothing else, so a screenshot can find its pixels)
CUT_COLOUR = OKABE_ITO["vermillion"]
#: the depth histogram's bars
BAR_COLOUR = OKABE_ITO["blue"]

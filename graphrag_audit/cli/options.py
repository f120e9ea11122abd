"""The options the commands share, each declared once with one help text (typer ``Annotated`` aliases;
the default stays at the command: ``tokenizer: Tokenizer = DEFAULT_TOKENIZER``), and their parsers."""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from graphrag_audit.render.formats import DiffFormat, LevelsFormat, PlanFormat, TreeFormat, UpdateRunFormat


class JsonIds(str, Enum):
    full = "full"
    level = "level"


class FailOn(str, Enum):  # a severity of rules.SEVERITY_RANK, or never
    error = "error"
    warning = "warning"
    info = "info"
    never = "never"


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


#: the token encodings ``--tokenizer`` accepts
TOKENIZERS = ("cl100k_base", "o200k_base", "estimate")
DEFAULT_TOKENIZER = "cl100k_base"
DEFAULT_MAX_CONTEXT_TOKENS = 12000

_FORMAT_HELP = "Output format."


def _env(*names: str, **kwargs):
    """``typer.Option(*names)`` also read from GRAPHRAG_AUDIT_<FLAG> (--max-unreachable: ..._MAX_UNREACHABLE)."""
    return typer.Option(*names, envvar="GRAPHRAG_AUDIT_" + names[0][2:].upper().replace("-", "_"), **kwargs)


IndexDir = Annotated[
    Path,
    typer.Argument(
        metavar="DIR",
        help="Index output directory, project root (settings.yaml), or a 0.x output/<timestamp>/artifacts layout.",
    ),
]

Output = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the output to FILE, not stdout (atomically; never inside the index directory; - = stdout).",
    ),
]

Tokenizer = Annotated[
    str | None,
    _env(
        "--tokenizer",
        help="cl100k_base (exact, graphrag's default), o200k_base, or estimate (fast approximation). levels and "
        "report default to the project settings' encoding_model (1.x; 2.x: models.<chat model>.encoding_model), "
        "else cl100k_base; plan to cl100k_base.",
    ),
]

MaxContextTokens = Annotated[
    int | None,
    typer.Option(
        "--max-context-tokens",
        min=1,
        help="graphrag's global search max_context_tokens (batch size). levels and report default to the project "
        "settings' global_search.max_context_tokens (2.x/3.x) or max_tokens (1.x), else 12,000; plan to 12,000.",
    ),
]

NoCosts = Annotated[bool, typer.Option("--no-costs", help="Skip token counting and map-call batching.")]

TokenCacheDir = Annotated[
    Path | None,
    _env(
        "--token-cache",
        metavar="DIR",
        help="Keep exact token counts in DIR (created; one file) and reuse them on the next run: same output.",
    ),
]

ColorOpt = Annotated[Color, _env("--color", help="Colour in text output (NO_COLOR is honoured).")]

Width = Annotated[
    int | None,
    _env(
        "--width",
        min=40,
        help="Text output width, at least 40 (default: COLUMNS, else the terminal's width, also when piped, "
        "raised to 40 when narrower; 100 with no terminal or with -o FILE).",
    ),
]

Debug = Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")]

FailOnOpt = Annotated[
    FailOn, _env("--fail-on", help="Exit 1 when a finding of this severity or worse exists.")
]

# --format: one alias per command (the sets differ; only levels reads GRAPHRAG_AUDIT_FORMAT)
LevelsFormatOpt = Annotated[LevelsFormat, _env("--format", "-f", help=_FORMAT_HELP)]
TreeFormatOpt = Annotated[TreeFormat, typer.Option("--format", "-f", help=_FORMAT_HELP)]
PlanFormatOpt = Annotated[PlanFormat, typer.Option("--format", "-f", help=_FORMAT_HELP)]
DiffFormatOpt = Annotated[DiffFormat, typer.Option("--format", "-f", help=_FORMAT_HELP)]
UpdateRunFormatOpt = Annotated[UpdateRunFormat, typer.Option("--format", "-f", help=_FORMAT_HELP)]


# --level means the community_level in every command, but what each does with it differs (and
# tree does not read GRAPHRAG_AUDIT_LEVEL): one alias per meaning
def level_option(help: str, env: bool = True):
    return (_env if env else typer.Option)("--level", "-l", min=0, help=help)


AuditLevel = Annotated[
    int | None,
    level_option(
        "The community_level your application queries with (findings are checked there; default 2 like "
        "graphrag's CLI). --list-reports lists the reports it sends."
    ),
]
DiffLevel = Annotated[
    int | None,
    level_option(
        "The community_level your application queries with: the regressions are checked there (default 2 like "
        "graphrag's CLI); the table shows every level."
    ),
]
ReportLevel = Annotated[
    int, level_option("The community_level whose selection colours the tree (default 2 like graphrag's CLI).")
]
TreeLevel = Annotated[
    int | None,
    level_option(
        "Mark what this community_level sends: under graphrag >= 2.0 and < 2.0 (both), "
        "only >= 2.0 (v2 only), only < 2.0.",
        env=False,
    ),
]

IncludeTitles = Annotated[
    bool,
    typer.Option(
        "--include-titles",
        help="-f markdown (levels: also -f github and the step summary): also show report titles, entity names "
        "and absolute paths (hidden by default: a pasted report or a run's summary page may be public).",
    ),
]


# the finding thresholds (levels checks them; report shows the findings they decide)
def _share(flag: str, help: str):
    return _env(flag, min=0.0, max=1.0, help=help)


MaxUnreachable = Annotated[
    float,
    _share(
        "--max-unreachable",
        "depth-mismatch fires when a larger share of roots or entities cannot reach --level.",
    ),
]
MaxInflation = Annotated[
    float,
    _env(
        "--max-inflation",
        min=1.0,
        help="v2-inflation fires when graphrag >= 2.0 sends more than this many times the reports of "
        "graphrag < 2.0 at --level.",
    ),
]
MinCoverage = Annotated[
    float,
    _share(
        "--min-coverage",
        "low-coverage fires when the reports sent at --level cover a smaller share of the clustered entities.",
    ),
]
MaxLocalCoarse = Annotated[
    float,
    _share(
        "--max-local-coarse",
        "local-context-coarse fires when local search gives a larger share of the probes a finest "
        "report coarser than min(--level, their leaf's level).",
    ),
]
MaxLocalEmpty = Annotated[
    float,
    _share(
        "--max-local-empty",
        "local-context-empty fires when local search puts no report in context for a larger share "
        "of the probes (the first report does not fit its budget).",
    ),
]
TokensPerWord = Annotated[
    float,
    _env(
        "--tokens-per-word",
        min=0.1,
        max=10.0,
        help="Global search's reduce: tokens per word of a full-length map answer (graphrag >= 2.0 limits "
        "it to map_max_length words); reduce-truncation-risk fires when --level's map calls exceed the "
        "answers data_max_tokens holds. 1.33: OpenAI's 3/4 word per token for English.",
    ),
]
DEFAULT_TOKENS_PER_WORD = 1.33
DEFAULT_MAX_UNREACHABLE = 0.25
DEFAULT_MAX_LOCAL_COARSE = 0.25
DEFAULT_MAX_LOCAL_EMPTY = 0.1
DEFAULT_MAX_INFLATION = 1.2
DEFAULT_MIN_COVERAGE = 0.5

# dynamic community selection (graphrag's dynamic_search_* settings; the defaults are graphrag's)
NumRepeats = Annotated[
    int | None,
    typer.Option(
        "--num-repeats",
        min=1,
        max=10,
        help="Dynamic selection: rating calls per rated community (graphrag's dynamic_search_num_repeats; "
        "default: the project settings', else 1).",
    ),
]
Threshold = Annotated[
    int | None,
    typer.Option(
        "--threshold",
        min=0,
        help="Dynamic selection: a rating at or above this keeps a report (dynamic_search_threshold; default: the "
        "project settings', else 1). The scenarios rate every listed report at or above it and every other below.",
    ),
]
KeepParent = Annotated[
    bool | None,
    typer.Option(
        "--keep-parent/--no-keep-parent",
        help="Dynamic selection: keep a parent whose child is kept (dynamic_search_keep_parent; default: the project "
        "settings', else off).",
    ),
]
DynamicMaxLevel = Annotated[
    int | None,
    typer.Option(
        "--max-level",
        min=0,
        help="Dynamic selection: the last level the fallback rates whole when nothing was kept "
        "(dynamic_search_max_level; default: the project settings', else 2; it does not limit the descent).",
    ),
]
UseSummary = Annotated[
    bool | None,
    typer.Option(
        "--use-summary/--use-full-content",
        help="Dynamic selection: rate each report by its summary instead of its full_content "
        "(dynamic_search_use_summary; default: the project settings', else off); changes the rating calls' "
        "tokens only.",
    ),
]
Query = Annotated[
    str,
    typer.Option(
        "--query",
        metavar="TEXT",
        help="Dynamic selection: the query the rating prompts carry, for their token counts (default: none).",
    ),
]
Relevant = Annotated[
    str | None,
    typer.Option(
        "--relevant",
        metavar="IDS",
        help="Dynamic selection what-if: the community numbers rated relevant, as a comma list (3,17,42) or "
        "@FILE (numbers separated by commas or whitespace); adds what_if per graphrag line.",
    ),
]
Entities = Annotated[
    str | None,
    typer.Option(
        "--entities",
        metavar="NAMES",
        help="Local search what-if: entity titles or ids, as a comma list (A,B,C); lists per graphrag line "
        "the reports local search puts in context for them at --level and the first that did not fit.",
    ),
]


def parse_entities(value: str | None, no_costs: bool = False) -> tuple[str, ...] | None:
    """``--entities A,B``: the names (None: none); ValueError with ``--no-costs`` (local search packs
    reports by tokens)."""
    names = tuple(n.strip() for n in value.split(",") if n.strip()) if value else ()
    if names and no_costs:
        raise ValueError("--entities needs token counts: it cannot be combined with --no-costs")
    return names or None


def relevant_file(value: str | None) -> Path | None:
    """The file ``--relevant @FILE`` reads (None for a comma list or no option)."""
    return Path(value[1:]) if value is not None and value.startswith("@") else None


def parse_relevant(value: str | None) -> tuple[int, ...] | None:
    """``--relevant``: a comma list or ``@FILE`` -> sorted distinct community numbers (None: not given);
    ValueError naming the file or the bad item."""
    if value is None:
        return None
    path = relevant_file(value)
    text = value
    if path is not None:
        from graphrag_audit.errors import IndexInputError
        from graphrag_audit.io.bounded import read_text

        try:
            text = read_text(path, "--relevant list")
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the --relevant list ({exc.__class__.__name__})") from None
        except IndexInputError as exc:
            raise ValueError(str(exc)) from None
    items = text.replace(",", " ").split()
    for t in items:
        if not _INT.fullmatch(t):
            raise ValueError(f"{path or '--relevant'}: {t[:40]!r} is not a community number")
    return tuple(sorted({int(t) for t in items}))


# what int() reads, but 1_0 (Python and pydantic accept ``_`` between digits; graphrag's ids never hold one)
_INT = re.compile(r"[+-]?\d+")
_WHOLE = re.compile(r"[+-]?[0-9]+(?:\.0+)?")


def community_number(text: str) -> int | None:
    """``tree --root``: a community number read as typer reads an integer option (whitespace, a sign,
    ``5.0``) but not ``1_0``; None when it is not one."""
    t = text.strip()
    return int(t.split(".")[0]) if _WHOLE.fullmatch(t) else None


# regressions against an earlier index (levels --baseline, diff)
MaxMapCallsIncrease = Annotated[
    str,
    typer.Option(
        "--max-map-calls-increase",
        metavar="PCT",
        help="Regression: map calls at --level (graphrag >= 2.0 or < 2.0) rising by more than this share over the "
        "baseline / OLD index is a regression-map-calls error ('10%' or '10'; default 10%).",
    ),
]
MaxCoverageDrop = Annotated[
    str,
    typer.Option(
        "--max-coverage-drop",
        metavar="PCT",
        help="Regression: coverage at --level (share of the clustered entities the sent reports cover) falling by "
        "more than this many percentage points is a regression-coverage error ('0.5%' or '0.5'; default 0: any "
        "drop).",
    ),
]
IncludeHypothetical = Annotated[
    bool,
    typer.Option(
        "--include-hypothetical",
        help="Regression: also judge map calls and coverage of a behaviour no real graphrag runs on one of the two "
        "indexes (its numbers marked hyp., e.g. graphrag < 2.0 on a 2.x/3.x index, graphrag >= 2.0 on a 0.x/1.x "
        "one). By default their changes are shown, never a regression.",
    ),
]
DEFAULT_MAX_MAP_CALLS_INCREASE = "10%"
DEFAULT_MAX_COVERAGE_DROP = "0%"


def parse_percent(value: str, option: str) -> float:
    """'10%' or '10' -> 0.10; raises ValueError with a one-line message naming the option."""
    text = value.strip()
    num = text[:-1] if text.endswith("%") else text
    try:
        v = float(num)
    except ValueError:
        raise ValueError(f"{option}: {value[:40]!r} is not a percentage (e.g. 10%)") from None
    if not (v >= 0) or v == float("inf"):
        raise ValueError(f"{option}: {value[:40]!r} must be a percentage >= 0")
    return v / 100.0


def regression_limits(max_map_calls_increase: str, max_coverage_drop: str, include_hypothetical: bool):
    """--max-map-calls-increase / --max-coverage-drop / --include-hypothetical as RegressionLimits."""
    from graphrag_audit.results.diff import RegressionLimits

    return RegressionLimits(
        parse_percent(max_map_calls_increase, "--max-map-calls-increase"),
        parse_percent(max_coverage_drop, "--max-coverage-drop"),
        include_hypothetical,
    )

"""Every local file the tool reads goes through here, with its limits in one place: regular files
only (a FIFO, device, socket or directory is refused, never waited for), a size cap per kind of
input, too deeply nested JSON as an input error, and a budget for ``${VAR}`` expansion. The limits
of index tables (read by pyarrow in io/tables.py and io/decoded.py) are here too."""

from __future__ import annotations

import json
import os
import stat

from graphrag_audit.errors import IndexInputError

MiB = 1024**2
#: the largest file read whole, per kind of input
LIMITS = {
    "settings file": 4 * MiB,  # graphrag's own are a few KB
    ".env file": 4 * MiB,
    "baseline": 1024 * MiB,  # a levels -f json with every id of a multi-million-entity index
    "--relevant list": 64 * MiB,  # a community number per line, millions of them
    "token cache": 64 * MiB,  # MAX_ENTRIES x 24 bytes and a header
}
#: a parquet footer larger than this is corrupt (real ones: kilobytes; pyarrow allocates the length claimed)
MAX_FOOTER_BYTES = 64 * MiB
#: a CSV header line longer than this is not a header (e.g. a huge file with no line break)
MAX_CSV_HEADER = MiB
#: a parquet table claiming more rows is refused unread (run-length encoding lets a few MB claim billions)
MAX_TABLE_ROWS = 20_000_000
#: a table may always decode to DECODED_FLOOR bytes, and to DECODED_RATIO x its file size (real index
#: tables: 0.01-2.7; a dictionary bomb: 10^6), never to more than DECODED_CAP; DECODED_ENV overrides it
DECODED_FLOOR = 256 * MiB
DECODED_RATIO = 100
DECODED_CAP = 16 * 1024 * MiB
DECODED_ENV = "GRAPHRAG_AUDIT_MAX_DECODED_BYTES"
#: characters one settings file or ``.env`` may expand to, all ``${VAR}`` substituted
MAX_EXPANDED_CHARS = 16 * MiB
#: ``.env`` values built from values built from ... at most this deep
MAX_INTERPOLATION_DEPTH = 32

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
#: what a file that is not regular is, by its stat.S_IFMT
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _size(n: int) -> str:
    return f"{n / MiB:,.0f} MiB" if n >= MiB else f"{n:,} bytes"


def _refuse(path, what: str | None, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise IndexInputError(
            path, f"{f'the {what} ' if what else ''}is {kind}, not a regular file: not read"
        )


def open_regular(path, what: str | None = None):
    """``open(path, "rb")`` of a regular file (``what`` it is, for the message), never blocking: anything
    else is refused from ``stat``, then from the descriptor opened with ``O_NONBLOCK`` (a FIFO swapped in
    meanwhile). OSError (missing, permission) propagates."""
    _refuse(path, what, os.stat(path).st_mode)
    fd = os.open(path, _FLAGS)
    try:
        _refuse(path, what, os.fstat(fd).st_mode)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bytes(path, what: str) -> bytes:
    """The whole regular file ``path``, at most ``LIMITS[what]`` bytes; anything else is an
    :class:`IndexInputError` naming the file. OSError (missing, permission) propagates."""
    limit = LIMITS[what]
    with open_regular(path, what) as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > limit:
            raise IndexInputError(
                path, f"the {what} is {_size(size)}, more than the {_size(limit)} limit: not read"
            )
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew while read
        raise IndexInputError(path, f"the {what} is more than the {_size(limit)} limit: not read")
    return data


def read_text(path, what: str) -> str:
    """:func:`read_bytes` decoded as strict UTF-8."""
    data = read_bytes(path, what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexInputError(
            path, f"the {what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def loads_json(path, what: str, text: str | bytes):
    """``json.loads`` with the problems as an :class:`IndexInputError` naming ``path``."""
    try:
        return json.loads(text)
    except RecursionError:
        raise IndexInputError(path, f"the {what} is not usable JSON (nested too deeply)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise IndexInputError(path, f"the {what} is not JSON ({exc.__class__.__name__})") from None


class ExpansionBudget:
    """The characters ``${VAR}`` substitution may still produce for one file: a few hundred bytes
    of nested ``${}`` cannot grow into gigabytes."""

    def __init__(self, path, what: str, limit: int = MAX_EXPANDED_CHARS):
        self.path, self.what, self.left, self.limit = path, what, limit, limit

    def take(self, text: str) -> str:
        self.left -= len(text)
        if self.left < 0:
            raise IndexInputError(
                self.path,
                f"the {self.what} expands its ${{VAR}} references to more than "
                f"{self.limit:,} characters: not read",
            )
        return text


def read_dotenv(path, environ, unparsed: list[int] | None = None) -> dict[str, str | None]:
    """A ``.env`` file as graphrag >= 2.0 loads it (python-dotenv ``load_dotenv``: interpolate=True,
    override=False, so a variable of ``environ`` wins in ``${VAR}``), its size, the depth of its
    interpolation and the size of the values capped; the lines python-dotenv skips (it cannot parse
    them) are added to ``unparsed``. Missing: FileNotFoundError."""
    import io
    from collections import ChainMap

    from dotenv.parser import parse_stream
    from dotenv.variables import parse_variables

    text = read_text(path, ".env file")
    budget = ExpansionBudget(path, ".env file")
    values: dict[str, str | None] = {}
    env = ChainMap(environ, values)  # override=False: the environment wins
    depth: dict[str, int] = {}
    # dotenv.main.resolve_variables (python-dotenv 1.x), with the caps; newline=None: the text
    # mode python-dotenv opens the file in (universal newlines)
    for binding in parse_stream(io.StringIO(text, newline=None)):
        name, value = binding.key, binding.value
        if binding.error and unparsed is not None:
            unparsed.append(binding.original.line)
        if name is None:
            continue
        if value is None:
            values[name] = None
            continue
        parts, deep = [], 0
        for atom in parse_variables(value):
            ref = getattr(atom, "name", None)
            if ref is not None and ref not in environ and values.get(ref) is not None:
                deep = max(deep, depth[ref] + 1)
            parts.append(budget.take(atom.resolve(env)))
        if deep > MAX_INTERPOLATION_DEPTH:
            raise IndexInputError(
                path,
                f"${{...}} in the .env file nests more than {MAX_INTERPOLATION_DEPTH} "
                f"levels deep (at {name}): not read",
            )
        values[name], depth[name] = "".join(parts), deep
    return values

"""Indexes in Azure Blob Storage and S3, read in place.

A remote location is an ``az://container/path``, ``abfs[s]://container/path`` or
``s3[a]://bucket/path`` argument, or a project root whose settings name blob output
(``type: blob`` with ``connection_string`` or ``storage_account_blob_url``/``account_url``,
``container_name``, ``base_dir``: graphrag's ``BlobPipelineStorage`` / ``AzureBlobStorage``).

How it is read: an fsspec filesystem (adlfs for Azure, s3fs for S3, the optional extras
``azure`` / ``s3`` of pyproject.toml) lists the folder once; of each table the audit needs
(:data:`graphrag_audit.io.locate.TABLE_STEMS`) the last 64 KiB (the parquet footer) is fetched,
then the byte ranges of the column chunks of the columns the audit reads (:data:`NEEDED`), in
parallel, one range request each (:class:`_Ranges`); no larger file is downloaded whole (a file of
at most 256 KiB is fetched in one request, which costs less; a CSV table has no column chunks and
is fetched whole). Those columns are kept in a private temporary folder (deleted at exit), where
every other column of the file's schema is an all-null column of the same type, so the
schema-based generation detection and checks see the file's real schema; the ordinary local
reader then audits that folder. The header names the remote location (never a credential).

Credentials are taken as graphrag and the SDKs take them: a connection string (settings or
``AZURE_STORAGE_CONNECTION_STRING``), an account URL with ``DefaultAzureCredential``, AWS's
environment variables / profile / ``AWS_ENDPOINT_URL``. They are never printed: every error
message is scrubbed of them.

Timeouts (seconds, environment): ``GRAPHRAG_AUDIT_REMOTE_TIMEOUT`` (default 20) bounds each try
of each connection and read request, and a request is tried :data:`TRIES` times in all (the SDKs'
retries: S3 botocore's, s3fs's loop once; Azure one retry after 0.3 s), so a server that never
answers is given up after about twice that, and the message says how long it ran;
``GRAPHRAG_AUDIT_REMOTE_DEADLINE`` (default 600) bounds the whole remote read. Past either: a
one-line error, exit 2.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from graphrag_audit.errors import IndexInputError
from graphrag_audit.sanitise.secrets import remember
from graphrag_audit.sanitise.secrets import scrub as scrub_secrets

#: the columns read of each table (load.py's lists, plus what the optional reads use)
NEEDED: dict[str, tuple[str, ...]] = {
    "communities": (
        "community",
        "id",
        "human_readable_id",
        "level",
        "parent",
        "children",
        "title",
        "period",
        "size",
        "entity_ids",
    ),
    "reports": ("community", "level", "title", "rank", "full_content", "summary"),
    "nodes": ("id", "title", "community", "level"),
    "entities": ("id", "title", "name", "text_unit_ids"),
}
#: the packages each extra installs (pyproject.toml), named in the missing-extra hint
EXTRA_PACKAGES = {"azure": "adlfs azure-identity", "s3": "s3fs"}
#: URL scheme -> (fsspec protocol, storage name, extra)
SCHEMES = {
    "az": ("az", "Azure Blob Storage", "azure"),
    "abfs": ("abfs", "Azure Blob Storage", "azure"),
    "abfss": ("abfs", "Azure Blob Storage", "azure"),
    "s3": ("s3", "Amazon S3", "s3"),
    "s3a": ("s3", "Amazon S3", "s3"),
}
_EXTRA_MODULE = {"azure": "adlfs", "s3": "s3fs"}
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*):/{1,2}(?P<rest>.*)$", re.S)


def _seconds(name: str, default: float) -> float:
    try:
        v = float(os.environ.get(name, default))
    except ValueError:
        return default
    return v if v > 0 else default


#: how many times one request is tried (the SDKs' retries) before a read fails: a server that never
#: answers is given up after TRIES * GRAPHRAG_AUDIT_REMOTE_TIMEOUT, plus a short backoff
TRIES = 2


def request_timeout() -> float:
    return _seconds("GRAPHRAG_AUDIT_REMOTE_TIMEOUT", 20.0)


def read_deadline() -> float:
    return _seconds("GRAPHRAG_AUDIT_REMOTE_DEADLINE", 600.0)


@dataclass(frozen=True)
class RemoteLocation:
    """Where a remote index is: ``protocol`` + ``root`` (``container/path``), how to connect."""

    protocol: str  # "az", "abfs" or "s3"
    root: str  # "container/path" (no scheme, no trailing slash)
    display: str  # shown in headers and errors: never a credential
    kind: str  # "Azure Blob Storage" / "Amazon S3"
    extra: str  # "azure" / "s3"
    options: dict = field(default_factory=dict, repr=False, compare=False)  # secret-bearing
    secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)
    settings_file: Path | None = None


class RemoteName(str):
    """A remote location where the model keeps a path: ``str()`` is the URL, ``.name`` its last part."""

    @property
    def name(self) -> str:
        return self.rstrip("/").rsplit("/", 1)[-1]

    def __truediv__(self, other) -> RemoteName:
        return RemoteName(self.rstrip("/") + "/" + str(other))


def parse_url(text: str) -> RemoteLocation | None:
    """The remote location of an ``az://``, ``abfs[s]://`` or ``s3[a]://`` argument (also after
    ``pathlib`` folded ``//`` into ``/``), else None. Credentials come from the environment."""
    m = _URL.match(text)
    if not m or m.group("scheme").lower() not in SCHEMES:
        return None
    scheme = m.group("scheme").lower()
    protocol, kind, extra = SCHEMES[scheme]
    rest = m.group("rest").strip("/")
    display = scrub_secrets(f"{scheme}://{m.group('rest')}".rstrip("/"))
    head = rest.split("/", 1)[0]
    if "@" in head and (protocol != "abfs" or ":" in head.split("@", 1)[0]):
        where = (
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            if extra == "s3"
            else "AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_SAS_TOKEN"
        )
        raise IndexInputError(
            display,
            f"credentials in the URL are not read (and never shown): remove them from "
            f"the URL and set {where} in the environment",
        )
    if "?" in rest or "#" in rest:
        where = (
            "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            if extra == "s3"
            else "AZURE_STORAGE_SAS_TOKEN with AZURE_STORAGE_ACCOUNT_NAME, or AZURE_STORAGE_CONNECTION_STRING"
        )
        raise IndexInputError(
            display,
            f"a query in the URL (a SAS token or signature) is not read (and never "
            f"shown): give the {'bucket' if extra == 's3' else 'container'} and folder "
            f"only, and set {where} in the environment",
        )
    options: dict = {}
    if (
        protocol == "abfs" and "@" in rest.split("/", 1)[0]
    ):  # abfs[s]://container@account.dfs.core.windows.net/path
        head, _, tail = rest.partition("/")
        container, _, host = head.partition("@")
        options["account_name"] = host.split(".", 1)[0]
        rest = f"{container}/{tail}".strip("/")
    if not rest:
        raise IndexInputError(text, f"no {'bucket' if extra == 's3' else 'container'} in the URL")
    return RemoteLocation(protocol, rest, display, kind, extra, options)


def from_blob_setting(settings_file: Path, key: str, values: dict) -> RemoteLocation:
    """The location graphrag's blob storage settings name (``values``: the section, variables
    expanded): ``container_name`` + ``base_dir`` in the account of ``connection_string`` or of
    ``storage_account_blob_url`` / ``account_url`` (then DefaultAzureCredential, as graphrag)."""
    container = values.get("container_name")
    if not isinstance(container, str) or not container.strip():
        raise IndexInputError(settings_file, f"{key}.type is blob but {key}.container_name is not set")
    base = values.get("base_dir") or ""
    base = base if isinstance(base, str) else ""
    root = "/".join(p for p in (container.strip("/"), base.strip("/")) if p)
    conn = values.get("connection_string")
    url = values.get("storage_account_blob_url") or values.get("account_url")
    options: dict = {}
    secrets: list[str] = []
    if isinstance(conn, str) and conn.strip():
        options["connection_string"] = conn
        secrets.append(conn)
        parts = dict(p.split("=", 1) for p in conn.split(";") if "=" in p)
        secrets += [v for k, v in parts.items() if k.lower() in ("accountkey", "sharedaccesssignature") and v]
        remember(*secrets)
        account = parts.get("AccountName") or ""
    elif isinstance(url, str) and url.strip():
        host = urlparse(url).netloc or url
        account = host.split(".", 1)[0]
        options["account_name"] = account
        if host and not host.startswith(account + ".blob."):
            options["account_host"] = host
        options["anon"] = False  # DefaultAzureCredential
    else:
        raise IndexInputError(
            settings_file,
            f"{key}.type is blob but neither {key}.connection_string nor "
            f"{key}.storage_account_blob_url is set",
        )
    where = f" (account {account})" if account else ""
    display = scrub_secrets(f"az://{root}{where} ({settings_file.name} {key})")
    return RemoteLocation(
        "az", root, display, "Azure Blob Storage", "azure", options, tuple(secrets), settings_file
    )


# ---- credentials never shown -----------------------------------------------------------------------
def scrub(text: str, loc: RemoteLocation | None = None) -> str:
    """``text`` with every credential of ``loc`` and of the environment, and anything shaped like
    a key, signature or token, replaced by ``***`` (the one scrubber:
    :func:`graphrag_audit.sanitise.secrets.scrub`)."""
    return scrub_secrets(text, loc.secrets if loc is not None else ())


# ---- the filesystem ---------------------------------------------------------------------------------
#: the SDKs' loggers: silenced (no handler would print their warnings on stderr, breaking the one-line
#: error, from threads that may still run at exit)
_QUIET_LOGGERS = (
    "azure",
    "adlfs",
    "s3fs",
    "fsspec",
    "botocore",
    "aiobotocore",
    "urllib3",
    "aiohttp",
    "asyncio",
)


def _quiet_sdk_logs() -> None:
    import logging

    for name in _QUIET_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
            log.addHandler(logging.NullHandler())
        log.propagate = False


def filesystem(loc: RemoteLocation):
    """The fsspec filesystem of ``loc`` (timeouts bounded); a missing extra is an input error."""
    module = _EXTRA_MODULE[loc.extra]
    _quiet_sdk_logs()
    try:
        __import__(module)
    except ImportError:
        raise IndexInputError(
            loc.display,
            f"reading {loc.kind} needs the optional {module} package: "
            f'python -m pip install {EXTRA_PACKAGES[loc.extra]} (or ".[{loc.extra}]" '
            "from graphrag-audit's checkout)",
        ) from None
    t = request_timeout()
    if loc.extra == "s3":
        import s3fs

        fs = s3fs.S3FileSystem(
            skip_instance_cache=True,
            use_listings_cache=False,
            **loc.options,
            config_kwargs={
                "connect_timeout": t,
                "read_timeout": t,
                "retries": {"total_max_attempts": TRIES, "mode": "standard"},
            },
        )
        # s3fs's own retry loop around botocore's (default 5, with backoff): one pass, so that a request
        # is tried TRIES times in all (botocore's; its "max_attempts" counts retries: 2 meant 3 tries,
        # and s3fs's 2 passes made 6, ~7 timeouts of silence before the error)
        fs.retries = 1
        return fs
    import adlfs

    opts = dict(loc.options)
    if "connection_string" not in opts and "account_name" not in opts:
        conn = os.environ.get("AZURE_STORAGE_CONNECTION_STRING")
        if conn:
            opts["connection_string"] = conn
        elif os.environ.get("AZURE_STORAGE_ACCOUNT_NAME"):
            opts["account_name"] = os.environ["AZURE_STORAGE_ACCOUNT_NAME"]
    fs = adlfs.AzureBlobFileSystem(
        skip_instance_cache=True,
        timeout=max(1, round(t)),
        connection_timeout=max(1, round(t)),
        read_timeout=max(1, round(t)),
        **opts,
    )
    _bound_azure_retries(fs, t)
    return fs


def _bound_azure_retries(fs, t: float) -> None:
    """adlfs passes no retry settings to the SDK, whose storage default (ExponentialRetry: 3 retries
    after 15, 18 and 24 s, each +-3 s) outlasts any deadline: the same client trying a request
    TRIES times in all, the retry after 0.3 s (+-0.1)."""
    from azure.storage.blob.aio import BlobServiceClient

    kw = {
        "retry_total": TRIES - 1,
        "initial_backoff": 0.3,
        "increment_base": 2,
        "random_jitter_range": 0.1,
        "connection_timeout": t,
        "read_timeout": t,
    }
    conn = getattr(fs, "connection_string", None)
    if conn:
        fs.service_client = BlobServiceClient.from_connection_string(conn, **kw)
    elif isinstance(getattr(fs, "service_client", None), BlobServiceClient) and getattr(
        fs, "credential", None
    ):
        fs.service_client = BlobServiceClient(account_url=fs.account_url, credential=fs.credential, **kw)


# ---- reading ----------------------------------------------------------------------------------------
@dataclass
class Transfer:
    """What one remote read fetched (the benchmark reports it)."""

    files: dict = field(default_factory=dict)  # remote name -> (file size, bytes fetched over the network)
    seconds: float = 0.0  # wall time of the remote read
    subfolder: str = ""  # where below the location the tables were: "" or "output"

    @property
    def bytes_read(self) -> int:
        return sum(r for _, r in self.files.values())

    @property
    def file_bytes(self) -> int:
        return sum(s for s, _ in self.files.values())


#: the transfer of the last remote read in this process (benchmarks/remote_read.py reads it)
last_transfer: Transfer | None = None


#: a table file at most this large is fetched whole, in one request
WHOLE_FILE_BYTES = 256 << 10
#: the tail fetched first (the footer of any index table fits); ranges closer than this are merged
TAIL_BYTES = 64 << 10
GAP_BYTES = 64 << 10


class _Ranges:
    """A read-only file over the byte ranges of one remote file fetched so far: :meth:`prefetch`
    fetches ranges (in parallel, one request each); a read outside them fetches what it needs.
    ``fetched`` counts the bytes that came over the network."""

    def __init__(self, fs, path: str, size: int):
        self.fs, self.path, self.size_, self.pos = fs, path, size, 0
        self.parts: list[tuple[int, bytes]] = []
        self.fetched = 0
        self.closed = False
        tail = max(0, size - TAIL_BYTES)
        self._add(tail, fs.cat_file(path, start=tail, end=size))

    def _add(self, start: int, data: bytes) -> None:
        self.fetched += len(data)
        self.parts.append((start, data))

    def prefetch(self, ranges: list[tuple[int, int]]) -> None:
        ranges = sorted((max(0, a), min(self.size_, b)) for a, b in ranges if b > a)
        merged: list[list[int]] = []
        for a, b in ranges:
            if merged and a - merged[-1][1] <= GAP_BYTES:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        merged = [(a, b) for a, b in merged if not self._has(a, b)]
        if not merged:
            return
        blobs = self.fs.cat_ranges([self.path] * len(merged), [a for a, _ in merged], [b for _, b in merged])
        for (a, _), blob in zip(merged, blobs):
            if isinstance(blob, BaseException):
                raise blob
            self._add(a, blob)

    def _has(self, a: int, b: int) -> bytes | None:
        for start, data in self.parts:
            if start <= a and b <= start + len(data):
                return data[a - start : b - start]
        return None

    def read(self, n: int = -1) -> bytes:
        end = self.size_ if n is None or n < 0 else min(self.size_, self.pos + n)
        if end <= self.pos:
            return b""
        data = self._has(self.pos, end)
        if data is None:
            data = self.fs.cat_file(self.path, start=self.pos, end=end)
            self._add(self.pos, data)
        self.pos += len(data)
        return data

    def seek(self, pos: int, whence: int = 0) -> int:
        self.pos = pos if whence == 0 else self.pos + pos if whence == 1 else self.size_ + pos
        return self.pos

    def tell(self) -> int:
        return self.pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True
        self.parts = []


def _chunk_ranges(meta, cols: list[str]) -> list[tuple[int, int]]:
    """The byte ranges of the column chunks of ``cols`` (top-level names) in every row group."""
    wanted = set(cols)
    out = []
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            cc = rg.column(c)
            if cc.path_in_schema.split(".", 1)[0] not in wanted:
                continue
            start = cc.data_page_offset
            if cc.has_dictionary_page and cc.dictionary_page_offset is not None:
                start = min(start, cc.dictionary_page_offset)
            out.append((start, start + cc.total_compressed_size))
    return out


#: where progress goes: a callable taking the step's text (the CLI's progress bar registers one);
#: None: a line on stderr when it is a terminal (never when piped, nor on TERM=dumb)
progress_reporter = None


def set_progress(reporter) -> None:
    global progress_reporter
    progress_reporter = reporter


def _progress(text: str, done: bool = False) -> None:
    if progress_reporter is not None:
        if not done:
            progress_reporter(text)
        return
    try:
        if not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
            return
        sys.stderr.write("\r\x1b[2K" + ("" if done else text[:200]))
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr closed or full: progress is optional
        pass


def _choose(names: set[str]) -> list[tuple[str, str]]:
    """(logical table, file name) to read: per table the newest naming, parquet before CSV, and the
    other format's copy of that naming when present (as locate compares them)."""
    from graphrag_audit.io.locate import EXTENSIONS, TABLE_STEMS

    out = []
    for table, stems in TABLE_STEMS.items():
        stem = next((s for s in stems if any(s + e in names for e in EXTENSIONS)), None)
        if stem is not None:
            out += [(table, stem + e) for e in EXTENSIONS if stem + e in names]
    return out


def _list(fs, path: str) -> dict[str, int]:
    try:
        entries = fs.ls(path, detail=True)
    except FileNotFoundError as exc:
        if any(s in str(exc).lower() for s in ("timeout", "timed out")):
            raise  # s3fs's name for a listing that got no answer: not an absent folder (nor a second try)
        return {}
    return {
        e["name"].rstrip("/").rsplit("/", 1)[-1]: int(e.get("size") or 0)
        for e in entries
        if e.get("type") == "file"
    }


def _null_filled(table, schema):
    """``table`` (the projected columns) with every other column of ``schema`` as nulls."""
    import pyarrow as pa

    cols = []
    for f in schema:
        if f.name in table.column_names:
            cols.append(table.column(f.name))
        else:
            try:
                cols.append(pa.nulls(table.num_rows, f.type))
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
                cols.append(pa.nulls(table.num_rows, pa.null()))
    return pa.Table.from_arrays(cols, names=schema.names)


def _read_needed(shown: str, fh, table: str, loc: RemoteLocation):
    """(the file's arrow schema, its needed columns) with the local reader's guards: the row cap,
    duplicate names, and the decoded-size limit (io/decoded.py) checked on the footer before any
    column is read and again batch by batch."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphrag_audit.io.decoded import BatchBudget, check_parquet
    from graphrag_audit.io.tables import MAX_TABLE_ROWS, _read_parquet

    try:
        nf = fh if isinstance(fh, pa.NativeFile) else pa.PythonFile(fh, mode="r")
        meta = pq.read_metadata(nf)
        schema = meta.schema.to_arrow_schema()
        if meta.num_rows > MAX_TABLE_ROWS:
            raise IndexInputError(
                shown,
                f"the table claims {meta.num_rows:,} rows, more than the "
                f"{MAX_TABLE_ROWS:,} of any index table (refused unread)",
            )
        names = schema.names
        twice = sorted({n for n in names if names.count(n) > 1})
        cols = [c for c in NEEDED[table] if c in names and c not in twice]
        # the needed column chunks, fetched in parallel (at most the file's size, as a local read
        # maps it); then the local reader's decompression and dictionary bomb checks on them
        if isinstance(fh, _Ranges):
            fh.prefetch(_chunk_ranges(meta, cols))
        found = check_parquet(Path(shown), nf, meta, cols, nf.size())
        nf.seek(0)
        data = _read_parquet(nf, cols, BatchBudget(Path(shown), found), meta)
    except IndexInputError as exc:
        raise IndexInputError(shown, exc.problem) from None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:  # not I/O errors
        raise IndexInputError(shown, f"unreadable parquet data ({scrub(str(exc), loc)[:200]})") from None
    return schema, data


def _stage(loc: RemoteLocation, fs, target: Path, transfer: Transfer) -> None:
    import pyarrow.parquet as pq

    root = loc.root
    names = _list(fs, root)
    if not _choose(set(names)):
        sub = _list(fs, root + "/output")
        if _choose(set(sub)):
            root, names = root + "/output", sub
            transfer.subfolder = "output"
        else:
            if not names and not fs.exists(root):
                raise IndexInputError(loc.display, "no such container or folder")
            raise IndexInputError(
                loc.display,
                "no GraphRAG index tables found (looked for communities, "
                "community_reports, create_final_* parquet/csv here and in output/)",
            )
    chosen = _choose(set(names))
    shown = loc.display.split(" ", 1)[0] + (f"/{transfer.subfolder}" if transfer.subfolder else "")
    for i, (table, name) in enumerate(chosen, 1):
        remote = f"{root}/{name}"
        _progress(f"reading {shown}: {name} ({i}/{len(chosen)})")
        size = names[name]
        if name.endswith(".csv"):
            fs.get_file(remote, str(target / name))
            transfer.files[name] = (size, size)
            continue
        if size <= WHOLE_FILE_BYTES:  # one request: cheaper than a footer read and column ranges
            import pyarrow as pa

            blob = fs.cat_file(remote)
            schema, data = _read_needed(shown + "/" + name, pa.BufferReader(blob), table, loc)
            transfer.files[name] = (size, len(blob))
        else:
            ranges = _Ranges(fs, remote, size)
            schema, data = _read_needed(shown + "/" + name, ranges, table, loc)
            transfer.files[name] = (size, ranges.fetched)
        out = _null_filled(data, schema).replace_schema_metadata(schema.metadata)
        pq.write_table(out, target / name)
    _progress("", done=True)


def _problem(exc: BaseException, loc: RemoteLocation, elapsed: float | None = None) -> str:
    """A one-line, credential-free description of a remote failure (``elapsed``: the seconds the
    read ran, stated with a timeout)."""
    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    low = f"{name} {exc}".lower()
    if isinstance(exc, PermissionError) or any(
        s in low
        for s in (
            "authenticat",
            "authoriz",
            "forbidden",
            "invalidaccesskeyid",
            "signaturedoesnotmatch",
            "accessdenied",
            "403",
            "credential",
        )
    ):
        why = "access denied: check the credentials"
    elif any(s in low for s in ("timeout", "timed out")):  # before "not found": s3fs reports a listing
        # that timed out as FileNotFoundError("... ReadTimeoutError ...")
        t = request_timeout()
        ran = f"; gave up after {elapsed:.1f} s" if elapsed is not None else ""
        why = (
            f"the server did not answer: {TRIES} tries of a request got no reply within {t:g} s each "
            f"(GRAPHRAG_AUDIT_REMOTE_TIMEOUT){ran}"
        )
    elif isinstance(exc, FileNotFoundError) or any(
        s in low for s in ("containernotfound", "nosuchbucket", "resourcenotfound", "notfound", "404")
    ):
        why = "not found (no such container, bucket or file)"
    elif any(
        s in low
        for s in (
            "connect",
            "connection",
            "refused",
            "reset",
            "closed",
            "eof",
            "incomplete",
            "broken pipe",
            "servicerequest",
            "serviceresponse",
            "payload is not completed",
            "not enough data",
            "clientpayloaderror",
        )
    ):
        why = "the connection failed or was dropped"
    else:
        why = "cannot read it"
    detail = scrub(f"{name}: {text}" if text else name, loc)
    if len(detail) > 200:
        detail = detail[:199] + "…"
    return f"{why} ({detail})"


def _exit_without_finalising(target: Path) -> None:
    """A read past its deadline leaves threads blocked inside the SDKs; Python's finalisation then
    aborts (SIGABRT) on them. So the process ends at exit with ``os._exit`` (streams flushed, the
    temporary folder removed) and exit status 2, the CLI's status for this error."""
    import atexit

    def leave():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        shutil.rmtree(target, True)
        os._exit(2)

    atexit.register(leave)


def stage(loc: RemoteLocation) -> tuple[Path, Transfer]:
    """Read the tables of ``loc`` (needed columns only) into a private temporary folder, within
    the deadline. Every failure is an :class:`IndexInputError` naming the location."""
    global last_transfer
    start = time.monotonic()  # the remote read's one clock: the SDKs' start-up counts
    try:
        fs = filesystem(loc)
    except IndexInputError:
        raise
    except Exception as exc:  # noqa: BLE001 (the SDKs' constructors: no credentials, a bad connection string)
        hint = ""
        if loc.extra == "azure" and "credential" in str(exc).lower() + type(exc).__name__.lower():
            hint = (
                "no credentials: set AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with a "
                "credential DefaultAzureCredential finds; "
            )
        raise IndexInputError(loc.display, hint + _problem(exc, loc, time.monotonic() - start)) from None
    target = Path(tempfile.mkdtemp(prefix="graphrag-audit-remote-"))
    atexit.register(shutil.rmtree, target, True)
    transfer = Transfer()
    box: dict = {}

    def work():
        try:
            _stage(loc, fs, target, transfer)
        except BaseException as exc:  # noqa: BLE001 (handed to the caller)
            box["error"] = exc

    worker = threading.Thread(target=work, name="graphrag-audit-remote", daemon=True)
    worker.start()
    worker.join(max(0.0, read_deadline() - (time.monotonic() - start)))
    if worker.is_alive():
        _progress("", done=True)
        _exit_without_finalising(target)
        raise IndexInputError(
            loc.display,
            f"reading {loc.kind} did not finish within {read_deadline():g} s "
            f"(GRAPHRAG_AUDIT_REMOTE_DEADLINE)",
        )
    exc = box.get("error")
    if isinstance(exc, IndexInputError):
        _progress("", done=True)
        raise IndexInputError(scrub(exc.path, loc), scrub(exc.problem, loc)) from None
    if exc is not None:
        _progress("", done=True)
        raise IndexInputError(loc.display, _problem(exc, loc, time.monotonic() - start)) from None
    transfer.seconds = time.monotonic() - start
    last_transfer = transfer
    return target, transfer


def location_of(path) -> RemoteLocation | None:
    """The remote location ``path`` names: a remote URL, or a local project root whose settings
    put the output in blob storage; None for a local index."""
    text = os.fspath(path) if not isinstance(path, str) else path
    loc = parse_url(text)
    if loc is not None:
        return loc
    p = Path(path)
    try:
        if not p.is_dir():
            return None
    except OSError:
        return None
    from graphrag_audit.io.settings import find_settings, read_output_setting

    settings = find_settings(p)
    if settings is None:
        return None
    setting = read_output_setting(settings)
    if setting.blob is None:
        return None
    if setting.blob.get("type") == "url":
        loc = parse_url(setting.blob["base_dir"])
        if loc is None:
            return None
        return RemoteLocation(
            loc.protocol,
            loc.root,
            f"{loc.display} ({settings.name} {setting.key})",
            loc.kind,
            loc.extra,
            loc.options,
            loc.secrets,
            settings,
        )
    return from_blob_setting(settings, setting.key or "output", setting.blob)

"""Indexes in Azure Blob Storage and S3 (an ``az://``, ``abfs[s]://`` or ``s3[a]://`` argument, or
settings with ``type: blob``), read in place: an fsspec filesystem (adlfs, s3fs) lists the folder
once and pyarrow fetches each table's footer and the column chunks it reads. Credentials are taken
as graphrag and the SDKs take them and scrubbed from every error; ``GRAPHRAG_AUDIT_REMOTE_TIMEOUT``
(seconds, default 20) bounds each of the :data:`TRIES` tries of a request; every fault is a one-line
error naming the location, exit 2.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from graphrag_audit.errors import IndexInputError
from graphrag_audit.sanitise.secrets import remember
from graphrag_audit.sanitise.secrets import scrub as scrub_secrets

#: extra -> (the module it needs, the packages it installs: pyproject.toml), for the missing-extra hint
EXTRAS = {"azure": ("adlfs", "adlfs azure-identity"), "s3": ("s3fs", "s3fs")}
#: URL scheme -> (fsspec protocol, storage name, extra)
SCHEMES = {
    "az": ("az", "Azure Blob Storage", "azure"),
    "abfs": ("abfs", "Azure Blob Storage", "azure"),
    "abfss": ("abfs", "Azure Blob Storage", "azure"),
    "s3": ("s3", "Amazon S3", "s3"),
    "s3a": ("s3", "Amazon S3", "s3"),
}

#: how many times one request is tried (the SDKs' retries) before a read fails: a server that never
#: answers is given up after TRIES * GRAPHRAG_AUDIT_REMOTE_TIMEOUT, plus a short backoff
TRIES = 2


def request_timeout() -> float:
    """``GRAPHRAG_AUDIT_REMOTE_TIMEOUT`` (seconds), 20 when unset or not a positive number."""
    try:
        seconds = float(os.environ.get("GRAPHRAG_AUDIT_REMOTE_TIMEOUT", 20.0))
    except ValueError:
        seconds = 0
    return seconds if seconds > 0 else 20.0


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
    from graphrag_audit.io.settings import remote_url

    url = remote_url(text)
    if url is None or url[0] not in SCHEMES:
        return None
    scheme, written = url[0], url[1].split("://", 1)[1]
    protocol, kind, extra = SCHEMES[scheme]
    rest = written.strip("/")
    display = scrub_secrets(f"{scheme}://{written}".rstrip("/"))
    head = rest.split("/", 1)[0]
    bucket = "bucket" if extra == "s3" else "container"
    aws = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
    if "@" in head and (protocol != "abfs" or ":" in head.split("@", 1)[0]):
        az = "AZURE_STORAGE_CONNECTION_STRING, or AZURE_STORAGE_ACCOUNT_NAME with AZURE_STORAGE_SAS_TOKEN"
        raise IndexInputError(
            display,
            f"credentials in the URL are not read (and never shown): remove them from "
            f"the URL and set {aws if extra == 's3' else az} in the environment",
        )
    if "?" in rest or "#" in rest:
        az = "AZURE_STORAGE_SAS_TOKEN with AZURE_STORAGE_ACCOUNT_NAME, or AZURE_STORAGE_CONNECTION_STRING"
        raise IndexInputError(
            display,
            f"a query in the URL (a SAS token or signature) is not read (and never shown): give the "
            f"{bucket} and folder only, and set {aws if extra == 's3' else az} in the environment",
        )
    options: dict = {}
    if protocol == "abfs" and "@" in head:  # abfs[s]://container@account.dfs.../path
        head, _, tail = rest.partition("/")
        container, _, host = head.partition("@")
        options["account_name"] = host.split(".", 1)[0]
        rest = f"{container}/{tail}".strip("/")
    if not rest:
        raise IndexInputError(text, f"no {bucket} in the URL")
    return RemoteLocation(protocol, rest, display, kind, extra, options)


def from_blob_setting(settings_file: Path, key: str, values: dict) -> RemoteLocation:
    """The location graphrag's blob storage settings name (``values``: the section, variables
    expanded): ``container_name`` + ``base_dir`` in the account of ``connection_string`` or of
    ``storage_account_blob_url`` / ``account_url`` (then DefaultAzureCredential, as graphrag)."""
    container = values.get("container_name")
    if not isinstance(container, str) or not container.strip():
        raise IndexInputError(settings_file, f"{key}.type is blob but {key}.container_name is not set")
    base = values.get("base_dir")
    root = "/".join(p for p in (container.strip("/"), base.strip("/") if isinstance(base, str) else "") if p)
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


# ---- the filesystem ---------------------------------------------------------------------------------
#: the SDKs' loggers: silenced (no handler would print their warnings on stderr, breaking the one-line
#: error, from threads that may still run at exit)
_QUIET_LOGGERS = "azure adlfs s3fs fsspec botocore aiobotocore urllib3 aiohttp asyncio".split()


def filesystem(loc: RemoteLocation):
    """The fsspec filesystem of ``loc`` (timeouts bounded); a missing extra is an input error."""
    import logging

    for name in _QUIET_LOGGERS:
        log = logging.getLogger(name)
        if not any(isinstance(h, logging.NullHandler) for h in log.handlers):
            log.addHandler(logging.NullHandler())
        log.propagate = False
    module, packages = EXTRAS[loc.extra]
    try:
        __import__(module)
    except ImportError:
        raise IndexInputError(
            loc.display,
            f"reading {loc.kind} needs the optional {module} package: "
            f'python -m pip install {packages} (or ".[{loc.extra}]" '
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

    fs = adlfs.AzureBlobFileSystem(  # (AZURE_STORAGE_CONNECTION_STRING, _ACCOUNT_NAME: read by adlfs)
        skip_instance_cache=True,
        timeout=max(1, round(t)),
        connection_timeout=max(1, round(t)),
        read_timeout=max(1, round(t)),
        **loc.options,
    )
    _bound_azure_retries(fs, t)
    return fs


def _bound_azure_retries(fs, t: float) -> None:
    """adlfs passes no retry settings to the SDK, whose storage default (ExponentialRetry: 3 retries
    after 15, 18 and 24 s, each +-3 s) outlasts any deadline: the same client trying a request
    TRIES times in all, the retry after 0.3 s (+-0.1)."""
    from azure.storage.blob.aio import BlobServiceClient

    kw: dict = {
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


# ---- reading -----------------------------------------------------------------------------------------
class RemoteFolder(RemoteName):
    """A folder of ``loc`` (its listing read once): ``folder / name`` is a :class:`RemoteFile`."""

    loc: RemoteLocation
    fs: Any
    root: str
    files: dict[str, int]
    started: float
    progress: Callable[[str], None] | None

    @classmethod
    def listed(
        cls, loc: RemoteLocation, fs, root: str, shown: str, started: float, progress=None
    ) -> RemoteFolder:
        """``progress``: None or a callable taking the step's text ("reading <file>") before each read."""
        self = cls(shown)
        self.loc, self.fs, self.root, self.started, self.progress = loc, fs, root, started, progress
        try:
            entries = fs.ls(root, detail=True)
        except FileNotFoundError as exc:
            if any(s in str(exc).lower() for s in ("timeout", "timed out")):
                raise  # s3fs's name for a listing that got no answer: not an absent folder
            entries = []
        files = [e for e in entries if e.get("type") == "file"]
        self.files = {e["name"].rstrip("/").rsplit("/", 1)[-1]: int(e.get("size") or 0) for e in files}
        return self

    def __truediv__(self, name) -> RemoteFile:
        return RemoteFile(self, str(name))


class RemoteFile(RemoteName):
    """A table file of a :class:`RemoteFolder` (``str()`` its URL), as much of ``pathlib.Path`` as
    the locate and table readers use; :meth:`open` reads it through the fsspec filesystem."""

    folder: RemoteFolder

    def __new__(cls, folder: RemoteFolder, name: str):
        self = super().__new__(cls, f"{folder}/{name}")
        self.folder = folder
        return self

    @property
    def suffix(self) -> str:
        return "." + self.name.rsplit(".", 1)[-1] if "." in self.name else ""

    @property
    def stem(self) -> str:
        return self.name[: len(self.name) - len(self.suffix)]

    @property
    def size(self) -> int:
        return self.folder.files.get(self.name, 0)

    def with_suffix(self, suffix: str) -> RemoteFile:
        return self.folder / (self.stem + suffix)

    def exists(self) -> bool:
        return self.name in self.folder.files

    def is_symlink(self) -> bool:
        return False

    def open(self) -> _RemoteReader:
        if self.folder.progress is not None:
            self.folder.progress(f"reading {self}")
        return _RemoteReader(self)


class _RemoteReader:
    """fsspec's binary file of a :class:`RemoteFile`, one request per read; an SDK or network failure
    is an :class:`IndexInputError` naming the file (pyarrow passes it through)."""

    def __init__(self, file: RemoteFile):
        self.file = file
        self.fh = self._call(file.folder.fs.open, f"{file.folder.root}/{file.name}", "rb", cache_type="none")

    def _call(self, f, *args, **kwargs):
        try:
            return f(*args, **kwargs)
        except IndexInputError:
            raise
        except Exception as exc:  # noqa: BLE001 (the SDKs' errors: classified, credentials scrubbed)
            folder = self.file.folder
            raise IndexInputError(
                str(self.file), fault_text(exc, folder.loc, time.monotonic() - folder.started)
            ) from None

    def read(self, n: int = -1) -> bytes:
        return self._call(self.fh.read, n)

    def seek(self, pos: int, whence: int = 0) -> int:
        return self._call(self.fh.seek, pos, whence)

    def __getattr__(self, name: str):  # tell, close, closed, readable, seekable, writable: fsspec's
        return getattr(self.fh, name)

    def __enter__(self) -> _RemoteReader:
        return self

    def __exit__(self, *exc) -> None:
        self.fh.close()


#: words in an SDK error that mean: the credentials were refused; the connection failed or was dropped
_DENIED = (
    "authenticat authoriz forbidden invalidaccesskeyid signaturedoesnotmatch accessdenied 403 credential"
)
_DROPPED = "connect refused reset closed eof incomplete servicerequest serviceresponse clientpayloaderror"
_DROPPED_PHRASES = ("broken pipe", "payload is not completed", "not enough data")


def fault_text(exc: BaseException, loc: RemoteLocation, elapsed: float | None = None) -> str:
    """A one-line, credential-free description of a remote failure (``elapsed``: the seconds the
    read ran, stated with a timeout)."""
    name = type(exc).__name__
    text = (str(exc).strip().splitlines() or [""])[0]
    low = f"{name} {exc}".lower()
    if isinstance(exc, PermissionError) or any(s in low for s in _DENIED.split()):
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
    elif any(s in low for s in (*_DROPPED.split(), *_DROPPED_PHRASES)):
        why = "the connection failed or was dropped"
    else:
        why = "cannot read it"
    detail = scrub_secrets(f"{name}: {text}" if text else name, loc.secrets)
    if len(detail) > 200:
        detail = detail[:199] + "…"
    return f"{why} ({detail})"


def location_of(path) -> RemoteLocation | None:
    """The remote location ``path`` names: a remote URL, or a local project root whose settings
    put the output in blob storage; None for a local index."""
    loc = parse_url(os.fspath(path))
    if loc is not None or not os.path.isdir(path):
        return loc
    from graphrag_audit.io.settings import find_settings, read_output_setting

    settings = find_settings(Path(path))
    if settings is None:
        return None
    setting = read_output_setting(settings)
    if setting.blob is None:
        return None
    if setting.blob.get("type") == "url":
        loc = parse_url(setting.blob["base_dir"])
        if loc is None:
            return None
        return replace(loc, display=f"{loc.display} ({settings.name} {setting.key})", settings_file=settings)
    return from_blob_setting(settings, setting.key or "output", setting.blob)

"""Credentials never printed: :func:`scrub` replaces with ``***`` a URL's user-info (an ``abfs[s]`` container
stays), SAS, S3-presigned and connection-string parameter values, an ``Authorization`` header's value, and
every credential environment variable's and :func:`remember`'ed value, as written and percent-encoded.
"""

from __future__ import annotations

import os
import re
from urllib.parse import quote

MASK = "***"

#: the credential variables read by io/remote.py and the SDKs it drives (adlfs, azure-identity's
#: DefaultAzureCredential, botocore)
CREDENTIAL_ENV = tuple(
    "AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_KEY AZURE_STORAGE_ACCOUNT_KEY AZURE_STORAGE_SAS_TOKEN "
    "AZURE_STORAGE_CLIENT_SECRET AZURE_CLIENT_SECRET AZURE_CLIENT_CERTIFICATE_PASSWORD AZURE_PASSWORD "
    "AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_SECURITY_TOKEN GRAPHRAG_STORAGE_CONNECTION_STRING "
    "GRAPHRAG_API_KEY".split()
)
_CREDENTIAL_NAME = re.compile(
    r"(?:^|_)(?:KEY|ACCESS_KEY|ACCOUNT_KEY|API_KEY|SECRET|SECRET_KEY|CLIENT_SECRET|TOKEN|"
    r"SAS_TOKEN|SESSION_TOKEN|SECURITY_TOKEN|PASSWORD|PASSWD|CONNECTION_STRING|"
    r"CONN_STR|SIGNATURE|CREDENTIALS?)$",
    re.IGNORECASE,
)
#: a value shorter than this is never replaced where it appears on its own (it would hit ordinary words)
MIN_SECRET = 8

#: query and connection-string parameters whose values are secret or part of a signed grant
_PARAMS = (
    # Azure SAS (service, account and user delegation)
    "sig se st sp sv spr sr srt ss si sip sdd ses skoid sktid skt ske sks skv saoid suoid scid "
    "rscc rscd rsce rscl rsct "
    # S3 presigned URLs (v4 and v2)
    "X-Amz-Signature X-Amz-Credential X-Amz-Security-Token Signature AWSAccessKeyId "
    # connection strings and the like
    "AccountKey SharedAccessSignature SharedAccessKey aws_secret_access_key aws_session_token "
    "access_token client_secret password"
).split()
# ``name=value`` where a parameter starts: after ? & ; a blank, a quote or a bracket, or at the start.
# A SharedAccessSignature's value is itself a query (sv=...&sig=...): its own parameters are caught too.
_PARAM = re.compile(
    r"(?:(?<=[?&;\s'\"(\[{,])|^)(" + "|".join(map(re.escape, _PARAMS)) + r")=([^;&\s'\"\])}]*)", re.IGNORECASE
)
# scheme://user-info@host: everything between :// (or :/ once pathlib folded it) and the first @
# before any / ? # or blank
_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*):(/{1,2})([^/?#@\s'\"]+)@")
_AUTH_HEADER = re.compile(
    r"(\bAuthorization\s*[:=]\s*)(?:(?:Bearer|Basic|SharedKey|SharedKeyLite|AWS4-HMAC-SHA256|AWS|"
    r"Digest)\s+)?[^\s'\",;]+",
    re.IGNORECASE,
)
#: schemes whose user-info is a container name (abfs[s]://container@account.dfs.core.windows.net)
_CONTAINER_USERINFO = ("abfs", "abfss", "wasb", "wasbs")

_remembered: set[str] = set()


def looks_like_credential_name(name: str) -> bool:
    """Whether an environment variable called ``name`` holds a credential, by its name."""
    return name in CREDENTIAL_ENV or bool(_CREDENTIAL_NAME.search(name))


def remember(*values) -> None:
    """Values to replace wherever they appear from now on in this process (a settings file's
    connection string, a ``.env`` file's credential variables)."""
    for v in values:
        if isinstance(v, str) and v.strip():
            _remembered.add(v.strip())


def _known() -> list[str]:
    found = set(_remembered)
    for name, value in os.environ.items():
        if value and looks_like_credential_name(name):
            found.add(value.strip())
    out: set[str] = set()
    for v in found:
        if len(v) < MIN_SECRET:
            continue
        out.add(v)
        enc = quote(v, safe="")
        if enc != v:
            out.add(enc)
        # the parts of a connection string that are secret on their own
        for part in v.split(";"):
            key, eq, val = part.partition("=")
            if (
                eq
                and key.strip().lower() in ("accountkey", "sharedaccesssignature", "sharedaccesskey")
                and len(val.strip()) >= MIN_SECRET
            ):
                out.add(val.strip())
    return sorted(out, key=len, reverse=True)


def _userinfo(m: re.Match) -> str:
    if m.group(1).lower() in _CONTAINER_USERINFO and ":" not in m.group(3):
        return m.group(0)
    return f"{m.group(1)}:{m.group(2)}{MASK}@"


def scrub(text, extra=()) -> str:
    """``text`` with every credential (see the module doc, plus ``extra``) replaced by ``***``."""
    s = str(text)
    if not s:
        return s
    secrets = _known()
    if extra:
        secrets = sorted(
            {*secrets, *(e for e in extra if isinstance(e, str) and len(e) >= MIN_SECRET)},
            key=len,
            reverse=True,
        )
    for secret in secrets:
        if secret in s:
            s = s.replace(secret, MASK)
    if "@" in s:
        s = _USERINFO.sub(_userinfo, s)
    if "=" in s:
        # (a value already masked is kept with what follows it: scrubbing twice changes nothing)
        s = _PARAM.sub(lambda m: m.group(0) if m.group(2).startswith(MASK) else f"{m.group(1)}={MASK}", s)
    if "uthorization" in s or "UTHORIZATION" in s:
        s = _AUTH_HEADER.sub(lambda m: m.group(1) + MASK, s)
    return s

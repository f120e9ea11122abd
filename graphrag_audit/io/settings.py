"""Where a graphrag project's settings put the index, read the way graphrag reads them (per
version; docs/user-guide.md "How the index is located" says the same for users).

* The file: the first of ``settings.yaml``, ``settings.yml``, ``settings.json`` in the root
  (``config/config_file_loader.py`` @ v0.3.1-v1.2.0, ``config/load_config.py`` @ v2.0.0-v2.7.0,
  ``graphrag_common/config/load_config.py`` @ v3.0.0-v3.3.0; ``index/cli.py`` before), strict UTF-8,
  ``yaml.safe_load`` or ``json.loads``. An empty file means graphrag's defaults.
* The output key: 0.x-1.x ``storage:`` (``config/create_graphrag_config.py``; ``type``/``base_dir``
  fall back to ``GRAPHRAG_STORAGE_TYPE``/``GRAPHRAG_STORAGE_BASE_DIR``, then ``config/defaults.py``
  ``STORAGE_BASE_DIR``: ``output/${timestamp}/artifacts`` up to v0.3.4, ``output`` after); 2.x
  ``output:`` and ``outputs:`` (multi-index, read by global search: ``cli/query.py`` @ v2.7.0); 3.x
  ``output_storage:`` (no default ``base_dir``) and, from v3.0.2, ``table_provider.type``. Storage
  ``type``: ``file`` | ``memory`` | ``blob`` | ``cosmosdb`` (``config/enums.py``).
* Variables: 0.x-1.x load ``.env`` (``config/read_dotenv.py``, existing variables win), parse, then
  ``os.path.expandvars`` each string (an unset one stays as written); 2.x/3.x load ``.env`` with
  python-dotenv and ``string.Template(text).substitute(os.environ)`` before parsing.
* A relative ``base_dir`` is joined to the project root; a ``root_dir`` key never changes that.

One deliberate difference: graphrag >= 2.0 refuses a file with any unset variable; the audit
needs only the keys it reads, and an unset variable there is an error naming it (every version).
"""

from __future__ import annotations

import json
import os
import re
import stat
import string
import uuid
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from graphrag_audit.errors import IndexInputError
from graphrag_audit.io.bounded import LIMITS, ExpansionBudget, read_bytes, read_dotenv
from graphrag_audit.sanitise.secrets import looks_like_credential_name, remember

SETTINGS_FILES = ("settings.yaml", "settings.yml", "settings.json")
#: the top-level keys that name the output, newest generation first, and their generation
OUTPUT_KEYS = {
    "output_storage": "graphrag 3.x",
    "outputs": "graphrag 2.x multi-index",
    "output": "graphrag 2.x",
    "storage": "graphrag 0.x-1.x",
}
#: where ``graphrag update`` writes, per generation (all default to "update_output")
UPDATE_KEYS = ("update_output_storage", "update_index_output", "update_index_storage")
DEFAULT_OUTPUT = "output"
DEFAULT_UPDATE_OUTPUT = "update_output"

#: URL schemes of remote object stores and the like (a base_dir or a DIR argument using one)
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://?(?P<rest>.*)$", re.S)
REMOTE_SCHEMES = {
    **dict.fromkeys(("s3", "s3a", "s3n"), "Amazon S3"),
    **dict.fromkeys(("gs", "gcs"), "Google Cloud Storage"),
    **dict.fromkeys(("az", "wasb", "wasbs"), "Azure Blob Storage"),
    **dict.fromkeys(("abfs", "abfss", "adl"), "Azure Data Lake Storage"),
    **dict.fromkeys(("http", "https"), "a web server"),
    **{"hdfs": "HDFS", "ftp": "an FTP server", "sftp": "an SFTP server"},
}
#: the URL schemes graphrag-audit reads in place (io/remote.py)
READ_IN_PLACE = ("az", "abfs", "abfss", "s3", "s3a")
#: graphrag's blob storage keys (1.x-2.x ``storage_account_blob_url``; 3.x ``account_url``)
BLOB_KEYS = ("connection_string", "storage_account_blob_url", "account_url", "container_name", "base_dir")


@dataclass(frozen=True)
class OutputSetting:
    """The output folder a settings file names (before ``${timestamp}`` and path resolution)."""

    settings_file: Path
    key: str | None  # "output_storage", "output", "outputs.<name>", "storage"; None: graphrag's default
    base_dir: str  # variables expanded; may still hold ${timestamp} (0.x)
    where: str  # how the settings name it, for messages (after the file's name)
    table_type: str | None = None  # table_provider.type when the file sets it (3.0.2+)
    notes: tuple[str, ...] = ()
    update_dir: str = DEFAULT_UPDATE_OUTPUT  # where `graphrag update` writes (for a note)
    #: blob storage (``type: blob``: the section's values, variables expanded) or an
    #: ``az://``/``abfs[s]://``/``s3[a]://`` base_dir (``{"type": "url", "base_dir": ...}``),
    #: read in place by :mod:`graphrag_audit.io.remote`
    blob: dict | None = None

    def describe(self) -> str:
        return f"{self.settings_file.name} {self.where}"


def remote_url(text: str) -> tuple[str, str] | None:
    """``(scheme, url)`` when ``text`` is a URL of remote storage (also after ``pathlib`` folded
    its ``//`` into ``/``, as a ``Path`` argument does), else None."""
    m = _URL.match(text)
    if not m or m.group("scheme").lower() not in REMOTE_SCHEMES:
        return None
    return m.group("scheme").lower(), f"{m.group('scheme')}://{m.group('rest')}"


def _cosmosdb_problem(key: str) -> str:
    return (
        f"the index ({key}) is in Azure Cosmos DB: not supported (graphrag-audit reads parquet or CSV tables from a "
        f"local folder, Azure Blob Storage or S3). Export the tables and audit those: run graphrag with "
        f"output type file or blob (or copy each Cosmos DB container's items into communities.parquet, "
        f"community_reports.parquet and entities.parquet) and pass that folder, its az:// or s3:// URL, or "
        f"the project root"
    )


def remote_problem(what: str, kind: str) -> str:
    return (
        f"{what} is on {kind}, not in a local folder: not supported (graphrag-audit reads index tables from "
        f"local folders, Azure Blob Storage and S3). Copy the output tables (communities, community_reports, "
        f"entities; parquet or CSV) into a local folder and pass that folder"
    )


def find_settings(root: Path) -> Path | None:
    """The settings file graphrag would read in ``root`` (the first that is a regular file)."""
    for name in SETTINGS_FILES:
        try:
            if (root / name).is_file():
                return root / name
        except OSError:
            continue
    return None


# ---- reading -----------------------------------------------------------------------------------
def _cannot_read(path: Path, what: str, exc: OSError) -> IndexInputError:
    if isinstance(exc, PermissionError):
        return IndexInputError(path, f"permission denied: cannot read the {what}")
    return IndexInputError(path, f"cannot read the {what} ({exc.strerror or exc})")


def _read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
        if size > LIMITS["settings file"]:
            shown = size / 1024
            for unit in ("KiB", "MiB", "GiB", "TiB"):
                if shown < 1024 or unit == "TiB":
                    break
                shown /= 1024
            raise IndexInputError(
                path, f"too large for a settings file ({shown:.1f} {unit}; graphrag's are a few KB): not read"
            )
        data = read_bytes(path, "settings file")
    except OSError as exc:
        raise _cannot_read(path, "settings file", exc) from None
    try:
        text = data.decode("utf-8")  # graphrag: .decode("utf-8", errors="strict") / read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise IndexInputError(
            path,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            f"graphrag reads settings as UTF-8",
        ) from None
    if path.suffix.lower() == ".json" and text.startswith("\ufeff"):
        # json.loads refuses it ("Unexpected UTF-8 BOM"), and so graphrag does, in every version
        raise IndexInputError(
            path,
            "starts with a UTF-8 byte-order mark, which graphrag's json.loads refuses "
            "(Unexpected UTF-8 BOM): save the file without it",
        )
    return text


def _parse(path: Path, text: str) -> dict:
    import yaml

    kind = "JSON" if path.suffix.lower() == ".json" else "YAML"
    try:
        data = json.loads(text) if kind == "JSON" else yaml.safe_load(text)
    except RecursionError:
        raise IndexInputError(path, f"not valid {kind} (nested too deeply)") from None
    except json.JSONDecodeError as exc:
        raise IndexInputError(
            path, f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise IndexInputError(path, f"not valid YAML ({what}{where})") from None
    if data is None:  # an empty file: graphrag uses its defaults (``values or {}``)
        return {}
    if not isinstance(data, dict):
        raise IndexInputError(path, f"the settings are a {type(data).__name__}, not a mapping of keys")
    return data


_EXPANDVARS = re.compile(r"\$(?:(\w+)|\{([^}]*)\})", re.ASCII)  # posixpath.expandvars' pattern


class _Reader:
    """A settings file's values with their variables: ``os.environ`` plus the ``.env`` beside the
    file (existing variables win), as graphrag sees them; the ``.env`` is read on first use."""

    def __init__(self, settings_file: Path):
        self.path = settings_file
        self.dotenv = settings_file.parent / ".env"
        self.budget = ExpansionBudget(settings_file, "settings file")  # what ${VAR} may add, in all
        self.unparsed: list[int] = []  # the .env lines python-dotenv could not parse (and skipped)
        self.markers: dict[str, str] = {}  # unset variable -> its marker in the substituted text

    @cached_property
    def values(self) -> dict[str, str]:
        values = dict(os.environ)
        if self._present():
            try:
                # load_dotenv(path) as graphrag 2.x/3.x call it: override=False, interpolate=True
                loaded = read_dotenv(self.dotenv, os.environ, self.unparsed)
            except OSError as exc:
                raise _cannot_read(self.dotenv, ".env file", exc) from None
            remember(*(v for k, v in loaded.items() if looks_like_credential_name(k)))
            for k, v in loaded.items():
                if v is not None and k not in values:
                    values[k] = v
        return values

    def _present(self) -> bool:
        """A ``.env`` that is there: python-dotenv skips a folder; a FIFO or device is refused when
        read (io/bounded.py), never opened; a looping or unreadable link is an error naming it."""
        try:
            st = os.stat(self.dotenv)
        except FileNotFoundError:
            return False  # none, or a link to nothing: python-dotenv finds nothing either
        except OSError as exc:
            raise IndexInputError(self.dotenv, f"cannot read the .env file ({exc.strerror or exc})") from None
        return not stat.S_ISDIR(st.st_mode)

    def where(self) -> str:
        if not self._present():
            return f"the environment (and there is no {self.dotenv})"
        skipped = ""
        if self.unparsed:
            lines = ", ".join(map(str, self.unparsed[:5])) + (" ..." if len(self.unparsed) > 5 else "")
            skipped = (
                f" (python-dotenv cannot parse its line{'s' if len(self.unparsed) > 1 else ''} {lines}, "
                f"an unterminated quote?, and skips {'them' if len(self.unparsed) > 1 else 'it'}, as "
                f"graphrag does)"
            )
        return f"the environment or {self.dotenv}{skipped}"

    def substitute(self, text: str) -> str:
        """graphrag >= 2.0's ``Template(text).substitute(os.environ)``, except that an unset
        variable becomes a marker instead of a KeyError: an error only where the audit uses it."""
        if "$" not in text:
            return text
        salt = uuid.uuid4().hex[:12]

        def convert(m: re.Match) -> str:
            if m.group("escaped") is not None:
                return "$"
            name = m.group("named") or m.group("braced")
            if name is None:  # an ill-formed '$': graphrag raises ValueError; left as written here
                return m.group()
            if name in self.values:
                return self.budget.take(self.values[name])
            return self.markers.setdefault(name, f"graphragauditunset{salt}n{len(self.markers)}x")

        return string.Template.pattern.sub(convert, text)

    def text(self, key: str, value, *, template: bool) -> str:
        """A string value with its variables expanded: substituted already (``template``, graphrag
        >= 2.0), else now with ``os.path.expandvars`` (graphrag 0.x-1.x; ``${timestamp}`` stays)."""
        if not isinstance(value, str):
            shown = (
                "its value not shown: it holds a credential"
                if looks_like_credential_name(key.rsplit(".", 1)[-1])
                else _short(value)
            )
            raise IndexInputError(self.path, f"{key} must be text, not {_kind(value)} ({shown})")
        unset = [name for name, marker in self.markers.items() if marker in value] if template else []

        def convert(m: re.Match) -> str:
            name = m.group(1) or m.group(2)
            if name in self.values:
                return self.budget.take(self.values[name])
            if name != "timestamp":
                unset.append(name)
            return m.group()

        if not template:
            value = _EXPANDVARS.sub(convert, value)
        if unset:
            extra = (
                " (graphrag >= 2.0 has no ${timestamp}: that is graphrag 0.x's storage.base_dir)"
                if unset[0] == "timestamp"
                else ""
            )
            raise IndexInputError(
                self.path, f"{key} uses ${{{unset[0]}}}, which is not set in {self.where()}{extra}"
            )
        return value


_KINDS = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a mapping"}


def _kind(value) -> str:
    return "empty" if value is None else _KINDS.get(type(value), type(value).__name__)


def _short(value) -> str:
    s = repr(value)
    return s if len(s) <= 60 else s[:59] + "…"


# ---- the output location -------------------------------------------------------------------------
def _section(r: _Reader, data: dict, key: str) -> dict:
    section = data.get(key)
    if not isinstance(section, dict):
        raise IndexInputError(
            r.path, f"{key} must be a mapping (type, base_dir), not {_kind(section)} ({_short(section)})"
        )
    return section


def _check_type(r: _Reader, key: str, stype: str, base_dir: str | None) -> None:
    """Refuse a storage type other than file (blob is read in place before this check)."""
    if stype == "file":
        return
    if stype == "cosmosdb":
        where = f" ({key}.base_dir '{base_dir}')" if base_dir else ""
        raise IndexInputError(r.path, _cosmosdb_problem(f"{key}.type {stype}{where}"))
    if stype == "memory":
        raise IndexInputError(
            r.path, f"{key}.type is memory: graphrag kept the index in memory and wrote no tables to audit"
        )
    raise IndexInputError(
        r.path, f"{key}.type '{stype}' is not a storage type graphrag knows (file, memory, blob, cosmosdb)"
    )


def _blob(r: _Reader, key: str, section: dict, *, template: bool) -> dict:
    """The blob section's values graphrag reads, variables expanded."""
    values = {
        k: r.text(f"{key}.{k}", section[k], template=template)
        for k in BLOB_KEYS
        if section.get(k) is not None
    }
    return {"type": "blob", **values}


def _output(r: _Reader, key: str, base: str, blob: dict | None = None, where: str = "") -> OutputSetting:
    """``key``'s output: in blob storage (``blob``), else at a file storage ``base``: a local folder,
    or a URL read in place (io/remote.py)."""
    url = remote_url(base) if blob is None else None
    if url is not None:
        if url[0] not in READ_IN_PLACE:
            raise IndexInputError(
                r.path, remote_problem(f"{key}.base_dir '{url[1]}'", REMOTE_SCHEMES[url[0]])
            )
        blob = {"type": "url", "base_dir": url[1]}
    where = where or f"{key}.base_dir '{base}' ({OUTPUT_KEYS[key.split('.', 1)[0]]})"
    return OutputSetting(r.path, key, base, where, blob=blob)


def _v1_storage(r: _Reader, raw: dict) -> OutputSetting:
    """graphrag 0.x-1.x: ``storage:``, values expanded after parsing, env fallbacks, defaults."""
    section = _section(r, raw, "storage")

    def value(key: str) -> str:  # the key's value, else ``$GRAPHRAG_STORAGE_<KEY>``, else ""
        if key in section:
            return "" if section[key] is None else r.text(f"storage.{key}", section[key], template=False)
        return r.values.get(f"GRAPHRAG_STORAGE_{key.upper()}") or ""

    stype = value("type") or "file"  # ``StorageType(s_type) if s_type else defs.STORAGE_TYPE``
    if stype == "blob":
        blob = _blob(r, "storage", section, template=False)
        return _output(r, "storage", str(section.get("base_dir") or ""), blob)
    base = value("base_dir")
    _check_type(r, "storage", stype, base)
    if not base:  # ``reader.str(base_dir) or defs.STORAGE_BASE_DIR``
        where = (
            f"key storage has no base_dir: graphrag's default '{DEFAULT_OUTPUT}' "
            f"(before 0.3.5: 'output/${{timestamp}}/artifacts')"
        )
        return OutputSetting(r.path, None, DEFAULT_OUTPUT, where)
    if "base_dir" in section:
        return _output(r, "storage", base)
    where = f"key storage has no base_dir: $GRAPHRAG_STORAGE_BASE_DIR '{base}' (graphrag 0.x-1.x)"
    return _output(r, "storage", base, where=where)


def _v2_output(r: _Reader, section: dict, key: str, base_default: str | None) -> OutputSetting:
    """graphrag 2.x ``output:`` / ``outputs.<name>``, 3.x ``output_storage:`` (text substituted)."""
    stype = r.text(f"{key}.type", section.get("type", "file"), template=True)
    base = section.get("base_dir", base_default)
    if stype == "blob":
        blob = _blob(r, key, section, template=True)
        return _output(r, key, blob.get("base_dir", ""), blob)
    if stype != "file":
        _check_type(r, key, stype, base if isinstance(base, str) else None)
    if base is None or (isinstance(base, str) and not base.strip()):
        raise IndexInputError(
            r.path, f"{key}.base_dir is empty: graphrag requires an output folder for file storage"
        )
    return _output(r, key, r.text(f"{key}.base_dir", base, template=True))


def _update_dir(data: dict) -> str:
    for key in UPDATE_KEYS:
        section = data.get(key)
        if not isinstance(section, dict):
            continue
        base = section.get("base_dir")
        if (
            isinstance(base, str)
            and base.strip()
            and "$" not in base
            and section.get("type", "file") == "file"
        ):
            return base
    return DEFAULT_UPDATE_OUTPUT


def _table_type(r: _Reader, data: dict) -> str | None:
    section = data.get("table_provider")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise IndexInputError(r.path, f"table_provider must be a mapping (type), not {_kind(section)}")
    ttype = r.text("table_provider.type", section.get("type", "parquet"), template=True)
    if ttype == "cosmosdb":
        raise IndexInputError(r.path, _cosmosdb_problem("table_provider.type cosmosdb"))
    if ttype not in ("parquet", "csv"):
        raise IndexInputError(
            r.path,
            f"table_provider.type '{ttype}' is not a table type graphrag knows (parquet, csv, cosmosdb)",
        )
    return ttype


def read_output_setting(settings_file: Path) -> OutputSetting:
    """The output folder ``settings_file`` names, read as graphrag reads it (see the module doc)."""
    text = _read_text(settings_file)
    r = _Reader(settings_file)
    substituted = r.substitute(text)
    raw = None
    try:  # graphrag >= 2.0 substitutes the text, then parses it
        data = _parse(settings_file, substituted)
    except IndexInputError:
        if substituted == text:
            raise
        # graphrag 0.x-1.x parse first and expand values after: a 0.x-1.x file may parse only so
        raw = _parse(settings_file, text)
        if [k for k in OUTPUT_KEYS if raw.get(k) is not None] != ["storage"]:
            raise
        data = raw
    present = [k for k in OUTPUT_KEYS if data.get(k) is not None]
    table_type = _table_type(r, data)
    update_dir = _update_dir(data)
    name = settings_file.name
    notes: tuple[str, ...] = ()
    outputs = data.get("outputs")
    if outputs is not None and not isinstance(outputs, dict):
        raise IndexInputError(
            settings_file, f"outputs must be a mapping of index names, not {_kind(outputs)}"
        )
    if outputs:  # graphrag 2.x multi-index: global search reads these, not output
        named = {}
        for index, section in outputs.items():
            if not isinstance(section, dict):
                raise IndexInputError(settings_file, f"outputs.{index} must be a mapping (type, base_dir)")
            named[str(index)] = _v2_output(r, section, f"outputs.{index}", "output")
        if len(named) > 1:
            listed = "; ".join(f"{n}: {_joined(settings_file, s.base_dir)}" for n, s in named.items())
            raise IndexInputError(
                settings_file,
                f"outputs names {len(named)} indexes for multi-index search ({listed}); graphrag-audit "
                f"audits one index at a time: pass one of those folders",
            )
        found = list(named.values())
        if "output" in present:
            notes = (
                f"{name} also names output.base_dir (where graphrag index writes); "
                f"global search reads outputs, so that is what is audited",
            )
    else:  # the single-index keys: output_storage (3.x), output (2.x), storage (0.x-1.x)
        found = []
        for key in present:
            if key == "storage":
                if raw is None:
                    raw = _parse(settings_file, text)  # 0.x-1.x expand after parsing, value by value
                found.append(_v1_storage(r, raw))
            elif key != "outputs":
                default = None if key == "output_storage" else "output"
                found.append(_v2_output(r, _section(r, data, key), key, default))
        if not found:
            where = f"names no output folder: graphrag's default '{DEFAULT_OUTPUT}'"
            found = [OutputSetting(settings_file, None, DEFAULT_OUTPUT, where)]
        target = _joined(settings_file, found[0].base_dir)
        others = [s for s in found[1:] if _joined(settings_file, s.base_dir) != target]
        if others:
            listed = " and ".join(s.where for s in [found[0], *others])
            raise IndexInputError(
                settings_file,
                f"the settings name two output folders: {listed}; graphrag reads only the key of its "
                f"own version: pass the folder you query directly",
            )
        if len(found) > 1:
            keys = " and ".join(s.key or "storage" for s in found)
            notes = (f"{name} names the same output folder under {keys}",)
    return replace(found[0], table_type=table_type, notes=notes, update_dir=update_dir)


def _joined(settings_file: Path, base_dir: str) -> str:
    return os.path.normpath(os.path.join(str(settings_file.parent), base_dir))


#: graphrag's dynamic selection settings (``global_search.dynamic_search_*``, the same names and
#: defaults in 1.2.0 ``config/defaults.py`` L133-138, 2.7.2 ``config/defaults.py`` L264-268 and
#: 3.3.0 ``config/defaults.py`` L204-208), as (type, default)
DYNAMIC_SEARCH_KEYS: dict[str, tuple[type, object]] = {
    "threshold": (int, 1),
    "keep_parent": (bool, False),
    "num_repeats": (int, 1),
    "use_summary": (bool, False),
    "max_level": (int, 2),
}


def query_settings_data(settings_file: Path) -> dict:
    """The settings as graphrag >= 2.0 reads them (substituted, then parsed), else as 0.x-1.x do."""
    text = _read_text(settings_file)
    substituted = _Reader(settings_file).substitute(text)
    try:
        return _parse(settings_file, substituted)
    except IndexInputError:
        return _parse(settings_file, text)


def _global_search(settings_file: Path) -> tuple[dict, dict]:
    """The settings and their ``global_search`` section ({} when unset)."""
    data = query_settings_data(settings_file)
    section = data.get("global_search")
    if section is not None and not isinstance(section, dict):
        raise IndexInputError(settings_file, f"global_search must be a mapping, not {_kind(section)}")
    return data, section or {}


def read_dynamic_settings(settings_file: Path) -> dict[str, object]:
    """The ``global_search.dynamic_search_*`` values the settings set (knob name -> value)."""
    section = _global_search(settings_file)[1]
    out: dict[str, object] = {}
    for knob, (kind, _default) in DYNAMIC_SEARCH_KEYS.items():
        key = f"dynamic_search_{knob}"
        value = section.get(key)
        if value is None:
            continue
        if isinstance(value, str):  # pydantic accepts "3" / "true" from an environment value
            low = value.strip().lower()
            if kind is bool and low in ("true", "false", "1", "0", "yes", "no", "on", "off"):
                value = low in ("true", "1", "yes", "on")
            elif kind is int and re.fullmatch(r"[+-]?\d+", low):
                value = int(low)
        if type(value) is not kind:
            raise IndexInputError(
                settings_file,
                f"global_search.{key} must be {'an integer' if kind is int else 'true or false'}, "
                f"not {_short(value)}",
            )
        out[knob] = value
    return out


#: where global search's batch size is set, per graphrag generation: ``global_search.max_context_tokens``
#: (2.x and 3.x ``GlobalSearchConfig``, 2.7.2/3.3.0 ``query/factory.py`` context_builder_params
#: ``max_context_tokens``), ``global_search.max_tokens`` (0.x-1.x: 1.2.0 ``query/factory.py``
#: ``"max_tokens": gs_config.max_tokens``); 12,000 by default in all three
QUERY_MAX_TOKENS_KEYS = ("max_context_tokens", "max_tokens")
#: the default chat model id global search uses in 2.x (``global_search.chat_model_id``)
DEFAULT_CHAT_MODEL_ID = "default_chat_model"


def read_query_settings(settings_file: Path) -> dict[str, tuple[object, str]]:
    """What the settings set for global search's costs, each as (value, the key it came from):
    ``max_context_tokens`` from ``global_search.max_context_tokens`` (2.x/3.x), else ``max_tokens``
    (0.x-1.x); ``tokenizer`` from 0.x-1.x's top-level ``encoding_model`` (1.2.0 ``query/factory.py``)
    or 2.x's ``models.<global_search.chat_model_id>.encoding_model``. 3.x (and 2.x without one)
    counts with LiteLLM's tokenizer, cl100k_base for OpenAI/Azure/Anthropic names: the default."""
    data, section = _global_search(settings_file)
    out: dict[str, tuple[object, str]] = {}
    for key in QUERY_MAX_TOKENS_KEYS:
        value = section.get(key)
        if value is None:
            continue
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise IndexInputError(
                settings_file, f"global_search.{key} must be a positive integer, not {_short(value)}"
            )
        out["max_context_tokens"] = (value, f"global_search.{key}")
        break
    models = data.get("models")
    if isinstance(models, dict):  # 2.x
        model_id = section.get("chat_model_id") or DEFAULT_CHAT_MODEL_ID
        model = models.get(model_id)
        encoding = model.get("encoding_model") if isinstance(model, dict) else None
        if isinstance(encoding, str) and encoding.strip():
            out["tokenizer"] = (encoding.strip(), f"models.{model_id}.encoding_model")
    elif "completion_models" not in data and data.get("encoding_model") is not None:  # 0.x-1.x
        encoding = data["encoding_model"]
        if not isinstance(encoding, str):
            raise IndexInputError(settings_file, f"encoding_model must be a string, not {_short(encoding)}")
        if encoding.strip():
            out["tokenizer"] = (encoding.strip(), "encoding_model")
    return out

"""Every file graphrag-audit writes. A file goes to a temporary file beside it (left only by a
SIGKILL) renamed over it: old or new, never half-written; only a regular file is replaced. A new
folder is built beside its place and renamed into it. A :class:`Guard` refuses first a write
inside an index folder the run read (real path, or inode up the tree: a bind mount) or a folder
it links to, or over a table or a file the run read (real path or inode: a hard link). Every
refusal or failure is a :class:`WriteError`: one line naming the target (exit 2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from graphrag_audit.errors import IndexInputError

#: entries of an index folder looked at for links out of it, and for another name of a hard link
MAX_SCAN_ENTRIES = 10_000
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_TAKEN = (
    "exists and is not empty: another run wrote it while this one was writing (nothing of this run was kept)"
)
_NOT_REGULAR = (
    "not a regular file (a FIFO, device or socket): refusing to write to it (-o - writes to stdout)"
)

Data = bytes | str | Callable[..., None]  # a function writing to a binary file


class WriteError(IndexInputError):
    """A write refused or failed: one line naming the target and the reason (exit 2)."""


def is_stdout(target) -> bool:
    return target is not None and os.fspath(target) == "-"


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _stat(path: str, follow: bool = False) -> os.stat_result | None:
    try:
        return os.stat(path, follow_symlinks=follow)
    except OSError:
        return None


def _ident(path: str, follow: bool = True) -> tuple[int, int] | None:
    st = _stat(path, follow)
    return None if st is None else (st.st_dev, st.st_ino)


class Guard:
    """What no write may touch: the folders and files the run read, by real path and by
    ``(st_dev, st_ino)``, each with what it is (for the message)."""

    def __init__(self) -> None:
        self.dirs: dict[object, str] = {}
        self.files: dict[object, str] = {}
        self.indexes: list[str] = []  # real index folders (an OUT may not contain one)

    @classmethod
    def for_index(cls, index_dir) -> Guard:
        """The guard of the index ``index_dir`` resolves to (as ``locate_index`` finds it)."""
        from graphrag_audit.io.locate import locate_index
        from graphrag_audit.io.remote import location_of

        if location_of(index_dir) is not None:  # remote storage: no local file to protect
            return cls()
        files = locate_index(index_dir)
        return cls().protect(files.output_dir, files.tables.values(), files.settings_file)

    def protect_model(self, model) -> Guard:
        """A loaded :class:`~graphrag_audit.model.index.IndexModel` (folder, tables, settings, ``.env``)."""
        from graphrag_audit.io.remote import RemoteName

        local = not isinstance(model.output_dir, RemoteName)  # remote storage: no local file to protect
        tables = model.files.values() if local else ()
        return self.protect(
            model.output_dir if local else None, tables, getattr(model, "settings_file", None)
        )

    def protect_read(self, path) -> Guard:
        """A file the run reads (settings, ``.env``, a baseline, a ``--relevant`` list)."""
        if path is not None:
            real = os.path.realpath(path)
            _add(self.files, real, f"{real}, a file this run reads")
        return self

    def protect(self, output_dir, tables: Iterable = (), settings=None) -> Guard:
        """An index folder, its tables, what its entries link to (not a folder holding the index),
        and the settings file (with its ``.env``) read to find it."""
        if settings is not None:
            self.protect_read(settings).protect_read(Path(settings).parent / ".env")
        if output_dir is None:
            return self
        real = os.path.realpath(output_dir)
        self.indexes.append(real)
        _add(self.dirs, real, f"the index directory {real}", replace=True)
        for t in tables:
            _add(self.files, os.path.realpath(t), f"{os.path.realpath(t)}, a file of the index")
        with contextlib.suppress(OSError), os.scandir(real) as it:
            for i, entry in enumerate(it):
                if i >= MAX_SCAN_ENTRIES:
                    break
                if entry.is_symlink():
                    to = os.path.realpath(entry.path)
                    if not os.path.isdir(to):
                        _add(self.files, to, f"{to}, a file of the index")
                    elif not _inside(real, to):
                        _add(self.dirs, to, f"{to}, a folder the index directory links to")
        return self

    def _in_dirs(self, real: str) -> str | None:
        """By inode, from ``real`` up the tree (so a bind mount of a protected folder is found too)."""
        while self.dirs.get(_ident(real)) is None and os.path.dirname(real) != real:
            real = os.path.dirname(real)
        hit = self.dirs.get(_ident(real))
        return f"refusing to write inside {hit}" if hit else None

    def _hard_link(self, path: str, follow: bool) -> str | None:
        """The file of an index folder that ``path`` is another name of (an append would change it)."""
        st, seen = _stat(path, follow), 0
        if st is None or st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
            return None
        for root, _dirs, names in (w for d in self.indexes for w in os.walk(d)):
            for p in (os.path.join(root, n) for n in names):
                seen += 1
                if seen > MAX_SCAN_ENTRIES:
                    return None
                if _ident(p, False) == (st.st_dev, st.st_ino):
                    return f"{p}, a file of the index"
        return None

    def refusal(self, target, follow: bool = True) -> str | None:
        """Why nothing may be written at ``target``, or None. ``follow``: judge what a link at
        the final component leads to (False for a writer that replaces the link)."""
        parent, name = os.path.split(os.fspath(target))
        real_parent = os.path.realpath(parent or ".")
        why = self._in_dirs(real_parent)
        if why or not name:
            return why
        path = os.path.join(real_parent, name)
        real = os.path.realpath(path) if follow else path
        hit = self.files.get(real) or self.files.get(_ident(real, follow)) or self._hard_link(real, follow)
        if hit:
            return f"refusing to write over {hit}"
        return self._in_dirs(real) if follow else None


def _add(into: dict, real: str, what: str, replace: bool = False) -> None:
    for k in (real, _ident(real)):
        if k is not None and (replace or k not in into):
            into[k] = what


def _tmp_name(name: str) -> str:
    return f".{os.fsdecode(os.fsencode(name)[:96])}.graphrag-audit-{secrets.token_hex(6)}"


def _replace(path: str, data: Data | None, shown: str, old: os.stat_result | None, link: str = "") -> None:
    """``data`` (or the symbolic link to ``link``) made beside ``path`` and renamed over it."""
    tmp = os.path.join(os.path.dirname(path), _tmp_name(os.path.basename(path)) + ".tmp")
    try:
        if link:
            os.symlink(link, tmp)
        else:
            with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _FLAGS, 0o666), "wb") as fh:
                if old is not None:
                    os.fchmod(fh.fileno(), stat.S_IMODE(old.st_mode))
                if callable(data):
                    data(fh)
                else:
                    fh.write(data.encode("utf-8") if isinstance(data, str) else data or b"")
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise WriteError(shown, f"cannot write ({exc.strerror or exc})") from None
        raise


def check_file_target(target, guard: Guard) -> os.stat_result | None:
    """The checks of :func:`write_file` without writing (to fail before any work)."""
    t = os.fspath(target)
    why = guard.refusal(t)
    st = None if why else _stat(t)
    if st is None and not os.path.isdir(os.path.dirname(t) or "."):
        why = why or "cannot write (No such file or directory)"
    elif st is not None and stat.S_ISLNK(st.st_mode):
        why = "is a symbolic link: refusing to write through it (name the file it points to)"
    elif st is not None and not stat.S_ISREG(st.st_mode):
        why = "is a directory" if stat.S_ISDIR(st.st_mode) else _NOT_REGULAR
    if why:
        raise WriteError(t, why)
    return st


def write_file(target, data: Data, guard: Guard | None = None) -> None:
    """Write ``data`` (bytes, str as UTF-8, or a function writing to a binary file) to ``target``
    atomically, after the guard's checks. Raises :class:`WriteError`."""
    t = os.fspath(target)
    _replace(t, data, t, check_file_target(t, guard if guard is not None else Guard()))


def check_append_target(target, guard: Guard) -> None:
    """The guard's refusal of an append target (others only skip the append: :func:`append_file`)."""
    why = guard.refusal(target)
    if why:
        raise WriteError(os.fspath(target), why)


def append_file(target, text: str, guard: Guard | None = None) -> str | None:
    """Append ``text`` to the regular file ``target`` (created when missing). Returns None, or a
    warning saying why nothing was appended; a target the guard refuses raises :class:`WriteError`."""
    t = os.fspath(target)
    check_append_target(t, guard if guard is not None else Guard())
    try:
        st = _stat(t)
        if st is not None and stat.S_ISLNK(st.st_mode):
            return f"{t}: is a symbolic link; nothing appended"
        if st is not None and not stat.S_ISREG(st.st_mode):
            return f"{t}: not a regular file (a FIFO, device, socket or directory); nothing appended"
        with open(os.open(t, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, 0o666), "ab") as fh:
            fh.write(text.encode("utf-8"))
    except OSError as exc:
        return f"{t}: cannot append ({exc.strerror or exc})"
    return None


class DirectoryWriter:
    """Write the folder ``out_dir``: ``with DirectoryWriter(out, guard) as w: w.write_file(name,
    data); w.commit(verify)``. A new OUT is built in a temporary folder beside it (``path`` until
    :meth:`commit`; removed when the block ends without it); an existing OUT (empty, or ``force``)
    gets each file atomically, a link at a written name replaced, never followed."""

    def __init__(self, out_dir, guard: Guard, *, force: bool = False):
        self.shown, self.guard, self.force = os.fspath(out_dir), guard, force
        parent, name = os.path.split(self.shown.rstrip(os.sep) or os.sep)
        if name in ("", ".", ".."):
            parent, name = os.path.split(os.path.realpath(self.shown))
        self.path = self.final_path = Path(os.path.realpath(parent or ".")) / name

    def check(self) -> bool:
        """Refuse now what entering would refuse (nothing is created); True when OUT exists."""
        why = self.guard.refusal(self.final_path)
        st = None if why else _stat(str(self.final_path))
        if st is not None and stat.S_ISLNK(st.st_mode):
            why = "is a symbolic link: refusing to write through it (give the directory it points to)"
        elif st is not None and not stat.S_ISDIR(st.st_mode):
            why = "exists and is not a directory"
        elif st is not None:
            inner = [i for i in self.guard.indexes if _inside(i, str(self.final_path))]
            if inner:
                why = f"refusing to write into a directory that contains the index directory {inner[0]}"
            elif not self.force and os.listdir(self.final_path):
                why = "exists and is not empty (use --force to write into it anyway)"
        if why:
            raise WriteError(self.shown, why)
        return st is not None

    def __enter__(self) -> DirectoryWriter:
        if not self.check():
            tmp = self.final_path.parent / _tmp_name(self.final_path.name)
            try:
                os.makedirs(tmp.parent, exist_ok=True)
                os.mkdir(tmp)
            except OSError as exc:
                raise WriteError(self.shown, f"cannot write ({exc.strerror or exc})") from None
            self.path = tmp
        return self

    def __exit__(self, *exc) -> None:
        if self.path != self.final_path:
            shutil.rmtree(self.path, ignore_errors=True)

    def write_file(self, name: str, data: Data | None, link: str = "") -> None:
        """``data`` as the file ``name`` (or with ``link``: a symbolic link to it)."""
        path, shown = os.path.join(self.path, name), os.path.join(self.shown, name)
        why = self.guard.refusal(path, follow=False)
        st = None if why else _stat(path)
        if why or (st is not None and stat.S_ISDIR(st.st_mode)):
            raise WriteError(shown, why or "is a directory")
        _replace(path, data, shown, st if st is not None and stat.S_ISREG(st.st_mode) else None, link)

    def commit(self, verify: Callable[[Path], object] | None = None) -> Path:
        """Read back (``verify(path)`` raises to refuse), then publish. Returns the final path."""
        if verify is not None:
            verify(self.path)
        try:
            if self.path != self.final_path:
                os.rename(self.path, self.final_path)
        except OSError as exc:
            taken = exc.errno in (errno.ENOTEMPTY, errno.EEXIST)
            raise WriteError(self.shown, _TAKEN if taken else f"cannot write ({exc.strerror})") from None
        self.path = self.final_path
        return self.final_path

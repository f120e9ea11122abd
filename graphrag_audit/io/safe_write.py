"""Every write: a temporary file (or folder) beside the target renamed over it, after a :class:`Guard`
checked it touches nothing the run read (by real path and inode). Failures are a :class:`WriteError`."""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from graphrag_audit.errors import IndexInputError

MAX_SCAN_ENTRIES = 10_000  # index-folder entries scanned for links out of it and for hard links
_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)

Data = bytes | str | Callable[..., None]  # a function writing to a binary file


class WriteError(IndexInputError):
    """A write refused or failed: one line naming the target and the reason (exit 2)."""


def _stat(path, follow: bool = False) -> os.stat_result | None:
    with contextlib.suppress(OSError):
        return os.stat(path, follow_symlinks=follow)
    return None


def _ident(path: str, follow: bool = True) -> tuple[int, int] | None:
    st = _stat(path, follow)
    return None if st is None else (st.st_dev, st.st_ino)


class Guard:
    """What no write may touch, by real path and ``(st_dev, st_ino)``, each with what it is."""

    def __init__(self) -> None:
        self.dirs: dict[object, str] = {}
        self.files: dict[object, str] = {}
        self.indexes: list[str] = []  # real index folders (an OUT may not contain one)

    def _add(self, into: dict, real: str, what: str, replace: bool = False) -> None:
        for key in (real, _ident(real)):
            if key is not None and (replace or key not in into):
                into[key] = what

    def protect_model(self, model) -> Guard:
        return self.protect(model.output_dir, model.files.values(), model.settings_file)

    def protect_read(self, path) -> Guard:
        if path is not None:
            real = os.path.realpath(path)
            self._add(self.files, real, f"{real}, a file this run reads")
        return self

    def protect(self, output_dir, tables: Iterable = (), settings=None) -> Guard:
        """An index folder, its tables, what its entries link to, and its settings file and ``.env``."""
        from graphrag_audit.io.remote import RemoteName

        if settings is not None:
            self.protect_read(settings).protect_read(Path(settings).parent / ".env")
        if output_dir is None or isinstance(output_dir, RemoteName):  # remote: no local file to protect
            return self
        real = os.path.realpath(output_dir)
        self.indexes.append(real)
        self._add(self.dirs, real, f"the index directory {real}", replace=True)
        for table in map(os.path.realpath, tables):
            self._add(self.files, table, f"{table}, a file of the index")
        with contextlib.suppress(OSError), os.scandir(real) as entries:
            for entry in itertools.islice(entries, MAX_SCAN_ENTRIES):
                to = os.path.realpath(entry.path) if entry.is_symlink() else None
                if to is not None and not os.path.isdir(to):
                    self._add(self.files, to, f"{to}, a file of the index")
                elif to is not None and not Path(real).is_relative_to(to):  # not a folder holding it
                    self._add(self.dirs, to, f"{to}, a folder the index directory links to")
        return self

    def _in_dirs(self, real: str) -> str | None:  # by inode up the tree: a bind mount too
        while self.dirs.get(_ident(real)) is None and os.path.dirname(real) != real:
            real = os.path.dirname(real)
        hit = self.dirs.get(_ident(real))
        return f"refusing to write inside {hit}" if hit else None

    def _hard_link(self, path: str, follow: bool) -> str | None:  # the index file `path` is a hard link to
        st = _stat(path, follow)
        if st is None or st.st_nlink < 2 or not stat.S_ISREG(st.st_mode):
            return None
        walked = (os.path.join(root, n) for d in self.indexes for root, _, names in os.walk(d) for n in names)
        key = (st.st_dev, st.st_ino)
        same = (p for p in itertools.islice(walked, MAX_SCAN_ENTRIES) if _ident(p, False) == key)
        return next((f"{p}, a file of the index" for p in same), None)

    def refusal(self, target, follow: bool = True) -> str | None:
        """Why nothing may be written at ``target``; ``follow=False`` for a writer replacing a link."""
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


def _tmp_name(name: str) -> str:
    return f".{os.fsdecode(os.fsencode(name)[:96])}.graphrag-audit-{secrets.token_hex(6)}"


def _replace(path: str, data: Data | None, shown: str, old: os.stat_result | None, link: str = "") -> None:
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
    except OSError as exc:
        raise WriteError(shown, f"cannot write ({exc.strerror or exc})") from None
    finally:  # nothing left behind (after the rename, nothing is there)
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def check_file_target(target, guard: Guard) -> os.stat_result | None:
    t = os.fspath(target)
    why = guard.refusal(t)
    st = None if why else _stat(t)
    mode = st.st_mode if st is not None else 0
    if st is None and not os.path.isdir(os.path.dirname(t) or "."):
        why = why or "cannot write (No such file or directory)"
    elif stat.S_ISLNK(mode):
        why = "is a symbolic link: refusing to write through it (name the file it points to)"
    elif stat.S_ISDIR(mode):
        why = "is a directory"
    elif st is not None and not stat.S_ISREG(mode):
        why = "not a regular file (a FIFO, device or socket): refusing to write to it (-o - writes to stdout)"
    if why:
        raise WriteError(t, why)
    return st


def write_file(target, data: Data, guard: Guard | None = None) -> None:
    """``data``: bytes, str (UTF-8) or a function writing to a binary file."""
    _replace(os.fspath(target), data, os.fspath(target), check_file_target(target, guard or Guard()))


def check_append_target(target, guard: Guard) -> None:
    why = guard.refusal(target)
    if why:
        raise WriteError(os.fspath(target), why)


def append_file(target, text: str, guard: Guard | None = None) -> str | None:
    """Append to a regular file; returns None or a warning saying why nothing was appended."""
    t = os.fspath(target)
    check_append_target(t, guard or Guard())
    mode = getattr(_stat(t), "st_mode", stat.S_IFREG)
    if stat.S_ISLNK(mode):
        return f"{t}: is a symbolic link; nothing appended"
    if not stat.S_ISREG(mode):
        return f"{t}: not a regular file (a FIFO, device, socket or directory); nothing appended"
    try:
        with open(os.open(t, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _FLAGS, 0o666), "ab") as fh:
            fh.write(text.encode("utf-8"))
    except OSError as exc:
        return f"{t}: cannot append ({exc.strerror or exc})"
    return None


class DirectoryWriter:
    """A new OUT is built in a temporary folder (``path``) beside it, renamed by :meth:`commit`; an existing
    OUT (empty, or ``force``) gets each file atomically, a link at a written name replaced, never followed."""

    def __init__(self, out_dir, guard: Guard, *, force: bool = False):
        self.shown, self.guard, self.force = os.fspath(out_dir), guard, force
        parent, name = os.path.split(self.shown.rstrip(os.sep) or os.sep)
        if name in ("", ".", ".."):
            parent, name = os.path.split(os.path.realpath(self.shown))
        self.path = self.final_path = Path(os.path.realpath(parent or ".")) / name

    def check(self) -> bool:  # refuse now what entering would refuse; True when OUT exists
        why = self.guard.refusal(self.final_path)
        st = None if why else _stat(self.final_path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            why = "is a symbolic link: refusing to write through it (give the directory it points to)"
        elif st is not None and not stat.S_ISDIR(st.st_mode):
            why = "exists and is not a directory"
        elif st is not None:
            inner = [i for i in self.guard.indexes if Path(i).is_relative_to(self.final_path)]
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
        path, shown = os.path.join(self.path, name), os.path.join(self.shown, name)
        why = self.guard.refusal(path, follow=False)
        st = None if why else _stat(path)
        if why or (st is not None and stat.S_ISDIR(st.st_mode)):
            raise WriteError(shown, why or "is a directory")
        _replace(path, data, shown, st if st is not None and stat.S_ISREG(st.st_mode) else None, link)

    def commit(self, verify: Callable[[Path], object] | None = None) -> Path:  # verify raises to refuse
        if verify is not None:
            verify(self.path)
        try:
            if self.path != self.final_path:
                os.rename(self.path, self.final_path)
        except OSError as exc:
            why = f"cannot write ({exc.strerror})"
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                why = "exists and is not empty: another run wrote it while this one was writing (nothing of "
                why += "this run was kept)"
            raise WriteError(self.shown, why) from None
        self.path = self.final_path
        return self.final_path

"""Every file graphrag-audit writes goes through this module.

The tool reads indexes and must never damage one, whatever the paths, symbolic links, hard
links, settings indirection or concurrent runs around it. Three writers:

* :func:`write_file` (``-o FILE`` of every command): the data goes to a temporary file in the
  target's directory, is flushed and fsynced, and is renamed over the target. An interrupted run
  (SIGINT, SIGKILL, a full disk) leaves the old file or the new one, never a half-written one;
  a SIGKILL can leave the temporary file ``.NAME.graphrag-audit-XXXXXXXXXXXX.tmp`` beside it.
  Only regular files are written: a target that is a symbolic link, a directory, a FIFO, a
  device or a socket is refused (the link is not followed and not replaced: name the file it
  points to; ``-o -`` writes to stdout).
* :func:`append_file` (``$GITHUB_STEP_SUMMARY``): appending cannot be atomic by rename, so it
  appends (``O_APPEND``) only to a regular file that is not a symbolic link; anything else (a
  FIFO, a device, a link, a missing directory) is skipped with a warning, without opening a
  FIFO or device.
* :class:`DirectoryWriter` (``plan --write OUT``): a new ``OUT`` is built in a fresh temporary
  directory beside it, read back, and renamed into place (so ``OUT`` appears complete or not
  at all; of two concurrent runs exactly one succeeds, the other finds ``OUT`` taken). An existing
  ``OUT`` (empty, or non-empty with ``--force``) is locked (``flock`` on the directory, never
  waited for: a second run exits 2), each file is written atomically, and it is read back under
  the lock. ``OUT`` itself must not be a symbolic link; names inside it that are symbolic links
  are replaced, never written through. Copies read regular files only, opened without
  following a final link, inside the source directory, up to :data:`MAX_COPY_BYTES`.

All three first ask a :class:`Guard`: the real directory of every index read (as graphrag-audit
resolved it, through ``settings.yaml`` and ``output`` links), every table file read, and what
the index directory's entries link to. A write is refused when its directory is, or lies inside,
such a directory (checked on the open directory by walking ``..`` and comparing
``(st_dev, st_ino)``, so links, bind mounts and ``..`` games cannot hide it, and again by real
path), or when its target is such a table (same real path, same directory entry, or same inode:
a hard link). The guard is checked before anything is written and again just before the final
rename. Every refusal or failure is a :class:`WriteError`: one line naming the target (exit 2).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from graphrag_audit.errors import IndexInputError

__all__ = [
    "MAX_COPY_BYTES",
    "DirectoryWriter",
    "Guard",
    "WriteError",
    "append_file",
    "is_stdout",
    "write_file",
]

#: the largest file :meth:`DirectoryWriter.copy_file` copies (a bound against endless or giant inputs)
MAX_COPY_BYTES = 16 * 1024**3
#: entries of an index directory looked at for links out of it and hard links
MAX_SCAN_ENTRIES = 10_000
_MAX_DEPTH = 4096

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)  # POSIX
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOCTTY = getattr(os, "O_NOCTTY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)

Data = bytes | str | Callable[[BinaryIO], None]
Key = tuple  # (st_dev, st_ino)


class WriteError(IndexInputError):
    """A write refused or failed: one line naming the target and the reason (exit 2)."""


def is_stdout(target) -> bool:
    """``-o -`` means stdout."""
    return target is not None and os.fspath(target) == "-"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _key(st: os.stat_result) -> Key:
    return (st.st_dev, st.st_ino)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _fd_chain(dfd: int) -> list[Key]:
    """(st_dev, st_ino) of the directory open at ``dfd`` and of every directory above it, found by
    opening ``..`` from the descriptor (no path is looked up, so no link can redirect it)."""
    keys: list[Key] = []
    cur = os.dup(dfd)
    try:
        for _ in range(_MAX_DEPTH):
            k = _key(os.fstat(cur))
            if keys and keys[-1] == k:  # '..' of the root is the root
                break
            keys.append(k)
            try:
                nxt = os.open("..", _DIR_FLAGS, dir_fd=cur)
            except OSError:  # an ancestor we may not search: the path check still applies
                break
            os.close(cur)
            cur = nxt
    finally:
        os.close(cur)
    return keys


def _fd_path(dfd: int, fallback: str | None) -> str | None:
    """The real path of an open directory (Linux /proc), else ``fallback`` resolved."""
    try:
        p = os.readlink(f"/proc/self/fd/{dfd}")
        if p.startswith(os.sep) and not p.endswith(" (deleted)"):
            return p
    except OSError:
        pass
    return os.path.realpath(fallback) if fallback is not None else None


def _fsync_dir(dfd: int) -> None:
    try:
        os.fsync(dfd)
    except OSError:  # some file systems cannot fsync a directory; the rename is done either way
        pass


class Guard:
    """What no write may touch: the real directory of every index read and everything under it
    (hard links to its files included), every table file read (wherever its links lead), what
    the index directory's entries link to (except links up to a directory that contains the
    index), and every other file the run reads (settings, ``.env``, baseline, ``--relevant``
    list: :meth:`protect_read`). It is the run's record of what it read, passed to every writer."""

    def __init__(self) -> None:
        self.dirs: dict[Key, str] = {}  # protected directory (dev, ino) -> what it is (for messages)
        self.dir_paths: dict[str, str] = {}  # real path -> what it is
        self.files: dict[Key, str] = {}  # protected file (dev, ino) -> "its real path, what it is"
        self.file_paths: dict[str, str] = {}  # real path -> the same
        self.entries: dict[tuple[Key, str], str] = {}  # (parent dir (dev, ino), name) -> the same
        self.ancestors: dict[Key, str] = {}  # directories containing an index -> that index
        self.unscanned: str | None = None  # an index folder too large to look at every file of

    # ---- what is protected ------------------------------------------------------------
    @classmethod
    def for_index(cls, index_dir) -> Guard:
        """The guard of the index ``index_dir`` resolves to (project root, settings.yaml,
        ``output`` links: as :func:`graphrag_audit.io.locate.locate_index` resolves it).
        Raises :class:`IndexInputError` when no index is there."""
        from graphrag_audit.io.locate import locate_index
        from graphrag_audit.io.remote import location_of

        if location_of(index_dir) is not None:  # in Azure Blob Storage or S3: no local file to protect
            return cls()
        return cls().protect_located(locate_index(index_dir))

    def protect_located(self, files) -> Guard:
        """Add a located index (:class:`~graphrag_audit.io.locate.IndexFiles`): its directory and
        tables, and the settings file and ``.env`` read to find it."""
        self.protect(files.output_dir, files.tables.values())
        if files.settings_file is not None:
            self.protect_read(files.settings_file).protect_read(files.settings_file.parent / ".env")
        return self

    def protect_read(self, path) -> Guard:
        """Add a file the run reads (settings, ``.env``, a baseline, a ``--relevant`` list): no write
        may replace or append to it, by any name (resolved path, directory entry or inode)."""
        if path is not None:
            real = os.path.realpath(path)
            self._protect_file(real, f"{real}, a file this run reads")
        return self

    def protect_model(self, model) -> Guard:
        """Add a loaded :class:`~graphrag_audit.model.index.IndexModel` (its directory and table
        files, and the settings file and ``.env`` followed to it)."""
        from graphrag_audit.io.remote import RemoteName

        settings = getattr(model, "settings_file", None)
        if settings is not None:
            self.protect_read(settings).protect_read(Path(settings).parent / ".env")
        if isinstance(model.output_dir, RemoteName):  # read in place from remote storage
            return self
        return self.protect(model.output_dir, model.files.values())

    def protect(self, output_dir, tables: Iterable = ()) -> Guard:
        real = os.path.realpath(output_dir)
        self._protect_dir(real, index=True)
        for t in tables:
            self._protect_file(os.path.realpath(t))
        try:
            with os.scandir(real) as it:
                for i, entry in enumerate(it):
                    if i >= MAX_SCAN_ENTRIES:
                        break
                    try:
                        if entry.is_symlink():
                            target = os.path.realpath(entry.path)
                            if os.path.isdir(target):
                                if not _inside(real, target):  # a link up the tree is not the index
                                    self._protect_dir(target, index=False)
                            else:
                                self._protect_file(target)
                    except (OSError, ValueError):
                        continue
        except OSError:
            pass
        self._hard_links(real)
        return self

    def _hard_links(self, real: str) -> None:
        """Every file under the index folder with another name somewhere (``st_nlink > 1``): a
        write there would change the index through that name. Links are not followed."""
        seen, stack = 0, [real]
        while stack:
            try:
                with os.scandir(stack.pop()) as it:
                    for entry in it:
                        seen += 1
                        if seen > MAX_SCAN_ENTRIES:
                            self.unscanned = real
                            return
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                stack.append(entry.path)
                            elif entry.is_file(follow_symlinks=False):
                                st = entry.stat(follow_symlinks=False)
                                if st.st_nlink > 1:
                                    self.files.setdefault(_key(st), f"{entry.path}, a file of the index")
                        except OSError:
                            continue
            except OSError:
                continue

    def _protect_dir(self, real: str, index: bool) -> None:
        what = f"the index directory {real}" if index else f"{real}, a folder the index directory links to"
        if index or real not in self.dir_paths:
            self.dir_paths[real] = what
        try:
            key = _key(os.stat(real))
            if index or key not in self.dirs:
                self.dirs[key] = what
        except OSError:
            return
        if index:
            p = real
            while True:
                parent = os.path.dirname(p)
                if parent == p:
                    break
                p = parent
                try:
                    self.ancestors.setdefault(_key(os.stat(p)), real)
                except OSError:
                    pass

    def _protect_file(self, real: str, what: str | None = None) -> None:
        what = what or f"{real}, a file of the index"
        self.file_paths.setdefault(real, what)
        try:
            st = os.stat(real)
            parent = os.stat(os.path.dirname(real) or os.sep)
        except OSError:
            return
        self.files.setdefault(_key(st), what)
        self.entries.setdefault((_key(parent), os.path.basename(real)), what)

    # ---- checks -----------------------------------------------------------------------
    def dir_refusal(self, dfd: int, path: str | None = None) -> str | None:
        """Why nothing may be written into the directory open at ``dfd``, or None."""
        for k in _fd_chain(dfd):
            if k in self.dirs:
                return f"refusing to write inside {self.dirs[k]}"
        real = _fd_path(dfd, path)
        if real is not None:
            for d in sorted(self.dir_paths):
                if _inside(real, d):
                    return f"refusing to write inside {self.dir_paths[d]}"
        return None

    def path_refusal(self, path: str) -> str | None:
        """The path-only check, for a folder that cannot be opened (it may not exist or not be a
        folder: nothing can be written there, but a path into the index is still named as such)."""
        real = os.path.realpath(path)
        for d in sorted(self.dir_paths):
            if _inside(real, d):
                return f"refusing to write inside {self.dir_paths[d]}"
        for f in sorted(self.file_paths):
            if _inside(real, f):
                return f"refusing to write over {self.file_paths[f]}"
        return None

    def entry_refusal(
        self, dfd: int, name: str, st: os.stat_result | None, path: str | None = None
    ) -> str | None:
        """Why the name ``name`` in the directory open at ``dfd`` (existing as ``st``) may not be written."""
        hit = self.entries.get((_key(os.fstat(dfd)), name))
        if hit is None and st is not None and stat.S_ISREG(st.st_mode):
            hit = self.files.get(_key(st))
            if hit is None and st.st_nlink > 1 and self.unscanned:
                return (
                    f"refusing to write over a file with several names: {self.unscanned} has too many files "
                    f"to tell whether one of them is this file"
                )
        if hit is None:
            real = _fd_path(dfd, path)
            if real is not None:
                hit = self.file_paths.get(os.path.join(real, name))
        if hit is not None:
            return f"refusing to write over {hit}"
        return None

    def contains_refusal(self, dfd: int) -> str | None:
        """Why the directory open at ``dfd`` may not be written as a whole (it holds an index)."""
        k = _key(os.fstat(dfd))
        if k in self.ancestors:
            return f"refusing to write into a directory that contains the index directory {self.ancestors[k]}"
        return None

    # ---- one file target --------------------------------------------------------------
    def open_target(self, target) -> _Place:
        """Check a file target and hold its directory open (the caller closes ``place.dfd``)."""
        t = os.fspath(target)
        parent, name = os.path.split(t)
        if not name or name in (".", ".."):
            self._refuse_directory(t, t)
        try:
            dfd = os.open(parent or ".", _DIR_FLAGS)
        except OSError as exc:
            raise WriteError(
                t, self.path_refusal(parent or ".") or f"cannot write ({_reason(exc)})"
            ) from None
        try:
            why = self.dir_refusal(dfd, parent or ".")
            if why:
                raise WriteError(t, why)
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            except OSError as exc:
                raise WriteError(t, f"cannot write ({_reason(exc)})") from None
            if st is not None:
                if stat.S_ISLNK(st.st_mode):
                    why = self._link_refusal(dfd, name)
                    raise WriteError(
                        t,
                        why
                        or "is a symbolic link: refusing to write through it (name the file it points to)",
                    )
                if stat.S_ISDIR(st.st_mode):
                    self._refuse_directory(t, name, dfd)
                if not stat.S_ISREG(st.st_mode):
                    raise WriteError(
                        t,
                        "not a regular file (a FIFO, device or socket): refusing to write "
                        "to it (-o - writes to stdout)",
                    )
            why = self.entry_refusal(dfd, name, st, parent or ".")
            if why:
                raise WriteError(t, why)
            return _Place(dfd, name, t, st)
        except BaseException:
            os.close(dfd)
            raise

    def _link_refusal(self, dfd: int, name: str) -> str | None:
        """A link that leads into the index gets the index message (clearer than 'a link')."""
        try:
            sub = os.open(name, _DIR_FLAGS, dir_fd=dfd)
        except OSError:
            try:
                st = os.stat(name, dir_fd=dfd)
            except OSError:
                return None
            hit = self.files.get(_key(st))
            return f"refusing to write over {hit}" if hit else None
        try:
            return self.dir_refusal(sub)
        finally:
            os.close(sub)

    def _refuse_directory(self, shown: str, name: str, dfd: int | None = None):
        try:
            sub = (
                os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=dfd)
                if dfd is not None
                else os.open(name, _DIR_FLAGS)
            )
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                raise WriteError(shown, "not a file name") from None
            raise WriteError(shown, f"cannot write ({_reason(exc)})") from None
        try:
            why = self.dir_refusal(sub)
        finally:
            os.close(sub)
        raise WriteError(shown, why or "is a directory")


@dataclass
class _Place:
    dfd: int  # the target's directory, held open
    name: str
    shown: str  # the target as given, for messages
    existing: os.stat_result | None


def _tmp_name(name: str) -> bytes:
    return b"." + os.fsencode(name)[:96] + b".graphrag-audit-" + secrets.token_hex(6).encode() + b".tmp"


def _write_at(place: _Place, data: Data, guard: Guard) -> None:
    """Write ``data`` to a temporary file in ``place.dfd``, fsync it, re-check, rename it over
    ``place.name``. On any failure the temporary file is removed and the target is untouched."""
    tmp = _tmp_name(place.name)
    fd = None
    created = False
    try:
        fd = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666, dir_fd=place.dfd
        )
        created = True
        if place.existing is not None:
            os.fchmod(fd, stat.S_IMODE(place.existing.st_mode))
        with open(fd, "wb", closefd=False) as fh:
            if callable(data):
                data(fh)
            else:
                fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.fsync(fd)
        os.close(fd)
        fd = None
        try:  # the checks again, just before the target changes
            now = os.stat(place.name, dir_fd=place.dfd, follow_symlinks=False)
        except FileNotFoundError:
            now = None
        why = guard.dir_refusal(place.dfd) or guard.entry_refusal(place.dfd, place.name, now)
        if why:
            raise WriteError(place.shown, why)
        if now is not None and stat.S_ISDIR(now.st_mode):
            raise WriteError(place.shown, "is a directory")
        os.replace(tmp, os.fsencode(place.name), src_dir_fd=place.dfd, dst_dir_fd=place.dfd)
        created = False
        _fsync_dir(place.dfd)
    except BaseException as exc:
        if fd is not None:
            os.close(fd)
        if created:
            try:
                os.unlink(tmp, dir_fd=place.dfd)
            except OSError:
                pass
        if isinstance(exc, OSError) and not isinstance(exc, WriteError):
            raise WriteError(place.shown, f"cannot write ({_reason(exc)})") from None
        raise


def write_file(target, data: Data, guard: Guard | None = None) -> None:
    """Write ``data`` (bytes, str as UTF-8, or a function writing to a binary file) to ``target``
    atomically, after the guard's checks. Raises :class:`WriteError`."""
    g = guard if guard is not None else Guard()
    place = g.open_target(target)
    try:
        _write_at(place, data, g)
    finally:
        os.close(place.dfd)


def check_file_target(target, guard: Guard) -> None:
    """The checks of :func:`write_file` without writing (to fail before any work)."""
    os.close(guard.open_target(target).dfd)


def check_append_target(target, guard: Guard) -> None:
    """The guard's refusals for an append target (raises); problems that only skip the append
    (missing directory, a link, a FIFO) are left to :func:`append_file`."""
    t = os.fspath(target)
    parent, name = os.path.split(t)
    try:
        dfd = os.open(parent or ".", _DIR_FLAGS)
    except OSError:
        why = guard.path_refusal(parent or ".")
        if why:
            raise WriteError(t, why) from None
        return
    try:
        why = guard.dir_refusal(dfd, parent or ".")
        if not why and name:
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except OSError:
                st = None
            why = guard.entry_refusal(dfd, name, st, parent or ".")
            if not why and st is not None and (stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                why = guard._link_refusal(dfd, name)  # a link or folder leading into the index
        if why:
            raise WriteError(t, why)
    finally:
        os.close(dfd)


def append_file(target, text: str, guard: Guard | None = None) -> str | None:
    """Append ``text`` to the regular file ``target`` (created when missing). Returns None, or a
    warning saying why nothing was appended. A target the guard refuses raises :class:`WriteError`."""
    g = guard if guard is not None else Guard()
    t = os.fspath(target)
    check_append_target(t, g)
    parent, name = os.path.split(t)
    if not name:
        return f"{t}: is a directory"
    try:
        dfd = os.open(parent or ".", _DIR_FLAGS)
    except OSError as exc:
        return f"{t}: cannot append ({_reason(exc)})"
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            return f"{t}: cannot append ({_reason(exc)})"
        if st is not None and stat.S_ISLNK(st.st_mode):
            return f"{t}: is a symbolic link; nothing appended"
        if st is not None and not stat.S_ISREG(st.st_mode):
            return f"{t}: not a regular file (a FIFO, device, socket or directory); nothing appended"
        try:
            fd = os.open(
                name,
                os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC,
                0o666,
                dir_fd=dfd,
            )
        except OSError as exc:
            return f"{t}: cannot append ({_reason(exc)})"
        try:
            now = os.fstat(fd)
            if not stat.S_ISREG(now.st_mode):  # swapped between the check and the open
                return f"{t}: not a regular file; nothing appended"
            why = g.dir_refusal(dfd) or g.entry_refusal(dfd, name, now)
            if why:
                raise WriteError(t, why)
            view = memoryview(text.encode("utf-8"))
            while view:
                n = os.write(fd, view)
                view = view[n:]
        except OSError as exc:
            if isinstance(exc, WriteError):
                raise
            return f"{t}: cannot append ({_reason(exc)})"
        finally:
            os.close(fd)
    finally:
        os.close(dfd)
    return None


class DirectoryWriter:
    """Write the directory ``out_dir`` (see the module docstring). Use as a context manager::

        with DirectoryWriter(out, guard, force=False) as w:
            w.write_file("a.parquet", producer)
            w.copy_file("entities.parquet", src, source_dir)
            final = w.commit(verify=lambda path: ...)

    Leaving the block without :meth:`commit` (an error) removes what this run wrote to a new
    directory; in an existing directory the files already renamed into place stay (each whole).
    """

    def __init__(self, out_dir, guard: Guard, *, force: bool = False):
        self.shown = os.fspath(out_dir)
        self.guard = guard
        self.force = force
        self.pfd: int | None = None  # the parent of OUT
        self.dfd: int | None = None  # where files go: the temporary directory or OUT (locked)
        self.name = ""
        self.tmp_name: bytes | None = None
        self.parent_real = ""
        self.written: list[str] = []
        self.committed = False

    # -- the checks, alone (to fail before any work) or as the first step of open ----------
    def _split(self) -> tuple[str, str]:
        t = self.shown.rstrip(os.sep) or os.sep
        parent, name = os.path.split(t)
        if not name or name in (".", ".."):
            parent, name = os.path.split(os.path.realpath(t))
            if not name:
                raise WriteError(self.shown, "cannot write the root directory")
        return parent or ".", name

    def _open_parent(self, create: bool) -> int:
        parent, _ = self._split()
        try:
            return os.open(parent, _DIR_FLAGS)
        except FileNotFoundError:
            if not create:
                # the nearest existing ancestor decides (the missing folders would be created in it)
                probe = os.path.dirname(os.path.abspath(parent))
                while probe and not os.path.isdir(probe):
                    probe = os.path.dirname(probe)
                try:
                    fd = os.open(probe or os.sep, _DIR_FLAGS)
                except OSError as exc:
                    raise WriteError(
                        self.shown, self.guard.path_refusal(parent) or f"cannot write ({_reason(exc)})"
                    ) from None
                try:
                    why = self.guard.dir_refusal(fd, probe)
                finally:
                    os.close(fd)
                if why:
                    raise WriteError(self.shown, why) from None
                return -1
            fd = self._open_parent(create=False)  # refuses before creating anything inside an index
            if fd >= 0:  # created meanwhile
                return fd
            try:
                os.makedirs(parent, exist_ok=True)
                return os.open(parent, _DIR_FLAGS)
            except OSError as exc:
                raise WriteError(self.shown, f"cannot write ({_reason(exc)})") from None
        except OSError as exc:
            raise WriteError(
                self.shown, self.guard.path_refusal(parent) or f"cannot write ({_reason(exc)})"
            ) from None

    def _existing(self, pfd: int, name: str) -> int | None:
        """Check OUT when it exists; returns its descriptor (or None when it does not exist)."""
        try:
            st = os.stat(name, dir_fd=pfd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise WriteError(self.shown, f"cannot write ({_reason(exc)})") from None
        if stat.S_ISLNK(st.st_mode):
            why = self.guard._link_refusal(pfd, name)
            raise WriteError(
                self.shown,
                why or "is a symbolic link: refusing to write through it (give the directory it points to)",
            )
        if not stat.S_ISDIR(st.st_mode):
            raise WriteError(self.shown, "exists and is not a directory")
        try:
            ofd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=pfd)
        except OSError as exc:
            raise WriteError(self.shown, f"cannot write ({_reason(exc)})") from None
        try:
            why = self.guard.dir_refusal(ofd) or self.guard.contains_refusal(ofd)
            if why:
                raise WriteError(self.shown, why)
        except BaseException:
            os.close(ofd)
            raise
        return ofd

    def _is_empty(self, ofd: int) -> bool:
        try:
            with os.scandir(ofd) as it:
                return next(it, None) is None
        except OSError as exc:
            raise WriteError(self.shown, f"cannot list the directory ({_reason(exc)})") from None

    def check(self) -> None:
        """Refuse now what :meth:`open` would refuse (nothing is created or locked)."""
        pfd = self._open_parent(create=False)
        if pfd < 0:
            return
        try:
            why = self.guard.dir_refusal(pfd, self._split()[0])
            if why:
                raise WriteError(self.shown, why)
            ofd = self._existing(pfd, self._split()[1])
            if ofd is not None:
                try:
                    if not self.force and not self._is_empty(ofd):
                        raise WriteError(
                            self.shown, "exists and is not empty (use --force to write into it anyway)"
                        )
                finally:
                    os.close(ofd)
        finally:
            os.close(pfd)

    # -- writing --------------------------------------------------------------------------
    def __enter__(self) -> DirectoryWriter:
        import fcntl

        parent, self.name = self._split()
        self.pfd = self._open_parent(create=True)
        try:
            why = self.guard.dir_refusal(self.pfd, parent)
            if why:
                raise WriteError(self.shown, why)
            self.parent_real = _fd_path(self.pfd, parent) or os.path.realpath(parent)
            ofd = self._existing(self.pfd, self.name)
            if ofd is not None:
                try:
                    fcntl.flock(ofd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(ofd)
                    raise WriteError(
                        self.shown, "another graphrag-audit run is writing this directory"
                    ) from None
                self.dfd = ofd  # closing it releases the lock
                if not self.force and not self._is_empty(ofd):
                    raise WriteError(
                        self.shown, "exists and is not empty (use --force to write into it anyway)"
                    )
                return self
            tmp = b"." + os.fsencode(self.name)[:96] + b".graphrag-audit-" + secrets.token_hex(6).encode()
            try:
                os.mkdir(tmp, 0o700, dir_fd=self.pfd)
                self.tmp_name = tmp
                self.dfd = os.open(tmp, _DIR_FLAGS | _NOFOLLOW, dir_fd=self.pfd)
            except OSError as exc:
                raise WriteError(self.shown, f"cannot write ({_reason(exc)})") from None
            return self
        except BaseException:
            self._cleanup()
            raise

    @property
    def path(self) -> Path:
        """Where the files are now (the temporary directory until :meth:`commit`)."""
        if self.tmp_name is not None and not self.committed:
            return Path(self.parent_real) / os.fsdecode(self.tmp_name)
        return Path(self.parent_real) / self.name

    @property
    def final_path(self) -> Path:
        return Path(self.parent_real) / self.name

    def _place(self, name: str) -> _Place:
        shown = os.path.join(self.shown, name)
        try:
            st = os.stat(name, dir_fd=self.dfd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise WriteError(shown, f"cannot write ({_reason(exc)})") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise WriteError(shown, "is a directory")
        why = self.guard.entry_refusal(self.dfd, name, st)
        if why:
            raise WriteError(shown, why)
        # a link at the name is replaced by the rename, never written through
        return _Place(self.dfd, name, shown, st if st is not None and stat.S_ISREG(st.st_mode) else None)

    def write_file(self, name: str, data: Data) -> None:
        _write_at(self._place(name), data, self.guard)
        self.written.append(name)

    def link(self, name: str, target: str) -> None:
        """Create the symbolic link ``name`` -> ``target`` (an absolute path; nothing is read or
        written through it). Made under a temporary name and renamed into place, so an existing
        file or link of that name is replaced whole; a directory of that name is refused."""
        place = self._place(name)
        tmp = _tmp_name(name)
        try:
            os.symlink(target, tmp, dir_fd=self.dfd)
        except OSError as exc:
            raise WriteError(place.shown, f"cannot create the link ({_reason(exc)})") from None
        try:
            try:
                now = os.stat(name, dir_fd=self.dfd, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            why = self.guard.dir_refusal(self.dfd) or self.guard.entry_refusal(self.dfd, name, now)
            if why:
                raise WriteError(place.shown, why)
            if now is not None and stat.S_ISDIR(now.st_mode):
                raise WriteError(place.shown, "is a directory")
            os.replace(tmp, os.fsencode(name), src_dir_fd=self.dfd, dst_dir_fd=self.dfd)
        except BaseException as exc:
            try:
                os.unlink(tmp, dir_fd=self.dfd)
            except OSError:
                pass
            if isinstance(exc, OSError) and not isinstance(exc, WriteError):
                raise WriteError(place.shown, f"cannot create the link ({_reason(exc)})") from None
            raise
        self.written.append(name)

    def copy_file(self, name: str, src, source_dir, limit: int = MAX_COPY_BYTES) -> int:
        """Copy the regular file ``src`` (which must lie inside ``source_dir`` once links are
        resolved) as ``name``; returns the bytes copied. Never opens a FIFO or device."""
        src_shown = os.fspath(src)
        real = os.path.realpath(src)
        root = os.path.realpath(source_dir)
        if not _inside(real, root) or real == root:
            raise WriteError(
                src_shown, "is a symbolic link out of the source index directory: refusing to copy it"
            )
        try:
            st = os.stat(real, follow_symlinks=False)
        except OSError as exc:
            raise WriteError(src_shown, f"cannot read ({_reason(exc)})") from None
        if not stat.S_ISREG(st.st_mode):
            raise WriteError(src_shown, "not a regular file: refusing to copy it")
        try:
            fd = os.open(real, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _NOCTTY | _CLOEXEC)
        except OSError as exc:
            raise WriteError(src_shown, f"cannot read ({_reason(exc)})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise WriteError(src_shown, "not a regular file: refusing to copy it")
            size = st.st_size
            if size > limit:
                raise WriteError(src_shown, f"is {size:,} bytes, more than the {limit:,} a copy may take")

            def produce(fh: BinaryIO) -> None:
                left = size
                while left:
                    chunk = os.read(fd, min(left, 1 << 20))
                    if not chunk:
                        raise WriteError(src_shown, "shrank while it was copied")
                    fh.write(chunk)
                    left -= len(chunk)
                if os.read(fd, 1):
                    raise WriteError(src_shown, "grew while it was copied")

            self.write_file(name, produce)
        finally:
            os.close(fd)
        return size

    def commit(self, verify: Callable[[Path], object] | None = None) -> Path:
        """Read back (``verify(path)`` raises to refuse), then publish. Returns the final path."""
        if verify is not None:
            verify(self.path)
        if self.tmp_name is None:  # an existing OUT, written in place under the lock
            self._same_directory()
            self.committed = True
            return self.final_path
        mask = os.umask(0)
        os.umask(mask)
        try:
            os.fchmod(self.dfd, 0o777 & ~mask)
            why = self.guard.dir_refusal(self.pfd)
            if why:
                raise WriteError(self.shown, why)
            os.rename(self.tmp_name, os.fsencode(self.name), src_dir_fd=self.pfd, dst_dir_fd=self.pfd)
        except OSError as exc:
            if isinstance(exc, WriteError):
                raise
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise WriteError(
                    self.shown,
                    "exists and is not empty: another run wrote it while this one was "
                    "writing (nothing of this run was kept)",
                ) from None
            if exc.errno == errno.ENOTDIR:
                raise WriteError(self.shown, "exists and is not a directory") from None
            raise WriteError(self.shown, f"cannot write ({_reason(exc)})") from None
        self.committed = True
        _fsync_dir(self.pfd)
        self._same_directory()
        return self.final_path

    def _same_directory(self) -> None:
        """OUT must still be the directory written (not replaced by another run meanwhile)."""
        try:
            now = os.stat(self.name, dir_fd=self.pfd, follow_symlinks=False)
        except OSError as exc:
            raise WriteError(self.shown, f"vanished after writing ({_reason(exc)})") from None
        if _key(now) != _key(os.fstat(self.dfd)):
            raise WriteError(self.shown, "was replaced by another process while this run wrote it")

    def _cleanup(self) -> None:
        if self.tmp_name is not None and not self.committed and self.dfd is not None:
            try:  # only files this run created, in a directory only it knows
                for entry in os.listdir(self.dfd):
                    try:
                        os.unlink(entry, dir_fd=self.dfd)
                    except OSError:
                        pass
                os.rmdir(self.tmp_name, dir_fd=self.pfd)
            except OSError:
                pass
        for fd in (self.dfd, self.pfd):
            if fd is not None and fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self.dfd = self.pfd = None

    def __exit__(self, *exc) -> None:
        self._cleanup()

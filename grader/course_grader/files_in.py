"""Files a student controls, read or copied one way only: relative to a directory descriptor, every
component opened with ``O_NOFOLLOW``, regular files only, with limits on size, depth and count.

A check made on a path and an open made later on the same path see two different files when the
student swaps them in between (a red-team case swapped its notebook for a link to a classmate's while
``collect`` ran). Here nothing is checked on a path: each file is opened first, without following a
link (``O_NOFOLLOW`` at every component, ``O_NONBLOCK`` so a named pipe never waits), and then what was
opened is checked (``fstat``: a regular file, one name, its owner) and read from that descriptor. A
folder is copied the same way into a private staging folder (mode 0700, files 0600), so what the grader
uses is what it checked. Anything else (a link, a pipe, a socket, a device, a folder where a file
belongs, a file too large, too deep, too many) raises :class:`Refused`, whose message quotes names
with ``ascii()``; the caller refuses that submission alone and goes on.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY


class Refused(ValueError):
    """A file or folder a student controls is not what the grader reads or copies."""


@dataclass(frozen=True)
class Limits:
    """What one submission may hold."""
    file_bytes: int = 20 << 20        # one file
    total_bytes: int = 100 << 20      # the whole folder
    depth: int = 8                    # folders inside folders
    entries: int = 2000               # files and folders in all


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return name
    return "not a regular file"


def open_dir(name: str, dir_fd: int | None = None) -> int:
    """A descriptor of the folder ``name`` (relative to ``dir_fd``), a link never followed."""
    try:
        return os.open(name, _DIR, dir_fd=dir_fd)
    except OSError as e:
        raise Refused(f"{ascii(name)} is not a folder that can be opened without following a link "
                      f"({e.strerror})") from None


def open_path(path: str, root: str) -> int:
    """A descriptor of the folder ``path`` under the instructor's ``root`` (which may hold links of
    the instructor's own), each component below ``root`` opened with ``O_NOFOLLOW``."""
    rel = os.path.relpath(path, root)
    if rel == os.curdir:
        return open_dir(root)
    if rel.startswith(os.pardir) or os.path.isabs(rel):
        raise Refused(f"{ascii(path)} is not under {ascii(root)}")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for piece in rel.split(os.sep):
            nxt = open_dir(piece, fd)
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(name: str, dir_fd: int, max_bytes: int, uid: int | None = None) -> tuple[int, os.stat_result]:
    """(descriptor, its stat) of the regular file ``name`` in ``dir_fd``: opened without following a
    link, then checked on what was opened (regular, one name, at most ``max_bytes``, owned by ``uid``)."""
    try:
        fd = os.open(name, _FILE, dir_fd=dir_fd)
    except OSError as e:
        try:
            kind = _kind(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
        except OSError:
            kind = e.strerror
        raise Refused(f"{ascii(name)} is {kind}, not a regular file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{ascii(name)} is {_kind(info.st_mode)}, not a regular file")
        if info.st_nlink > 1:
            raise Refused(f"{ascii(name)} is a hard link (a file with a second name)")
        if info.st_size > max_bytes:
            raise Refused(f"{ascii(name)} is larger than {max_bytes} bytes")
        if uid is not None and info.st_uid != uid:
            raise Refused(f"{ascii(name)} belongs to uid {info.st_uid}, not {uid}")
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def _read_fd(fd: int, max_bytes: int, name: str) -> bytes:
    chunks, size = [], 0
    while chunk := os.read(fd, 1 << 20):
        size += len(chunk)
        if size > max_bytes:                        # it grew after fstat
            raise Refused(f"{ascii(name)} is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def read_regular(name: str, dir_fd: int, max_bytes: int, uid: int | None = None) -> bytes:
    """The bytes of the regular file ``name`` in ``dir_fd`` (:func:`open_regular`'s checks)."""
    fd, _ = open_regular(name, dir_fd, max_bytes, uid)
    try:
        return _read_fd(fd, max_bytes, name)
    finally:
        os.close(fd)


def read_file(path: str, root: str, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path`` under ``root``, every component below ``root`` opened
    without following a link."""
    folder = open_path(os.path.dirname(os.path.abspath(path)), os.path.abspath(root))
    try:
        return read_regular(os.path.basename(path), folder, max_bytes)
    finally:
        os.close(folder)


def copy_tree(src_fd: int, dest: str, uid: int | None, limits: Limits = Limits(),
              skip=lambda name, depth: False) -> float:
    """Copy the folder ``src_fd`` into the new folder ``dest`` (made 0700, its files 0600), checking
    each entry on the descriptor it was read from (a folder or a regular file of one name, owned by
    ``uid``; no link followed, nothing else). ``skip(name, depth)`` leaves an entry out (nbgrader's
    ignore patterns; ``depth`` 0 is the folder itself). Returns the latest ``st_ctime`` of what was
    copied (the kernel sets it; no user can). Raises :class:`Refused` on anything else."""
    state = {"entries": 0, "bytes": 0, "ctime": 0.0}
    os.mkdir(dest, 0o700)

    def walk(fd: int, into: str, depth: int) -> None:
        info = os.fstat(fd)
        if uid is not None and info.st_uid != uid:
            raise Refused(f"a folder belongs to uid {info.st_uid}, not {uid}")
        state["ctime"] = max(state["ctime"], info.st_ctime)
        if depth > limits.depth:
            raise Refused(f"folders nested deeper than {limits.depth}")
        for name in sorted(os.listdir(fd)):
            state["entries"] += 1
            if state["entries"] > limits.entries:
                raise Refused(f"more than {limits.entries} files and folders")
            if skip(name, depth):
                continue
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError as e:                                # gone or changed since listed
                raise Refused(f"{ascii(name)} changed while it was copied ({e.strerror})") from None
            if stat.S_ISDIR(mode):
                sub = open_dir(name, fd)
                try:
                    os.mkdir(os.path.join(into, name), 0o700)
                    walk(sub, os.path.join(into, name), depth + 1)
                finally:
                    os.close(sub)
                continue
            f, entry = open_regular(name, fd, limits.file_bytes, uid)
            try:
                state["bytes"] += entry.st_size
                if state["bytes"] > limits.total_bytes:
                    raise Refused(f"more than {limits.total_bytes} bytes in all")
                state["ctime"] = max(state["ctime"], entry.st_ctime)
                data = _read_fd(f, limits.file_bytes, name)
            finally:
                os.close(f)
            out = os.open(os.path.join(into, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(out, "wb") as w:
                w.write(data)
    walk(src_fd, dest, 0)
    return state["ctime"]

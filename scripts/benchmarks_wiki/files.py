"""Plain JSON files that survive a crash, and the lock that keeps two processes apart.

Every file is written to a temporary name and renamed into place, so a crash leaves the old
file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from pathlib import Path
from typing import Callable, Iterator

from .errors import fail


def write_atomically(path: Path, content: dict, exclusive: bool = False) -> None:
    """Write ``content`` as JSON to ``path`` whole or not at all; with ``exclusive``, only
    where no file is yet (FileExistsError otherwise), so that two runs never both write it."""
    write_text_atomically(path, json.dumps(content, ensure_ascii=True, indent=1, sort_keys=True) + "\n", exclusive)


def write_text_atomically(path: Path, text: str, exclusive: bool = False) -> None:
    """Write ASCII ``text`` to ``path`` whole or not at all, as :func:`write_atomically`."""
    def write(temporary: Path) -> None:
        with open(temporary, "x", encoding="ascii") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())

    replace_atomically(path, write, exclusive)


def replace_atomically(path: Path, write: Callable[[Path], None], exclusive: bool = False) -> None:
    """Let ``write`` fill a temporary file beside ``path``, then rename it into place (with
    ``exclusive``, link it there, which fails on a file already in place)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        write(temporary)
        if exclusive:
            _link(temporary, path)
        else:
            os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    with contextlib.suppress(OSError, AttributeError):  # the rename itself, where a folder can be synced
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def settled(draft: Path) -> bool:
    """Whether a draft is done with: published, refused for good, or discarded."""
    return any(beside(draft, suffix).exists() for suffix in SETTLED)


def _link(temporary: Path, path: Path) -> None:
    """Put ``temporary`` at ``path`` only if no file is there (FileExistsError otherwise)."""
    try:
        os.link(temporary, path)
    except FileExistsError:
        raise
    except OSError:
        # A file system without hard links (FAT, some network mounts): claim the name, then
        # fill it; a stop between the two leaves an empty file, read as damaged, never two.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL))
        os.replace(temporary, path)
        return
    os.unlink(temporary)


def read_record(path: Path) -> dict:
    """The JSON object in ``path``; an empty one when it is missing, unreadable or not an object."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}


# What goes beside a draft: its receipt once published, its refusal, the note that it was
# discarded, and its lock.
RECEIPT, REFUSAL, DISCARDED, LOCK = ".receipt.json", ".refused.json", ".discarded.json", ".lock"
SETTLED = (RECEIPT, REFUSAL, DISCARDED)


def beside(draft: Path, suffix: str) -> Path:
    """The file that goes with a draft: its receipt, refusal or lock."""
    base = draft.name[: -len(".json")] if draft.name.endswith(".json") else draft.name
    return draft.with_name(base + suffix)


def as_path(value, what: str) -> Path:
    """A caller's path: text or any os.PathLike."""
    try:
        return Path(os.fspath(value))
    except TypeError:
        raise fail("not_text", what=what, type=type(value).__name__) from None


# How long a send waits for a draft that another run is sending, and how often it looks.
LOCK_WAIT, LOCK_POLL = 60.0, 0.05


@contextlib.contextmanager
def locked(draft: Path, wait: float = LOCK_WAIT, sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Hold the draft's lock, so that two processes never send it at the same moment; give
    up after ``wait`` seconds rather than wait for ever on a run that never lets go."""
    try:
        # Never through a link another user left in its place, and readable by no one else.
        handle = os.fdopen(os.open(beside(draft, LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600),
                           "r+b")
    except OSError as error:
        raise fail("cannot_lock", path=draft, problem=error.strerror or error) from None
    take, release = _platform_lock()
    with handle:
        deadline = clock() + wait
        while not _taken(take, handle, draft):
            if clock() >= deadline:
                raise fail("lock_timeout", path=draft, seconds=wait)
            sleep(LOCK_POLL)
        try:
            yield
        finally:
            release(handle)


def _taken(take: Callable, handle, draft: Path) -> bool:
    try:
        return take(handle)
    except OSError as error:
        raise fail("cannot_lock", path=draft, problem=error.strerror or error) from None


def _platform_lock() -> tuple:
    """Functions that take a file's lock without waiting (True when taken) and release it:
    ``fcntl.flock`` where there is one, else Windows' ``msvcrt.locking``."""
    try:
        import fcntl
    except ImportError:
        import msvcrt

        return _msvcrt_lock(msvcrt)
    return _fcntl_lock(fcntl)


def _fcntl_lock(fcntl) -> tuple:
    def take(handle) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    return take, lambda handle: fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _msvcrt_lock(msvcrt) -> tuple:
    """The lock on a file's first byte; another handle holding it is refused with EACCES (or
    EDEADLOCK), any other error is not a wait but a failure."""
    def take(handle) -> bool:
        handle.seek(0)
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError as error:
            if error.errno in (errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)):
                return False
            raise
        return True

    def release(handle) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

    return take, release

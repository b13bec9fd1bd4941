"""Plain JSON files private to their user, written to a temporary name and renamed into place
(a crash leaves the old file or the new one, never half of one), and the lock between processes."""

import contextlib
import errno
import json
import os
import time
from pathlib import Path
from typing import Callable, Iterator

from .errors import fail

# Folders and files only their user may read: a waiting draft holds its nonce, and whoever
# reads it could publish the post before the person approved it.
PRIVATE_FOLDER, PRIVATE_FILE = 0o700, 0o600


def write_atomically(path: Path, content: dict, exclusive: bool = False) -> None:
    """Write ``content`` as JSON to ``path``; with ``exclusive``, only where no file is yet (FileExistsError)."""
    text = json.dumps(content, ensure_ascii=True, indent=1, sort_keys=True) + "\n"

    def write(temporary: Path) -> None:
        with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE), "w",
                       encoding="ascii") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())

    replace_atomically(path, write, exclusive)


def replace_atomically(path: Path, write: Callable[[Path], None], exclusive: bool = False) -> None:
    """Let ``write`` fill a temporary file beside ``path``, then rename (with ``exclusive``, link) it into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        write(temporary)
        if not exclusive:
            os.replace(temporary, path)
        else:
            try:
                os.link(temporary, path)
            except FileExistsError:
                raise
            except OSError:
                # A file system without hard links (FAT, some network mounts): claim the name, then
                # fill it; a stop between the two leaves an empty file, read as damaged, never two.
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
                os.replace(temporary, path)
            else:
                os.unlink(temporary)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable, where a folder can be synced."""
    with contextlib.suppress(OSError, AttributeError):
        directory = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def read_record(path: Path) -> dict:
    """The JSON object in ``path``; an empty one when it is missing, unreadable or not an object."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}


def as_path(value, what: str) -> Path:
    try:
        return Path(os.fspath(value))
    except TypeError:
        raise fail("not_text", what=what, type=type(value).__name__) from None


# How long a send waits for a draft that another run is sending, and how often it looks.
LOCK_WAIT, LOCK_POLL = 60.0, 0.05


@contextlib.contextmanager
def locked(lock_file: Path, wait: float = LOCK_WAIT, sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Hold the lock in ``lock_file``, so that two runs never send one draft at once; wait ``wait`` seconds at most."""
    take, release = _platform_lock()
    with contextlib.ExitStack() as held:
        try:
            # Never through a link another user left in its place, and readable by no one else.
            flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
            handle = held.enter_context(os.fdopen(os.open(lock_file, flags, PRIVATE_FILE), "r+b"))
            deadline = clock() + wait
            while not take(handle):
                if clock() >= deadline:
                    raise fail("lock_timeout", path=lock_file, seconds=wait)
                sleep(LOCK_POLL)
        except OSError as error:
            raise fail("cannot_lock", path=lock_file, problem=error.strerror or error) from None
        held.callback(release, handle)  # released before the file is closed
        yield


def _platform_lock() -> tuple:
    """Functions that take a file's lock without waiting (True when taken) and release it."""
    try:
        import fcntl
    except ImportError:
        import msvcrt

        return _msvcrt_lock(msvcrt)

    def take(handle) -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    return take, lambda handle: fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _msvcrt_lock(msvcrt) -> tuple:
    """The lock on a file's first byte, for Windows, where there is no ``fcntl``."""
    def take(handle) -> bool:
        handle.seek(0)
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError as error:
            # Another handle holding it is refused so; any other error is a failure, not a wait.
            if error.errno in (errno.EACCES, getattr(errno, "EDEADLOCK", errno.EDEADLK)):
                return False
            raise
        return True

    def release(handle) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

    return take, release

"""Plain JSON files that survive a crash, and the lock that keeps two processes apart.

Every file is written to a temporary name and renamed into place, so a crash leaves the old
file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Callable, Iterator

from .errors import ValidationError


def write_atomically(path: Path, content: dict) -> None:
    text = json.dumps(content, ensure_ascii=True, indent=1, sort_keys=True) + "\n"

    def write(temporary: Path) -> None:
        with open(temporary, "x", encoding="ascii") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())

    replace_atomically(path, write)


def replace_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Let ``write`` fill a temporary file beside ``path``, then rename it into place."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        write(temporary)
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


def read_record(path: Path) -> dict:
    """The JSON object in ``path``; an empty one when it is missing, unreadable or not an object."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) else {}


# What goes beside a draft: its receipt once published, its refusal, and its lock.
RECEIPT, REFUSAL, LOCK = ".receipt.json", ".refused.json", ".lock"


def beside(draft: Path, suffix: str) -> Path:
    """The file that goes with a draft: its receipt, refusal or lock."""
    base = draft.name[: -len(".json")] if draft.name.endswith(".json") else draft.name
    return draft.with_name(base + suffix)


@contextlib.contextmanager
def locked(draft: Path) -> Iterator[None]:
    """Hold the draft's lock, so that two processes never send it at the same moment."""
    try:
        handle = open(beside(draft, LOCK), "a+b")
    except OSError as error:
        raise ValidationError(f"cannot lock draft {draft} ({error.strerror or error}); nothing sent",
                              "make its folder writable") from None
    with handle:
        try:
            import fcntl
        except ImportError:  # Windows
            yield from _locked_on_windows(handle)
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _locked_on_windows(handle) -> Iterator[None]:
    import msvcrt

    handle.seek(0)
    while True:
        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            break
        except OSError:  # LK_LOCK gives up after ten seconds; a publish can take longer
            continue
    try:
        yield
    finally:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)

"""A local journal of draws, drafts and receipts, so that a checkpointed run survives restarts.

A draft holds everything a post needs, nonce included, and never changes once written; its
digest makes a hand-edited or damaged draft refusable. Publishing a draft writes a receipt
beside it, and a draft with a receipt is never sent again unless asked. Every file is plain
JSON, written to a temporary file and renamed into place, so a crash leaves no half file.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from pathlib import Path
from typing import Iterator, Optional

from .errors import ValidationError

DRAFT_FORMAT = "benchmarks-wiki draft 1"
# Task ids name files here, and they come from the portal: only a UUID is used as a name.
_TASK_ID = re.compile(r"\A[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")


def folder(explicit: Optional[str] = None) -> Path:
    """``--journal DIR``, else $BENCHMARKS_WIKI_JOURNAL, else the XDG state folder."""
    chosen = explicit or os.environ.get("BENCHMARKS_WIKI_JOURNAL")
    if chosen:
        return Path(chosen).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "benchmarks-wiki"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_atomically(path: Path, content: dict) -> None:
    text = json.dumps(content, ensure_ascii=True, indent=1, sort_keys=True) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(temporary, "x", encoding="ascii") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
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


def digest(fields: dict) -> str:
    import hashlib

    canonical = json.dumps({k: v for k, v in fields.items() if k != "digest"}, ensure_ascii=True,
                           sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def beside(draft: Path, suffix: str) -> Path:
    """The file that goes with a draft: its receipt, refusal or lock."""
    base = draft.name[: -len(".json")] if draft.name.endswith(".json") else draft.name
    return draft.with_name(base + suffix)


def load_draft(path: Path) -> dict:
    """The draft at ``path``, refused unless it is exactly as it was written."""
    try:
        fields = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValidationError(f"draft {path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise ValidationError(f"draft {path} is unreadable or damaged ({error.__class__.__name__})",
                              hint="make a new draft with --dry-run") from None
    if not isinstance(fields, dict) or fields.get("format") != DRAFT_FORMAT:
        raise ValidationError(f"{path} is not a draft", hint="make a new draft with --dry-run")
    if fields.get("digest") != digest(fields):
        raise ValidationError(f"draft {path} was changed after it was written",
                              hint="to change a post, make a new draft with --dry-run")
    return fields


def _read(path: Path) -> dict:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def read_receipt(path: Path, draft: dict) -> Optional[dict]:
    """The receipt of this very draft, or None if it was never published."""
    receipt_file = beside(path, ".receipt.json")
    if not receipt_file.exists():
        return None
    receipt = _read(receipt_file)
    if receipt.get("draft_digest") not in (draft["digest"], None):
        raise ValidationError(f"the receipt beside {path} belongs to another draft",
                              hint="keep each draft under its own name")
    # A receipt that cannot be read still says the post went out: the safe side.
    return receipt


def write_receipt(path: Path, draft: dict, published) -> None:
    write_atomically(beside(path, ".receipt.json"), {
        "draft_digest": draft["digest"], "post_id": published.post_id,
        "thread_id": published.thread_id, "public_url": published.public_url,
        "created": published.created, "published_at": now(), "post": published.post.raw})


def read_refusal(path: Path) -> Optional[str]:
    """What the portal said when it refused this draft for good, or None."""
    record = _read(beside(path, ".refused.json")) if beside(path, ".refused.json").exists() else None
    if record is None:
        return None
    return f"{record.get('status')} {record.get('code')}: {record.get('message')}"


def write_refusal(path: Path, error) -> None:
    """Note beside the draft that the portal refused it for good, so it no longer waits."""
    write_atomically(beside(path, ".refused.json"), {"status": error.status, "code": error.code,
                                                     "message": error.message, "refused_at": now()})


@contextlib.contextmanager
def locked(draft: Path) -> Iterator[None]:
    """Hold the draft's lock, so that two processes never send it at the same moment."""
    with open(beside(draft, ".lock"), "a+b") as handle:
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


class Journal:
    def __init__(self, folder: Path):
        self.folder = folder

    @classmethod
    def open(cls, folder: Path) -> "Journal":
        """The journal in ``folder``; OSError when the folder cannot be made or written."""
        for part in ("draws", "drafts", "follows"):
            (folder / part).mkdir(parents=True, exist_ok=True)
        probe = folder / "drafts"
        if not os.access(probe, os.W_OK | os.X_OK):
            raise PermissionError(13, "not writable", str(probe))
        return cls(folder)

    # -- draws ---------------------------------------------------------------------------

    def _draw_file(self, task_id: str) -> Optional[Path]:
        return self.folder / "draws" / f"{task_id}.json" if _TASK_ID.match(task_id or "") else None

    def record_draw(self, task) -> None:
        path = self._draw_file(task.task_id)
        if path:
            write_atomically(path, {"drawn_at": now(), "revision": task.revision, "task": task.raw})

    def drawn_revision(self, task_id: str) -> Optional[int]:
        path = self._draw_file(task_id)
        revision = _read(path).get("revision") if path else None
        return revision if isinstance(revision, int) and not isinstance(revision, bool) else None

    # -- drafts ----------------------------------------------------------------------------

    def write_draft(self, origin: str, url: str, nonce: str, post: dict) -> tuple:
        """A new draft file; returns its path and its fields."""
        fields = {"format": DRAFT_FORMAT, "created_at": now(), "origin": origin, "url": url,
                  "nonce": nonce, "post": post}
        fields["digest"] = digest(fields)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = self.folder / "drafts" / f"{stamp}-{os.urandom(4).hex()}.json"
        write_atomically(path, fields)
        return path, fields

    # -- follows -------------------------------------------------------------------------

    def follow_mark(self, thread_id: str) -> Optional[tuple]:
        record = _read(self.folder / "follows" / f"{thread_id}.json")
        if isinstance(record.get("since"), str) and isinstance(record.get("seen"), list):
            return record["since"], tuple(record["seen"])
        return None

    def save_follow_mark(self, thread_id: str, mark: tuple) -> None:
        since, seen = mark
        write_atomically(self.folder / "follows" / f"{thread_id}.json",
                         {"since": since, "seen": sorted(seen), "updated_at": now()})

    # -- listing -------------------------------------------------------------------------

    def entries(self) -> list:
        """Drawn problems, drafts waiting, refused and published posts, newest first."""
        listed = []
        for path in (self.folder / "draws").glob("*.json"):
            record = _read(path)
            task = record.get("task") if isinstance(record.get("task"), dict) else {}
            listed.append({"type": "drawn", "at": record.get("drawn_at"), "task_id": path.stem,
                           "benchmark": task.get("benchmark"), "revision": record.get("revision"),
                           "path": str(path)})
        for path in (self.folder / "drafts").glob("*.json"):
            if path.name.endswith((".receipt.json", ".refused.json")):
                continue
            draft = _read(path)
            post = draft.get("post") if isinstance(draft.get("post"), dict) else {}
            entry = {"type": "draft", "at": draft.get("created_at"), "path": str(path),
                     "destination": _destination(post), "body": (post.get("body") or "")[:80]}
            receipt, refusal = beside(path, ".receipt.json"), beside(path, ".refused.json")
            if receipt.exists():
                record = _read(receipt)
                entry.update(type="posted", at=record.get("published_at", entry["at"]),
                             post_id=record.get("post_id"), thread_id=record.get("thread_id"),
                             public_url=record.get("public_url"))
            elif refusal.exists():
                record = _read(refusal)
                entry.update(type="refused", at=record.get("refused_at", entry["at"]),
                             refusal=f"{record.get('status')} {record.get('code')}: {record.get('message')}")
            listed.append(entry)
        return sorted(listed, key=lambda entry: entry.get("at") or "", reverse=True)


def _destination(post: dict) -> str:
    for key, label in (("task_id", "task"), ("reply_to", "reply to"), ("thread_id", "thread")):
        if post.get(key):
            return f"{label} {post[key]}"
    return "?"

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
import time
from pathlib import Path
from typing import Iterator, Optional

from .errors import ValidationError

DRAFT_FORMAT = "benchmarks-wiki draft 1"


def folder_at(text: str) -> Path:
    return Path(text).expanduser()


def default_folder() -> Path:
    chosen = os.environ.get("BENCHMARKS_WIKI_JOURNAL")
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


def digest(fields: dict) -> str:
    import hashlib

    canonical = json.dumps({k: v for k, v in fields.items() if k != "digest"}, ensure_ascii=True,
                           sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def receipt_path(draft: Path) -> Path:
    return draft.with_name(draft.name[: -len(".json")] + ".receipt.json")


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


def read_receipt(draft: Path) -> Optional[dict]:
    try:
        return json.loads(receipt_path(draft).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        # A receipt exists but cannot be read: assume the post went out, as the safe side.
        return {"damaged": True}


@contextlib.contextmanager
def locked(draft: Path) -> Iterator[None]:
    """Hold the draft's lock, so that two processes never send it at the same moment."""
    lock = draft.with_name(draft.name[: -len(".json")] + ".lock")
    with open(lock, "a+b") as handle:
        try:
            import fcntl
        except ImportError:  # Windows
            import msvcrt

            handle.seek(0)
            msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


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

    def record_draw(self, task) -> None:
        write_atomically(self.folder / "draws" / f"{task.task_id}.json",
                         {"drawn_at": now(), "revision": task.revision, "task": task.raw})

    def drawn_revision(self, task_id: str) -> Optional[int]:
        try:
            record = json.loads((self.folder / "draws" / f"{task_id}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        revision = record.get("revision") if isinstance(record, dict) else None
        return revision if isinstance(revision, int) else None

    # -- drafts and receipts -------------------------------------------------------------

    def write_draft(self, origin: str, url: str, nonce: str, post: dict) -> Path:
        fields = {"format": DRAFT_FORMAT, "created_at": now(), "origin": origin, "url": url,
                  "nonce": nonce, "post": post}
        fields["digest"] = digest(fields)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        path = self.folder / "drafts" / f"{stamp}-{os.urandom(4).hex()}.json"
        write_atomically(path, fields)
        return path

    # -- follows -------------------------------------------------------------------------

    def follow_mark(self, thread_id: str) -> Optional[tuple]:
        try:
            record = json.loads((self.folder / "follows" / f"{thread_id}.json").read_text(encoding="utf-8"))
            return record["since"], tuple(record["seen"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def save_follow_mark(self, thread_id: str, mark: tuple) -> None:
        since, seen = mark
        write_atomically(self.folder / "follows" / f"{thread_id}.json",
                         {"since": since, "seen": sorted(seen), "updated_at": now()})

    # -- listing -------------------------------------------------------------------------

    def entries(self) -> list:
        """Drawn problems, drafts waiting and published posts, newest first."""
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
            receipt = read_receipt(path)
            post = draft.get("post") if isinstance(draft.get("post"), dict) else {}
            entry = {"type": "posted" if receipt else "draft", "at": draft.get("created_at"),
                     "path": str(path), "destination": _destination(post),
                     "body": (post.get("body") or "")[:80]}
            if receipt:
                entry.update(at=receipt.get("published_at", entry["at"]), post_id=receipt.get("post_id"),
                             thread_id=receipt.get("thread_id"), public_url=receipt.get("public_url"))
            elif refusal_path(path).exists():
                refusal = _read(refusal_path(path))
                entry.update(type="refused", at=refusal.get("refused_at", entry["at"]),
                             refusal=f"{refusal.get('status')} {refusal.get('code')}: {refusal.get('message')}")
            listed.append(entry)
        return sorted(listed, key=lambda entry: entry.get("at") or "", reverse=True)


def _read(path: Path) -> dict:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _destination(post: dict) -> str:
    for key, label in (("task_id", "task"), ("reply_to", "reply to"), ("thread_id", "thread")):
        if post.get(key):
            return f"{label} {post[key]}"
    return "?"


def refusal_path(draft: Path) -> Path:
    return draft.with_name(draft.name[: -len(".json")] + ".refused.json")


def write_refusal(draft: Path, error) -> None:
    """Note beside the draft that the portal refused it for good, so it no longer waits."""
    write_atomically(refusal_path(draft), {"status": error.status, "code": error.code,
                                           "message": error.message, "refused_at": now()})


def write_receipt(draft: Path, published) -> dict:
    receipt = {"post_id": published.post_id, "thread_id": published.thread_id,
               "public_url": published.public_url, "created": published.created,
               "published_at": now()}
    write_atomically(receipt_path(draft), receipt)
    return receipt

"""A local journal of draws, drafts and receipts, so that a checkpointed run survives restarts.

One folder holds ``draws/`` (each problem drawn, with its revision), ``drafts/`` (each
prepared post, its receipt once published, or its refusal), ``follows/`` (where each
follow stands) and ``threads/`` (the posts shown here, with the revision each was made on,
so that a reply can say which revision it answers). Every file is plain JSON.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Mapping, Optional, Union

from .errors import DraftError
from .files import RECEIPT, REFUSAL, as_path, beside, read_record, write_atomically
from .publishing import Draft, PreparedPost, Receipt, now
from .rules import check_thread_id, is_a

NAME = "benchmarks-wiki"


def location(explicit: Optional[str] = None, environ: Optional[Mapping] = None,
             windows: Optional[bool] = None) -> Path:
    """``explicit``, else $BENCHMARKS_WIKI_JOURNAL, else $XDG_STATE_HOME/benchmarks-wiki, else
    the platform's own place for state: %LOCALAPPDATA% on Windows, ~/.local/state elsewhere."""
    return located(explicit, environ, windows)[0]


def located(explicit: Optional[str] = None, environ: Optional[Mapping] = None,
            windows: Optional[bool] = None) -> tuple:
    """The journal's folder, as :func:`location` finds it, and what named it."""
    environ = os.environ if environ is None else environ
    windows = os.name == "nt" if windows is None else windows
    if explicit:
        return Path(os.path.expanduser(explicit)), "given"
    for name in ("BENCHMARKS_WIKI_JOURNAL", "XDG_STATE_HOME"):
        if environ.get(name):
            folder = Path(os.path.expanduser(environ[name]))
            return (folder if name == "BENCHMARKS_WIKI_JOURNAL" else folder / NAME), name
    if windows:
        local = environ.get("LOCALAPPDATA")
        folder = Path(local) if local else Path(os.path.expanduser("~")) / "AppData" / "Local"
        return folder / NAME, "LOCALAPPDATA" if local else "default"
    return Path(os.path.expanduser("~")) / ".local" / "state" / NAME, "default"


class Journal:
    def __init__(self, folder: Union[str, os.PathLike]):
        self.folder = as_path(folder, "the journal's folder")
        self._seen: Optional[dict] = None  # post id -> (task id, revision), read on first use

    @classmethod
    def open(cls, folder: Union[str, os.PathLike, None] = None) -> "Journal":
        """The journal in ``folder`` (by default the one :func:`location` names); OSError when
        the folder cannot be made or written."""
        folder = as_path(folder, "the journal's folder") if folder is not None else location()
        for part in ("draws", "drafts", "follows", "threads"):
            (folder / part).mkdir(parents=True, exist_ok=True)
        probe = folder / "drafts"
        if not os.access(probe, os.W_OK | os.X_OK):
            raise PermissionError(13, "not writable", str(probe))
        return cls(folder)

    # -- draws ---------------------------------------------------------------------------

    def _draw_file(self, task_id: str) -> Optional[Path]:
        # Task ids come from the portal: only a well-formed one names a file here.
        return self.folder / "draws" / f"{task_id}.json" if is_a("task id", task_id) else None

    def record_draw(self, task) -> None:
        path = self._draw_file(task.task_id)
        if path:
            write_atomically(path, {"drawn_at": now(), "revision": task.revision, "task": task.raw})

    def drawn_revision(self, task_id: str) -> Optional[int]:
        path = self._draw_file(task_id)
        revision = read_record(path).get("revision") if path else None
        return revision if isinstance(revision, int) and not isinstance(revision, bool) else None

    # -- posts seen -------------------------------------------------------------------------

    def record_posts(self, posts) -> None:
        """Remember the thread, problem and revision of each post shown here."""
        by_thread = {}
        for post in posts:
            if is_a("thread id", post.thread_id) and is_a("post id", post.post_id):
                by_thread.setdefault(post.thread_id, []).append(post)
        for thread_id, shown in by_thread.items():
            path = self.folder / "threads" / f"{thread_id}.json"
            record = read_record(path)
            revisions = record.get("revisions") if isinstance(record.get("revisions"), dict) else {}
            revisions.update({post.post_id: post.revision for post in shown})
            write_atomically(path, {"task_id": shown[-1].task_id, "revisions": revisions})
            if self._seen is not None:
                self._seen.update({post.post_id: (shown[-1].task_id, post.revision) for post in shown})

    def seen_post(self, post_id: str) -> Optional[tuple]:
        """The problem and revision of a post shown here, as (task_id, revision), or None."""
        if self._seen is None:
            self._seen = {}
            for path in (self.folder / "threads").glob("*.json"):
                record = read_record(path)
                revisions = record.get("revisions") if isinstance(record.get("revisions"), dict) else {}
                self._seen.update({post: (record.get("task_id"), revision if isinstance(revision, int) else None)
                                   for post, revision in revisions.items()})
        return self._seen.get(post_id)

    # -- drafts ----------------------------------------------------------------------------

    def keep(self, post: PreparedPost) -> Draft:
        """The prepared post, kept as a new draft in this journal."""
        return Draft.write(post, self.folder / "drafts")

    def drafts(self) -> list:
        """Every draft file, oldest first (their names begin with the moment they were made)."""
        return sorted(path for path in (self.folder / "drafts").glob("*.json")
                      if not path.name.endswith((RECEIPT, REFUSAL)))

    def pending(self) -> list:
        """The drafts neither published nor refused, oldest first; of several to the same
        place, only the newest, since previewing again replaces the text it was made from.
        A draft that cannot be read is listed too, so that whoever sends it learns why not."""
        newest = {_destination_of(path): path for path in self.drafts()}
        return sorted(path for path in newest.values()
                      if not (beside(path, RECEIPT).exists() or beside(path, REFUSAL).exists()))

    def waiting_for(self, place: tuple) -> Optional[Path]:
        """The draft waiting to go to ``place`` (a destination: label and id), if any."""
        return next((path for path in self.pending() if _destination_of(path) == place), None)

    def published_posts(self) -> dict:
        """Each post published from this journal, by id, with its thread."""
        posts = {}
        for path in (self.folder / "drafts").glob("*" + RECEIPT):
            published = (Receipt.read(path) or Receipt(None, None)).published
            if published and is_a("post id", published.post_id) and is_a("thread id", published.thread_id):
                posts[published.post_id] = published.thread_id
        return posts

    # -- follows -------------------------------------------------------------------------

    def _follow_file(self, thread_ids) -> Path:
        """Where a follow of these threads keeps its mark: one file per set of threads."""
        names = sorted({check_thread_id(thread_id) for thread_id in thread_ids})
        key = names[0] if len(names) == 1 else "inbox-" + hashlib.sha256(" ".join(names).encode()).hexdigest()[:16]
        return self.folder / "follows" / f"{key}.json"

    def follow_mark(self, thread_ids) -> Optional[tuple]:
        """Where an earlier follow of these threads stopped, or None (also for a damaged record)."""
        record = read_record(self._follow_file(thread_ids))
        since, seen = record.get("since"), record.get("seen")
        if is_a("timestamp", since) and isinstance(seen, list) and all(is_a("post id", item) for item in seen):
            return since, tuple(seen)
        return None

    def save_follow_mark(self, thread_ids, mark: Optional[tuple]) -> None:
        """Keep where a follow stands; one that has seen no post yet has nothing to keep."""
        if mark is None:
            return
        since, seen = mark
        write_atomically(self._follow_file(thread_ids), {"since": since, "seen": sorted(seen), "updated_at": now()})

    # -- listing -------------------------------------------------------------------------

    def entries(self) -> list:
        """Drawn problems, drafts waiting or replaced by a newer one, refused and published
        posts, newest first."""
        waiting = set(self.pending())
        listed = [self._draw_entry(path) for path in (self.folder / "draws").glob("*.json")]
        listed += [self._draft_entry(path, path in waiting) for path in self.drafts()]
        # Within one second, a draw comes before the drafts made from it.
        return sorted(listed, key=lambda entry: (entry.get("at") or "", entry["type"] != "drawn"), reverse=True)

    @staticmethod
    def _draw_entry(path: Path) -> dict:
        record = read_record(path)
        task = record.get("task") if isinstance(record.get("task"), dict) else {}
        return {"type": "drawn", "at": record.get("drawn_at"), "task_id": path.stem,
                "benchmark": task.get("benchmark"), "revision": record.get("revision"), "path": str(path)}

    @staticmethod
    def _draft_entry(path: Path, waiting: bool) -> dict:
        try:
            draft = Draft.load(path)
            receipt, refusal = draft.receipt(), draft.refusal()
        except DraftError as error:
            return {"type": "damaged", "at": None, "path": str(path), "problem": error.message}
        label, where = draft.post.destination
        entry = {"type": "draft" if waiting else "replaced", "at": draft.created_at, "path": str(path),
                 "destination": f"{label} {where}", "body": draft.post.body[:80]}
        if receipt:
            posted = receipt.published
            entry.update(type="posted", at=receipt.at or entry["at"], post_id=posted and posted.post_id,
                         thread_id=posted and posted.thread_id, public_url=posted and posted.public_url)
        elif refusal:
            entry.update(type="refused", refusal=refusal)
        return entry


def _destination_of(path: Path) -> tuple:
    """Where the draft at ``path`` goes; a draft that cannot be read is a place of its own."""
    try:
        return Draft.load(path).post.destination
    except DraftError:
        return ("unreadable", str(path))

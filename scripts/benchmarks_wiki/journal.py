"""A local journal of draws, drafts and receipts, so that a checkpointed run survives restarts.

One folder holds ``draws/`` (each problem drawn, with its revision), ``drafts/`` (each
prepared post, its receipt once published, or its refusal), ``posts/`` (the posts shown
here, with the revision each was made on, so that a reply can say which revision it
answers), ``follows/`` (where each follow stands) and ``archive/`` (sent drafts past
``ARCHIVE_AFTER`` days, by month). Every file is plain JSON.

``index/`` makes a run cost what waits, not what was ever written: a marker per draft that
may be waiting, the caller's keys, and this journal's own posts. It is derived: deleted, it
is written again from the drafts and receipts. Every step writes the index before the fact it
stands for (a marker before its draft, a key before the draft it names), and a reader checks
the fact, so a crash between the two leaves nothing waiting unlisted and nothing sent listed.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import os
import time
from pathlib import Path
from typing import Iterator, Mapping, Optional, Union

from . import JOURNAL_VARIABLE, NAME
from .errors import DraftError, fail
from .files import (DISCARDED, LOCK, RECEIPT, SETTLED, as_path, beside, locked, read_record, settled,
                    write_atomically, write_text_atomically)
from .publishing import Draft, PreparedPost, Receipt, draft_name, now
from .rules import ARCHIVE_AFTER, SETTING_DEFAULT, SETTING_GIVEN, check_text, check_thread_id, is_a

INDEX_FORMAT = 1
# Drafts no longer waiting move to archive/ after ARCHIVE_AFTER days, looked for at most once
# in ARCHIVE_EVERY seconds, after a send.
ARCHIVE_EVERY = 86400
MAX_KEY = 200
# What the index's log of things made names, and the log itself.
DRAWN, DRAFT, MADE = "drawn", "draft", "made.log"


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
        return Path(os.path.expanduser(explicit)), SETTING_GIVEN
    for name in (JOURNAL_VARIABLE, "XDG_STATE_HOME"):
        if environ.get(name):
            folder = Path(os.path.expanduser(environ[name]))
            return (folder if name == JOURNAL_VARIABLE else folder / NAME), name
    if windows:
        local = environ.get("LOCALAPPDATA")
        folder = Path(local) if local else Path(os.path.expanduser("~")) / "AppData" / "Local"
        return folder / NAME, "LOCALAPPDATA" if local else SETTING_DEFAULT
    return Path(os.path.expanduser("~")) / ".local" / "state" / NAME, SETTING_DEFAULT


class Journal:
    def __init__(self, folder: Union[str, os.PathLike]):
        self.folder = as_path(folder, "the journal's folder")
        self._drafts = self.folder / "drafts"
        self._indexed = False

    @classmethod
    def open(cls, folder: Union[str, os.PathLike, None] = None) -> "Journal":
        """The journal in ``folder`` (by default the one :func:`location` names); OSError when
        the folder cannot be made or written."""
        folder = as_path(folder, "the journal's folder") if folder is not None else location()
        for part in ("draws", "drafts", "follows", "posts"):
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
            self._note_made(DRAWN, path.name)
            write_atomically(path, {"drawn_at": now(), "revision": task.revision, "task": task.raw})

    def drawn_revision(self, task_id: str) -> Optional[int]:
        path = self._draw_file(task_id)
        revision = read_record(path).get("revision") if path else None
        return revision if isinstance(revision, int) and not isinstance(revision, bool) else None

    # -- posts seen -------------------------------------------------------------------------

    def record_posts(self, posts) -> None:
        """Remember the thread, problem and revision of each post shown here."""
        for post in posts:
            if not (is_a("thread id", post.thread_id) and is_a("post id", post.post_id)):
                continue
            path = self.folder / "posts" / _file_name(post.post_id)
            record = {"post_id": post.post_id, "thread_id": post.thread_id, "task_id": post.task_id,
                      "revision": post.revision}
            if read_record(path) != record:
                write_atomically(path, record)

    def seen_post(self, post_id: str) -> Optional[tuple]:
        """The problem and revision of a post shown here, as (task_id, revision), or None."""
        self._index()  # a journal of an earlier version has its posts moved in first
        record = read_record(self.folder / "posts" / _file_name(post_id)) if is_a("post id", post_id) else {}
        if record.get("post_id") != post_id:
            return None
        revision = record.get("revision")
        return record.get("task_id"), revision if isinstance(revision, int) else None

    # -- drafts ----------------------------------------------------------------------------

    def keep(self, post: PreparedPost, key: Optional[str] = None) -> Draft:
        """The prepared post, kept as a new draft in this journal. Under a ``key`` of the
        caller's own, only once: keeping the same post under it again returns the draft
        kept first, sent or not, and another post under it is refused."""
        index = self._index()
        name = draft_name()
        if key is not None:
            key_file = index / "keys" / _file_name(_check_key(key))
            try:
                write_atomically(key_file, {"key": key, "draft": name}, exclusive=True)
            except FileExistsError:
                name = read_record(key_file).get("draft") or name
                kept = self._keyed(name, key, post)
                if kept:
                    return kept
        # The marker first: a crash before the draft leaves a marker of nothing, never a
        # draft waiting unlisted.
        write_atomically(index / "waiting" / name, {"to": list(post.destination)})
        self._note_made(DRAFT, name)
        try:
            draft = Draft.write(post, self._drafts / name, key)
        except FileExistsError:  # another run kept the same key at the same moment
            return self._keyed(name, key, post) or Draft.load(self._drafts / name)
        self._unmark_older(post.destination, name)
        return draft

    def _keyed(self, name: str, key: str, post: PreparedPost) -> Optional[Draft]:
        """The draft a key names, if it was written, unless it holds another post."""
        path = self.locate(self._drafts / name)
        if not path.exists():
            return None
        draft = Draft.load(path)
        if not _same_post(draft.post, post):
            raise fail("key_taken", key=key, path=path)
        return draft

    def drafts(self) -> list:
        """Every draft file in drafts/, oldest first (their names begin with the moment they
        were made)."""
        return _drafts_in(self._drafts)

    def pending(self) -> list:
        """The drafts neither published, refused nor discarded, oldest first; of several to
        the same place, only the newest, since previewing again replaces the text it was made
        from. A draft that cannot be read is listed too, so that whoever sends it learns why
        not. Costs a look at each draft waiting, whatever was sent before."""
        waiting = self._index() / "waiting"
        newest, replaced = {}, []
        for name in sorted(_names(waiting)):
            if not (self._drafts / name).exists():
                continue  # a keep under way, or one that stopped before its draft
            place = _place(read_record(waiting / name), name)
            if place in newest:
                replaced.append(newest[place])
            newest[place] = name
        for name in replaced:
            self._unmark(name)
        listed = []
        for name in newest.values():
            path = self._drafts / name
            if settled(path):
                self._settle(path)
            else:
                listed.append(path)
        return sorted(listed)

    def waiting_for(self, place: tuple) -> Optional[Path]:
        """The draft waiting to go to ``place`` (a destination: label and id), if any."""
        waiting = self._index() / "waiting"
        return next((path for path in self.pending() if _place(read_record(waiting / path.name), path.name) == place),
                    None)

    def sent(self, draft: Union[Draft, Path]) -> None:
        """Take a draft just sent (or refused) off the waiting list, remember its post as this
        journal's, and now and then move old sent drafts to the archive."""
        path = draft.path if isinstance(draft, Draft) else as_path(draft, "the draft's path")
        receipt = Receipt.read(beside(path, RECEIPT))
        if receipt and receipt.published:  # a replaced or archived draft has no marker to tell it
            self._note_mine(receipt.published.post_id, receipt.published.thread_id)
        if path.parent == self._drafts and settled(path):
            self._settle(path)
        stamp = self._index() / "archived"
        try:
            due = time.time() - stamp.stat().st_mtime > ARCHIVE_EVERY
        except FileNotFoundError:
            due = True
        if due:
            self.archive()

    def _settle(self, path: Path) -> None:
        waiting = self._index() / "waiting"
        place = _place(read_record(waiting / path.name), path.name)
        # An older draft to the same place, left marked by a run that stopped mid-keep, is
        # replaced, not waiting.
        for name in _names(waiting):
            if name <= path.name and (name == path.name or _place(read_record(waiting / name), name) == place):
                self._unmark(name)

    def _unmark_older(self, place: tuple, newest: str) -> None:
        waiting = self._index() / "waiting"
        for name in _names(waiting):
            if name < newest and _place(read_record(waiting / name), name) == place:
                self._unmark(name)

    def _unmark(self, name: str) -> None:
        """Take a draft off the waiting list; one that was published is remembered as ours
        first, since its marker is what tells that its receipt is new."""
        receipt = Receipt.read(beside(self._drafts / name, RECEIPT))
        if receipt and receipt.published:
            self._note_mine(receipt.published.post_id, receipt.published.thread_id)
        _remove(self._index() / "waiting" / name)

    def discard(self, path: Union[str, os.PathLike]) -> Draft:
        """Mark a draft so that it is never sent; refused for a draft already published."""
        draft = Draft.load(self.locate(path))
        with locked(draft.path):
            if draft.receipt():
                raise fail("discard_published", path=draft.path)
            write_atomically(beside(draft.path, DISCARDED), {"discarded_at": now()})
        if draft.path.parent == self._drafts:
            self._settle(draft.path)
        return draft

    def locate(self, path: Union[str, os.PathLike]) -> Path:
        """The draft at ``path``, or, if the archive took it, where it is now."""
        path = as_path(path, "the draft's path")
        if path.exists():
            return path
        archive = self.folder / "archive"
        for month in sorted(_names(archive), reverse=True):
            if (archive / month / path.name).exists():
                return archive / month / path.name
        return path

    # -- this journal's posts ----------------------------------------------------------------

    def _note_mine(self, post_id, thread_id) -> None:
        # The index's folder as it is: this runs while the index is rebuilt, too.
        if is_a("post id", post_id) and is_a("thread id", thread_id):
            path = self.folder / "index" / "mine" / _file_name(post_id)
            if not path.exists():
                write_atomically(path, {"post_id": post_id, "thread_id": thread_id})

    def own_posts(self) -> "OwnPosts":
        """This journal's posts, to ask ``post_id in own``: each asking reads one file."""
        self.pending()  # settles what was sent since the index last looked
        return OwnPosts(self._index() / "mine")

    def published_posts(self) -> dict:
        """Each post published from this journal, by id, with its thread."""
        self.pending()
        mine = self._index() / "mine"
        records = (read_record(mine / name) for name in _names(mine))
        return {record["post_id"]: record["thread_id"] for record in records
                if is_a("post id", record.get("post_id")) and is_a("thread id", record.get("thread_id"))}

    # -- the index -------------------------------------------------------------------------

    def _index(self) -> Path:
        index = self.folder / "index"
        if not self._indexed:
            if read_record(index / "ready").get("format") != INDEX_FORMAT:
                self.rebuild_index()
            self._indexed = True
        return index

    def rebuild_index(self) -> None:
        """Write the index again from the drafts, receipts and posts themselves. No marker or
        key is removed that a run keeping a draft at this moment may have written (its line in
        the log of things made may be, which only leaves it out of the shortest listing)."""
        index = self.folder / "index"
        for part in ("waiting", "keys", "mine"):
            (index / part).mkdir(parents=True, exist_ok=True)
        newest = {}
        for path in self.drafts():
            try:
                newest[Draft.load(path).post.destination] = path
            except DraftError:
                newest[("unreadable", path.name)] = path
        for place, path in newest.items():
            if not settled(path) and not (index / "waiting" / path.name).exists():
                write_atomically(index / "waiting" / path.name, {"to": list(place)})
        for path in [*self.drafts(), *self._archived()]:
            with contextlib.suppress(DraftError, FileExistsError):
                key = Draft.load(path).key
                if key is not None:
                    write_atomically(index / "keys" / _file_name(key), {"key": key, "draft": path.name},
                                     exclusive=True)
        for receipt in [*self._drafts.glob("*" + RECEIPT), *(self.folder / "archive").glob("*/*" + RECEIPT)]:
            published = (Receipt.read(receipt) or Receipt(None, None)).published
            if published:
                self._note_mine(published.post_id, published.thread_id)
        self._import_threads()
        made = "".join(f"{moment} {kind} {path.name}\n" for moment, kind, path in reversed(list(self._made())))
        write_text_atomically(index / MADE, made)
        write_atomically(index / "ready", {"format": INDEX_FORMAT, "built_at": now()})

    def _import_threads(self) -> None:
        """Posts recorded by earlier versions, one file per thread, into posts/."""
        (self.folder / "posts").mkdir(exist_ok=True)
        for path in (self.folder / "threads").glob("*.json"):
            record = read_record(path)
            revisions = record.get("revisions") if isinstance(record.get("revisions"), dict) else {}
            for post_id, revision in revisions.items():
                target = self.folder / "posts" / _file_name(post_id) if is_a("post id", post_id) else None
                if target and not target.exists():
                    write_atomically(target, {"post_id": post_id, "thread_id": path.stem,
                                              "task_id": record.get("task_id"), "revision": revision})

    # -- the archive -------------------------------------------------------------------------

    def archive(self, days: float = ARCHIVE_AFTER) -> int:
        """Move drafts made more than ``days`` ago and no longer waiting (sent, refused,
        discarded or replaced) to archive/YYYY-MM/, with what goes beside them; how many moved.
        Each keeps answering: :meth:`locate` finds it, and its receipt goes with it."""
        self.pending()  # settles what was sent since the index last looked
        index = self._index()
        cutoff = time.strftime("%Y%m%dT%H%M%S", time.gmtime(time.time() - days * 86400))
        moved = 0
        for name in sorted(_names(self._drafts)):
            if name[:15] >= cutoff:
                break
            path = self._drafts / name
            if name.endswith(SETTLED + (LOCK,)):
                if not (self._drafts / _draft_of(name)).exists():
                    _remove(path)  # left by a run that stopped while moving its draft
                continue
            if not name.endswith(".json") or (index / "waiting" / name).exists():
                continue
            target = self.folder / "archive" / f"{name[:4]}-{name[4:6]}"
            target.mkdir(parents=True, exist_ok=True)
            # Under the draft's lock, so that no send reads or writes beside it meanwhile;
            # copies of what goes beside first, then the draft: whenever a run stops, the
            # draft is never anywhere without its receipt.
            with locked(path):
                if (index / "waiting" / name).exists() or not path.exists():
                    continue
                for suffix in SETTLED:
                    with contextlib.suppress(FileNotFoundError):
                        _copy(beside(path, suffix), beside(target / name, suffix))
                os.replace(path, target / name)
                for suffix in SETTLED:
                    _remove(beside(path, suffix))
            _remove(beside(path, LOCK))
            moved += 1
        for name in _names(index / "waiting"):
            if not (self._drafts / name).exists() and name[:15] < cutoff:
                self._unmark(name)  # a keep that stopped before its draft, long ago
        write_atomically(index / "archived", {"archived_at": now(), "moved": moved})
        return moved

    def _archived(self) -> list:
        archive = self.folder / "archive"
        return [path for month in sorted(_names(archive)) for path in _drafts_in(archive / month)]

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

    def entries(self, limit: Optional[int] = None, since: Optional[str] = None) -> Iterator[dict]:
        """Drawn problems, drafts waiting or replaced by a newer one, refused, discarded and
        published posts, newest made first; from ``since`` (a timestamp) on, if given. Only
        the entries yielded are read, so the newest few cost the same however long the
        history."""
        waiting = set(self.pending())
        made = self._made_recently(limit) if limit is not None and since is None else self._made()
        for count, (moment, kind, path) in enumerate(made):
            # To the second: an entry made in the very second of ``since`` is on or after it.
            if (since is not None and moment[:19] < since[:19]) or (limit is not None and count >= limit):
                return
            yield self._draw_entry(path) if kind == DRAWN else self._draft_entry(path, path in waiting)

    def _made(self) -> Iterator[tuple]:
        """(moment, kind, path) of every draw and draft, newest first, from the folders."""
        with os.scandir(self.folder / "draws") as listing:
            draws = sorted(((_moment(item.stat().st_mtime), DRAWN, Path(item.path)) for item in listing
                            if item.name.endswith(".json") and not item.name.startswith(".")), reverse=True)
        return heapq.merge(draws, self._drafts_newest_first(), key=_newest_first, reverse=True)

    def _note_made(self, kind: str, name: str) -> None:
        """A line in the index's log of what was made, before it is, so that the newest few
        are listed from the log's end, however many there are."""
        with open(self._index() / MADE, "a", encoding="ascii") as log:
            log.write(f"{_moment(time.time())} {kind} {name}\n")

    def _made_recently(self, count: int) -> list:
        """The ``count`` newest of :meth:`_made`, from the end of the log alone."""
        log = self._index() / MADE
        try:
            size = log.stat().st_size
        except FileNotFoundError:
            return []
        chunk = 16384
        while True:
            start = max(0, size - chunk)
            with open(log, "rb") as stream:
                stream.seek(start)
                lines = stream.read().decode("ascii", "replace").splitlines()[1 if start else 0:]
            found = {}
            for line in reversed(lines):
                moment, _, rest = line.partition(" ")
                kind, _, name = rest.partition(" ")
                path = self._made_path(kind, name)
                if path and (kind, name) not in found and is_a("timestamp", moment):
                    found[(kind, name)] = (moment, kind, path)
            made = sorted((item for item in found.values() if item[2].exists() or self.locate(item[2]).exists()),
                          key=_newest_first, reverse=True)
            if len(made) >= count or not start:
                return [(moment, kind, self.locate(path)) for moment, kind, path in made]
            chunk *= 4

    def _made_path(self, kind: str, name: str) -> Optional[Path]:
        if kind == DRAWN:
            return self._draw_file(name[: -len(".json")]) if name.endswith(".json") else None
        return self._drafts / name if kind == DRAFT and _is_draft(name) and os.sep not in name else None

    def _drafts_newest_first(self) -> list:
        """(moment made, DRAFT, path) of every draft, the archive's too, newest first."""
        archive = self.folder / "archive"
        paths = [*self.drafts(), *(path for month in _names(archive) for path in _drafts_in(archive / month))]
        paths.sort(key=lambda path: path.name, reverse=True)
        return [(_stamp_time(path.name), DRAFT, path) for path in paths]

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
        elif beside(path, DISCARDED).exists():
            entry.update(type="discarded")
        return entry


class OwnPosts:
    """The posts a journal published, as a container of post ids."""

    def __init__(self, folder: Path):
        self._folder = folder

    def __contains__(self, post_id) -> bool:
        return is_a("post id", post_id) and read_record(self._folder / _file_name(post_id)).get("post_id") == post_id


def _newest_first(made: tuple) -> tuple:
    # Within one moment, the drafts made from a draw are newer than it.
    return made[0], made[1] == DRAFT


def _check_key(key) -> str:
    check_text(key, "key")
    if not 0 < len(key) <= MAX_KEY or not key.isprintable():
        raise fail("bad_value", name="key", allowed=f"1 to {MAX_KEY} printable characters", value=key)
    return key


def _same_post(kept: PreparedPost, post: PreparedPost) -> bool:
    """Whether two prepared posts are the same post on the portal, whatever their nonces."""
    return kept.same_post_key == post.same_post_key


def _file_name(name: str) -> str:
    """A file name for a name of any case and character, the same on every file system."""
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:32] + ".json"


def _place(marker: dict, name: str) -> tuple:
    """Where a marked draft goes; a marker that cannot be read is a place of its own."""
    to = marker.get("to")
    return tuple(to) if isinstance(to, list) and len(to) == 2 and all(isinstance(part, str) for part in to) \
        else ("unreadable", name)


def _names(folder: Path) -> list:
    try:
        return [name for name in os.listdir(folder) if not name.startswith(".")]
    except FileNotFoundError:
        return []


def _drafts_in(folder: Path) -> list:
    return sorted(folder / name for name in _names(folder) if _is_draft(name))


def _is_draft(name: str) -> bool:
    return name.endswith(".json") and not name.endswith(SETTLED)


def _draft_of(name: str) -> str:
    for suffix in SETTLED + (LOCK,):
        if name.endswith(suffix):
            return name[: -len(suffix)] + ".json"
    return name


def _stamp_time(name: str) -> str:
    """The moment in a draft's name (20261201T203353.690446Z-...) as a timestamp."""
    return f"{name[0:4]}-{name[4:6]}-{name[6:8]}T{name[9:11]}:{name[11:13]}:{name[13:22]}Z"


def _moment(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int(seconds * 1e6) % 1000000:06d}Z"


def _copy(source: Path, target: Path) -> None:
    # What goes beside a draft is ASCII JSON, as it was written.
    write_text_atomically(target, source.read_text(encoding="ascii"))


def _remove(path: Path) -> None:
    # Also a file another run holds open, which Windows does not let go: removed next time.
    with contextlib.suppress(OSError):
        os.unlink(path)

"""A local journal of draws, drafts and receipts, so that a checkpointed run survives restarts.

A draft waits in ``waiting/``, never changed once written, until one rename moves it to ``sent/``:
once its outcome (receipt, refusal or discard) is written beside it there, or when a newer draft to
the same place replaces it. What waits is found by listing ``waiting/`` alone, however many were
sent, and nothing that only reads writes anything.
"""

import contextlib
import hashlib
import hmac
import json
import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Mapping, Optional, Union

from . import JOURNAL_VARIABLE, NAME
from .errors import DraftError, Refused, ValidationError, fail
from .files import PRIVATE_FILE, PRIVATE_FOLDER, as_path, locked, read_record, sync_folder, write_atomically
from .models import Published
from .publishing import MOMENT, Outcome, PreparedPost, now, prepared_again, publish_request
from .rules import (EARLIER, LIMIT, NONCE_KEPT_HOURS, SETTING_DEFAULT, SETTING_GIVEN, check_text, check_thread_id,
                    check_timestamp, check_type, is_a)
from .transport import Request

DRAFT_FORMAT = "benchmarks-wiki draft 3"
WAITING, SENT = "waiting", "sent"
FOLDERS = (WAITING, SENT, "keys", "draws", "posts", "follows", "locks")
SECRET = "secret"
# What a draft's outcome writes beside it in sent/.
RECEIPT, REFUSAL, DISCARDED = ".receipt.json", ".refused.json", ".discarded.json"
MAX_KEY = 200
# A draft's file name: the moment it was made, to the microsecond, so that drafts list in the
# order they were made, and four random bytes.
_DRAFT_NAME = re.compile(r"\A\d{8}T\d{6}\.\d{6}Z-[0-9a-f]{8}\.json\Z")


def located(explicit: Optional[str] = None, environ: Mapping = os.environ, windows: bool = os.name == "nt") -> tuple:
    """The journal's folder, and what named it: given, an environment variable's name, or the default."""
    if explicit:
        return Path(os.path.expanduser(explicit)), SETTING_GIVEN
    for name in (JOURNAL_VARIABLE, "XDG_STATE_HOME", *(("LOCALAPPDATA",) if windows else ())):
        if environ.get(name):
            folder = Path(os.path.expanduser(environ[name]))
            return (folder if name == JOURNAL_VARIABLE else folder / NAME), name
    home = Path(os.path.expanduser("~"))
    return (home / "AppData" / "Local" if windows else home / ".local" / "state") / NAME, SETTING_DEFAULT


class Journal:
    def __init__(self, folder: Union[str, os.PathLike]):
        self.folder = as_path(folder, "the journal's folder")

    @classmethod
    def open(cls, folder: Union[str, os.PathLike, None] = None) -> "Journal":
        """The journal in ``folder`` (by default :func:`located`), made private if new; OSError when it cannot."""
        journal = cls(located()[0] if folder is None else folder)
        # Each missing folder, the journal's own and those above it too, readable by its user only.
        for made in (*reversed(journal.folder.parents), journal.folder, *(journal.folder / part for part in FOLDERS)):
            if not made.exists():
                with contextlib.suppress(FileExistsError):
                    made.mkdir(PRIVATE_FOLDER)
                    os.chmod(made, PRIVATE_FOLDER)  # whatever the umask took away or left
        if not os.access(journal.folder / WAITING, os.W_OK | os.X_OK):
            raise PermissionError(13, "not writable", str(journal.folder / WAITING))
        with contextlib.suppress(FileExistsError):
            with os.fdopen(os.open(journal.folder / SECRET, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE),
                           "w") as stream:
                stream.write(os.urandom(32).hex())
        return journal

    def exposed(self) -> list:
        paths = [self.folder, self.folder / SECRET, *(self.folder / part for part in FOLDERS)]
        return [path for path in paths if os.name != "nt" and path.exists() and path.stat().st_mode & 0o077]

    def secret(self) -> bytes:
        """The key of the code that proves a draft was written here, if it is this user's own and private."""
        path = self.folder / SECRET
        try:
            info = path.stat()
            text = path.read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError):
            raise fail("journal_without_secret", path=self.folder) from None
        if os.name != "nt" and (info.st_uid != os.getuid() or info.st_mode & 0o077):
            raise fail("journal_secret_exposed", path=path)
        return text.strip().encode("ascii")

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

    def record_posts(self, posts, mine: bool = False) -> None:
        """Remember each post shown here, and, with ``mine``, that this journal published it."""
        for post in posts:
            path = self.folder / "posts" / _file_name(post.post_id)
            kept = read_record(path)
            record = {"post_id": post.post_id, "thread_id": post.thread_id, "task_id": post.task_id,
                      "revision": post.revision, "mine": mine or kept.get("mine") is True}
            if kept != record:
                write_atomically(path, record)

    def seen_post(self, post_id: str) -> Optional[tuple]:
        """The problem and revision of a post shown here, as (task_id, revision), or None."""
        record = self._post_record(post_id)
        if not record:
            return None
        revision = record.get("revision")
        return record.get("task_id"), revision if isinstance(revision, int) else None

    def _post_record(self, post_id: str) -> dict:
        if not is_a("post id", post_id):
            return {}
        record = read_record(self.folder / "posts" / _file_name(post_id))
        return record if record.get("post_id") == post_id else {}

    def __contains__(self, post_id) -> bool:
        """Whether this journal published the post of this id: each asking reads one file."""
        return self._post_record(post_id).get("mine") is True

    def published_posts(self) -> dict:
        records = (read_record(path) for path in (self.folder / "posts").glob("*.json"))
        return {record["post_id"]: record["thread_id"] for record in records if record.get("mine") is True
                and is_a("post id", record.get("post_id")) and is_a("thread id", record.get("thread_id"))}

    def keep(self, post: PreparedPost, key: Optional[str] = None) -> "Draft":
        """The post kept as a draft, replacing any other waiting to go to the same place; under a ``key``,
        only once: the same post again returns the draft kept first, sent or not, and another is refused."""
        check_type(post, PreparedPost, "the post", "a PreparedPost", optional=False)
        name = f"{_stamp(time.time())}-{os.urandom(4).hex()}.json"
        if key is not None:
            check_text(key, "key")
            if not 0 < len(key) <= MAX_KEY or not key.isprintable():
                raise fail("bad_value", name="key", allowed=f"1 to {MAX_KEY} printable characters", value=key)
            key_file = self.folder / "keys" / _file_name(key)
            try:
                write_atomically(key_file, {"key": key, "draft": name}, exclusive=True)
            except FileExistsError:
                named = read_record(key_file).get("draft")
                name = named if isinstance(named, str) and _DRAFT_NAME.match(named) else name
                kept = self._keyed(name, key, post)
                if kept:
                    return kept
        record = {"format": DRAFT_FORMAT, "created_at": now(), "request": post.request.as_record(),
                  "revision_from": post.revision_from, "allow_sensitive": post.allow_sensitive, "key": key}
        record["code"] = _code(record, self.secret())
        draft = Draft(self.folder / WAITING / name, post, record["created_at"], key)
        try:
            write_atomically(draft.path, record, exclusive=True)
        except FileExistsError:  # another run kept the same key at the same moment
            return self._keyed(name, key, post) or Draft.load(draft.path)
        self._replace_others(draft)
        return draft

    def _keyed(self, name: str, key: str, post: PreparedPost) -> Optional["Draft"]:
        """The draft a key names, if it was written and holds this post; a replaced one waits again."""
        found = self.where(name)
        if found is None:
            return None  # a keep that stopped between its key and its draft
        draft = Draft.load(found)
        if draft.post.same_post_key != post.same_post_key:
            raise fail("key_taken", key=key, path=draft.path)
        if found.parent.name == SENT and not draft.outcome_file():
            draft = replace(draft, path=self.folder / WAITING / name)
            os.replace(found, draft.path)
            self._replace_others(draft)
        return draft

    def _replace_others(self, draft: "Draft") -> None:
        for other in self._waiting():
            if other.path != draft.path and other.post.destination == draft.post.destination:
                other.move_to_sent()

    def where(self, name: str) -> Optional[Path]:
        return next((path for path in (self.folder / WAITING / name, self.folder / SENT / name) if path.exists()), None)

    def pending(self) -> list:
        """The drafts waiting, oldest first: of several to the same place (two runs keeping at
        once), only the newest. One that cannot be read is left out (:meth:`entries` lists it)."""
        newest = {draft.post.destination: draft for draft in self._waiting()}
        return sorted(newest.values(), key=lambda draft: draft.path.name)

    def _waiting(self) -> Iterator["Draft"]:
        # Those with an outcome were sent by a run that stopped before moving them.
        for name in filter(_DRAFT_NAME.match, sorted(os.listdir(self.folder / WAITING))):
            try:
                draft = Draft.load(self.folder / WAITING / name)
            except DraftError:
                continue
            if not draft.outcome_file():
                yield draft

    def discard(self, path: Union[str, os.PathLike]) -> "Draft":
        """Mark a draft so that it is never sent; refused for a draft already published."""
        draft = Draft.load(path)
        with locked(draft.lock_file()):
            draft = Draft.load(draft.path)
            if draft.receipt():
                raise fail("discard_published", path=draft.path)
            draft.settle(DISCARDED, {"discarded_at": now()})
        return draft

    def _follow_file(self, thread_ids) -> Path:
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
        if mark is not None:
            since, seen = mark
            write_atomically(self._follow_file(thread_ids), {"since": since, "seen": sorted(seen), "updated_at": now()})

    def entries(self, limit: Optional[int] = None, since: Optional[str] = None) -> Iterator[dict]:
        """Draws and drafts, newest made first, from ``since`` on; only the entries yielded are read."""
        if limit is not None:
            LIMIT.check(limit, "limit")
        if since is not None:
            since = check_timestamp(since)
        waiting = {draft.path for draft in self.pending()}
        draws = self.folder / "draws"
        # Each made at the moment its name begins with (a draw, when its file was written), so
        # that names alone sort them, and paths are made only for the entries yielded.
        made = [(_stamp(os.stat(draws / name).st_mtime), draws, name) for name in os.listdir(draws)
                if name.endswith(".json") and not name.startswith(".")]
        made += [(name, self.folder / part, name) for part in (WAITING, SENT) for name in os.listdir(self.folder / part)
                 if name.endswith(".json") and name.count(".") == 2]
        made.sort(key=lambda entry: (entry[0], entry[2]), reverse=True)
        for stamp, folder, name in made[:limit]:
            # To the second: an entry made in the very second of ``since`` is on or after it.
            if since is not None and stamp[:15] < since[:19].replace("-", "").replace(":", ""):
                return
            path = folder / name
            yield _draw_entry(path) if folder == draws else _draft_entry(path, path in waiting)


@dataclass(frozen=True)
class Draft:
    """A prepared post kept in a journal's file, to be sent once; ``key`` is the name it was kept under."""

    path: Path
    post: PreparedPost
    created_at: str
    key: Optional[str] = None

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Draft":
        """The draft at ``path`` (or moved to sent/ since), if its journal wrote it so and it can still be sent."""
        given = as_path(path, "the draft's path")
        if not (_DRAFT_NAME.match(given.name) and given.parent.name in (WAITING, SENT)):
            raise fail("not_a_draft", path=given)
        journal = Journal(given.parent.parent)
        found = journal.where(given.name)
        if found is None:
            raise fail("no_draft_file", path=given)
        try:
            record = json.loads(found.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
            raise fail("damaged_draft", path=found, problem=f"is unreadable ({type(error).__name__})") from None
        if not isinstance(record, dict) or record.get("format") != DRAFT_FORMAT:
            raise fail("not_a_draft", path=found)
        if not hmac.compare_digest(str(record.get("code")), _code(record, journal.secret())):
            raise fail("changed_draft", path=found)
        try:
            post = prepared_again(Request.from_record(record["request"]), record.get("revision_from"),
                                  record.get("allow_sensitive") is True)
        except (KeyError, TypeError, ValueError, ValidationError) as error:
            problem = f": {error.message}" if isinstance(error, ValidationError) else f" ({error})"
            raise fail("damaged_draft", path=found, problem=f"holds no post that can be sent{problem}") from None
        key = record.get("key")
        return cls(found, post, str(record.get("created_at")), key if isinstance(key, str) else None)

    def outlived_its_nonce(self, now: Optional[float] = None) -> bool:
        """Whether the portal may have forgotten this draft's nonce, so that sending it could post twice."""
        import calendar

        try:
            made = calendar.timegm(time.strptime(self.created_at, MOMENT))
        except ValueError:
            return True
        return (time.time() if now is None else now) - made > NONCE_KEPT_HOURS * 3600

    def _beside(self, suffix: str) -> Path:
        return self.path.parent.parent / SENT / (self.path.name[:-len(".json")] + suffix)

    def lock_file(self) -> Path:
        return self.path.parent.parent / "locks" / (self.path.name[:-len(".json")] + ".lock")

    def outcome_file(self) -> Optional[Path]:
        return next((path for path in map(self._beside, (RECEIPT, REFUSAL, DISCARDED)) if path.exists()), None)

    def receipt(self) -> Optional[Outcome]:
        """The outcome sending it again would give (EARLIER), or None if it was never published."""
        path = self._beside(RECEIPT)
        if not path.exists():
            return None
        record = read_record(path)
        try:
            published = Published.from_raw({"created": record.get("created") is True, "post": record.get("post")})
        except ValueError:  # a receipt that cannot be read still says the post went out: the safe side
            published = None
        at = record.get("published_at")
        return Outcome(published, EARLIER, sent=False, earlier_at=at if isinstance(at, str) else None)

    def refusal(self) -> Optional[str]:
        path = self._beside(REFUSAL)
        if not path.exists():
            return None
        record = read_record(path)
        return f"{record.get('status')} {record.get('code')}: {record.get('message')}"

    def settle(self, suffix: str, record: dict) -> None:
        # Outcome first: a run that stops before the move leaves it waiting with it, which counts as sent.
        write_atomically(self._beside(suffix), record)
        self.move_to_sent()

    def move_to_sent(self) -> None:
        if self.path.parent.name == WAITING:
            with contextlib.suppress(FileNotFoundError):  # moved already, by another run
                os.replace(self.path, self.path.parent.parent / SENT / self.path.name)
            sync_folder(self.path.parent)

    def publish_once(self, sender, resend: bool = False) -> Outcome:
        """Publish this draft at most once: its receipt answers unless ``resend``; refused or discarded, not sent."""
        with locked(self.lock_file()):
            current = Draft.load(self.path)  # another run may have sent or moved it meanwhile
            if not resend:
                if current.refusal():
                    raise fail("refused_draft", refusal=current.refusal(), path=current.path)
                if current._beside(DISCARDED).exists():
                    raise fail("discarded_draft", path=current.path)
                receipt = current.receipt()
                if receipt:
                    return receipt
            try:
                outcome = publish_request(sender, current.post.request)
            except Refused as error:
                current.settle(REFUSAL, {"status": error.status, "code": error.code, "message": error.message,
                                         "refused_at": now()})
                raise
            published = outcome.published
            try:
                current.settle(RECEIPT, {"post": published.post.raw, "created": published.created, "how": outcome.how,
                                         "published_at": outcome.earlier_at or now()})
                Journal(self.path.parent.parent).record_posts((published.post,), mine=True)
            except OSError as error:
                return replace(outcome, receipt_error=error)
            return outcome


def _code(record: dict, secret: bytes) -> str:
    canonical = json.dumps({name: value for name, value in record.items() if name != "code"}, ensure_ascii=True,
                           sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, canonical.encode("ascii"), hashlib.sha256).hexdigest()


def _draw_entry(path: Path) -> dict:
    record = read_record(path)
    task = record.get("task") if isinstance(record.get("task"), dict) else {}
    return {"type": "drawn", "at": record.get("drawn_at"), "task_id": path.stem,
            "benchmark": task.get("benchmark"), "revision": record.get("revision"), "path": str(path)}


def _draft_entry(path: Path, waiting: bool) -> dict:
    try:
        draft = Draft.load(path)
        receipt, refusal = draft.receipt(), draft.refusal()
    except DraftError as error:
        return {"type": "damaged", "at": None, "path": str(path), "problem": error.message}
    entry = {"type": "draft" if waiting else "replaced", "at": draft.created_at, "path": str(draft.path),
             "destination": " ".join(draft.post.destination), "body": draft.post.body[:80],
             "claims": {name: draft.post.fields.get(name) for name in ("agent_name", "model")}}
    if receipt:
        posted = receipt.published
        entry.update(type="posted", at=receipt.earlier_at or entry["at"], post_id=posted and posted.post_id,
                     thread_id=posted and posted.thread_id, public_url=posted and posted.public_url)
    elif refusal:
        entry.update(type="refused", refusal=refusal)
    elif draft._beside(DISCARDED).exists():
        entry.update(type="discarded")
    return entry


def _file_name(name: str) -> str:
    # The same on every file system, whatever the name's case and characters.
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:32] + ".json"


def _stamp(seconds: float) -> str:
    """A moment as a draft's name begins with it: 20261201T203353.690446Z."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(seconds)) + f".{int(seconds * 1e6) % 1000000:06d}Z"


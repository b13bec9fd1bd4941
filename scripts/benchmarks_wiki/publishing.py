"""The run of one post: prepare it, keep it as a draft, send it once, say what happened.

A :class:`PreparedPost` is the exact request a publish sends, nonce included, after every
check. A :class:`Draft` is one kept in a file that never changes once written: sending it
takes its lock, and a draft with a receipt beside it is not sent again. The portal replays a
repeat of the same nonce and fields, so even a draft whose answer was lost is sent safely.
"""

from __future__ import annotations

import calendar
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from .errors import ApiError, Refused, ValidationError, fail
from .files import DISCARDED, RECEIPT, REFUSAL, as_path, beside, locked, read_record, write_atomically
from .models import Published, parse
from .rules import (CONFIRMED, EARLIER, KINDS, NEW, NONCE_KEPT_HOURS, POST_FIELDS, PUBLISH_PATH, body_size, check,
                    check_claim, check_number, check_post_id, check_task_id, check_thread_id, default_kind, destination,
                    normalise_body)
from .transport import Request

DRAFT_FORMAT = "benchmarks-wiki draft 2"
# How a draft and its receipt write the moment they were made.
MOMENT = "%Y-%m-%dT%H:%M:%SZ"


def new_nonce() -> str:
    """A fresh nonce: 24 URL-safe characters, 144 random bits."""
    import secrets  # here: with hashlib, it costs a read command 2 ms of its start-up

    return secrets.token_urlsafe(18)


def now() -> str:
    return time.strftime(MOMENT, time.gmtime())


@dataclass(frozen=True)
class PreparedPost:
    """Exactly what a publish would send. ``revision_from`` says where the revision came from
    (GIVEN, DRAWN or REPLIED_TO), or None when the portal's current revision applies."""

    request: Request
    revision_from: Optional[str] = None

    @property
    def url(self) -> str:
        return self.request.url

    @property
    def fields(self) -> dict:
        return self.request.fields

    @property
    def body(self) -> str:
        return self.fields["body"]

    @property
    def nonce(self) -> str:
        return self.fields["nonce"]

    @property
    def size(self) -> int:
        """Bytes of UTF-8 in the body, of the ``MAX_BODY_BYTES`` allowed."""
        return body_size(self.body)

    @property
    def revision(self) -> Optional[int]:
        revision = self.fields.get("revision")
        return int(revision) if revision is not None else None

    @property
    def destination(self) -> tuple:
        return destination(self.fields)

    @property
    def same_post_key(self) -> str:
        """A key that names this post by what makes it the same post on the portal: its
        origin, and every field as the portal compares them (the body normalised, an absent
        kind as its default), but the nonce. Kept under it, the same post made again, a minute
        or a month later, is the draft kept first, so it is never published twice."""
        import hashlib

        fields = {name: value for name, value in self.fields.items() if name != "nonce"}
        fields["kind"] = fields.get("kind") or default_kind(self.destination[0])
        canonical = json.dumps([self.request.origin, sorted(fields.items())], ensure_ascii=True)
        return "same-post:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def prepare(sender, body: str, *, task_id: Optional[str] = None, thread_id: Optional[str] = None,
            reply_to: Optional[str] = None, revision: Optional[int] = None,
            agent_name: Optional[str] = None, model: Optional[str] = None,
            run_label: Optional[str] = None, kind: Optional[str] = None, nonce: Optional[str] = None,
            allow_sensitive: bool, revision_from: Optional[str]) -> PreparedPost:
    """Every check a publish makes, before anything is sent, and the request it would send."""
    fields = {"body": normalise_body(body)}
    if not allow_sensitive:
        refuse_sensitive(fields["body"])
    if task_id is not None:
        if thread_id is not None or reply_to is not None:
            raise fail("two_destinations")
        fields["task_id"] = check_task_id(task_id)
    elif thread_id is None and reply_to is None:
        raise fail("no_destination")
    fields["thread_id"] = check_thread_id(thread_id) if thread_id is not None else None
    fields["reply_to"] = check_post_id(reply_to) if reply_to is not None else None
    if revision is not None:
        check_number(revision, "revision", 1)
    fields.update(revision=revision, agent_name=check_claim(agent_name, "agent_name"),
                  model=check_claim(model, "model"), run_label=check_claim(run_label, "run_label"))
    if kind is not None and kind not in KINDS:
        raise fail("bad_value", name="kind", allowed=f"one of {', '.join(KINDS)}", value=kind)
    fields["kind"] = kind
    fields["nonce"] = check("nonce", nonce) if nonce is not None else new_nonce()
    ordered = {name: fields.get(name) for name in ("body", *POST_FIELDS, "nonce")}
    request = sender.build(PUBLISH_PATH, ordered, write=True)
    return PreparedPost(request, revision_from if revision is not None else None)


def refuse_sensitive(body: str) -> None:
    from .sensitive import find_sensitive  # here: its patterns cost a read command for nothing

    found = find_sensitive(body)
    if found:
        listed = "; ".join(f"{what} at line {row}, column {column}" for what, row, column in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise fail("sensitive", listed=listed + more, found=found)


@dataclass(frozen=True)
class Receipt:
    """What a draft's publish recorded beside it: the post (None when the receipt is too
    damaged to rebuild it, though it still says the post went out), and when."""

    published: Optional[Published]
    at: Optional[str]

    @classmethod
    def read(cls, path: Path, digest: Optional[str] = None) -> Optional["Receipt"]:
        """The receipt at ``path``, or None if there is none; refused when it names another
        draft than the one of ``digest``."""
        if not path.exists():
            return None
        record = read_record(path)
        if digest is not None and record.get("draft_digest") not in (digest, None):
            raise fail("foreign_receipt", path=path)
        try:
            published = Published.from_raw({"created": record.get("created") is True, "post": record.get("post")})
        except ValueError:  # a receipt that cannot be read still says the post went out: the safe side
            published = None
        at = record.get("published_at")
        return cls(published, at if isinstance(at, str) else None)


def draft_name() -> str:
    """A new draft's file name: the moment to the microsecond, so that drafts list in the
    order they were made, and four random bytes."""
    moment = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(moment)) + f".{int(moment * 1e6) % 1000000:06d}Z"
    return f"{stamp}-{os.urandom(4).hex()}.json"


@dataclass(frozen=True)
class Draft:
    """A prepared post kept in a file, to be sent once; ``key`` is the caller's own name for
    it, if it was given one."""

    path: Path
    post: PreparedPost
    created_at: str
    digest: str
    key: Optional[str] = None

    @classmethod
    def write(cls, post: PreparedPost, path: Path, key: Optional[str] = None) -> "Draft":
        """Keep ``post`` at ``path``, where no file may be yet (FileExistsError)."""
        record = {"format": DRAFT_FORMAT, "created_at": now(), "request": post.request.as_record(),
                  "revision_from": post.revision_from}
        if key is not None:
            record["key"] = key
        record["digest"] = digest(record)
        write_atomically(path, record, exclusive=True)
        return cls(path, post, record["created_at"], record["digest"], key)

    @classmethod
    def load(cls, path: Union[str, os.PathLike]) -> "Draft":
        """The draft at ``path``, refused unless it is exactly as it was written."""
        path = as_path(path, "the draft's path")
        record = _load_record(path)
        try:
            request = Request.from_record(record["request"])
            if request.path != PUBLISH_PATH or not request.write:
                raise ValueError("not a publish")
        except (KeyError, TypeError, ValueError, ValidationError):
            raise fail("damaged_draft", path=path, problem="holds no publish request") from None
        key = record.get("key")
        return cls(path, PreparedPost(request, record.get("revision_from")), str(record.get("created_at")),
                   record["digest"], key if isinstance(key, str) else None)

    def outlived_its_nonce(self, now: Optional[float] = None) -> bool:
        """Whether the portal may have forgotten this draft's nonce, so that sending it now
        could post it a second time."""
        try:
            made = calendar.timegm(time.strptime(self.created_at, MOMENT))
        except ValueError:
            return True
        return (time.time() if now is None else now) - made > NONCE_KEPT_HOURS * 3600

    def receipt(self) -> Optional[Receipt]:
        """The receipt of this very draft, or None if it was never published."""
        return Receipt.read(beside(self.path, RECEIPT), self.digest)

    def refusal(self) -> Optional[str]:
        """What the portal said when it refused this draft for good, or None."""
        refusal_file = beside(self.path, REFUSAL)
        if not refusal_file.exists():
            return None
        record = read_record(refusal_file)
        return f"{record.get('status')} {record.get('code')}: {record.get('message')}"

    def earlier(self) -> Optional["Outcome"]:
        """What an earlier send of this draft did, from its receipt; refused if the portal
        refused it for good."""
        refusal = self.refusal()
        if refusal:
            raise fail("refused_draft", refusal=refusal, path=self.path)
        if beside(self.path, DISCARDED).exists():
            raise fail("discarded_draft", path=self.path)
        receipt = self.receipt()
        return Outcome(receipt.published, EARLIER, sent=False, earlier_at=receipt.at) if receipt else None

    def note_receipt(self, outcome: "Outcome") -> "Outcome":
        """Record beside the draft that it is published; the outcome, saying if that failed."""
        published = outcome.published
        record = {"draft_digest": self.digest, "post_id": published.post_id, "thread_id": published.thread_id,
                  "public_url": published.public_url, "created": published.created, "how": outcome.how,
                  "published_at": outcome.earlier_at or now(), "post": published.post.raw}
        try:
            write_atomically(beside(self.path, RECEIPT), record)
        except OSError as error:
            return Outcome(published, outcome.how, True, outcome.earlier_at, receipt_error=error)
        return outcome

    def note_refusal(self, error: ApiError) -> None:
        """Record beside the draft that the portal refused it for good, so that it no longer
        waits; a note that cannot be written changes nothing, since nothing was posted."""
        try:
            write_atomically(beside(self.path, REFUSAL), {
                "status": error.status, "code": error.code, "message": error.message, "refused_at": now()})
        except OSError:
            pass


@dataclass(frozen=True)
class Outcome:
    """What sending a post did. ``how`` is NEW, CONFIRMED or EARLIER; ``sent`` whether a
    request was made; ``earlier_at`` when an earlier run published it, where known; and
    ``receipt_error`` the OSError that kept a draft's receipt from being written, if any.
    ``published`` is None only for a draft whose receipt is too damaged to rebuild the post."""

    published: Optional[Published]
    how: str
    sent: bool
    earlier_at: Optional[str] = None
    receipt_error: Optional[OSError] = None


def send(sender, item: Union[PreparedPost, Draft], resend: bool = False) -> Outcome:
    """Publish a prepared post, or a draft at most once (unless ``resend``)."""
    if isinstance(item, PreparedPost):
        return deliver(sender, item.request)
    with locked(item.path):
        if not item.path.exists():  # the archive took it while this run waited for the lock
            raise fail("no_draft_file", path=item.path)
        earlier = None if resend else item.earlier()
        if earlier:
            return earlier
        try:
            outcome = deliver(sender, item.post.request)
        except Refused as error:
            item.note_refusal(error)
            raise
        return item.note_receipt(outcome)


def deliver(sender, request: Request) -> Outcome:
    """Send a publish request once (retried as the policy says) and say what it did."""
    response = sender.send(request)
    published = parse(Published, response.json(), response)
    if published.created:
        return Outcome(published, NEW, sent=True)
    if response.lost_answers:
        return Outcome(published, CONFIRMED, sent=True)
    return Outcome(published, EARLIER, sent=True, earlier_at=published.post.created_at)


def digest(fields: dict) -> str:
    import hashlib  # here: it costs a read command 2 ms of its start-up

    canonical = json.dumps({k: v for k, v in fields.items() if k != "digest"}, ensure_ascii=True,
                           sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def _load_record(path: Path) -> dict:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail("no_draft_file", path=path) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise fail("damaged_draft", path=path, problem=f"is unreadable or damaged ({error.__class__.__name__})") \
            from None
    if not isinstance(record, dict) or record.get("format") != DRAFT_FORMAT:
        raise fail("not_a_draft", path=path)
    if record.get("digest") != digest(record):
        raise fail("changed_draft", path=path)
    return record

"""A post before it is sent, and what sending it did. A draft read back from a file is made
again through every check: a file is never trusted to hold a post that could not have been prepared."""

import json
import time
from dataclasses import dataclass
from typing import Optional

from .errors import fail
from .models import Published, parse
from .rules import (CONFIRMED, EARLIER, KINDS, NEW, POST_FIELDS, PUBLISH_PATH, REVISION, check, check_claim,
                    check_flag, check_post_id, check_task_id, check_thread_id, default_kind, normalise_body)
from .transport import Request, request_to

# How a draft and its receipt write the moment they were made.
MOMENT = "%Y-%m-%dT%H:%M:%SZ"


def new_nonce() -> str:
    """A fresh nonce: 24 URL-safe characters, 144 random bits."""
    import secrets  # here: it costs a read command's start-up for nothing

    return secrets.token_urlsafe(18)


def now() -> str:
    return time.strftime(MOMENT, time.gmtime())


@dataclass(frozen=True)
class PreparedPost:
    """Exactly what a publish would send. ``revision_from`` is None when the portal's current revision applies."""

    request: Request
    revision_from: Optional[str] = None
    allow_sensitive: bool = False

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
        return len(self.body.encode("utf-8"))

    @property
    def revision(self) -> Optional[int]:
        revision = self.fields.get("revision")
        return int(revision) if revision is not None else None

    @property
    def destination(self) -> tuple:
        """Where it goes, most specific first: ("reply to", "p_..."), ("thread", ...) or ("task", ...)."""
        places = (("reply_to", "reply to"), ("thread_id", "thread"), ("task_id", "task"))
        return next(((label, self.fields[name]) for name, label in places if self.fields.get(name)), ("nowhere", None))

    @property
    def same_post_key(self) -> str:
        """A key of what makes it the same post on the portal, every field but the nonce: kept
        under it, the same post made again is the draft kept first, never published twice."""
        import hashlib

        fields = {name: value for name, value in self.fields.items() if name != "nonce"}
        fields["kind"] = fields.get("kind") or default_kind(self.destination[0])
        canonical = json.dumps([self.request.origin, sorted(fields.items())], ensure_ascii=True)
        return "same-post:" + hashlib.sha256(canonical.encode("ascii")).hexdigest()


def prepared_post(origin: str, body: str, *, task_id: Optional[str] = None, thread_id: Optional[str] = None,
                  reply_to: Optional[str] = None, revision: Optional[int] = None, agent_name: Optional[str] = None,
                  model: Optional[str] = None, run_label: Optional[str] = None, kind: Optional[str] = None,
                  nonce: Optional[str] = None, allow_sensitive: bool = False,
                  revision_from: Optional[str] = None) -> PreparedPost:
    check_flag(allow_sensitive, "allow_sensitive")
    fields = {"body": normalise_body(body)}
    if not allow_sensitive:
        from .sensitive import find_sensitive  # here: its patterns cost a read command for nothing

        found = find_sensitive(fields["body"])
        if found:
            listed = "; ".join(f"{what} at line {row}, column {column}" for what, row, column in found[:3])
            more = f" and {len(found) - 3} more" if len(found) > 3 else ""
            raise fail("sensitive", listed=listed + more, found=found)
    if task_id is not None:
        if thread_id is not None or reply_to is not None:
            raise fail("two_destinations")
        fields["task_id"] = check_task_id(task_id)
    elif thread_id is None and reply_to is None:
        raise fail("no_destination")
    fields["thread_id"] = check_thread_id(thread_id) if thread_id is not None else None
    fields["reply_to"] = check_post_id(reply_to) if reply_to is not None else None
    if revision is not None:
        REVISION.check(revision, "revision")
    fields.update(revision=revision, agent_name=check_claim(agent_name, "agent_name"),
                  model=check_claim(model, "model"), run_label=check_claim(run_label, "run_label"))
    if kind is not None and kind not in KINDS:
        raise fail("bad_value", name="kind", allowed=f"one of {', '.join(KINDS)}", value=kind)
    fields["kind"] = kind
    fields["nonce"] = check("nonce", nonce) if nonce is not None else new_nonce()
    request = request_to(origin, PUBLISH_PATH, fields, write=True)
    return PreparedPost(request, revision_from if revision is not None else None, allow_sensitive)


def prepared_again(request: Request, revision_from: Optional[str], allow_sensitive: bool) -> PreparedPost:
    """The post a kept request holds, made again; ValueError when it is not exactly the post the checks make."""
    fields = request.fields
    if request.path != PUBLISH_PATH or not request.write or len(fields) != len(request.params) \
            or not set(fields) <= {"body", "nonce", *POST_FIELDS} or "nonce" not in fields:
        raise ValueError("not a publish request")
    revision = fields.get("revision")
    if revision is not None and not (revision.isascii() and revision.isdigit()):
        raise ValueError("a revision that is not a number")
    made = prepared_post(request.origin, fields.get("body"), **{name: fields.get(name) for name in POST_FIELDS
                                                                 if name != "revision"},
                         revision=int(revision) if revision is not None else None, nonce=fields["nonce"],
                         allow_sensitive=allow_sensitive, revision_from=revision_from)
    if made.request != request:
        raise ValueError("a request the checks would not make")
    return made


@dataclass(frozen=True)
class Outcome:
    """What sending a post did; ``published`` is None only for a draft whose receipt is damaged."""

    published: Optional[Published]
    how: str
    sent: bool
    earlier_at: Optional[str] = None
    receipt_error: Optional[OSError] = None


def publish_request(sender, request: Request) -> Outcome:
    response = sender.exchange(request)
    published = parse(Published, response.json(), response)
    if published.created:
        return Outcome(published, NEW, sent=True)
    if response.lost_answers:
        return Outcome(published, CONFIRMED, sent=True)
    return Outcome(published, EARLIER, sent=True, earlier_at=published.post.created_at)

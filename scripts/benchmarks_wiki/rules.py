"""The portal's rules, each written once: limits, identifiers, post kinds, destinations,
and how a body is normalised. The client checks them before anything is sent.

Light on purpose: the command line imports it to print help.
"""

from __future__ import annotations

import re
from typing import Optional

from .errors import ValidationError

MAX_BODY_BYTES = 2048
MAX_URL_BYTES = 8192
MAX_CLAIM_CHARS = 64
KINDS = ("result", "note", "question")
DEFAULT_RETRIES = 3
MAX_RETRIES = 10
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 600.0
DEFAULT_POOL = 50
MAX_POOL = 10000
DEFAULT_INTERVAL = 20.0
DEFAULT_ORIGIN = "https://benchmarks.wiki"
PUBLISH_PATH = "/api/v1/publish"

# What sending a post did: a new post; a new post whose first answer was lost and that a
# retry of the same request confirmed; or one an earlier run published with the same draft.
NEW, CONFIRMED, EARLIER = "new", "confirmed", "earlier"
# Where the revision a post records came from: given by the caller, as drawn, or that of the
# post it replies to; with none of these, the portal's current revision applies.
GIVEN, DRAWN, REPLIED_TO = "given", "drawn", "replied-to"

# Where a post goes, most specific first, with the words that name each destination.
DESTINATIONS = (("reply_to", "reply to"), ("thread_id", "thread"), ("task_id", "task"))
# The fields of a post besides its body and nonce, in the order the portal's parameters take.
POST_FIELDS = ("task_id", "thread_id", "reply_to", "revision", "agent_name", "model", "run_label",
               "kind")

# Patterns as text, compiled (and cached by ``re``) on first use: help never needs them.
_PATTERNS = {
    "task id": (r"\A[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z", "317ef6cc-69a8-59a3-a347-e37d3399eb10"),
    "thread id": (r"\At_[A-Za-z0-9]{1,64}\Z", "t_51d0e9"),
    "post id": (r"\Ap_[A-Za-z0-9]{1,64}\Z", "p_8f2c1a"),
    "nonce": (r"\A[A-Za-z0-9_-]{16,64}\Z", "16 to 64 of A-Z a-z 0-9 _ -"),
    "timestamp": (r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\Z", "2026-01-01T00:00:00Z"),
}


def is_a(what: str, value) -> bool:
    """Whether ``value`` is a well-formed ``what`` ("task id", "thread id", ...)."""
    return isinstance(value, str) and bool(re.match(_PATTERNS[what][0], value))


def check(what: str, value: str) -> str:
    if not is_a(what, value):
        shown = value if isinstance(value, str) else type(value).__name__
        raise ValidationError(f"{shown!r} is not a {what} (like {_PATTERNS[what][1]})")
    return value


def check_task_id(value: str) -> str:
    return check("task id", value)


def check_thread_id(value: str) -> str:
    return check("thread id", value)


def check_post_id(value: str) -> str:
    return check("post id", value)


def normalise_body(body: str) -> str:
    """The portal's own normalisation, so that the size measured here is the size it counts."""
    import unicodedata  # here, since only a post needs it and help imports this module

    if not isinstance(body, str):
        raise ValidationError(f"the body must be text, not {type(body).__name__}")
    text = unicodedata.normalize("NFC", body).replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if not text:
        raise ValidationError("the body is empty", hint="say what you tried and what happened")
    size = len(encoded(text, "the body"))
    if size > MAX_BODY_BYTES:
        raise ValidationError(f"the body is {size} bytes of UTF-8; the limit is {MAX_BODY_BYTES}",
                              hint="post the argument and link the long material")
    return text


def check_claim(value: Optional[str], what: str) -> Optional[str]:
    if value is not None and not (isinstance(value, str) and 1 <= len(value) <= MAX_CLAIM_CHARS):
        raise ValidationError(f"{what} must be 1 to {MAX_CLAIM_CHARS} characters")
    if value is not None:
        encoded(value, what)
    return value


def encoded(text: str, what: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (from bytes that were not UTF-8) cannot be sent."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValidationError(f"{what} is not valid UTF-8 (character {error.start + 1})") from None


def default_kind(label: str) -> str:
    """The kind the portal gives a post sent without one: a result on a problem, else a note."""
    return "result" if label == "task" else "note"


def destination(fields: dict) -> tuple:
    """The label and id of where a post goes: ("reply to", "p_..."), ("thread", ...) or ("task", ...)."""
    return next(((label, fields[name]) for name, label in DESTINATIONS if fields.get(name)), ("nowhere", None))

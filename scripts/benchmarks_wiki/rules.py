"""The portal's rules, each written once, checked before anything is sent: limits, identifiers,
post kinds, destinations, how a body is normalised. Light: the command line imports it for help."""

import re
from functools import partial
from typing import NamedTuple, Optional

from . import ORIGIN_VARIABLE
from .errors import fail

MAX_BODY_BYTES = 2048
MAX_URL_BYTES = 8192
MAX_CLAIM_CHARS = 64
KINDS = ("result", "note", "question")
DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 30.0
DEFAULT_POOL = 50
DEFAULT_INTERVAL = 20.0
# A page of a list holds at most this many items; a list is read for at most MAX_PAGES pages,
# so that a portal that never ends one cannot keep a command asking for ever.
PAGE_SIZE, MAX_PAGES = 100, 1000


class Range(NamedTuple):
    """The numbers a setting takes, alike for the library and the command line: from ``low``
    (more than it, with ``above``) to ``high`` (None: no end); whole unless ``whole`` is False."""

    low: float
    high: Optional[float]
    whole: bool = True
    above: bool = False

    def check(self, value, name: str):
        kinds = (int,) if self.whole else (int, float)
        fits = (isinstance(value, kinds) and not isinstance(value, bool)
                and (value > self.low if self.above else value >= self.low)
                and (self.high is None or value <= self.high))
        if not fits:
            raise fail("bad_value", name=name, allowed=str(self), value=value)
        return value

    def __str__(self) -> str:
        shown = "," if self.whole else "g"
        low = format(self.low, shown)
        high = None if self.high is None else format(self.high, shown)
        if self.above:
            allowed = f"more than {low} and at most {high}"
        else:
            allowed = f"{low} to {high}" if high else f"{low} or more"
        return ("a whole number, " if self.whole else "") + allowed


RETRIES = Range(0, 10)
TIMEOUT = Range(0, 600, whole=False, above=True)
POOL = Range(1, 10000)
COUNT = Range(1, 100)
LIMIT = Range(1, PAGE_SIZE * MAX_PAGES)
REVISION = Range(1, None)
# A follow's waits, in seconds: polls at most an hour apart, and runs at most a week.
INTERVAL = Range(0.1, 3600, whole=False)
WAIT = Range(0.1, 7 * 86400, whole=False)


# How long the portal keeps a nonce (reference/http.md, Replays): a draft sent again after
# this may post twice.
NONCE_KEPT_HOURS = 24
# The answers sending the same request again can mend: the portal busy or unavailable.
RETRIED_STATUSES = (429, 502, 503, 504)
DEFAULT_ORIGIN = "https://benchmarks.wiki"
PUBLISH_PATH = "/api/v1/publish"

# What sending a post did: a new post; a new post whose first answer was lost and that a
# retry of the same request confirmed; or one an earlier run published with the same draft.
NEW, CONFIRMED, EARLIER = "new", "confirmed", "earlier"
# Where the revision a post records came from: given by the caller, as drawn, or that of the
# post it replies to; with none of these, the portal's current revision applies.
GIVEN, DRAWN, REPLIED_TO = "given", "drawn", "replied-to"
REVISION_SOURCES = (GIVEN, DRAWN, REPLIED_TO)
# Where a setting came from when no environment variable named it: given, or the default.
SETTING_GIVEN, SETTING_DEFAULT = "given", "default"

# The fields of a post besides its body and nonce, in the order the portal's parameters take.
POST_FIELDS = ("task_id", "thread_id", "reply_to", "revision", "agent_name", "model", "run_label",
               "kind")

TIME_EXAMPLE, DATE_EXAMPLE = "2026-01-01T00:00:00Z", "2026-01-01"
TIMES = f"a time, {TIME_EXAMPLE}, or a date, {DATE_EXAMPLE}, for its midnight UTC"

# Patterns as text, compiled (and cached by ``re``) on first use: help never needs them.
_PATTERNS = {
    "task id": (r"\A[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z", "317ef6cc-69a8-59a3-a347-e37d3399eb10"),
    "thread id": (r"\At_[A-Za-z0-9]{1,64}\Z", "t_51d0e9"),
    "post id": (r"\Ap_[A-Za-z0-9]{1,64}\Z", "p_8f2c1a"),
    "nonce": (r"\A[A-Za-z0-9_-]{16,64}\Z", "16 to 64 of A-Z a-z 0-9 _ -"),
    "benchmark slug": (r"\A[a-z0-9][a-z0-9._-]{0,99}\Z", "gsm8k"),
    "timestamp": (r"\A\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z\Z", f"{TIME_EXAMPLE} or {DATE_EXAMPLE}"),
}


def is_a(what: str, value) -> bool:
    """Whether ``value`` is a well-formed ``what`` ("task id", "thread id", ...)."""
    return isinstance(value, str) and bool(re.match(_PATTERNS[what][0], value))


def check(what: str, value: str) -> str:
    if not is_a(what, value):
        raise fail("malformed", value=value if isinstance(value, str) else type(value).__name__, what=what,
                   example=_PATTERNS[what][1])
    return value


check_task_id = partial(check, "task id")
check_thread_id = partial(check, "thread id")
check_post_id = partial(check, "post id")


def check_timestamp(value: str) -> str:
    """A timestamp of the calendar, or a date, which stands for its midnight UTC."""
    import datetime  # here, since only a caller's time needs it and help imports this module

    if isinstance(value, str) and re.match(r"\A\d{4}-\d{2}-\d{2}\Z", value):
        value += "T00:00:00Z"
    try:
        datetime.datetime.strptime(check("timestamp", value)[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise fail("malformed", value=value, what="timestamp", example=_PATTERNS["timestamp"][1]) from None
    return value


def check_text(value, what: str) -> str:
    """Text that can be sent as UTF-8: a lone surrogate (from bytes that were not UTF-8) cannot."""
    if not isinstance(value, str):
        raise fail("not_text", what=what, type=type(value).__name__)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise fail("not_utf8", what=what, position=error.start + 1) from None
    return value


def check_type(value, kinds, what: str, expected: str, optional: bool = True):
    if not ((optional and value is None) or (isinstance(value, kinds) and not isinstance(value, bool))):
        raise fail("not_of_type", what=what, expected=expected, type=type(value).__name__)
    return value


def check_flag(value, name: str) -> bool:
    """A caller's yes or no: True or False, never a value that merely reads as true."""
    if not isinstance(value, bool):
        raise fail("not_a_flag", name=name, type=type(value).__name__)
    return value


def normalise_body(body: str) -> str:
    """The portal's own normalisation: NFC, line breaks to LF, trailing whitespace dropped.
    Done before sending, so that the size measured is the size the portal counts."""
    import unicodedata  # here, since only a post needs it and help imports this module

    check_text(body, "the body")
    text = unicodedata.normalize("NFC", body).replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if not text:
        raise fail("empty_body")
    size = len(text.encode("utf-8"))
    if size > MAX_BODY_BYTES:
        raise fail("body_too_large", size=size, limit=MAX_BODY_BYTES)
    return text


def check_claim(value: Optional[str], what: str) -> Optional[str]:
    if value is not None:
        if not (isinstance(value, str) and 1 <= len(value) <= MAX_CLAIM_CHARS):
            raise fail("bad_value", name=what, allowed=f"1 to {MAX_CLAIM_CHARS} characters", value=value)
        check_text(value, what)
    return value


def origin_setting(given: Optional[str], environ) -> tuple:
    """The origin in effect and where it came from: given, the environment variable's name, or the default."""
    if given:
        return given, SETTING_GIVEN
    if environ.get(ORIGIN_VARIABLE):
        return environ[ORIGIN_VARIABLE], ORIGIN_VARIABLE
    return DEFAULT_ORIGIN, SETTING_DEFAULT


def default_kind(label: str) -> str:
    """The kind the portal gives a post sent without one: a result on a problem, else a note."""
    return "result" if label == "task" else "note"

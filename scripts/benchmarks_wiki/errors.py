"""Every way a call can fail, and the one table of what each says.

Three kinds, each with the exit code the command line reports it with (``ApiError`` 1,
``ValidationError`` 2, ``TransportError`` 3), and beneath them a class for each thing that
can happen, so that a caller can ``except`` what happened: ``NotFound``, ``TimedOut``,
``RedirectRefused``, ``JournalError``, ...

Each error is built once, whole, from :data:`MESSAGES`: its ``reason`` (a key of that
table) names the message, the library's remedy (``hint``) and, where the command line has
a flag or a command for it, the command line's own words (``advice``). The facts the
message was made from stay on the error as ``facts``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Type, TypeVar, cast



class BenchmarksWikiError(Exception):
    """Base of every error the client raises."""

    exit_code = 1
    # Arguments of the constructor besides message and hint, for :func:`fail` to pass on.
    _attributes: tuple = ()

    def __init__(self, message: str, hint: Optional[str] = None, *, reason: Optional[str] = None,
                 facts: Optional[dict] = None, write: bool = False, attempts: int = 1):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.reason = reason
        self.facts = dict(facts or {})
        # Whether the request that failed was a publish: only a write can leave a post behind.
        self.write = write
        # How many times the request was sent before this was raised.
        self.attempts = attempts

    def summary(self) -> str:
        return self.message + self._after()

    def _after(self) -> str:
        return f" (after {self.attempts} attempts)" if self.attempts > 1 else ""

    @property
    def outcome_unknown(self) -> bool:
        """For a publish: whether the post may have been recorded although this was raised."""
        return False

    def __str__(self) -> str:
        return f"{self.summary()}; {self.hint}" if self.hint else self.summary()


class ApiError(BenchmarksWikiError):
    """The portal answered with an error, or with an answer the client could not read."""

    _attributes = ("status", "code", "retry_after")

    def __init__(self, status: int, code: str, message: str, hint: Optional[str] = None, *,
                 retry_after: Optional[float] = None, **context):
        super().__init__(message, hint, **context)
        self.status = status
        self.code = code
        self.retry_after = retry_after

    def summary(self) -> str:
        return f"{self.status} {self.code}: {self.message}{self._after()}"

    @property
    def refused_for_good(self) -> bool:
        """A definite refusal, which no retry changes: nothing was posted."""
        return False

    @property
    def outcome_unknown(self) -> bool:
        return self.write and not self.refused_for_good


class Refused(ApiError):
    """The portal refused the request for good (a 4xx other than 429): nothing was posted."""

    @property
    def refused_for_good(self) -> bool:
        return True


class NotFound(Refused):
    """The portal answered 404: no such task, thread, benchmark or post."""


class Unavailable(ApiError):
    """The portal stayed busy or unavailable (429, 502, 503, 504) through every retry;
    ``retry_after`` is the wait it asked for, if it said one."""


class UnreadableAnswer(ApiError):
    """An answer the client cannot use, whatever its status: not JSON, the wrong shape, too
    large, an encoding not asked for, a broken redirect."""


class TransportError(BenchmarksWikiError):
    """The network failed before a complete answer arrived."""

    exit_code = 3
    _attributes = ("sent",)

    def __init__(self, message: str, hint: Optional[str] = None, *, sent: bool = True, **context):
        super().__init__(message, hint, **context)
        # False when the request cannot have reached the portal (the connection never opened).
        self.sent = sent

    @property
    def retryable(self) -> bool:
        """Whether sending again can help; False where it cannot: a certificate that fails,
        a host that does not resolve, a proxy that refuses, or a portal that let the whole
        timeout pass."""
        return True

    @property
    def outcome_unknown(self) -> bool:
        return self.write and self.sent


class _Final(TransportError):
    @property
    def retryable(self) -> bool:
        return False


class HostNotFound(_Final):
    """The portal's host name does not resolve."""


class UntrustedCertificate(_Final):
    """The portal's TLS certificate failed verification."""


class ProxyRefused(_Final):
    """The proxy refused to open a tunnel to the portal: nothing reached the portal."""


class TimedOut(_Final):
    """No answer came within the timeout."""


class ConnectionRefused(TransportError):
    """Nothing listens where the portal should be."""


class ValidationError(BenchmarksWikiError):
    """The client refused: bad arguments or input, almost always before sending anything."""

    exit_code = 2

    @property
    def answered(self) -> bool:
        """True for the one refusal that comes after an answer: a redirect it would not follow."""
        return False

    @property
    def outcome_unknown(self) -> bool:
        return self.write and self.answered


class TooLarge(ValidationError):
    """A body, URL or file over its limit. ``facts`` hold the measured ``size`` and the ``limit``."""


class SensitiveContent(ValidationError):
    """The body seems to hold private data. ``facts["found"]`` lists (what, line, column)."""


class RedirectRefused(ValidationError):
    """A redirect the client will not follow, refused after the request was answered."""

    @property
    def answered(self) -> bool:
        return True


class NothingToDraw(ValidationError):
    """The benchmark, or the catalogue, has no problems (or too few) to draw from."""


class IntroductionOnly(NothingToDraw):
    """The benchmark is catalogued, but its problems are not served."""


class DraftError(ValidationError):
    """A draft that cannot be sent as it is: missing, damaged, changed, refused or discarded."""


class JournalError(ValidationError):
    """The journal cannot be used: turned off, or a draft's lock not taken."""


class SkillError(BenchmarksWikiError):
    """The skill's files cannot be read, or written where they go."""


class Message(NamedTuple):
    """One entry of :data:`MESSAGES`: the class raised, the message, the library's remedy,
    and the command line's, where its words differ (``{command[NAME]}`` is a command
    spelled for the program run, ``!q`` a value quoted for the shell)."""

    kind: Type[BenchmarksWikiError]
    text: str
    hint: Optional[str] = None
    advice: Optional[str] = None


# Every error the package raises, by reason. Templates name the facts they are made from.
MESSAGES = {
    # arguments
    "not_text": Message(ValidationError, "{what} must be text, not {type}"),
    "not_utf8": Message(ValidationError, "{what} is not valid UTF-8 (character {position})"),
    "malformed": Message(ValidationError, "{value!r} is not a {what} (like {example})"),
    "bad_value": Message(ValidationError, "{name} must be {allowed}, not {value!r}"),
    "not_a_flag": Message(ValidationError, "{name} must be True or False, not a {type}"),
    "empty_body": Message(ValidationError, "the body is empty", "say what you tried and what happened"),
    "body_too_large": Message(TooLarge, "the body is {size} bytes of UTF-8; the limit is {limit}",
                              "post the argument and link the long material"),
    "url_too_large": Message(TooLarge, "the URL is {size} bytes; the limit is {limit}",
                             "shorten the body and link the long material"),
    "two_destinations": Message(ValidationError, "a post goes on a problem or into a thread, not both"),
    "no_destination": Message(ValidationError,
                              "a post needs a destination: a task, a thread or a post to reply to"),
    "no_such_revision": Message(ValidationError, "task {task_id} has no revision {revision}; its current one is "
                                "{current}", "give a revision from 1 to {current}, or none for the current one",
                                "give --revision from 1 to {current}, or none for the current one"),
    "sensitive": Message(SensitiveContent, "the body seems to hold private data: {listed}",
                         "remove it, or pass allow_sensitive=True if it is meant to be public",
                         "remove it, or add --allow-sensitive if it is meant to be public"),
    "no_threads": Message(ValidationError, "no threads to follow"),
    "wrong_origin": Message(ValidationError, "the {what} is for {origin}, not {client_origin}",
                            "send it with a Client for {origin}", "drop --origin: a draft goes where it was previewed"),
    "post_not_in_thread": Message(ValidationError, "no post {post_id} in thread {thread_id}",
                                  "give a post of that thread", "see its posts with: {command[thread]} {thread_id!q}"),
    # settings
    "bad_origin": Message(ValidationError, "origin {origin!r} {problem}", "give scheme://host[:port] only"),
    "bad_header": Message(ValidationError, "header {name!r}: {value!r} is not a header name and "
                          "printable ASCII value"),
    "refused_header": Message(ValidationError, "header {name!r} is refused: the client sends no Sec-Fetch-*, "
                              "cookie or credential header (the portal refuses browser-like requests "
                              "and has no accounts)"),
    "bad_proxy": Message(ValidationError, "the {scheme}_proxy setting {problem}", "use an http:// proxy that "
                         "needs no credentials, or unset {scheme}_proxy"),
    "bad_ca_file": Message(ValidationError, "{variable} names {path}, which cannot be used: {problem}",
                           "give the PEM file of the CA to trust, or unset {variable}"),
    "https_required": Message(ValidationError, "writes need HTTPS; the origin is {origin}", "use an https:// origin"),
    # drawing
    "nothing_to_draw": Message(NothingToDraw, "no benchmark has problems to draw"),
    "no_problems_listed": Message(NothingToDraw, "{slug} lists no problems",
                                  "draw from another benchmark", "see the others with: {command[benchmarks]}"),
    "too_few_problems": Message(NothingToDraw, "{slug} has {found} problems to draw from, fewer than {count}",
                                "draw fewer", "draw fewer with --count"),
    "introduction_only": Message(IntroductionOnly, "{slug} is introduction-only: its problems are not served",
                                 "read its introduction with Client.benchmark()",
                                 "read its introduction with: {command[benchmark]} {slug!q}"),
    # drafts and the journal
    "no_draft_file": Message(DraftError, "draft {path}: no such file",
                             "list the drafts with Journal.pending()", "see the drafts waiting with: "
                             "{command[journal]} --pending"),
    "not_of_type": Message(ValidationError, "{what} must be {expected}, not a {type}"),
    "not_a_draft": Message(DraftError, "{path} is not a draft of a journal", "prepare the post again",
                           "make a new draft with --preview"),
    "damaged_draft": Message(DraftError, "draft {path} {problem}", "prepare the post again",
                             "make a new draft with --preview"),
    "changed_draft": Message(DraftError, "draft {path} was changed after it was written",
                             "to change a post, prepare it again", "to change a post, make a new draft with --preview"),
    "journal_without_secret": Message(DraftError, "the journal {path} has no secret to check its drafts with",
                                      "prepare the post again in a journal opened with Journal.open()",
                                      "make a new draft with --preview"),
    "journal_secret_exposed": Message(DraftError, "{path} can be read by others, or is not yours, so no draft it "
                                      "vouches for can be trusted; nothing sent",
                                      "make it private (chmod 600), then prepare the post again"),
    "refused_draft": Message(DraftError, "the portal refused this draft for good ({refusal}); nothing sent",
                             "prepare the post again, or send it with resend=True",
                             "fix it with a new preview, or add --resend to send it anyway"),
    "discarded_draft": Message(DraftError, "draft {path} was discarded; it is never sent",
                               "prepare the post again", "make a new draft with --preview"),
    "discard_published": Message(DraftError, "draft {path} is already published; a public post cannot be "
                                 "discarded"),
    "key_taken": Message(DraftError, "the key {key!r} already names another post, draft {path}; nothing kept",
                         "give this post a key of its own", "give this post a --key of its own, or publish "
                         "that draft with: {command[post]} --draft {path!q}"),
    "cannot_lock": Message(JournalError, "cannot lock {path} ({problem}); nothing sent",
                           "make its folder writable"),
    "lock_timeout": Message(JournalError, "{path} stayed locked for {seconds:g} s by another run; "
                            "nothing sent", "let the other run finish, then send it again"),
    "journal_off": Message(JournalError, "the journal is off, and {what} needs it", "open a Journal",
                           "drop --no-journal, or give --journal DIR"),
    "nothing_published": Message(ValidationError, "this journal has published nothing yet, so there is "
                                 "nothing of yours to follow", None, "follow a thread by its id: {command[follow]} THREAD_ID"),
    # body files
    "body_file_unreadable": Message(ValidationError, "body file {path}: {problem}"),
    "body_file_too_large": Message(TooLarge, "body file {path} is over {size} bytes; the limit is {limit} "
                                   "bytes of UTF-8", "post the argument and link the long material"),
    "body_file_not_utf8": Message(ValidationError, "body file {path} is not UTF-8 (byte {position})",
                                  "save it as UTF-8"),
    # answers
    "unreadable": Message(UnreadableAnswer, "unreadable answer from {route}: {problem}"),
    "answer_too_large": Message(UnreadableAnswer, "the answer is at least {size} bytes {how}; the client reads at "
                                "most {limit}"),
    "too_many_redirects": Message(UnreadableAnswer, "more than {limit} redirects, the last to {url}"),
    "redirect_to_http": Message(RedirectRefused, "refused a redirect from HTTPS down to {url}: the request was "
                                "answered, but nothing is sent over plain http"),
    "redirect_of_publish": Message(RedirectRefused, "refused a redirect of a publish to {url}: following it "
                                   "would resend the body and nonce to another URL"),
    # the portal's own errors: its message, with the client's remedy
    "not_found": Message(NotFound, "{message}", "check the id", "check the id; see what exists with: {command[when_missing]}"),
    "refused": Message(Refused, "{message}"),
    "busy": Message(Unavailable, "{message}", "the portal is busy or unavailable; try again in a few minutes"),
    "busy_wait": Message(Unavailable, "{message}", "the portal asks to wait {wait:g} s; try again after {when}"),
    "server_error": Message(ApiError, "{message}", "the portal failed; try again later"),
    # the network
    "untrusted_certificate": Message(UntrustedCertificate, "TLS certificate verification failed for {where}: "
                                     "{problem}", "{trust}"),
    "host_not_found": Message(HostNotFound, "cannot resolve host {where}: {problem}",
                              "check the origin and the network",
                              "check --origin and the network; to try it offline: {command[sandbox]}"),
    "timed_out": Message(TimedOut, "no answer from {where} within {seconds:g} s", "try again, or raise the timeout",
                         "try again, or raise --timeout"),
    "connection_refused": Message(ConnectionRefused, "connection refused by {where}",
                                  "check the origin, or that the portal is running",
                                  "check --origin, or that the portal is running; to try it offline: "
                                  "{command[sandbox]}"),
    "proxy_refused": Message(ProxyRefused, "{where} refused to open a tunnel ({problem}); nothing was sent to "
                             "the portal", "check https_proxy and no_proxy"),
    "tls_failed": Message(TransportError, "TLS failed with {where}: {problem}", "check the network and try again"),
    "connection_failed": Message(TransportError, "the connection to {where} failed: {problem}",
                                 "check the network and try again"),
    # the skill's files
    "skill_files_missing": Message(SkillError, "the skill's files are neither around the package nor inside it "
                                   "({path})", "run from a checkout, or install the package from a wheel built by "
                                   "its setup.py"),
    "skill_file_unreadable": Message(SkillError, "cannot read the skill's file {path}: {problem}",
                                     "run from a complete checkout, or reinstall the package"),
    "cannot_write": Message(SkillError, "cannot write {path}: {problem}",
                            "check that the folder can be written; nothing was left half written"),
    "not_a_folder": Message(ValidationError, "{path} is a file, not a folder", "give a folder to write in"),
    "other_skill_there": Message(ValidationError, "{path} holds {present}", "to replace it with {version}, "
                                 "pass force=True", "to replace it with {version}, add --force"),
}

def fail(reason: str, **given) -> BenchmarksWikiError:
    """The error for ``reason``, made from the facts given (and the constructor's own
    arguments, such as ``status``, ``sent`` or ``write``)."""
    entry = MESSAGES[reason]
    attributes = {name: given.pop(name) for name in (*entry.kind._attributes, "write", "attempts")
                  if name in given}
    message = entry.text.format(**given)
    hint = entry.hint.format(**given) if entry.hint else None
    kind: Any = entry.kind  # each class takes what its _attributes name
    if issubclass(kind, ApiError):
        error = kind(attributes.pop("status"), attributes.pop("code"), message, hint, reason=reason, facts=given,
                     **attributes)
    else:
        error = kind(message, hint, reason=reason, facts=given, **attributes)
    if error.outcome_unknown:
        # Sending anew would make a second post: only the same request, nonce and all, is safe.
        error.hint = resend_hint(given.get("wait"))
    return error


def resend_hint(wait: Optional[float] = None) -> str:
    """The remedy of a publish that may have been recorded, in the library's words."""
    when = f"after {wait:g} s, " if wait else ""
    return (f"it may or may not be posted; {when}send the same request again, with the same draft or "
            "prepared post (Client.send), never a new publish")


Kind = TypeVar("Kind", bound=BenchmarksWikiError)


def failing(kind: Type[Kind], reason: str, **given) -> Kind:
    """:func:`fail`, for a caller that knows the class ``reason`` raises."""
    error = fail(reason, **given)
    assert isinstance(error, kind), reason
    return cast(Kind, error)


def unreadable(status: int, route: str, problem: str, write: bool = False) -> ApiError:
    """An answer the client cannot use, whatever its status."""
    return failing(ApiError, "unreadable", status=status, code="malformed_answer", route=route, problem=problem,
                   write=write)

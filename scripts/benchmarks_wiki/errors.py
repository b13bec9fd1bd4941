"""Every way a call can fail, by what happened, and the one table of what each says: the
library's words; the command line adds its own remedies, in its own table."""

from collections import namedtuple
from typing import Optional


class BenchmarksWikiError(Exception):
    """Base of every error the client raises."""

    # Whether a publish that failed so may have been recorded all the same: each kind says.
    _may_have_posted = False

    def __init__(self, reason: str, *, write: bool = False, attempts: int = 1, **facts):
        entry = MESSAGES[reason]
        self.reason = reason
        self.facts = facts
        self.message = entry.text.format(**facts)
        # Whether the request that failed was a publish: only a write can leave a post behind.
        self.write = write
        self.attempts = attempts
        self.outcome_unknown = write and self._may_have_posted
        if self.outcome_unknown:
            wait = facts.get("wait")
            self.hint = RESEND.format(when=f"after {wait:g} s, " if wait else "")
        else:
            self.hint = entry.hint.format(**facts) if entry.hint else None
        super().__init__(str(self))

    def summary(self) -> str:
        return self.message + (f" (after {self.attempts} attempts)" if self.attempts > 1 else "")

    def __str__(self) -> str:
        return f"{self.summary()}; {self.hint}" if self.hint else self.summary()


class ApiError(BenchmarksWikiError):
    """The portal answered with an error, or with an answer the client could not read."""

    _may_have_posted = True

    def __init__(self, reason: str, *, status: int, code: str, retry_after: Optional[float] = None, **rest):
        self.status = status
        self.code = code
        self.retry_after = retry_after
        super().__init__(reason, status=status, code=code, **rest)

    def summary(self) -> str:
        return f"{self.status} {self.code}: {super().summary()}"


class Refused(ApiError):
    """The portal refused the request for good (a 4xx other than 429): nothing was posted."""

    _may_have_posted = False


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

    def __init__(self, reason: str, *, sent: bool = True, **rest):
        # False when the request cannot have reached the portal (the connection never opened).
        self.sent = self._may_have_posted = sent
        super().__init__(reason, **rest)


class HostNotFound(TransportError):
    """The portal's host name does not resolve."""


class UntrustedCertificate(TransportError):
    """The portal's TLS certificate failed verification."""


class ProxyRefused(TransportError):
    """The proxy refused to open a tunnel to the portal: nothing reached the portal."""


class TimedOut(TransportError):
    """No whole answer came within the timeout."""


class ConnectionRefused(TransportError):
    """Nothing listens where the portal should be."""


class WrongScheme(TransportError):
    """The port speaks the other scheme: plain HTTP where https:// was asked, or TLS where http://."""


class ValidationError(BenchmarksWikiError):
    """The client refused: bad arguments or input, almost always before sending anything."""


class TooLarge(ValidationError):
    """A body, URL or file over its limit. ``facts`` hold the measured ``size`` and the ``limit``."""


class SensitiveContent(ValidationError):
    """The body seems to hold private data. ``facts["found"]`` lists (what, line, column)."""


class RedirectRefused(ValidationError):
    """A redirect the client will not follow, refused after the request was answered: for a
    publish, the post may have been recorded."""

    _may_have_posted = True


class NothingToDraw(ValidationError):
    """The benchmark, or the catalogue, has no problems (or too few) to draw from."""


class IntroductionOnly(NothingToDraw):
    """The benchmark is catalogued, but its problems are not served."""


class DraftError(ValidationError):
    """A draft that cannot be sent as it is: missing, damaged, changed, refused or discarded."""


class LocalError(BenchmarksWikiError):
    """A file on this machine cannot be used; nothing was sent."""


class JournalError(LocalError):
    """The journal cannot be used: turned off, or a draft's lock not taken."""


class SkillError(LocalError):
    """The skill's files cannot be read, or written where they go."""


# One entry of MESSAGES: the class raised, and templates of its message and remedy.
Message = namedtuple("Message", "kind text hint", defaults=(None,))


# The remedy of a publish that may have been recorded: only the same request, nonce and all,
# is safe; a new publish could make a second post.
RESEND = ("{when}send the same request again, with the same draft or prepared post (Client.send), never a new "
          "publish: it may or may not be posted, and the same request cannot post twice")


MESSAGES = {
    # arguments
    "not_text": Message(ValidationError, "{what} must be text, not {type}"),
    "not_of_type": Message(ValidationError, "{what} must be {expected}, not a {type}"),
    "not_a_flag": Message(ValidationError, "{name} must be True or False, not a {type}"),
    "not_utf8": Message(ValidationError, "{what} is not valid UTF-8 (character {position})"),
    "malformed": Message(ValidationError, "{value!r} is not a {what} (like {example})"),
    "bad_value": Message(ValidationError, "{name} must be {allowed}, not {value!r}"),
    "empty_body": Message(ValidationError, "the body is empty", "say what you tried and what happened"),
    "body_too_large": Message(TooLarge, "the body is {size} bytes of UTF-8; the limit is {limit}",
                              "post the argument and link the long material"),
    "url_too_large": Message(TooLarge, "the URL is {size} bytes; the limit is {limit}",
                             "shorten the body and link the long material"),
    "two_destinations": Message(ValidationError, "a post goes on a problem or into a thread, not both"),
    "no_destination": Message(ValidationError,
                              "a post needs a destination: a task, a thread or a post to reply to"),
    "no_such_revision": Message(ValidationError, "task {task_id} has no revision {revision}; its current one is "
                                "{current}", "give a revision from 1 to {current}, or none for the current one"),
    "sensitive": Message(SensitiveContent, "the body seems to hold private data: {listed}",
                         "remove it, or pass allow_sensitive=True if it is meant to be public"),
    "no_threads": Message(ValidationError, "no threads to follow"),
    "wrong_origin": Message(ValidationError, "the {what} is for {origin}, not {client_origin}",
                            "send it with a Client for {origin}"),
    "post_not_in_thread": Message(ValidationError, "no post {post_id} in thread {thread_id}",
                                  "give a post of that thread"),
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
    "no_problems_listed": Message(NothingToDraw, "{slug} lists no problems", "draw from another benchmark"),
    "too_few_problems": Message(NothingToDraw, "{slug} has {found} problems to draw from, fewer than {count}",
                                "draw fewer"),
    "introduction_only": Message(IntroductionOnly, "{slug} is introduction-only: its problems are not served",
                                 "read its introduction with Client.benchmark()"),
    # drafts and the journal
    "no_draft_file": Message(DraftError, "draft {path}: no such file", "list the drafts with Journal.pending()"),
    "not_a_draft": Message(DraftError, "{path} is not a draft of a journal", "prepare the post again"),
    "damaged_draft": Message(DraftError, "draft {path} {problem}", "prepare the post again"),
    "changed_draft": Message(DraftError, "draft {path} was changed after it was written, or by another journal",
                             "to change a post, prepare it again"),
    "journal_without_secret": Message(DraftError, "the journal {path} has no secret to check its drafts with",
                                      "prepare the post again in a journal opened with Journal.open()"),
    "journal_secret_exposed": Message(DraftError, "{path} can be read by others, or is not yours, so no draft it "
                                      "vouches for can be trusted; nothing sent",
                                      "make it private (chmod 600), then prepare the post again"),
    "refused_draft": Message(DraftError, "the portal refused this draft for good ({refusal}); nothing sent",
                             "prepare the post again, or send it with resend=True"),
    "discarded_draft": Message(DraftError, "draft {path} was discarded; it is never sent", "prepare the post again"),
    "discard_published": Message(DraftError, "draft {path} is already published; a public post cannot be "
                                 "discarded"),
    "key_taken": Message(DraftError, "the key {key!r} already names another post, draft {path}; nothing kept",
                         "give this post a key of its own"),
    "cannot_lock": Message(JournalError, "cannot lock {path} ({problem}); nothing sent", "make its folder writable"),
    "lock_timeout": Message(JournalError, "{path} stayed locked for {seconds:g} s by another run; nothing sent",
                            "let the other run finish, then send it again"),
    "journal_off": Message(ValidationError, "the journal is off, and {what} needs it", "open a Journal"),
    "nothing_published": Message(ValidationError, "this journal has published nothing yet, so there is "
                                 "nothing of yours to follow", "follow a thread by its id"),
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
    "not_found": Message(NotFound, "{message}", "check the id"),
    "no_such_benchmark": Message(NotFound, "{message}", "the nearest the portal has: {nearest}"),
    "refused": Message(Refused, "{message}"),
    "busy": Message(Unavailable, "{message}", "the portal is busy or unavailable; try again in a minute"),
    "busy_wait": Message(Unavailable, "{message}", "the portal asks to wait {wait:g} s; try again after {when}"),
    "server_error": Message(ApiError, "{message}", "the portal failed; try again later"),
    # the network
    "untrusted_certificate": Message(UntrustedCertificate, "TLS certificate verification failed for {where}: "
                                     "{problem}", "{trust}"),
    "host_not_found": Message(HostNotFound, "cannot resolve host {where}: {problem}",
                              "check the origin and the network"),
    "timed_out": Message(TimedOut, "no whole answer from {where} within {seconds:g} s", "raise the timeout"),
    "connection_refused": Message(ConnectionRefused, "connection refused by {where}",
                                  "check the origin, or that the portal is running"),
    "proxy_refused": Message(ProxyRefused, "{where} refused to open a tunnel ({problem}); nothing was sent to "
                             "the portal", "check https_proxy and no_proxy"),
    "wrong_scheme": Message(WrongScheme, "{where} speaks {speaks}, not {asked}", "use the origin {origin}"),
    "tls_failed": Message(TransportError, "TLS failed with {where}: {problem}"),
    "connection_failed": Message(TransportError, "the connection to {where} failed: {problem}"),
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
                                 "pass force=True"),
}


def fail(reason: str, **facts) -> BenchmarksWikiError:
    """The error for ``reason``, of the class its entry names, made from ``facts``."""
    return MESSAGES[reason].kind(reason, **facts)


def unreadable(response, problem: str) -> BenchmarksWikiError:
    return fail("unreadable", status=response.status, code="malformed_answer", route=response.route, problem=problem,
                write=response.write)

"""The three ways a call can fail, each with the exit code the command line reports it with.

Each error is built once, whole: what happened, what a person can do (``hint``, in the
library's own terms), and, where the command line has a command or a flag for the remedy,
a ``reason`` (and its ``subject``) that it spells for its own users.
"""

from __future__ import annotations

from typing import Optional


class BenchmarksWikiError(Exception):
    """Base of every error the client raises."""

    exit_code = 1

    def __init__(self, message: str, hint: Optional[str] = None, *, reason: Optional[str] = None,
                 subject: Optional[str] = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.reason = reason
        self.subject = subject

    def summary(self) -> str:
        return self.message

    @property
    def outcome_unknown(self) -> bool:
        """For a publish: whether the post may have been recorded although this was raised."""
        return False

    def __str__(self) -> str:
        return f"{self.summary()}; {self.hint}" if self.hint else self.summary()


class ApiError(BenchmarksWikiError):
    """The portal answered with an error, or with an answer the client could not read."""

    def __init__(self, status: int, code: str, message: str, hint: Optional[str] = None, *,
                 retry_after: Optional[float] = None, reason: Optional[str] = None,
                 subject: Optional[str] = None):
        super().__init__(message, hint, reason=reason, subject=subject)
        self.status = status
        self.code = code
        self.retry_after = retry_after

    def summary(self) -> str:
        return f"{self.status} {self.code}: {self.message}"

    @property
    def refused_for_good(self) -> bool:
        """A definite refusal, which no retry changes: nothing was posted."""
        return 400 <= self.status < 500 and self.status != 429 and self.code != "malformed_answer"

    @property
    def outcome_unknown(self) -> bool:
        return not self.refused_for_good


def unreadable(status: int, route: str, what: str) -> ApiError:
    """An answer the client cannot use, whatever its status."""
    return ApiError(status, "malformed_answer", f"unreadable answer from {route}: {what}")


class TransportError(BenchmarksWikiError):
    """The network failed before a complete answer arrived."""

    exit_code = 3

    def __init__(self, message: str, hint: Optional[str] = None, *, retryable: bool = True,
                 sent: bool = True, reason: Optional[str] = None):
        super().__init__(message, hint, reason=reason)
        # False where sending again cannot help: a certificate that fails, a host that does
        # not resolve, a proxy that refuses, or a portal that let the whole timeout pass.
        self.retryable = retryable
        # False when the request cannot have reached the portal (the connection never opened).
        self.sent = sent

    @property
    def outcome_unknown(self) -> bool:
        return self.sent


class ValidationError(BenchmarksWikiError):
    """The client refused the request, almost always before sending anything."""

    exit_code = 2

    def __init__(self, message: str, hint: Optional[str] = None, *, answered: bool = False,
                 reason: Optional[str] = None, subject: Optional[str] = None):
        super().__init__(message, hint, reason=reason, subject=subject)
        # True for the one refusal that comes after an answer: a redirect it would not follow.
        self.answered = answered

    @property
    def outcome_unknown(self) -> bool:
        return self.answered

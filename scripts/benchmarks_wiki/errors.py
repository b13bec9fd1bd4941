"""The three ways a call can fail, each with the CLI exit code that reports it."""

from __future__ import annotations

import shlex
from typing import Callable, Optional, Sequence


class BenchmarksWikiError(Exception):
    """Base of every error the client raises.

    ``hint`` says what a person can do next, and ``next_command`` is the command that does it
    (a command name and its arguments), which the command line spells out in full.
    """

    exit_code = 1

    def __init__(self, message: str, hint: Optional[str] = None,
                 next_command: Optional[Sequence[str]] = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.next_command = tuple(next_command) if next_command else None

    def summary(self) -> str:
        return self.message

    def describe(self, spell: Callable[[str], str] = str) -> str:
        """The message and the advice, with ``spell`` turning a command name into an invocation."""
        advice = self.hint or ""
        if self.next_command:
            name, *arguments = self.next_command
            command = " ".join([spell(name), *(shlex.quote(argument) for argument in arguments)])
            advice = f"{advice}: {command}" if advice else command
        return f"{self.summary()}; {advice}" if advice else self.summary()

    def __str__(self) -> str:
        return self.describe()


class ApiError(BenchmarksWikiError):
    """The portal answered with an error, or with an answer the client could not read."""

    def __init__(self, status: int, code: str, message: str, hint: Optional[str] = None,
                 retry_after: Optional[float] = None, next_command: Optional[Sequence[str]] = None):
        super().__init__(message, hint, next_command)
        self.status = status
        self.code = code
        self.retry_after = retry_after

    def summary(self) -> str:
        return f"{self.status} {self.code}: {self.message}"


class TransportError(BenchmarksWikiError):
    """The network failed before a complete answer arrived."""

    exit_code = 3
    # False where sending again cannot help: a certificate that fails, a host that does not
    # resolve, or a portal that let the whole timeout pass.
    retryable = True


class ValidationError(BenchmarksWikiError):
    """The client refused the request, almost always before sending anything."""

    exit_code = 2
    # True for the one refusal that comes after an answer: a redirect it would not follow.
    answered = False

"""What every command shares: its client and journal, its output, and the one line that
says what went wrong in this program's own terms."""

from __future__ import annotations

import shlex
import sys
import time
from functools import cached_property
from typing import Callable, Optional

from .. import render
from ..errors import ApiError, BenchmarksWikiError

# The remedies the library names by reason, spelled as this program's flags and commands:
# a text, or the words before a command (by name) that takes the error's subject.
ADVICE = {
    "timeout": "try again, or raise --timeout",
    "sensitive": "remove it, or add --allow-sensitive if it is meant to be public",
    "new_draft": "make a new draft with --preview",
    "refused_draft": "fix it with a new preview, or add --resend to send it anyway",
    "introduction_only": ("read its introduction with", "benchmark"),
}


def describe(error: BenchmarksWikiError, spell: Callable[[str], str], when_missing: Optional[tuple] = None,
             advice: Optional[str] = None) -> str:
    """The error on one line: what happened, then what to do, with commands spelled by
    ``spell``; ``advice`` replaces the error's own hint."""
    remedy = ADVICE.get(error.reason)
    if isinstance(remedy, tuple):
        hint = f"{remedy[0]}: {spell(remedy[1])} {shlex.quote(str(error.subject))}"
    else:
        hint = remedy or error.hint
    if hint is None and when_missing and isinstance(error, ApiError) and error.status == 404:
        hint = f"see what exists with: {spell(when_missing[0])}"
    if advice:
        hint = f"{hint}; {advice}" if hint else advice
    return render.line(f"{error.summary()}; {hint}" if hint else error.summary())


class Context:
    """One run of one command: its arguments, its program, and what it opens on first use."""

    def __init__(self, args, view):
        self.args = args
        self.view = view
        self.json = args.json
        self._client = None
        self._writes_failed = False

    @property
    def client(self):
        return self.client_for(self.args.origin)

    def client_for(self, origin: Optional[str]):
        """The one client of this command, made on first use (a draft names its own origin)."""
        if self._client is None:
            from ..client import Client  # here: ssl and http.client are not needed to print help

            self._client = Client(origin, getattr(self.args, "agent_name", None),
                                  getattr(self.args, "model", None), retries=self.args.retries,
                                  timeout=self.args.timeout, sleep=self._sleep)
        return self._client

    @cached_property
    def journal(self):
        """The journal, or None when it is turned off or cannot be written (said once)."""
        if self.args.no_journal:
            return None
        from ..journal import Journal, location  # here: only a command that keeps one pays for it

        where = location(self.args.journal)
        try:
            return Journal.open(where)
        except OSError as error:
            self.note(f"journal off: cannot write {where} ({error.strerror or error})")
            return None

    def keep(self, write: Callable, *arguments):
        """Run one write to the journal; a failure is said once and never stops the command,
        since what it records has already happened."""
        if self._writes_failed:
            return None
        try:
            return write(*arguments) or True
        except OSError as error:
            self.journal_failed(error)
            return None

    def journal_failed(self, error: OSError) -> None:
        if not self._writes_failed:
            self._writes_failed = True
            self.note(f"journal: cannot write in {error.filename or 'the journal'} "
                      f"({error.strerror or error}); going on without it")

    def _sleep(self, seconds: float) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rwaiting {seconds:.1f} s, {time.strftime('%H:%M:%S')} ")
            sys.stderr.flush()
        time.sleep(seconds)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")

    def command(self, name: str) -> str:
        return self.view.spell(name)

    def describe(self, error: BenchmarksWikiError, advice: Optional[str] = None) -> str:
        return describe(error, self.view.spell, self.args.command.when_missing, advice)

    def fail(self, error: BenchmarksWikiError, advice: Optional[str] = None) -> int:
        """Say what went wrong, on one line; the exit code that reports it."""
        self.note(f"{self.view.prog}: error: {self.describe(error, advice)}")
        return error.exit_code

    def out(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def out_as_is(self, text: str) -> None:
        """A page as the portal sent it (unsafe characters made visible), ending with one newline."""
        self.out(render.text(text[:-1] if text.endswith("\n") else text))

    def note(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def show(self, item, as_text: Callable) -> None:
        self.out(render.as_json(item.raw) if self.json else as_text(item))

    def show_list(self, items, as_line: Callable, limit: Optional[int], none: str) -> None:
        """Print up to ``limit`` items, asking for one more to learn whether more remain;
        an empty list says so on stderr, so that silence is never the answer."""
        shown = 0
        for item in items:
            if limit is not None and shown == limit:
                self.note(f"{limit} shown, more remain: add --limit N to see more")
                return
            self.show(item, as_line)
            shown += 1
        if not shown:
            self.note(none)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

"""What every command shares: its clients and journal, its output, and the one line that
says what went wrong, in this program's own terms."""

from __future__ import annotations

import sys
import time
from functools import cached_property
from typing import Callable, Optional

from .. import PACKAGE
from ..errors import BenchmarksWikiError
from ..rules import check_settings
from . import render
from .messages import NOTES, Spelled, advice_for
from .table import exit_code


def remedy(error: BenchmarksWikiError, spell: Callable[[str], str], when_missing: Optional[str] = None):
    """What to do about ``error``, in this program's words: the command line's advice where it
    has its own, else the library's hint."""
    template = advice_for(error.reason, when_missing)
    if template is None:
        return error.hint
    return Spelled(spell, render.shell_word, when_missing).format(template, **error.facts)


class Context:
    """One run of one command: its arguments, its program, and what it opens on first use."""

    def __init__(self, args, view, client_options=None):
        check_settings(args.timeout, args.retries)  # before anything is read or written
        self.args = args
        self.view = view
        self.json = args.json
        self._client_options = {"sleep": self._sleep, **(client_options or {})}
        self._clients: dict = {}
        self._journal_failed = False
        self._log_handler = self._say_retries() if args.verbose else None

    def _say_retries(self):
        """Have the library's log of retries said on stderr, each on one line."""
        import logging

        class OneSafeLine(logging.Formatter):
            def format(self, record) -> str:  # the portal's reason phrase is in the message
                return render.line(super().format(record))

        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(OneSafeLine(f"{self.view.prog}: %(message)s"))
        logger = logging.getLogger(PACKAGE)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        return handler

    @property
    def client(self):
        return self.client_for(self.args.origin)

    def client_for(self, origin: Optional[str]):
        """The client for ``origin`` (None: the one the settings name), made on first use:
        a batch of drafts may name several."""
        if origin not in self._clients:
            from ..client import Client  # here: ssl and http.client are not needed to print help

            self._clients[origin] = Client(origin, getattr(self.args, "agent_name", None),
                                           getattr(self.args, "model", None), retries=self.args.retries,
                                           timeout=self.args.timeout, **self._client_options)
        return self._clients[origin]

    @cached_property
    def journal(self):
        """The journal, or None when it is turned off or cannot be written (said once)."""
        if self.args.no_journal:
            return None
        from ..journal import Journal, located  # here: only a command that keeps one pays for it

        where = located(self.args.journal)[0]
        try:
            journal = Journal.open(where)
        except OSError as error:
            self.say("journal_unwritable", path=where, problem=error.strerror or error)
            return None
        exposed = journal.exposed()
        if exposed:
            self.say("journal_exposed", path=exposed[0], mode=exposed[0].stat().st_mode & 0o777,
                     folder=render.shell_word(str(journal.folder)))
        return journal

    def record(self, write: Callable, *arguments):
        """Run one write to the journal; a failure is said once and never stops the command,
        since what it records has already happened."""
        if self._journal_failed:
            return None
        try:
            return write(*arguments)
        except OSError as error:
            self.journal_failed(error)
            return None

    def journal_failed(self, error: OSError) -> None:
        if not self._journal_failed:
            self._journal_failed = True
            self.say("journal_failed", path=error.filename or "the journal", problem=error.strerror or error)

    def _sleep(self, seconds: float) -> None:
        if sys.stderr.isatty():
            sys.stderr.write(f"\rwaiting {seconds:.1f} s, {time.strftime('%H:%M:%S')} ")
            sys.stderr.flush()
        time.sleep(seconds)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")

    def remedy(self, error: BenchmarksWikiError) -> Optional[str]:
        missing = self.args.command.when_missing
        return remedy(error, self.view.spell, missing[0] if missing else None)

    def describe(self, error: BenchmarksWikiError) -> str:
        """The error on one line: what happened, then what to do, spelled for this program."""
        hint = self.remedy(error)
        return render.line(f"{error.summary()}; {hint}" if hint else error.summary())

    def fail(self, error: BenchmarksWikiError) -> int:
        """Say what went wrong, on one line; the exit code that reports it."""
        self.note(f"{self.view.prog}: error: {self.describe(error)}")
        return exit_code(error)

    def out(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def out_as_is(self, text: str) -> None:
        """A page as the portal sent it (unsafe characters made visible), ending with one newline."""
        self.out(render.text(text.removesuffix("\n")))

    def note(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def say(self, name: str, **facts) -> None:
        """One of the NOTES, on stderr, on one line."""
        self.note(render.line(NOTES[name].format(**facts)))

    def show(self, item, as_text: Callable) -> None:
        # The portal's own object where there is one; a journal entry is its own.
        self.out(render.as_json(getattr(item, "raw", item)) if self.json else as_text(item))

    def show_list(self, items, as_line: Callable, limit: Optional[int], none: str) -> None:
        """Print up to ``limit`` items, asking for one more to learn whether more remain;
        an empty list says so on stderr, so that silence is never the answer."""
        shown = 0
        for shown, item in enumerate(items, 1):
            if limit is not None and shown > limit:
                self.say("more_remain", limit=limit)
                return
            self.show(item, as_line)
        if not shown:
            self.say("none_listed", what=none)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        if self._log_handler is not None:
            import logging

            logging.getLogger(PACKAGE).removeHandler(self._log_handler)

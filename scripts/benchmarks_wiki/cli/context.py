"""What every command shares: its clients and journal, its output, and the one line for an error."""

import sys
import time
from functools import cached_property, partial
from typing import Callable, Optional

from .. import PACKAGE
from ..errors import BenchmarksWikiError
from ..rules import RETRIES, TIMEOUT
from . import render
from .messages import NOTES, remedy


class Context:
    """One run of one command: its arguments, its program, and what it opens on first use."""

    def __init__(self, args, view, client_options: dict):
        TIMEOUT.check(args.timeout, "timeout")  # before anything is read or written
        RETRIES.check(args.retries, "retries")
        self.args = args
        self.view = view
        self._client_options = {"sleep": self._sleep, **client_options}
        self._clients: dict = {}
        self._journal_failed = False
        self._stop_logging: Callable[[], None] = lambda: None
        if args.verbose:  # the library's log of retries, on stderr, each on one line
            import logging

            handler = logging.StreamHandler(sys.stderr)
            logger = logging.getLogger(PACKAGE)
            # The portal's reason phrase is in the message.
            handler.format = lambda record: render.line(f"{view.prog}: {record.getMessage()}")
            logger.addHandler(handler)
            logger.setLevel(logging.INFO)
            self._stop_logging = partial(logger.removeHandler, handler)

    @property
    def client(self):
        return self.client_for(self.args.origin)

    def client_for(self, origin: Optional[str]):
        """The client for ``origin`` (None: the one the settings name), made on first use."""
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

    def record(self, write: Callable):
        """``write(journal)``, if one is kept; a failure never stops the command: its work is done."""
        if self.journal and not self._journal_failed:
            try:
                return write(self.journal)
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

    def describe(self, error: BenchmarksWikiError) -> str:
        hint = remedy(error, self.view.spell, self.args.command.when_missing)
        return render.line(f"{error.summary()}; {hint}" if hint else error.summary())

    def out(self, text: str) -> None:
        print(text, flush=True)

    def note(self, text: str) -> None:
        sys.stderr.write(text + "\n")

    def say(self, name: str, **facts) -> None:
        self.note(render.line(NOTES[name].format(**facts)))

    def show(self, item, as_text: Callable) -> None:
        # The portal's own object where there is one; a journal entry is its own.
        self.out(render.as_json(getattr(item, "raw", item)) if self.args.json else as_text(item))

    def show_list(self, items, as_line: Callable, limit: Optional[int], none: str) -> None:
        """Print up to ``limit`` of ``items``, which hold one more if more remain; none is said, never silence."""
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
        self._stop_logging()

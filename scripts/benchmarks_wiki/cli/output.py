"""What every command shares: its clients and journal, its output, and the one line that
says what went wrong, in this program's own terms."""

from __future__ import annotations

import string
import sys
import time
from functools import cached_property
from typing import Callable, Optional

from .. import PACKAGE, render
from ..errors import MESSAGES, BenchmarksWikiError

# Every line a command writes to stderr that is not an error, by name.
NOTES = {
    "journal_unwritable": "journal off: cannot write {path} ({problem})",
    "journal_failed": "journal: cannot write in {path} ({problem}); going on without it",
    "journal_exposed": "journal: {path} can be read by other users (mode {mode:o}), and a waiting draft holds its "
                       "nonce; make it private: chmod -R go= {folder}",
    "more_remain": "{limit} shown, more remain: add --limit N to see more",
    "none_listed": "no {what}",
    "no_drafts": "no drafts waiting",
    "discarded": "discarded {path}; it is never sent",
    "stopped_quiet": "stopped: no new post for {seconds:g} s",
    "stopped_in_all": "stopped: {seconds:g} s in all, after printing every post so far",
    "not_resuming": "no record of following {threads}; starting from the newest post",
    "resume_without_journal": "the journal is off; not resuming {threads}; starting from the newest post",
    "no_receipt": "the post is published, but no receipt was written beside {path}",
    "not_drawn": "not drawn here; check the id with: {command}",
    "dry_run": "nothing sent. When published, {summary}, public at once; "
               f"{render.PUBLISH_EXACTLY}: {{command}}",
}


class _Spelled(string.Formatter):
    """Remedies as the command line says them: ``{command[NAME]}`` is a command spelled for
    the program run (``when_missing``: the one that shows what exists), ``{value!q}`` a value
    quoted for the shell."""

    def __init__(self, spell: Callable[[str], str], when_missing: Optional[tuple]):
        self._spell = spell
        self._when_missing = when_missing

    def get_field(self, field_name, args, kwargs):
        if field_name.startswith("command["):
            name = field_name[len("command["):-1]
            if name == "when_missing":
                if not self._when_missing:
                    raise KeyError(name)
                name = self._when_missing[0]
            return self._spell(name), field_name
        return super().get_field(field_name, args, kwargs)

    def convert_field(self, value, conversion):
        return render.shell_word(str(value)) if conversion == "q" else super().convert_field(value, conversion)


def remedy(error: BenchmarksWikiError, spell: Callable[[str], str], when_missing: Optional[tuple] = None):
    """What to do about ``error``, in this program's words: the command line's advice from the
    table where it has its own, else the library's hint."""
    entry = MESSAGES.get(error.reason or "")
    if entry is None:
        return error.hint
    for template in (entry.advice, entry.hint):
        if template is not None:
            try:
                return _Spelled(spell, when_missing).format(template, **error.facts)
            except KeyError:
                continue
    return None


def describe(error: BenchmarksWikiError, spell: Callable[[str], str], when_missing: Optional[tuple] = None,
             advice: Optional[str] = None) -> str:
    """The error on one line: what happened, then what to do, with commands spelled by
    ``spell``; ``advice`` follows the remedy."""
    hint = remedy(error, spell, when_missing)
    if advice:
        hint = f"{hint}; {advice}" if hint else advice
    return render.line(f"{error.summary()}; {hint}" if hint else error.summary())


class Context:
    """One run of one command: its arguments, its program, and what it opens on first use."""

    def __init__(self, args, view, client_options=None):
        self.args = args
        self.view = view
        self._client_options = {"sleep": self._sleep, **(client_options or {})}
        self._log_handler = None
        if args.verbose:
            self._say_retries()
        self.json = args.json
        self._clients: dict = {}
        self._journal_failed = False

    def _say_retries(self) -> None:
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
        self._log_handler = handler

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
        from ..journal import Journal, location  # here: only a command that keeps one pays for it

        where = location(self.args.journal)
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
            return write(*arguments) or True
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
        for item in items:
            if limit is not None and shown == limit:
                self.say("more_remain", limit=limit)
                return
            self.show(item, as_line)
            shown += 1
        if not shown:
            self.say("none_listed", what=none)

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        if self._log_handler is not None:
            import logging

            logging.getLogger(PACKAGE).removeHandler(self._log_handler)

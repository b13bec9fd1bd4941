"""The command line: one table of commands, seen through four views.

``benchmarks-wiki`` shows every command; ``scripts/draw.py`` only those that read,
``scripts/post.py`` only ``post`` and ``scripts/follow.py`` only ``follow``, so an agent can be
allowed to read without being allowed to write. Parsing and printing live here once.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections import namedtuple
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Optional

from . import __version__, render
from .errors import ApiError, BenchmarksWikiError, TransportError, ValidationError

if TYPE_CHECKING:
    from pathlib import Path

READ, WRITE, WAIT = "read", "write", "wait"
DEFAULT_LIST_LIMIT = 20
EXIT_INTERRUPTED = 130


# ``when_missing`` is the command that shows what does exist, suggested when the portal answers 404.
Command = namedtuple("Command", "name group help run arguments when_missing", defaults=((), None))


def arg(*flags, **options) -> tuple:
    return flags, options


def _number(kind, low, high):
    def parse(value: str):
        try:
            number = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range ({low:g} to {high:g})")
        return number
    return parse


# -- what a command prints ----------------------------------------------------------------

class Context:
    def __init__(self, args: argparse.Namespace, view: "View"):
        self.args = args
        self.view = view
        self.json = args.json
        self._client = None
        self._writes_failed = False

    @property
    def client(self):
        return self.client_for(self.args.origin)

    def client_for(self, origin: Optional[str]):
        """The one client of this command, made on first use (a publish of a draft names its origin)."""
        if self._client is None:
            from .client import Client

            self._client = Client(origin, getattr(self.args, "agent_name", None),
                                  getattr(self.args, "model", None), retries=self.args.retries,
                                  timeout=self.args.timeout, sleep=self._sleep)
        return self._client

    @cached_property
    def journal(self):
        """The journal, or None when it is turned off or cannot be written (said once)."""
        if self.args.no_journal:
            return None
        from .journal import Journal, folder

        where = folder(self.args.journal)
        try:
            return Journal.open(where)
        except OSError as error:
            self.note(f"journal off: cannot write {where} ({error.strerror or error})")
            return None

    def keep(self, write: Callable, *arguments):
        """Run one write to the journal or beside a draft; a failure is said once and never
        stops the command, since what it records has already happened."""
        if self._writes_failed:
            return None
        try:
            return write(*arguments) or True
        except OSError as error:
            self._writes_failed = True
            self.note(f"journal: cannot write in {error.filename or 'the journal'} "
                      f"({error.strerror or error}); going on without it")
            return None

    def _sleep(self, seconds: float) -> None:
        import time

        if sys.stderr.isatty():
            sys.stderr.write(f"\rwaiting {seconds:.1f} s, {time.strftime('%H:%M:%S')} ")
            sys.stderr.flush()
        time.sleep(seconds)
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")

    def command(self, name: str) -> str:
        return self.view.spell(name)

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


def _more(limit: Optional[int]) -> Optional[int]:
    return None if limit is None else limit + 1


def run_try(ctx: Context, args) -> None:
    rng = None
    if args.seed is not None:
        import random

        rng = random.Random(args.seed)
    show_drawn(ctx, ctx.client.sample(args.benchmark, pool=args.pool, rng=rng))


def show_drawn(ctx: Context, task) -> None:
    if ctx.journal:
        ctx.keep(ctx.journal.record_draw, task)
    ctx.show(task, lambda item: render.task(item, ctx.command("post"), preview=ctx.view.is_skill))


def run_stats(ctx: Context, args) -> None:
    ctx.show(ctx.client.stats(), render.stats)


def run_benchmarks(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.benchmarks(), render.benchmark_line, None, "no benchmarks")


def run_benchmark(ctx: Context, args) -> None:
    ctx.show(ctx.client.benchmark(args.slug), render.benchmark)


def run_tasks(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.tasks(args.slug, split=args.split, limit=_more(args.limit)),
                  render.task_line, args.limit, "no problems")


def run_task(ctx: Context, args) -> None:
    if args.markdown:
        ctx.out_as_is(ctx.client.markdown(args.task_id))
        return
    show_drawn(ctx, ctx.client.task(args.task_id))


def run_catalog(ctx: Context, args) -> None:
    catalogue = ctx.client.catalog()
    if ctx.json:
        ctx.out(render.as_json(catalogue))
        return
    from .models import Benchmark, Stats, parse

    rows = [render.stats(parse(Stats, catalogue.get("stats")))]
    rows += [render.benchmark_line(parse(Benchmark, raw)) for raw in catalogue.get("benchmarks") or ()]
    ctx.out("\n".join(rows))


def run_search(ctx: Context, args) -> None:
    ctx.out_as_is(ctx.client.search(args.query))


def run_threads(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.threads(task_id=args.task_id, limit=_more(args.limit)),
                  render.thread_line, args.limit, "no threads")


def run_thread(ctx: Context, args) -> None:
    ctx.show(ctx.client.thread(args.thread_id), render.thread)


def run_activity(ctx: Context, args) -> None:
    posts = ctx.client.activity(since=args.since, limit=_more(args.limit))
    ctx.show_list(posts, lambda post: render.post(post, with_thread=True) + "\n", args.limit, "no posts")


# The fields of a post and their flags: one list for the parser's checks, the draft and the
# command that retries a post.
POST_FIELDS = (("task_id", "--task"), ("thread_id", "--thread"), ("reply_to", "--reply-to"),
               ("revision", "--revision"), ("agent_name", "--name"), ("model", "--model"),
               ("run_label", "--run-label"), ("kind", "--kind"))


class Interrupted(BenchmarksWikiError):
    """Ctrl-C while a publish was under way: the outcome is unknown, as after a network failure."""

    exit_code = EXIT_INTERRUPTED


def run_post(ctx: Context, args) -> None:
    if args.draft:
        from pathlib import Path

        publish_draft(ctx, Path(args.draft), args.resend)
        return
    from .client import new_nonce, normalise_body

    body = normalise_body(read_body(args))
    if not args.allow_sensitive:
        refuse_sensitive(body)
    client, journal = ctx.client, ctx.journal
    post = {field: getattr(args, field) for field, _ in POST_FIELDS}
    post.update(agent_name=client.agent_name, model=client.model)
    undrawn = False
    if post["revision"] is None and journal and post["task_id"]:
        post["revision"] = journal.drawn_revision(post["task_id"])
        undrawn = post["revision"] is None
    nonce = new_nonce() if args.nonce is None else args.nonce
    url = client.publish_url(body, nonce=nonce, **post)
    written = journal and ctx.keep(journal.write_draft, client.origin, url, nonce, dict(post, body=body))
    if written:
        path, draft = written
        again = f"{ctx.command('post')} --draft {shlex.quote(str(path))}"
    else:
        again = retry_command(ctx, client.origin, post, body, nonce)
    if args.dry_run:
        ctx.out(url)
        if undrawn:
            # A preview sends nothing, so a mistyped id would only show when publishing.
            ctx.note(f"task {post['task_id']} was not drawn here; check the id with: "
                     f"{ctx.command('task')} {shlex.quote(post['task_id'])}")
        ctx.note(f"nothing sent. When published, {preview_summary(post, body)}, public at once; "
                 f"to publish exactly this: {again}")
    elif written:
        publish_draft(ctx, path, resend=False, draft=draft)
    else:
        ctx.show(send(client, url, again), lambda item: render.published(item, ctx.command("follow")))


def preview_summary(post: dict, body: str) -> str:
    """Where a post goes and under which claims, for the person who approves it."""
    destination = next(f"{label} {post[field]}" for field, label in
                       (("reply_to", "as a reply to"), ("thread_id", "into thread"), ("task_id", "on task"))
                       if post[field])
    claims = " / ".join(claim for claim in (post["agent_name"], post["model"]) if claim) or "no name"
    return f"{len(body.encode('utf-8'))} bytes go {destination}, as {render.line(claims)}"


def refuse_sensitive(body: str) -> None:
    from .sensitive import find_sensitive

    found = find_sensitive(body)
    if found:
        listed = "; ".join(f"{what} at line {row}, column {column}" for what, row, column in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise ValidationError(f"the body seems to hold private data: {listed}{more}",
                              hint="remove it, or add --allow-sensitive if it is meant to be public")


def publish_draft(ctx: Context, path: "Path", resend: bool, draft: Optional[dict] = None) -> None:
    """Send a draft exactly as written, once: a draft with a receipt is not sent again."""
    from .journal import load_draft, locked, read_receipt, read_refusal, write_receipt, write_refusal
    from .transport import parse_origin

    draft = draft or load_draft(path)
    if ctx.args.origin and str(parse_origin(ctx.args.origin)) != draft["origin"]:
        raise ValidationError(f"the draft is for {draft['origin']}, not {ctx.args.origin}")
    client = ctx.client_for(draft["origin"])
    again = f"{ctx.command('post')} --draft {shlex.quote(str(path))}"
    with locked(path):
        receipt = None if resend else read_receipt(path, draft)
        refusal = None if resend else read_refusal(path)
        if refusal:
            raise ValidationError(f"the portal refused this draft for good ({refusal}); nothing sent",
                                  hint="fix it with a new preview, or add --resend to send it anyway")
        if receipt is None:
            try:
                result = send(client, draft["url"], again)
            except ApiError as error:
                if refused_for_good(error):
                    ctx.keep(write_refusal, path, error)
                raise
            if not ctx.keep(write_receipt, path, draft, result):
                ctx.note(f"the post is published, but no receipt was written beside {path}")
            ctx.show(result, lambda item: render.published(item, ctx.command("follow")))
            return
    if ctx.json:
        ctx.out(render.as_json({"created": False, "post": receipt["post"]}))
    else:
        ctx.out(render.receipt(receipt, path, ctx.command("follow")))


def send(client, url: str, again: str):
    """Publish ``url``; where the outcome is unknown, the error says how to retry safely."""
    try:
        return client.send_publish(url)
    except KeyboardInterrupt:
        raise Interrupted("interrupted", hint=_retry_advice(again)) from None
    except BenchmarksWikiError as error:
        if refused_for_good(error) and error.status == 404:
            error.hint, error.next_command = "nothing was posted; check the task, thread or post id", None
        if outcome_unknown(error):
            error.hint = f"{error.hint}; {_retry_advice(again)}" if error.hint else _retry_advice(again)
            error.next_command = None
        raise


def outcome_unknown(error: BenchmarksWikiError) -> bool:
    """Whether the request may have been recorded although it failed."""
    if isinstance(error, ApiError):
        return not refused_for_good(error)
    return isinstance(error, TransportError) or getattr(error, "answered", False)


def refused_for_good(error: BenchmarksWikiError) -> bool:
    """A definite refusal by the portal, which no retry changes: nothing was posted."""
    return (isinstance(error, ApiError) and 400 <= error.status < 500 and error.status != 429
            and error.code != "malformed_answer")


def _retry_advice(again: str) -> str:
    return f"it may or may not be posted; retry the same post, same nonce, which cannot post twice: {again}"


# Far past the limit, since normalisation can drop line endings and trailing whitespace;
# a file larger than this is refused without reading the rest.
BODY_FILE_CEILING = 64 * 1024


def read_body(args) -> str:
    if args.body is not None:
        return args.body
    path = args.body_file
    try:
        if path == "-":
            data = sys.stdin.buffer.read(BODY_FILE_CEILING + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(BODY_FILE_CEILING + 1)
    except FileNotFoundError:
        raise ValidationError(f"body file {path}: no such file") from None
    except IsADirectoryError:
        raise ValidationError(f"body file {path}: is a directory") from None
    except OSError as error:
        raise ValidationError(f"body file {path}: {error.strerror or error}") from None
    if len(data) > BODY_FILE_CEILING:
        raise ValidationError(f"body file {path} is over {BODY_FILE_CEILING} bytes; the limit is "
                              "2048 bytes of UTF-8", hint="post the argument and link the long material")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValidationError(f"body file {path} is not UTF-8 (byte {error.start})") from None


def retry_command(ctx: Context, origin: str, post: dict, body: str, nonce: str) -> str:
    """The post command that sends this exact post again, from any shell: every field as
    sent, claims and origin included, values joined with ``=`` so that none reads as a flag."""
    from .client import DEFAULT_ORIGIN

    words = [ctx.command("post")]
    if origin != DEFAULT_ORIGIN:
        words.append(f"--origin={origin}")
    words += [f"{flag}={shell_word(str(post[field]))}" for field, flag in POST_FIELDS
              if post[field] is not None]
    words.append(f"--body={shell_word(body)}")
    if ctx.args.allow_sensitive:
        words.append("--allow-sensitive")
    words += ["--no-journal", f"--nonce={nonce}"]
    return " ".join(words)


def shell_word(value: str) -> str:
    """One shell word on one line: $'...' where the value holds a line break or a control."""
    if value.isprintable():
        return shlex.quote(value)
    escaped = []
    for character in value:
        if character in "\\'":
            escaped.append("\\" + character)
        elif character.isprintable():
            escaped.append(character)
        else:
            code = ord(character)
            escaped.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "$'" + "".join(escaped) + "'"


def run_follow(ctx: Context, args) -> None:
    journal = ctx.journal
    mark = journal.follow_mark(args.thread_id) if journal and args.resume else None
    if args.resume and mark is None:
        why = "no record of following" if journal else "the journal is off; not resuming"
        ctx.note(f"{why} {args.thread_id}; starting from its newest post")
    since, seen = mark or (None, ())
    following = ctx.client.follow(args.thread_id, interval=args.interval, timeout=args.stop_after,
                                  since=since, seen=seen).start()
    if journal:
        ctx.keep(journal.save_follow_mark, args.thread_id, following.mark)
    for post in following:
        ctx.show(post, lambda item: render.post(item) + "\n")
        if journal:
            ctx.keep(journal.save_follow_mark, args.thread_id, following.mark)
    ctx.note(f"no new post for {args.stop_after:g} s; stopped")


def run_journal(ctx: Context, args) -> None:
    journal = ctx.journal
    if journal is None:
        raise ValidationError("the journal is off", hint="drop --no-journal, or give --journal DIR")
    for entry in journal.entries():
        ctx.out(render.as_json(entry) if ctx.json else render.journal_entry(entry))


_LIMIT = arg("--limit", type=_number(int, 1, 10000), default=DEFAULT_LIST_LIMIT, metavar="N",
             help=f"show at most N (default {DEFAULT_LIST_LIMIT})")

COMMANDS = (
    Command("try", READ, "draw a random problem: a benchmark with problems, then one of its first N",
            run_try, (arg("benchmark", nargs="?", metavar="BENCH", help="draw from this benchmark"),
                      arg("--pool", type=_number(int, 1, 10000), default=50, metavar="N",
                          help="draw among the first N problems (default 50)"),
                      arg("--seed", type=int, metavar="N", help="make the draw reproducible")),
            when_missing=("benchmarks",)),
    Command("stats", READ, "how many public problems there are", run_stats),
    Command("benchmarks", READ, "every benchmark, introduction-only ones included", run_benchmarks),
    Command("benchmark", READ, "one benchmark: metric, licence, citation, related entries",
            run_benchmark, (arg("slug"),), when_missing=("benchmarks",)),
    Command("tasks", READ, "a benchmark's public problems, in order", run_tasks,
            (arg("slug"), arg("--split", metavar="S"), _LIMIT), when_missing=("benchmarks",)),
    Command("task", READ, "one problem", run_task,
            (arg("task_id", metavar="TASK_ID"),
             arg("--markdown", action="store_true", help="the problem as Markdown, as it is")),
            when_missing=("try",)),
    Command("catalog", READ, "the complete catalogue", run_catalog),
    Command("search", READ, "search the portal (its HTML page, as it is)", run_search,
            (arg("query"),)),
    Command("threads", READ, "discussions, newest activity first", run_threads,
            (arg("--task", dest="task_id", metavar="TASK_ID", help="only those on this problem"), _LIMIT)),
    Command("thread", READ, "one discussion with all its posts", run_thread,
            (arg("thread_id", metavar="THREAD_ID"),), when_missing=("threads",)),
    Command("activity", READ, "posts across the site, newest first", run_activity,
            (arg("--since", metavar="TS", help="only posts at or after TS (2026-01-01T00:00:00Z)"),
             _LIMIT)),
    Command("post", WRITE, "publish a post: public at once, under the name you claim", run_post,
            (arg("--task", dest="task_id", metavar="TASK_ID", help="post on a problem, opening a thread"),
             arg("--thread", dest="thread_id", metavar="THREAD_ID", help="post in an existing thread"),
             arg("--reply-to", metavar="POST_ID", help="reply to a post, in its thread"),
             arg("--body", metavar="TEXT", help="the post, at most 2048 bytes of UTF-8"),
             arg("--body-file", metavar="PATH", help="read the post from PATH, or - for stdin"),
             arg("--name", dest="agent_name", metavar="NAME", help="agent name to claim (unverified)"),
             arg("--model", metavar="MODEL", help="model to claim (unverified)"),
             arg("--run-label", metavar="LABEL"),
             arg("--kind", choices=("result", "note", "question")),
             arg("--revision", type=_number(int, 1, 10**9), metavar="N",
                 help="the problem revision the post refers to (default: as drawn, else current)"),
             arg("--nonce", metavar="NONCE", help="reuse a nonce to retry a post safely"),
             arg("--allow-sensitive", action="store_true",
                 help="publish even though the body seems to hold a secret or a home path"),
             arg("--dry-run", action="store_true",
                 help="print the exact URL and write a draft; send nothing"),
             arg("--draft", metavar="PATH", help="publish this draft exactly, once"),
             arg("--resend", action="store_true",
                 help="with --draft: send it again (same nonce) even though it has a receipt"))),
    Command("follow", WAIT, "print new posts in a thread as they arrive", run_follow,
            (arg("thread_id", metavar="THREAD_ID"),
             arg("--stop-after", type=_number(float, 0.1, 7 * 86400), metavar="S",
                 help="stop after S seconds with no new post (default: never)"),
             arg("--interval", type=_number(float, 0.1, 3600), default=20.0, metavar="S",
                 help="seconds between polls (default 20)"),
             arg("--resume", action="store_true",
                 help="continue after the last post an earlier follow printed")),
            when_missing=("threads",)),
    Command("journal", READ, "this machine's draws, drafts waiting and published posts", run_journal),
)
BY_NAME = {command.name: command for command in COMMANDS}


# -- parsing ------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _common_options() -> argparse.ArgumentParser:
    """Options accepted before or after the command; SUPPRESS keeps one from erasing the other."""
    common = Parser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print the portal's own objects, one per line")
    common.add_argument("--origin", metavar="URL", default=argparse.SUPPRESS,
                        help="portal origin (default $BENCHMARKS_WIKI_ORIGIN or https://benchmarks.wiki)")
    common.add_argument("--retries", type=_number(int, 0, 10), metavar="N", default=argparse.SUPPRESS,
                        help="resend up to N times on 429/502/503/504 or a network failure (default 3)")
    common.add_argument("--timeout", type=_number(float, 0.1, 600), metavar="S", default=argparse.SUPPRESS,
                        help="seconds to wait for the network (default 30)")
    common.add_argument("--journal", metavar="DIR", default=argparse.SUPPRESS,
                        help="keep draws, drafts and receipts in DIR (default $BENCHMARKS_WIKI_JOURNAL "
                             "or ~/.local/state/benchmarks-wiki)")
    common.add_argument("--no-journal", action="store_true", default=argparse.SUPPRESS,
                        help="keep no journal")
    return common


class View:
    def __init__(self, prog: str, commands: tuple, script_of: Optional[dict] = None):
        self.prog = prog
        self.commands = commands
        self.script_of = script_of  # command group -> script file, for the bundled scripts

    @property
    def single(self) -> Optional[Command]:
        return self.commands[0] if len(self.commands) == 1 else None

    @property
    def is_skill(self) -> bool:
        """The bundled scripts an agent runs, rather than the installed command line."""
        return self.script_of is not None

    def spell(self, name: str) -> str:
        """How to invoke a command from where this one was invoked."""
        if self.script_of is None:
            return f"benchmarks-wiki {name}"
        group = BY_NAME[name].group
        script = os.path.join(os.path.dirname(sys.argv[0]), self.script_of[group])
        return f"python3 {shlex.quote(script)}" + (f" {name}" if group == READ else "")

    def parser(self, argv: list) -> Parser:
        """The parser for ``argv``: only the command it names gets its arguments, since
        building every command's would cost more than the rest of printing help."""
        common = _common_options()
        if self.single:
            parser = Parser(prog=self.prog, description=self.single.help, parents=[common],
                            allow_abbrev=False)
            _add_arguments(parser, self.single)
        else:
            named = _command_named(argv)
            parser = Parser(prog=self.prog, parents=[common], allow_abbrev=False)
            commands = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)
            for command in self.commands:
                if command.name == named:
                    sub = commands.add_parser(command.name, help=command.help, description=command.help,
                                              parents=[common], allow_abbrev=False)
                    _add_arguments(sub, command)
                else:
                    commands.add_parser(command.name, help=command.help)
        parser.add_argument("--version", action="version", version=f"benchmarks-wiki {__version__}")
        return parser


_VALUED_OPTIONS = ("--origin", "--retries", "--timeout", "--journal")


def _command_named(argv: list) -> Optional[str]:
    """The first word of ``argv`` that is not an option or an option's value."""
    words = iter(argv)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _add_arguments(parser: argparse.ArgumentParser, command: Command) -> None:
    for flags, options in command.arguments:
        parser.add_argument(*flags, **options)
    if command.name == "post":
        parser.set_defaults(_check=_check_post)
    parser.set_defaults(command=command)


def _check_post(parser: argparse.ArgumentParser, args) -> None:
    if args.draft is not None:
        given = [flag for field, flag in (*POST_FIELDS, ("body", "--body"), ("body_file", "--body-file"),
                                          ("nonce", "--nonce"))
                 if getattr(args, field) is not None]
        given += [flag for flag, on in (("--dry-run", args.dry_run), ("--allow-sensitive", args.allow_sensitive))
                  if on]
        if given:
            parser.error(f"--draft holds the whole post; drop {' '.join(given)}")
        return
    if args.resend:
        parser.error("--resend goes with --draft")
    if (args.body is None) == (args.body_file is None):
        parser.error("give exactly one of --body and --body-file")
    if args.task_id is not None and (args.thread_id is not None or args.reply_to is not None):
        parser.error("--task goes with neither --thread nor --reply-to: a post goes on a problem or into a thread")
    if args.task_id is None and args.thread_id is None and args.reply_to is None:
        parser.error("give a destination: --task, --thread or --reply-to")


_SCRIPTS = {READ: "draw.py", WRITE: "post.py", WAIT: "follow.py"}
VIEWS = {
    "benchmarks-wiki": View("benchmarks-wiki", COMMANDS),
    "draw": View("draw.py", tuple(c for c in COMMANDS if c.group == READ), _SCRIPTS),
    "post": View("post.py", (BY_NAME["post"],), _SCRIPTS),
    "follow": View("follow.py", (BY_NAME["follow"],), _SCRIPTS),
}


def main(argv=None, view: str = "benchmarks-wiki") -> int:
    chosen = VIEWS[view]
    argv = sys.argv[1:] if argv is None else argv
    parser = chosen.parser(argv)
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        args = parser.parse_args(argv)
        check = getattr(args, "_check", None)
        if check:
            check(parser, args)
        for name, default in (("json", False), ("origin", None), ("retries", 3), ("timeout", 30.0),
                              ("journal", None), ("no_journal", False)):
            if not hasattr(args, name):
                setattr(args, name, default)
        ctx = Context(args, chosen)
        try:
            args.command.run(ctx, args)
        finally:
            ctx.close()
    except BenchmarksWikiError as error:
        if isinstance(error, ApiError) and error.status == 404 and not error.next_command:
            if args.command.when_missing:
                error.hint = error.hint or "see what exists with"
                error.next_command = args.command.when_missing
        sys.stderr.write(f"{chosen.prog}: error: {render.line(error.describe(chosen.spell))}\n")
        return error.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{chosen.prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader stopped early (| head): nothing is wrong, and nothing more can be said.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0

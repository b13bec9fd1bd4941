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
from typing import TYPE_CHECKING, Callable, Optional

from . import __version__, render
from .errors import ApiError, BenchmarksWikiError, ValidationError

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
        self._journal = False

    @property
    def client(self):
        if self._client is None:
            from .client import Client

            self._client = Client(self.args.origin, getattr(self.args, "name", None),
                                  getattr(self.args, "model", None), retries=self.args.retries,
                                  timeout=self.args.timeout, sleep=self._sleep)
        return self._client

    @property
    def journal(self):
        """The journal, or None when it is turned off or cannot be written (said once)."""
        if self._journal is False:
            self._journal = None
            if not self.args.no_journal:
                from .journal import Journal, default_folder, folder_at

                folder = folder_at(self.args.journal) if self.args.journal else default_folder()
                try:
                    self._journal = Journal.open(folder)
                except OSError as error:
                    self.note(f"journal off: cannot write {folder} ({error.strerror or error})")
        return self._journal

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

    def show_list(self, items, as_line: Callable, limit: Optional[int]) -> None:
        """Print up to ``limit`` items, asking for one more to learn whether more remain."""
        shown = 0
        for item in items:
            if limit is not None and shown == limit:
                self.note(f"{limit} shown, more remain: add --limit N to see more")
                return
            self.show(item, as_line)
            shown += 1

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
        ctx.journal.record_draw(task)
    ctx.show(task, lambda item: render.task(item, ctx.command("post")))


def run_stats(ctx: Context, args) -> None:
    ctx.show(ctx.client.stats(), render.stats)


def run_benchmarks(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.benchmarks(), render.benchmark_line, None)


def run_benchmark(ctx: Context, args) -> None:
    ctx.show(ctx.client.benchmark(args.slug), render.benchmark)


def run_tasks(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.tasks(args.slug, split=args.split, limit=_more(args.limit)),
                  render.task_line, args.limit)


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
    from .models import Benchmark, Stats

    rows = [render.stats(Stats.from_raw(catalogue.get("stats")))]
    rows += [render.benchmark_line(Benchmark.from_raw(raw)) for raw in catalogue.get("benchmarks") or ()]
    ctx.out("\n".join(rows))


def run_search(ctx: Context, args) -> None:
    ctx.out_as_is(ctx.client.search(args.query))


def run_threads(ctx: Context, args) -> None:
    ctx.show_list(ctx.client.threads(task_id=args.task, limit=_more(args.limit)),
                  render.thread_line, args.limit)


def run_thread(ctx: Context, args) -> None:
    ctx.show(ctx.client.thread(args.thread_id), render.thread)


def run_activity(ctx: Context, args) -> None:
    posts = ctx.client.activity(since=args.since, limit=_more(args.limit))
    ctx.show_list(posts, lambda post: render.post(post, with_thread=True) + "\n", args.limit)


def run_post(ctx: Context, args) -> None:
    if args.draft:
        from pathlib import Path

        publish_draft(ctx, Path(args.draft), args.resend)
        return
    from .client import new_nonce, normalise_body

    body = normalise_body(read_body(args))
    if not args.allow_sensitive:
        refuse_sensitive(body)
    nonce = args.nonce or new_nonce()
    journal = ctx.journal
    revision = args.revision
    if revision is None and journal and args.task:
        revision = journal.drawn_revision(args.task)
    post = {"task_id": args.task, "thread_id": args.thread, "reply_to": args.reply_to,
            "revision": revision, "run_label": args.run_label, "kind": args.kind}
    url = ctx.client.publish_url(body, nonce=nonce, **post)
    if journal:
        post.update(body=body, agent_name=ctx.client.agent_name, model=ctx.client.model)
        draft = journal.write_draft(ctx.client.origin, url, nonce, post)
        again = f"{ctx.command('post')} --draft {shlex.quote(str(draft))}"
    else:
        again = post_command(ctx, args, body, nonce, revision)
    if args.dry_run:
        ctx.out(url)
        claimed = ctx.client.agent_name or "no agent name"
        ctx.note(f"nothing sent. It is public at once when published, as {claimed}; "
                 f"to publish exactly this: {again}")
    elif journal:
        publish_draft(ctx, draft, resend=False)
    else:
        ctx.show(send(ctx.client, url, again), lambda item: render.published(item, ctx.command("follow")))


def refuse_sensitive(body: str) -> None:
    from .sensitive import find_sensitive

    found = find_sensitive(body)
    if found:
        listed = "; ".join(f"{what} at line {row}, column {column}" for what, row, column in found[:3])
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise ValidationError(f"the body seems to hold private data: {listed}{more}",
                              hint="remove it, or add --allow-sensitive if it is meant to be public")


def publish_draft(ctx: Context, path: Path, resend: bool) -> None:
    """Send a draft exactly as written, once: a draft with a receipt is not sent again."""
    from .journal import load_draft, locked, read_receipt, write_receipt, write_refusal

    from .transport import parse_origin

    draft = load_draft(path)
    if ctx.args.origin and str(parse_origin(ctx.args.origin)) != draft["origin"]:
        raise ValidationError(f"the draft is for {draft['origin']}, not {ctx.args.origin}")
    ctx.args.origin = draft["origin"]
    again = f"{ctx.command('post')} --draft {shlex.quote(str(path))}"
    with locked(path):
        receipt = None if resend else read_receipt(path)
        if receipt is None:
            try:
                result = send(ctx.client, draft["url"], again)
            except ApiError as error:
                if refused_for_good(error):
                    write_refusal(path, error)
                raise
            write_receipt(path, result)
            ctx.show(result, lambda item: render.published(item, ctx.command("follow")))
            return
    if ctx.json:
        ctx.out(render.as_json(receipt))
    else:
        ctx.out(render.receipt(receipt, path, ctx.command("follow")))


def send(client, url: str, again: str):
    """Publish ``url``; where the outcome is unknown, the error says how to retry safely."""
    try:
        return client.send_publish(url)
    except BenchmarksWikiError as error:
        if not refused_for_good(error):
            _may_be_posted(error, again)
        raise


def refused_for_good(error: BenchmarksWikiError) -> bool:
    """A definite refusal by the portal, which no retry changes: nothing was posted."""
    return (isinstance(error, ApiError) and 400 <= error.status < 500 and error.status != 429
            and error.code != "malformed_answer")


def _may_be_posted(error: BenchmarksWikiError, again: str) -> None:
    advice = ("it may or may not be posted; retry the same post, same nonce, "
              f"which cannot post twice: {again}")
    error.hint = f"{error.hint}; {advice}" if error.hint else advice
    error.next_command = None


def read_body(args) -> str:
    if args.body is not None:
        return args.body
    from .transport import MAX_BODY_BYTES

    # Normalisation can only shrink a body, so a file this much larger cannot fit.
    ceiling = 4 * MAX_BODY_BYTES
    path = args.body_file
    try:
        if path == "-":
            data = sys.stdin.buffer.read(ceiling + 1)
        else:
            with open(path, "rb") as handle:
                data = handle.read(ceiling + 1)
    except FileNotFoundError:
        raise ValidationError(f"body file {path}: no such file") from None
    except IsADirectoryError:
        raise ValidationError(f"body file {path}: is a directory") from None
    except OSError as error:
        raise ValidationError(f"body file {path}: {error.strerror or error}") from None
    if len(data) > ceiling:
        raise ValidationError(f"body file {path} is over {ceiling} bytes; the limit is "
                              f"{MAX_BODY_BYTES} bytes of UTF-8",
                              hint="post the argument and link the long material")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValidationError(f"body file {path} is not UTF-8 (byte {error.start})") from None


def post_command(ctx: Context, args, body: str, nonce: str, revision: Optional[int]) -> str:
    """The post command that sends this exact post again, nonce included.

    Values are joined with ``=`` so that one starting with ``-`` is not read as a flag.
    """
    words = [ctx.command("post")]
    for flag, value in (("--origin", args.origin), ("--task", args.task), ("--thread", args.thread),
                        ("--reply-to", args.reply_to), ("--name", args.name), ("--model", args.model),
                        ("--run-label", args.run_label), ("--kind", args.kind),
                        ("--revision", None if revision is None else str(revision))):
        if value is not None:
            words.append(f"{flag}={shlex.quote(value)}")
    if args.body_file not in (None, "-"):
        words.append(f"--body-file={shlex.quote(args.body_file)}")
    else:
        words.append(f"--body={shlex.quote(body)}")
    if args.allow_sensitive:
        words.append("--allow-sensitive")
    words.append(f"--nonce={nonce}")
    return " ".join(words)


def run_follow(ctx: Context, args) -> None:
    journal = ctx.journal
    mark = journal.follow_mark(args.thread_id) if journal and args.resume else None
    if args.resume and mark is None:
        ctx.note(f"no record of following {args.thread_id}; starting from its newest post")
    since, seen = mark or (None, ())
    following = ctx.client.follow(args.thread_id, interval=args.interval, timeout=args.stop_after,
                                  since=since, seen=seen).start()
    if journal:
        journal.save_follow_mark(args.thread_id, following.mark)
    for post in following:
        ctx.show(post, lambda item: render.post(item) + "\n")
        if journal:
            journal.save_follow_mark(args.thread_id, following.mark)
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
            (arg("--task", metavar="TASK_ID", help="only those on this problem"), _LIMIT)),
    Command("thread", READ, "one discussion with all its posts", run_thread,
            (arg("thread_id", metavar="THREAD_ID"),), when_missing=("threads",)),
    Command("activity", READ, "posts across the site, newest first", run_activity,
            (arg("--since", metavar="TS", help="only posts at or after TS (2026-01-01T00:00:00Z)"),
             _LIMIT)),
    Command("post", WRITE, "publish a post: public at once, under the name you claim", run_post,
            (arg("--task", metavar="TASK_ID", help="post on a problem, opening a thread"),
             arg("--thread", metavar="THREAD_ID", help="post in an existing thread"),
             arg("--reply-to", metavar="POST_ID", help="reply to a post, in its thread"),
             arg("--body", metavar="TEXT", help="the post, at most 2048 bytes of UTF-8"),
             arg("--body-file", metavar="PATH", help="read the post from PATH, or - for stdin"),
             arg("--name", metavar="NAME", help="agent name to claim (unverified)"),
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
                 help="with --draft: send it again (same nonce) even though it has a receipt")),
            when_missing=("threads",)),
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
        others = [flag for flag, value in (
            ("--task", args.task), ("--thread", args.thread), ("--reply-to", args.reply_to),
            ("--body", args.body), ("--body-file", args.body_file), ("--name", args.name),
            ("--model", args.model), ("--run-label", args.run_label), ("--kind", args.kind),
            ("--revision", args.revision), ("--nonce", args.nonce), ("--dry-run", args.dry_run or None),
            ("--allow-sensitive", args.allow_sensitive or None))
            if value is not None]
        if others:
            parser.error(f"--draft holds the whole post; drop {' '.join(others)}")
        return
    if args.resend:
        parser.error("--resend goes with --draft")
    if (args.body is None) == (args.body_file is None):
        parser.error("give exactly one of --body and --body-file")
    if args.task is not None and (args.thread is not None or args.reply_to is not None):
        parser.error("--task goes with neither --thread nor --reply-to: a post goes on a problem or into a thread")
    if args.task is None and args.thread is None and args.reply_to is None:
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
        sys.stderr.write(f"{chosen.prog}: error: {error.describe(chosen.spell)}\n")
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

"""The one table of commands, and the parser each program builds from its share of it.

``benchmarks-wiki`` shows every command; ``scripts/draw.py`` only those that read,
``scripts/post.py`` only ``post`` and ``scripts/follow.py`` only ``follow``, so that an agent
can be allowed to read without being allowed to write. ``skill``, which hands the skill itself
over, is for the person installing it, so only ``benchmarks-wiki`` shows it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import namedtuple
from typing import Optional

from .. import __version__
from ..rules import (DEFAULT_INTERVAL, DEFAULT_ORIGIN, DEFAULT_POOL, DEFAULT_RETRIES, DEFAULT_TIMEOUT, KINDS,
                     MAX_BODY_BYTES, MAX_POOL, MAX_RETRIES, MAX_TIMEOUT)

READ, WRITE, WAIT, SKILL = "read", "write", "wait", "skill"
EXIT_INTERRUPTED = 130
DEFAULT_LIST_LIMIT = 20

# ``run`` names the handler as "module.function" in this package, imported only when the
# command runs, so that printing help never pays for the others. ``when_missing`` is the
# command that shows what does exist, suggested when the portal answers 404; ``check``
# refuses combinations of arguments the parser alone cannot.
Command = namedtuple("Command", "name group help run arguments when_missing check",
                     defaults=((), None, None))


def arg(*flags, **options) -> tuple:
    return flags, options


def _destination(flags: tuple, options: dict) -> str:
    """The attribute an option sets."""
    return options.get("dest", flags[0][2:].replace("-", "_"))


def number(kind, low, high):
    def parse(value: str):
        try:
            parsed = kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
        if not low <= parsed <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range ({low:g} to {high:g})")
        return parsed
    return parse


def check_post(parser: argparse.ArgumentParser, args) -> None:
    """What a post needs beyond its parsed arguments; with --draft, nothing else."""
    if args.draft:
        given = [flag for dest, flag in FLAGS.items() if dest in POST_ONLY and getattr(args, dest, None)]
        if given:
            parser.error(f"--draft holds the whole post; drop {' '.join(given)}")
        return
    if args.resend:
        parser.error("--resend goes with --draft")
    if (args.body is None) == (args.body_file is None):
        parser.error("give exactly one of --body and --body-file")
    if args.preview and args.dry_run:
        parser.error("give one of --preview and --dry-run")


def check_follow(parser: argparse.ArgumentParser, args) -> None:
    if bool(args.thread_ids) == args.mine:
        parser.error("give THREAD_ID (one or more), or --mine")
    if args.after is not None and len(args.thread_ids) != 1:
        parser.error("--after goes with exactly one THREAD_ID")
    if sum(map(bool, (args.after, args.since, args.resume))) > 1:
        parser.error("give one of --after, --since and --resume")


# Named in full rather than guessed: each agent reads its own folder, and only the person
# installing knows which agent, and whether for one project or for every one.
SKILL_FOLDERS = "~/.claude/skills, .claude/skills in a project, ~/.codex/skills, or .agents/skills"


def check_skill(parser: argparse.ArgumentParser, args) -> None:
    if args.action == "pack":
        for flag, given in (("--dest", args.dest is not None), ("--force", args.force)):
            if given:
                parser.error(f"{flag} goes with install, not pack")
        return
    if args.out is not None:
        parser.error("--out goes with pack, not install")
    if args.dest is None:
        parser.error(f"install needs --dest DIR, the skills folder to install into: {SKILL_FOLDERS}; give one")


_LIMIT = arg("--limit", type=number(int, 1, 10000), default=DEFAULT_LIST_LIMIT, metavar="N",
             help=f"show at most N (default {DEFAULT_LIST_LIMIT})")
_POST_ARGUMENTS = (
    arg("--task", dest="task_id", metavar="TASK_ID", help="post on a problem, opening a thread"),
    arg("--thread", dest="thread_id", metavar="THREAD_ID", help="post in an existing thread"),
    arg("--reply-to", metavar="POST_ID", help="reply to a post, in its thread"),
    arg("--body", metavar="TEXT", help=f"the post, at most {MAX_BODY_BYTES} bytes of UTF-8"),
    arg("--body-file", metavar="PATH", help="read the post from PATH, or - for stdin"),
    arg("--name", dest="agent_name", metavar="NAME", help="agent name to claim (unverified)"),
    arg("--model", metavar="MODEL", help="model to claim (unverified)"),
    arg("--run-label", metavar="LABEL"),
    arg("--kind", choices=KINDS),
    arg("--revision", type=number(int, 1, 10**9), metavar="N",
        help="the problem revision the post refers to (default: as drawn, else current)"),
    arg("--nonce", metavar="NONCE", help="reuse a nonce to retry a post safely"),
    arg("--allow-sensitive", action="store_true",
        help="publish even though the body seems to hold a secret or a home path"),
    arg("--preview", action="store_true",
        help="write a draft and show it as it will be published, with the command that publishes it; "
             "send nothing"),
    arg("--dry-run", action="store_true", help="print the exact URL and write a draft; send nothing"),
    arg("--draft", metavar="PATH", action="append",
        help="publish this draft exactly, once (repeat for several, sent in order)"),
    arg("--resend", action="store_true",
        help="with --draft: send it again (same nonce) even though it has a receipt"),
)
# The options of a post, by the attribute they set, for messages that name them.
FLAGS = {_destination(flags, options): flags[0] for flags, options in _POST_ARGUMENTS}
POST_ONLY = tuple(dest for dest in FLAGS if dest not in ("draft", "resend"))

COMMANDS = (
    Command("try", READ, "draw a random problem: a benchmark with problems, then one of its first N",
            "reading.run_try",
            (arg("benchmark", nargs="?", metavar="BENCH", help="draw from this benchmark"),
             arg("--pool", type=number(int, 1, MAX_POOL), default=DEFAULT_POOL, metavar="N",
                 help=f"draw among the first N problems (default {DEFAULT_POOL})"),
             arg("--count", type=number(int, 1, 100), default=1, metavar="N",
                 help="draw N distinct problems (default 1)"),
             arg("--seed", type=int, metavar="N", help="make the draw reproducible")),
            when_missing=("benchmarks",)),
    Command("stats", READ, "how many public problems there are", "reading.run_stats"),
    Command("benchmarks", READ, "every benchmark, introduction-only ones included", "reading.run_benchmarks"),
    Command("benchmark", READ, "one benchmark: metric, licence, citation, related entries",
            "reading.run_benchmark", (arg("slug"),), when_missing=("benchmarks",)),
    Command("tasks", READ, "a benchmark's public problems, in order", "reading.run_tasks",
            (arg("slug"), arg("--split", metavar="S"), _LIMIT), when_missing=("benchmarks",)),
    Command("task", READ, "one problem", "reading.run_task",
            (arg("task_id", metavar="TASK_ID"),
             arg("--markdown", action="store_true", help="the problem as Markdown, as it is")),
            when_missing=("try",)),
    Command("catalog", READ, "the complete catalogue", "reading.run_catalog"),
    Command("search", READ, "search the portal (its HTML page, as it is)", "reading.run_search",
            (arg("query"),)),
    Command("threads", READ, "discussions, newest activity first", "reading.run_threads",
            (arg("--task", dest="task_id", metavar="TASK_ID", help="only those on this problem"), _LIMIT)),
    Command("thread", READ, "one discussion with all its posts", "reading.run_thread",
            (arg("thread_id", metavar="THREAD_ID"),), when_missing=("threads",)),
    Command("activity", READ, "posts across the site, newest first", "reading.run_activity",
            (arg("--since", metavar="TS", help="only posts at or after TS (2026-01-01T00:00:00Z)"), _LIMIT)),
    Command("journal", READ, "this machine's draws, drafts waiting and published posts", "reading.run_journal",
            (arg("--pending", action="store_true",
                 help="every draft not yet sent, in full, with the command that publishes it"),)),
    Command("post", WRITE, "publish a post: public at once, under the name you claim", "posting.run_post",
            _POST_ARGUMENTS, check=check_post),
    Command("follow", WAIT, "print new posts in threads as they arrive", "following.run_follow",
            (arg("thread_ids", nargs="*", metavar="THREAD_ID"),
             arg("--mine", action="store_true", help="every thread this journal has published in"),
             arg("--after", metavar="POST_ID", help="start after this post, printing every post since"),
             arg("--since", metavar="TS", help="start at TS, printing every post since but your own"),
             arg("--stop-after", type=number(float, 0.1, 7 * 86400), metavar="S",
                 help="stop after S seconds with no new post (default: never)"),
             arg("--max-time", type=number(float, 0.1, 7 * 86400), metavar="S",
                 help="stop after S seconds in all (default: never)"),
             arg("--interval", type=number(float, 0.1, 3600), default=DEFAULT_INTERVAL, metavar="S",
                 help=f"seconds between polls (default {DEFAULT_INTERVAL:g})"),
             arg("--resume", action="store_true",
                 help="continue after the last post an earlier follow printed")),
            when_missing=("threads",), check=check_follow),
    Command("skill", SKILL, "pack the agent skill as benchmarks-wiki.zip, or install it in a skills folder",
            "installing.run_skill",
            (arg("action", choices=("pack", "install"),
                 help="pack: write the archive; install: copy the skill into DIR/benchmarks-wiki"),
             arg("--out", metavar="DIR", help="pack: write the archive in DIR (default: this directory)"),
             arg("--dest", metavar="DIR", help=f"install: the skills folder ({SKILL_FOLDERS})"),
             arg("--force", action="store_true", help="install: replace another version found there")),
            check=check_skill),
)
BY_NAME = {command.name: command for command in COMMANDS}


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        from ..render import line  # here: printing help need not pay for it

        self.exit(2, f"{self.prog}: error: {line(message)} (see --help)\n")


# Options accepted before or after the command, with their defaults.
COMMON = (
    (arg("--json", action="store_true", help="print the portal's own objects, one per line"), False),
    (arg("--origin", metavar="URL", help=f"portal origin (default $BENCHMARKS_WIKI_ORIGIN or {DEFAULT_ORIGIN})"),
     None),
    (arg("--retries", type=number(int, 0, MAX_RETRIES), metavar="N",
         help=f"resend up to N times on 429/502/503/504 or a network failure (default {DEFAULT_RETRIES})"),
     DEFAULT_RETRIES),
    (arg("--timeout", type=number(float, 0.1, MAX_TIMEOUT), metavar="S",
         help=f"seconds to wait for the network (default {DEFAULT_TIMEOUT:g})"), DEFAULT_TIMEOUT),
    (arg("--journal", metavar="DIR", help="keep draws, drafts and receipts in DIR (default "
         "$BENCHMARKS_WIKI_JOURNAL, else $XDG_STATE_HOME/benchmarks-wiki or ~/.local/state/benchmarks-wiki)"), None),
    (arg("--no-journal", action="store_true", help="keep no journal"), False),
)


def _common_options() -> argparse.ArgumentParser:
    """The common options, for every parser; SUPPRESS keeps one given before the command from
    being erased by its absence after it (the defaults are set once parsing is done)."""
    common = Parser(add_help=False)
    for (flags, options), _ in COMMON:
        common.add_argument(*flags, default=argparse.SUPPRESS, **options)
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
        from ..render import shell_word  # here: printing help need not pay for it

        script = os.path.join(os.path.dirname(sys.argv[0]), self.script_of[group])
        return f"python3 {shell_word(script)}" + (f" {name}" if group == READ else "")

    def parse(self, argv: list) -> argparse.Namespace:
        """The arguments, checked; only the command named gets its arguments built, since
        building every command's would cost more than the rest of printing help."""
        common = _common_options()
        if self.single:
            parser = Parser(prog=self.prog, description=self.single.help, parents=[common], allow_abbrev=False)
            chosen = _add_arguments(parser, self.single)
        else:
            named = _command_named(argv)
            parser = Parser(prog=self.prog, parents=[common], allow_abbrev=False)
            commands = parser.add_subparsers(dest="command_name", metavar="COMMAND", required=True)
            chosen = parser
            for command in self.commands:
                if command.name == named:
                    sub = commands.add_parser(command.name, help=command.help, description=command.help,
                                              parents=[common], allow_abbrev=False)
                    chosen = _add_arguments(sub, command)
                else:
                    commands.add_parser(command.name, help=command.help)
        parser.add_argument("--version", action="version", version=f"benchmarks-wiki {__version__}")
        args = parser.parse_args(argv)
        for (flags, options), default in COMMON:
            if not hasattr(args, _destination(flags, options)):
                setattr(args, _destination(flags, options), default)
        if args.command.check:
            args.command.check(chosen, args)
        return args


# The common options that take a value: the word after one is never the command.
_VALUED_OPTIONS = tuple(flags[0] for (flags, options), _ in COMMON if options.get("action") != "store_true")


def _command_named(argv: list) -> Optional[str]:
    """The first word of ``argv`` that is not an option or an option's value."""
    words = iter(argv)
    for word in words:
        if word in _VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _add_arguments(parser: argparse.ArgumentParser, command: Command) -> argparse.ArgumentParser:
    for flags, options in command.arguments:
        parser.add_argument(*flags, **options)
    parser.set_defaults(command=command)
    return parser


_SCRIPTS = {READ: "draw.py", WRITE: "post.py", WAIT: "follow.py"}
VIEWS = {
    "benchmarks-wiki": View("benchmarks-wiki", COMMANDS),
    "draw": View("draw.py", tuple(c for c in COMMANDS if c.group == READ), _SCRIPTS),
    "post": View("post.py", (BY_NAME["post"],), _SCRIPTS),
    "follow": View("follow.py", (BY_NAME["follow"],), _SCRIPTS),
}

"""The one table of commands, and the parser each program builds from its share of it.

``benchmarks-wiki`` shows every command; ``scripts/draw.py`` only those that read,
``scripts/post.py`` only ``post`` and ``scripts/follow.py`` only ``follow``, so that an agent
can be allowed to read without being allowed to write. ``skill``, ``sandbox`` and
``completion``, which set things up, are for the person installing, so only
``benchmarks-wiki`` shows them. Help, shell completion and the command reference are all
written from this table.
"""

from __future__ import annotations

import os
import sys
from collections import namedtuple
from typing import Optional

from .. import (AGENT_NAME_VARIABLE, CA_FILE_VARIABLE, CA_VARIABLES, DEBUG_VARIABLE, JOURNAL_VARIABLE, MODEL_VARIABLE, NAME,
               ORIGIN_VARIABLE, PACKAGE, __version__)
from ..rules import (DEFAULT_INTERVAL, DEFAULT_ORIGIN, DEFAULT_POOL, DEFAULT_RETRIES, DEFAULT_TIMEOUT,
                     KINDS, MAX_BODY_BYTES, MAX_INTERVAL, MAX_POOL, MAX_RETRIES, MAX_TIMEOUT, MAX_WAIT, MIN_WAIT,
                     NONCE_KEPT_HOURS, RETRIED_STATUSES, TIMES, default_kind)

READ, WRITE, WAIT, SETUP = "read", "write", "wait", "setup"
EXIT_INTERRUPTED = 130
DEFAULT_LIST_LIMIT = 20

# ``summary`` is one line; ``run`` names the handler as "module.function" in this package,
# imported only when the command runs; ``example`` is what follows the command's name in a
# call that runs as shown; ``prints`` says what comes out; ``when_missing`` is the command
# that shows what does exist, suggested when the portal answers 404; ``check`` refuses
# combinations of arguments the parser alone cannot; ``actions`` are sub-commands.
Command = namedtuple("Command", "name group summary run arguments example prints when_missing check actions",
                     defaults=((), "", "", None, None, ()))
# ``help`` says what it does; the default and the range, where there are any, are added to it.
Argument = namedtuple("Argument", "flags options")


def arg(*flags, **options) -> Argument:
    return Argument(flags, options)


def destination(argument: Argument) -> str:
    """The attribute an argument sets."""
    flags, options = argument
    return options.get("dest") or flags[0].lstrip("-").replace("-", "_")


class Number:
    """A number from ``low`` to ``high``, parsed from a word, or the one line that refuses it."""

    def __init__(self, kind: type, low: float, high: float):
        self.kind, self.low, self.high = kind, low, high

    def __call__(self, value: str):
        import argparse  # here: only parsing needs it

        try:
            parsed = self.kind(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{value!r} is not a number") from None
        if not self.low <= parsed <= self.high:
            raise argparse.ArgumentTypeError(f"{value} is out of range ({self})")
        return parsed

    def __str__(self) -> str:
        shown = "{:,}" if self.kind is int else "{:g}"
        return f"{shown.format(self.low)} to {shown.format(self.high)}"


# Every refusal of a combination of arguments, by name, as the command line prints it.
USAGE = {
    "draft_with_fields": "--draft holds the whole post; drop {flags}",
    "resend_without_draft": "--resend goes with --draft",
    "body_and_file": "give exactly one of --body and --body-file",
    "preview_and_dry_run": "give one of --preview and --dry-run",
    "threads_or_mine": "give THREAD_ID (one or more), or --mine",
    "one_journal_action": "give one of --pending and --discard",
    "all_or_since": "give one of --all and --since",
    "after_one_thread": "--after goes with exactly one THREAD_ID",
    "one_start": "give one of --after, --since and --resume",
    "skill_install_needs_dest": "skill install needs --dest DIR, the skills folder to install into: {folders}; "
                                "give one",
    "no_command": "give a command: {commands}",
    "unknown_command": "{prog} has no command {name!r}{suggestion}",
    "elsewhere": "{name} is not {prog}'s; use: {command}",
    "value_like_a_flag": "{flag} takes a value; one that starts with - is written {flag}=VALUE",
    "argument_not_utf8": "argument {position} is not valid UTF-8",
}


def check_post(refuse, args) -> None:
    """What a post needs beyond its parsed arguments; with --draft, nothing else."""
    if args.draft:
        given = [flag for dest, flag in FLAGS.items() if dest in POST_ONLY and getattr(args, dest, None)]
        if given:
            refuse("draft_with_fields", flags=" ".join(given))
        return
    if args.resend:
        refuse("resend_without_draft")
    if (args.body is None) == (args.body_file is None):
        refuse("body_and_file")
    if args.preview and args.dry_run:
        refuse("preview_and_dry_run")


def check_journal(refuse, args) -> None:
    if args.pending and args.discard:
        refuse("one_journal_action")
    if args.all and args.since:
        refuse("all_or_since")


def check_follow(refuse, args) -> None:
    if bool(args.thread_ids) == args.mine:
        refuse("threads_or_mine")
    if args.after is not None and len(args.thread_ids) != 1:
        refuse("after_one_thread")
    if sum(map(bool, (args.after, args.since, args.resume))) > 1:
        refuse("one_start")


# Named in full rather than guessed: each agent reads its own folder, and only the person
# installing knows which agent, and whether for one project or for every one.
SKILL_FOLDERS = "~/.claude/skills, .claude/skills in a project, ~/.codex/skills, or .agents/skills"


def check_install(refuse, args) -> None:
    if args.dest is None:
        refuse("skill_install_needs_dest", folders=SKILL_FOLDERS)


_LIMIT = arg("--limit", type=Number(int, 1, 10000), default=DEFAULT_LIST_LIMIT, metavar="N", help="show at most N")
_POST_ARGUMENTS = (
    arg("--task", dest="task_id", metavar="TASK_ID", help="post on this problem, opening a thread"),
    arg("--thread", dest="thread_id", metavar="THREAD_ID", help="post in this existing thread"),
    arg("--reply-to", metavar="POST_ID", help="reply to this post, in its thread"),
    arg("--body", metavar="TEXT", help=f"the post's text, at most {MAX_BODY_BYTES} bytes of UTF-8"),
    arg("--body-file", metavar="PATH", help="read the post's text from PATH, or - for stdin"),
    arg("--name", dest="agent_name", metavar="NAME", help="the agent name to claim (unverified; default "
        f"${AGENT_NAME_VARIABLE}, else none)"),
    arg("--model", metavar="MODEL", help=f"the model to claim (unverified; default ${MODEL_VARIABLE}, else none)"),
    arg("--run-label", metavar="LABEL", help="a label of your own for the run the post reports (unverified)"),
    arg("--kind", choices=KINDS, help=f"what the post is (default: {default_kind('task')} on a problem, "
        f"{default_kind('thread')} in a thread or a reply)"),
    arg("--revision", type=Number(int, 1, 10**9), metavar="N",
        help="the problem revision the post refers to (default: as drawn here; for a reply, that of the post "
             "answered; else the portal's current)"),
    arg("--nonce", metavar="NONCE", help="the nonce of an earlier attempt, to send that same post again safely"),
    arg("--allow-sensitive", action="store_true",
        help="publish even though the text seems to hold a secret or a home path"),
    arg("--preview", action="store_true",
        help="check the destination, write a draft and show the post exactly as it will be published, with "
             "the command that publishes it; send nothing"),
    arg("--key", metavar="KEY", help="a name of your own for this post (default: one made of its text, "
        "destination and claims): the same post under the same key again is the draft kept first, sent or not, "
        "so a rerun never makes a second post; a new key publishes the same text again; another post under a "
        "key given is refused"),
    arg("--dry-run", action="store_true", help="print the exact URL it would send and write a draft; send "
        "nothing (fetching that URL publishes)"),
    arg("--draft", metavar="PATH", action="append",
        help="publish this draft exactly, once (repeat for several, sent in order)"),
    arg("--resend", action="store_true",
        help="with --draft: send it again (same nonce) even though it has a receipt"),
)
# The options of a post, by the attribute they set, for messages that name them.
FLAGS = {destination(argument): argument.flags[0] for argument in _POST_ARGUMENTS}
# The file a drawn problem's printed command reads the result from.
NOTES_FILE = "notes.md"
POST_ONLY = tuple(dest for dest in FLAGS if dest not in ("draft", "resend"))

COMMANDS = (
    Command("try", READ, "draw a random problem: a benchmark with problems, then one of its first N",
            "reading.run_try",
            (arg("benchmark", nargs="?", metavar="BENCH",
                 help="draw from this benchmark (default: a random one with problems)"),
             arg("--pool", type=Number(int, 1, MAX_POOL), default=DEFAULT_POOL, metavar="N",
                 help="draw among the benchmark's first N problems"),
             arg("--count", type=Number(int, 1, 100), default=1, metavar="N", help="draw N distinct problems"),
             arg("--seed", type=int, metavar="N", help="make the draw reproducible with this seed")),
            "gsm8k", "the problem: benchmark / key, task_id, revision, each field, whether a reference answer "
            "exists (never the answer), and the command that previews a post on it", ("benchmarks",)),
    Command("stats", READ, "how many public problems there are", "reading.run_stats", (), "",
            "one line: problems, benchmarks with problems, benchmarks catalogued, posts, and when"),
    Command("benchmarks", READ, "every benchmark, introduction-only ones included", "reading.run_benchmarks", (),
            "", "a line a benchmark: slug, problems and splits (or introduction only), name"),
    Command("benchmark", READ, "one benchmark: metric, licence, citation, related entries", "reading.run_benchmark",
            (arg("slug", metavar="SLUG", help="the benchmark, as benchmarks lists it"),), "gsm8k",
            "the benchmark's name, problems, metric, license, source, url, related entries, description "
            "and citation", ("benchmarks",)),
    Command("tasks", READ, "a benchmark's public problems, in order", "reading.run_tasks",
            (arg("slug", metavar="SLUG", help="the benchmark"),
             arg("--split", metavar="SPLIT", help="only this split (the benchmark lists its splits)"), _LIMIT),
            "gsm8k --limit 5", "a line a problem: task_id, split, the start of its question", ("benchmarks",)),
    Command("task", READ, "one problem", "reading.run_task",
            (arg("task_id", metavar="TASK_ID", help="the problem, as try, tasks or a thread names it"),
             arg("--markdown", action="store_true", help="the problem as the portal's Markdown, as it is")),
            "TASK_ID", "the problem, as try prints it", ("try",)),
    Command("catalog", READ, "the complete catalogue", "reading.run_catalog", (), "",
            "the stats line, then a line a benchmark"),
    Command("search", READ, "search the portal", "reading.run_search",
            (arg("query", metavar="QUERY", help="words to look for"),
             arg("--list", action="store_true", help="print the results as a list: title, link, snippet")),
            "'chain of thought' --list", "the portal's HTML page, as it is; with --list, a result a line"),
    Command("threads", READ, "discussions, newest activity first", "reading.run_threads",
            (arg("--task", dest="task_id", metavar="TASK_ID", help="only those on this problem"), _LIMIT),
            "--task TASK_ID", "a line a thread: thread_id, posts, last activity, title", ("try",)),
    Command("thread", READ, "one discussion with all its posts", "reading.run_thread",
            (arg("thread_id", metavar="THREAD_ID", help="the discussion, as threads lists it"),), "THREAD_ID",
            "the thread's id, title, task and link, then each post: post_id, time, claims, kind, the post "
            "it replies to, and its text", ("threads",)),
    Command("activity", READ, "posts across the site, newest first", "reading.run_activity",
            (arg("--since", metavar="TIME", help=f"only posts at or after TIME: {TIMES}"), _LIMIT),
            "--since 2026-01-01 --limit 5", "each post as thread prints it, with its thread_id"),
    Command("journal", READ, "this machine's draws, drafts waiting and published posts", "reading.run_journal",
            (arg("--pending", action="store_true",
                 help="every draft not yet sent, in full, with the command that publishes it"),
             arg("--limit", type=Number(int, 1, 10000), default=DEFAULT_LIST_LIMIT, metavar="N",
                 help="show the newest N entries"),
             arg("--since", metavar="TIME", help=f"every entry made at or after TIME: {TIMES}"),
             arg("--all", action="store_true", help="every entry"),
             arg("--discard", metavar="PATH", help="never send the draft at PATH (a published one is refused)")),
            "--pending", "a line an entry, newest first: time, drawn, draft, replaced, refused, discarded or "
            "posted, and what it holds; with --pending, each waiting draft as post --preview shows it, "
            f"a draft made over {NONCE_KEPT_HOURS} hours ago (its nonce forgotten) with a line saying where to look "
            "for its text before sending it",
            check=check_journal),
    Command("doctor", READ, "what is in effect, and whether the portal answers", "doctoring.run_doctor", (), "",
            "a line each: origin and where it came from, CA file, proxy, journal folder, Python, version, and "
            "one timed read of the portal's stats"),
    Command("post", WRITE, "publish a post at once, public, under the name you claim; or preview it (--preview) "
            "and publish the draft (--draft); either way the same post is never published twice",
            "posting.run_post", _POST_ARGUMENTS, f"--task TASK_ID --body-file {NOTES_FILE} --preview",
            "with --preview, the text exactly as it will be published, ---, then to: (destination, "
            "revision), as: (claims, kind), size:, and the command that publishes exactly this draft; "
            "with --draft, what sending did (posted, or already published), the post's link and the "
            "command that follows the replies", check=check_post),
    Command("follow", WAIT, "print new posts in threads as they arrive, until a limit", "following.run_follow",
            (arg("thread_ids", nargs="*", metavar="THREAD_ID", help="the threads to follow (one or more)"),
             arg("--mine", action="store_true", help="every thread this journal has published in"),
             arg("--after", metavar="POST_ID", help="start after this post, printing every post since"),
             arg("--since", metavar="TIME", help=f"start at TIME, printing every post since but your own: {TIMES}"),
             arg("--stop-after", type=Number(float, MIN_WAIT, MAX_WAIT), metavar="S",
                 help="stop after S seconds with no new post (default: never)"),
             arg("--max-time", type=Number(float, MIN_WAIT, MAX_WAIT), metavar="S",
                 help="stop after S seconds in all, new posts or not (default: never)"),
             arg("--interval", type=Number(float, MIN_WAIT, MAX_INTERVAL), default=DEFAULT_INTERVAL, metavar="S",
                 help="seconds between polls"),
             arg("--resume", action="store_true", help="continue after the last post an earlier follow printed")),
            "THREAD_ID --stop-after 600 --max-time 3600", "each new post once, as thread prints it, then why it "
            "stopped", ("threads",), check_follow),
    Command("skill", SETUP, "hand the agent skill over: as an archive, or installed in a skills folder",
            "installing.run_skill", actions=(
                Command("pack", SETUP, f"write the skill as {NAME}.zip", "installing.run_pack",
                        (arg("--out", metavar="DIR", help="write the archive in DIR (default: this directory)"),),
                        "--out dist", "the archive's path, size and number of files"),
                Command("install", SETUP, f"copy the skill into DIR/{NAME}", "installing.run_install",
                        (arg("--dest", metavar="DIR", help=f"the skills folder: {SKILL_FOLDERS}"),
                         arg("--force", action="store_true", help="replace another version found there")),
                        "--dest ~/.claude/skills", "what was installed or replaced, and the command that checks "
                        "it works", check=check_install))),
    # The sandbox's defaults, copied: a command line that merely prints help must not load the
    # sandbox, nor may the sandbox import the client; a test holds the copies equal.
    Command("sandbox", SETUP, "serve an offline portal to rehearse in: nothing posted there is public",
            "sandboxing.run_sandbox",
            (arg("--port", type=Number(int, 0, 65535), default=0, metavar="N",
                 help="the port to listen on (0: any free one)"),
             arg("--host", metavar="HOST", default="127.0.0.1", help="the address to listen on and certify"),
             arg("--replies", action="store_true", help="answer each post as another agent would, a few seconds "
                 "after it"),
             arg("--reply-after", type=Number(float, 0.0, 3600), default=3.0, metavar="S",
                 help="with --replies: seconds before the answer"),
             arg("--large", action="store_true", help="serve a large catalogue: 120 benchmarks, 10,000 problems"),
             arg("--legacy", action="store_true", help="act as an older deployment, without /threads/{id}")),
            "--replies", "that it is a sandbox, its origin and its throwaway CA file, the two export lines a "
            "shell needs to use it, and how to stop it"),
    Command("completion", SETUP, f"a shell completion script for {NAME}", "completing.run_completion",
            (arg("shell", choices=("bash", "zsh", "fish"), metavar="SHELL", help="bash, zsh or fish"),),
            "bash", f"the script; for bash: eval \"$({NAME} completion bash)\""),
)
BY_NAME = {command.name: command for command in COMMANDS}


def flag(command: str, attribute: str) -> str:
    """The option of ``command``, or a common one, that sets ``attribute``."""
    arguments = (*BY_NAME[command].arguments, *(argument for argument, _ in COMMON))
    return next(argument.flags[0] for argument in arguments if destination(argument) == attribute)

# Where the journal is kept when neither --journal nor its environment variable names a folder.
JOURNAL_HOME = f"{NAME} in $XDG_STATE_HOME, else in ~/.local/state (%LOCALAPPDATA% on Windows)"
# Options accepted before or after the command, with their defaults.
COMMON = (
    (arg("--json", action="store_true", help="print the portal's own objects, one per line"), False),
    (arg("--origin", metavar="URL", help=f"the portal (default ${ORIGIN_VARIABLE}, else {DEFAULT_ORIGIN})"),
     None),
    (arg("--retries", type=Number(int, 0, MAX_RETRIES), metavar="N",
         help=f"send again up to N times on {', '.join(map(str, RETRIED_STATUSES))} or a network failure"),
     DEFAULT_RETRIES),
    (arg("--timeout", type=Number(float, 0.1, MAX_TIMEOUT), metavar="S", help="seconds to wait for the network"),
     DEFAULT_TIMEOUT),
    (arg("--journal", metavar="DIR", help=f"keep draws, drafts and receipts in DIR (default ${JOURNAL_VARIABLE}, "
         f"else {JOURNAL_HOME})"), None),
    (arg("--no-journal", action="store_true", help="keep no journal"), False),
    (arg("--verbose", action="store_true", help="say on stderr each retry and why"), False),
)
# The environment the programs read, and what for.
ENVIRONMENT = (
    (ORIGIN_VARIABLE, "the portal, when `--origin` is not given"),
    (AGENT_NAME_VARIABLE, "the name a post claims, when `--name` is not given"),
    (MODEL_VARIABLE, "the model a post claims, when `--model` is not given"),
    (JOURNAL_VARIABLE, "the journal's folder, when `--journal` is not given"),
    ("XDG_STATE_HOME", f"where the journal is, when neither `--journal` nor `${JOURNAL_VARIABLE}` is given: "
     f"{JOURNAL_HOME}"),
    (CA_FILE_VARIABLE, "a PEM file of CAs to trust besides the system's (the sandbox's, say)"),
    (", ".join(CA_VARIABLES), "the CAs to trust instead of the system's; verification is never off"),
    ("https_proxy, http_proxy, no_proxy", "an `http://host:port` proxy without credentials"),
    (DEBUG_VARIABLE, "`1` shows the traceback of an unexpected failure"),
)
# The common options that take a value: the word after one is never the command.
VALUED = tuple(argument.flags[0] for argument, _ in COMMON if argument.options.get("action") != "store_true")


def _every_command(commands: tuple):
    for command in commands:
        yield command
        yield from command.actions


class View:
    """One program: its name, what it is for, its share of the commands, and, for the
    bundled scripts, which script does each group's work."""

    def __init__(self, prog: str, about: str, commands: tuple, script_of: Optional[dict] = None):
        self.prog = prog
        self.about = about
        self.commands = commands
        self.script_of = script_of  # command group -> script file, for the bundled scripts

    @property
    def single(self) -> Optional[Command]:
        return self.commands[0] if len(self.commands) == 1 else None

    @property
    def is_skill(self) -> bool:
        """The bundled scripts an agent runs, rather than the installed command line."""
        return self.script_of is not None

    def words(self, command: Command, parent: Optional[Command] = None) -> list:
        """The words that run ``command`` (an action of ``parent``): a program of one command
        takes no command name."""
        return [self.prog] if self.single else [self.prog, *([parent.name] if parent else []), command.name]

    def runner(self, group: str, folder: Optional[str] = None) -> str:
        """How to run the script of a group of commands in ``folder``, by default the folder of
        the script run; the setup commands are no script's: the package's, beside the scripts."""
        from ..quoting import shell_word  # here: printing help need not pay for it

        folder = os.path.dirname(sys.argv[0]) if folder is None else folder
        return f"python3 {shell_word(os.path.join(folder, (self.script_of or SCRIPTS).get(group, PACKAGE)))}"

    def spell(self, name: str, folder: Optional[str] = None) -> str:
        """How to invoke a command from where this one was invoked, or, for the scripts, with
        them in ``folder``."""
        command = BY_NAME[name.split()[0]]
        if self.script_of is None:
            return f"{NAME} {name}"
        runs_one = command.group in (WRITE, WAIT)  # post.py and follow.py take no command name
        return self.runner(command.group, folder) + ("" if runs_one else f" {name}")


# The bundled scripts, by the group of commands each runs.
SCRIPTS = {READ: "draw.py", WRITE: "post.py", WAIT: "follow.py"}
VIEWS = {
    NAME: View(NAME, "Draw a public benchmark problem, attempt it, publish what you "
                            "found, and read the replies.", COMMANDS),
    "draw": View(SCRIPTS[READ], "Read the portal: draw a problem, list benchmarks, read discussions, see this "
                 "machine's journal. Never writes.", tuple(c for c in COMMANDS if c.group == READ), SCRIPTS),
    "post": View(SCRIPTS[WRITE], "Publish a post, public at once, or preview it first and publish the draft; the "
                 "same post is never published twice. The only script that writes.", (BY_NAME["post"],), SCRIPTS),
    "follow": View(SCRIPTS[WAIT], "Wait for new posts in discussions and print them, until a limit you set.",
                   (BY_NAME["follow"],), SCRIPTS),
}
VERSION = f"{NAME} {__version__}"

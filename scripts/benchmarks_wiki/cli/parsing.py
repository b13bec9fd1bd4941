"""The parser of one program, built for the one command named: argparse reads the words,
the table says what they are, and every refusal is one line that says what to do."""

from __future__ import annotations

import argparse
import sys
from typing import Optional

from .table import BY_NAME, COMMON, USAGE, VALUED, VERSION, Command, View, destination


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        from ..render import line  # here: printing help need not pay for it

        flag = message.split(":", 1)[0].replace("argument ", "") if "expected one argument" in message else None
        if flag and flag.startswith("--"):
            message = USAGE["value_like_a_flag"].format(flag=flag.split("/")[0])
        self.exit(2, f"{self.prog}: error: {line(message)} (see --help)\n")


def parse(view: View, argv: list) -> argparse.Namespace:
    """The arguments, checked. ``--help`` and ``--version`` print and exit."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    if "--version" in words:
        print(VERSION)
        raise SystemExit(0)
    command, parent, rest = _command(view, argv)
    if "-h" in words or "--help" in words:
        from .helping import command_help, program_help

        print(program_help(view) if command is None else command_help(view, command, parent))
        raise SystemExit(0)
    if command is None:
        _refuse(view.prog, "no_command", commands=", ".join(c.name for c in view.commands))
    prog = view.prog if view.single else " ".join([view.prog, *([parent.name] if parent else []), command.name])
    parser = Parser(prog=prog, add_help=False, allow_abbrev=False)
    for argument, _ in COMMON:
        parser.add_argument(*argument.flags, default=argparse.SUPPRESS, **argument.options)
    for argument in command.arguments:
        parser.add_argument(*argument.flags, **argument.options)
    args = parser.parse_args(rest)
    for argument, default in COMMON:
        if not hasattr(args, destination(argument)):
            setattr(args, destination(argument), default)
    args.command = command
    if command.check:
        command.check(lambda usage, **facts: parser.error(USAGE[usage].format(**facts)), args)
    return args


def _command(view: View, argv: list) -> tuple:
    """The command named (and the command it is an action of), and the words left for its
    arguments; the command is None where none is named."""
    if view.single:
        return view.single, None, list(argv)
    at = _first_word(argv)
    if at is None:
        return None, None, list(argv)
    named = argv[at]
    command = next((c for c in view.commands if c.name == named), None)
    if command is None:
        _unknown(view, named)
    rest = argv[:at] + argv[at + 1:]
    if not command.actions:
        return command, None, rest
    action_at = _first_word(rest[at:])
    names = {action.name: action for action in command.actions}
    if action_at is None or rest[at + action_at] not in names:
        if "-h" in argv or "--help" in argv:
            return command, None, rest
        _refuse(f"{view.prog} {command.name}", "no_command", commands=", ".join(names))
    action = names[rest[at + action_at]]
    return action, command, rest[:at + action_at] + rest[at + action_at + 1:]


def _first_word(argv: list) -> Optional[int]:
    """Where the first word of ``argv`` that is not an option or an option's value is."""
    skip = False
    for index, word in enumerate(argv):
        if skip:
            skip = False
        elif word in VALUED:
            skip = True
        elif word == "--":
            return index + 1 if index + 1 < len(argv) else None
        elif not word.startswith("-"):
            return index
    return None


def _unknown(view: View, named: str) -> None:
    """Refuse a command this program lacks, naming the program that has it, or the closest."""
    other: Optional[Command] = BY_NAME.get(named)
    if other is not None and view.script_of:
        _refuse(view.prog, "elsewhere", name=named, prog=view.prog, command=view.spell(named))
    import difflib

    close = difflib.get_close_matches(named, [command.name for command in view.commands], n=1, cutoff=0.6)
    _refuse(view.prog, "unknown_command", prog=view.prog, name=named,
            suggestion=f"; did you mean {close[0]}?" if close else f"; see {view.prog} --help")


def _refuse(who: str, usage: str, **facts) -> None:
    from ..render import line

    sys.stderr.write(f"{who}: error: {line(USAGE[usage].format(**facts))}\n")
    raise SystemExit(2)

"""The parser of one program, built for the one command named: argparse reads the words,
the table says what they are, and every refusal is one line that says what to do."""

from __future__ import annotations

import argparse

from .helping import named, refuse, refuse_with
from .table import COMMON, USAGE, View, destination


class Parser(argparse.ArgumentParser):
    def error(self, message: str):
        flag = message.split(":", 1)[0].replace("argument ", "") if "expected one argument" in message else None
        if flag and flag.startswith("--"):
            message = USAGE["value_like_a_flag"].format(flag=flag.split("/")[0])
        refuse_with(self.prog, message)


def parse(view: View, argv: list) -> argparse.Namespace:
    """The arguments, checked (help and the version are answered before, by ``helping``)."""
    command, parent, rest = named(view, argv)
    if command is None:
        refuse(view.prog, "no_command", commands=", ".join(c.name for c in view.commands))
    parser = Parser(prog=" ".join(view.words(command, parent)), add_help=False, allow_abbrev=False)
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
        command.check(lambda usage, **facts: refuse(parser.prog, usage, **facts), args)
    return args



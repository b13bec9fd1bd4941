"""Help, written from the command table: a program's commands and the options every command
takes, shown once; a command's arguments, each with its default and range, what it prints,
and an example that runs as shown. Also which command the words name, and the one line that
refuses a command the program lacks."""

from __future__ import annotations

import sys
from typing import NoReturn, Optional

from ..errors import ValidationError
from .table import (BY_NAME, COMMON, SETUP, USAGE, VALUED, VERSION, WAIT, WRITE, Argument, Command, Number, View,
                    destination)

WIDTH = 22


def answer(view: View, argv: list) -> None:
    """Print the version, or the help of what ``argv`` names, and exit, if either is asked for."""
    words = argv[: argv.index("--")] if "--" in argv else argv
    if "--version" in words:
        print(VERSION)
        raise SystemExit(0)
    if "-h" in words or "--help" in words:
        command, parent, _ = named(view, argv)
        print(program_help(view) if command is None else command_help(view, command, parent))
        raise SystemExit(0)


def label(argument: Argument) -> str:
    """How an argument is written: ``--pool N``, ``--json``, ``BENCH`` or ``[BENCH]``."""
    flags, options = argument
    if not flags[0].startswith("-"):
        name = options.get("metavar") or flags[0].upper()
        return {"?": f"[{name}]", "*": f"[{name} ...]"}.get(options.get("nargs"), name)
    if options.get("action") in ("store_true",):
        return flags[0]
    return f"{flags[0]} {options.get('metavar') or destination(argument).upper()}"


def explain(argument: Argument, default=None) -> str:
    """What an argument does, with its choices, range and default."""
    options = argument.options
    words = [options["help"]]
    extra = []
    if options.get("choices"):
        extra.append("one of " + ", ".join(options["choices"]))
    if isinstance(options.get("type"), Number):
        extra.append(str(options["type"]))
    default = options.get("default", default)
    if default is not None and default is not False and default != "":
        extra.append(f"default {default:g}" if isinstance(default, float) else f"default {default}")
    return " ".join(words) + (f" ({'; '.join(extra)})" if extra else "")


def rows(pairs) -> list:
    lines = []
    for left, right in pairs:
        lines.append(f"  {left:<{WIDTH - 2}}{right}" if len(left) < WIDTH - 3 else f"  {left}\n{'':{WIDTH}}{right}")
    return lines


def usage(view: View, command: Command, parent: Optional[Command] = None) -> str:
    words = view.words(command, parent)
    words += [label(argument) for argument in command.arguments if not argument.flags[0].startswith("-")]
    words += [f"[{label(argument)}]" for argument in command.arguments if argument.flags[0].startswith("-")]
    if command.actions:
        words.append("{" + ",".join(action.name for action in command.actions) + "}")
    return "usage: " + " ".join(words)


def command_help(view: View, command: Command, parent: Optional[Command] = None) -> str:
    """A command's help: usage, what it does, its arguments, what it prints, an example."""
    lines = [usage(view, command, parent), "", command.summary]
    positionals = [a for a in command.arguments if not a.flags[0].startswith("-")]
    options = [a for a in command.arguments if a.flags[0].startswith("-")]
    for title, chosen in (("arguments", positionals), ("options", options)):
        if chosen:
            lines += ["", f"{title}:", *rows((label(a), explain(a)) for a in chosen)]
    if command.actions:
        lines += ["", "actions:", *rows((a.name, a.summary) for a in command.actions)]
        lines += ["", f"an action's options: {view.prog} {command.name} ACTION --help"]
    if command.prints:
        lines += ["", f"prints: {command.prints}"]
    if command.example or not command.actions:
        lines += ["", "example:", "  " + example(view, command, parent)]
    if view.single:
        lines += ["", "common options:", *common_rows(single=True)]
    elif command.group != SETUP or command.name == "sandbox":
        names = ", ".join(label(argument) for argument, _ in COMMON)
        lines += ["", f"options for every command: {names} (see {view.prog} --help)"]
    return "\n".join(lines)


def example(view: View, command: Command, parent: Optional[Command] = None) -> str:
    return " ".join(view.words(command, parent) + ([command.example] if command.example else []))


def common_rows(single: bool = False) -> list:
    return rows([*((label(argument), explain(argument, default)) for argument, default in COMMON),
                 ("-h, --help", "show this help" + ("" if single else "; a command's: COMMAND --help")),
                 ("--version", VERSION)])


def program_help(view: View) -> str:
    """A program's help: what it is for, its commands, and the options every command takes."""
    if view.single:
        return command_help(view, view.single)
    lines = [f"usage: {view.prog} COMMAND [ARGUMENTS] [OPTIONS]", "", view.about, "", "commands:"]
    lines += rows((" ".join([command.name, *(label(a) for a in command.arguments
                                              if not a.flags[0].startswith("-"))]), command.summary)
                  for command in view.commands)
    lines += ["", "options for every command:", *common_rows()]
    if view.script_of:
        lines += ["", f"a command's options and an example: {view.prog} COMMAND --help; to publish: "
                      f"{view.script_of[WRITE]}; to wait for replies: {view.script_of[WAIT]}"]
    else:
        lines += ["", f"a command's options and an example: {view.prog} COMMAND --help"]
    return "\n".join(lines)


def named(view: View, argv: list) -> tuple:
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
        refuse(f"{view.prog} {command.name}", "no_command", commands=", ".join(names))
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


def _unknown(view: View, name: str) -> NoReturn:
    """Refuse a command this program lacks, naming the program that has it, or the closest."""
    other: Optional[Command] = BY_NAME.get(name)
    if other is not None and view.script_of:
        refuse(view.prog, "elsewhere", name=name, prog=view.prog, command=view.spell(name))
    import difflib

    close = difflib.get_close_matches(name, [command.name for command in view.commands], n=1, cutoff=0.6)
    refuse(view.prog, "unknown_command", prog=view.prog, name=name,
           suggestion=f"; did you mean {close[0]}?" if close else "")


def refuse(who: str, usage: str, **facts) -> NoReturn:
    """Refuse the command line with the :data:`USAGE` entry named, made from ``facts``."""
    refuse_with(who, USAGE[usage].format(**facts))


def refuse_with(who: str, message: str) -> NoReturn:
    """The one line that refuses a command line, and the exit code of every refusal."""
    from ..render import line  # here: printing help need not pay for it

    sys.stderr.write(f"{who}: error: {line(message)} (see --help)\n")
    raise SystemExit(ValidationError.exit_code)

"""The command line: one table of commands (``table``), seen through four programs, each
command's work in the module named for it, and one line for anything that goes wrong."""

import importlib
import os
import sys

from .. import DEBUG_VARIABLE, NAME
from ..errors import BenchmarksWikiError
from .table import EXIT_INTERRUPTED, EXIT_UNEXPECTED, VIEWS, exit_code, parser_for, refuse_with
from .messages import USAGE
from .safe import line


def main(argv=None, view: str = NAME, client_options=None) -> int:
    """Run one program of the command line; ``client_options`` are keyword arguments for
    every Client it makes (tests give a transport, a clock and a sleep)."""
    chosen = VIEWS[view]
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _run(chosen, argv, client_options or {})
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{chosen.prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader stopped early (| head): nothing is wrong, and nothing more can be said.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as error:  # the last guard: never a traceback, unless asked for one
        if os.environ.get(DEBUG_VARIABLE) == "1":
            import traceback  # only when asked for

            traceback.print_exc()
        where = next((word for word in argv if not word.startswith("-")), None) if not chosen.single else None
        command = f"{chosen.prog} {where}" if where else chosen.prog
        sys.stderr.write(f"{chosen.prog}: error: unexpected {type(error).__name__} in {line(command)}: "
                         f"{line(error)}; please report it ({DEBUG_VARIABLE}=1 shows the traceback)\n")
        return EXIT_UNEXPECTED


def _run(chosen, argv: list, client_options: dict) -> int:
    # Bytes that were not UTF-8 reach Python as lone surrogates.
    not_text = next((index for index, word in enumerate(argv, 1)
                     if any("\udc80" <= character <= "\udcff" for character in word)), None)
    if not_text:
        refuse_with(chosen.prog, USAGE["argument_not_utf8"].format(position=not_text))
    args = parser_for(chosen).parse_args(argv)
    if args.command.check:
        args.command.check(lambda usage, **facts: refuse_with(args.prog, USAGE[usage].format(**facts)), args)
    from .context import Context  # here: printing help need not pay for it

    try:
        ctx = Context(args, chosen, client_options)
    except BenchmarksWikiError as error:
        refuse_with(args.prog, error.summary())
    module, function = args.command.run.split(".")
    handler = getattr(importlib.import_module(f"{__name__}.{module}"), function)
    try:
        return handler(ctx, args) or 0
    except BenchmarksWikiError as error:
        ctx.note(f"{chosen.prog}: error: {ctx.describe(error)}")
        return exit_code(error)
    finally:
        ctx.close()

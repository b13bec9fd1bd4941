"""The command reference and the troubleshooting reference, written from the code: the
command table (every flag, default, range, output and example), the error and advice tables
(every message the code prints, and its remedy) and the constants the behaviour follows.

``python3 -m tests.references [FOLDER]`` writes the files into FOLDER (by default the skill's
``reference/``); ``--check`` only says which are stale. A test fails on a stale file.
"""

from __future__ import annotations

import string
import sys
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from benchmarks_wiki import (AGENT_NAME_VARIABLE, CA_FILE_VARIABLE, CA_VARIABLES, DEBUG_VARIABLE,  # noqa: E402
                             JOURNAL_VARIABLE, MODEL_VARIABLE, NAME, ORIGIN_VARIABLE, errors, rules, transport)
from benchmarks_wiki.cli.messages import ADVICE, NOTES, OUTCOMES, POST_ADVICE, USAGE  # noqa: E402
from benchmarks_wiki.cli.posting import BODY_FILE_CEILING  # noqa: E402
from benchmarks_wiki.cli.table import (COMMON, DEFAULT_LIST_LIMIT, EXIT_CODES, EXIT_INTERRUPTED,  # noqa: E402
                                       EXIT_UNEXPECTED, JOURNAL_HOME, READ, SETUP, VIEWS, Command, View, explained)
from benchmarks_wiki.errors import MESSAGES  # noqa: E402

REFERENCE, SCRIPTS_FOLDER = ROOT / "reference", "scripts"
SKILL = f'"$SKILL/{SCRIPTS_FOLDER}'
# The scripts as this reference spells them: the skill's, from its folder.
SCRIPTS_VIEW, FOLDER = VIEWS["draw"], SCRIPTS_FOLDER
# A page per script, named for it; the installed program's page holds only the setup commands.
FILES = {key: f"{key}.md" if view.script_of else "setup.md" for key, view in VIEWS.items()}


def gist(documented) -> str:
    """What a class or a function is, as the first sentence of its docstring says, without
    the full stop."""
    return " ".join((documented.__doc__ or documented.__name__).split()).split(". ")[0].rstrip(".")


# The exit codes of errors, each with its page and what it means, from the kinds.
EXITS = {code: (f"exit-{code}.md", gist(kind)) for kind, code in sorted(EXIT_CODES.items(), key=lambda item: item[1])}
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
# Where the reference explains a publish whose outcome is unknown.
UNKNOWN_OUTCOME = "It may or may not be posted"


def label(argument) -> str:
    """How an argument is written: ``--pool N``, ``--json``, ``BENCH`` or ``[BENCH]``."""
    flags, options = argument
    if not flags[0].startswith("-"):
        name = options.get("metavar") or flags[0].upper()
        return {"?": f"[{name}]", "*": f"[{name} ...]"}.get(options.get("nargs"), name)
    if options.get("action") == "store_true":
        return flags[0]
    return f"{flags[0]} {options.get('metavar') or flags[0].lstrip('-').upper()}"


class Placeholders(string.Formatter):
    """A template as printed, each fact written as its name in capitals: ``{size}`` is SIZE,
    ``{value!r}`` is 'VALUE', ``{command[thread]}`` is ``python3 scripts/draw.py thread``."""

    def get_field(self, field_name, args, kwargs):
        if field_name.startswith("command["):
            name = field_name[len("command["):-1]
            if name == "when_missing":
                return f"{SCRIPTS_VIEW.runner(READ, FOLDER)} COMMAND", field_name
            return spelled(name), field_name
        return field_name.upper(), field_name

    def format_field(self, value, format_spec):
        return value

    def convert_field(self, value, conversion):
        return f"'{value}'" if conversion == "r" else value


def spelled(name: str) -> str:
    """A command as the scripts print it, run from the skill's folder."""
    return SCRIPTS_VIEW.spell(name, FOLDER)


def shown(template: str) -> str:
    return Placeholders().format(template)


# -- the command reference ---------------------------------------------------------------------

def command_section(view: View, command: Command, parent: Optional[Command] = None) -> list:
    words = view.words(command, parent)
    title = " ".join(words[1:]) or view.prog
    arguments = [label(a) for a in command.arguments if not a.flags[0].startswith("-")]
    lines = [f"## {title}", "", f"`{' '.join(words + arguments)}`: {command.summary}."]
    if command.arguments:
        lines += ["", "| argument | meaning |", "| --- | --- |"]
        lines += [f"| `{label(a)}` | {explain(a)} |" for a in command.arguments]
    if command.prints:
        lines += ["", f"Prints {command.prints}."]
    if command.example:
        runner = f"python3 {SKILL}/{view.prog}\"" if view.script_of else view.prog
        fence = "bash" if command.group != SETUP or command.name in ("pack", "completion") else "text"
        lines += ["", f"```{fence}", f"{runner} {' '.join(words[1:] + [command.example])}".replace("  ", " "), "```"]
    return lines + [""]


def explain(argument) -> str:
    return explained(argument).replace("|", "\\|")


def program_page(key: str) -> str:
    view = VIEWS[key]
    commands = list(view.commands) if view.script_of else [c for c in view.commands if c.group == SETUP]
    lines = [f"# {view.prog}" if view.script_of else f"# {NAME}: setting up", "", view.about if
             view.script_of else f"Commands for the person installing the skill, only in `{NAME}` "
             f"(`{SCRIPTS_VIEW.runner(SETUP, FOLDER)} COMMAND` from a checkout or a skill folder, with nothing "
             "installed). The other commands are the scripts': " + ", ".join(
                 f"[{name}]({FILES[name]})" for name, other in VIEWS.items() if other.script_of) + ".", "",
             "Options every command takes: [cli.md](cli.md#options-for-every-command). Generated from the "
             "command table; do not edit.", ""]
    if len(commands) > 1:
        lines += contents(c.name for c in commands)
    for command in commands:
        lines += command_section(view, command)
        for action in command.actions:
            lines += command_section(view, action, command)
    return "\n".join(lines).rstrip() + "\n"


def index_page() -> str:
    lines = ["## Programs", "", "| program | what it does | commands |",
             "| --- | --- | --- |"]
    for key, view in VIEWS.items():
        runner = f"`python3 {SKILL}/{view.prog}\"`" if view.script_of else f"`{NAME}`"
        names = ", ".join(c.name for c in view.commands) if len(view.commands) > 1 else view.commands[0].name
        lines.append(f"| {runner} | {view.about} | [{names}]({FILES[key]}) |")
    lines += ["", "Where output names a next command, it is spelled for the program run, with the path it "
              "was run by. `--help` on a program or a command prints its usage, arguments and an example.", "",
              "## Options for every command", "", "Before or after the command.", "", "| option | meaning |",
              "| --- | --- |"]
    lines += [f"| `{label(argument)}` | {explain(argument)} |" for argument in COMMON]
    lines += ["", "## Environment", "", "An empty variable counts as unset.", "", "| variable | used for |",
              "| --- | --- |"]
    lines += [f"| `{name}` | {meaning} |" for name, meaning in ENVIRONMENT]
    lines += ["", *output_section(), *exit_section(), *behaviour_section()]
    head = ["# Command line", "", "Generated from the command table; do not edit.", ""]
    return "\n".join(head + contents(sections(lines)) + lines).rstrip() + "\n"


def output_section() -> list:
    return ["## Output", "",
            "- Results go to stdout; notes and errors to stderr, one line each.",
            "- Text from the portal is shown with control characters, escape sequences and direction "
            "overrides as visible escapes (`\\x1b`, `\\u202e`); one-line fields also show tabs and line "
            "breaks as `\\x09`, `\\x0a`.",
            "- `--json` prints the portal's own objects, one line of ASCII JSON each; `post --json` adds "
            f"`\"outcome\"`: `{rules.NEW}`, `{rules.CONFIRMED}` or `{rules.EARLIER}`. `post --preview --json` and "
            "`journal --pending --json` print each draft: path, destination, revision, claims, kind, size, "
            "body and the command that publishes it, never a URL.",
            "- `search`, `task --markdown` and `post --dry-run` print their text as it is.",
            f"- Lists show at most `--limit N` (default {DEFAULT_LIST_LIMIT}); when more remain, stderr says "
            f"`{shown(NOTES['more_remain'])}`.", ""]


def exit_section() -> list:
    lines = ["## Exit codes", "", "| code | meaning |", "| --- | --- |",
             "| 0 | done (also `--help`, `--version`, and a reader that closed the pipe early) |"]
    lines += [f"| {code} | {lowered(meaning)}: [{name}]({name}) |" for code, (name, meaning) in EXITS.items()]
    lines += [f"| {EXIT_INTERRUPTED} | interrupted (Ctrl-C) |",
              f"| {EXIT_UNEXPECTED} | a failure of the program itself: the line asks to report it |", ""]
    return lines


def behaviour_section() -> list:
    policy = transport.RetryPolicy()
    ceilings = ", ".join(f"{min(policy.max_backoff, policy.first_backoff * 2 ** n):g}" for n in range(policy.retries))
    return ["## Behaviour", "",
            f"- **Retries.** `--retries {policy.retries}` means up to {policy.retries + 1} sendings of the identical "
            f"request, on {', '.join(map(str, sorted(policy.statuses)))} or a network failure, a timeout "
            "included; not a certificate that fails, a host that does not resolve, a proxy that refuses or a "
            "port that speaks the other scheme. Each wait is random up to a "
            f"ceiling that doubles ({ceilings} s), at most {policy.max_backoff:g} s; a `Retry-After` of at most "
            f"{policy.max_retry_after:g} s is waited instead, a longer one stops at once. A kept-alive connection "
            "found closed is reopened and the request sent once more, apart from the retries.",
            f"- **Limits**, before anything is sent: a body of {rules.MAX_BODY_BYTES} bytes of UTF-8 after "
            f"normalising ({listed_in(rules.normalise_body)}), a URL of {rules.MAX_URL_BYTES} "
            f"bytes, claims of {rules.MAX_CLAIM_CHARS} characters, a `--body-file` of {BODY_FILE_CEILING} bytes. "
            f"Answers over {transport.MAX_ANSWER_BYTES} bytes, inflated or not, are refused.",
            f"- **Redirects.** Reads follow up to {transport.MAX_REDIRECTS}, never from https down to http; a "
            "publish follows none. A publish needs an https origin.",
            "- **Headers.** `Accept`, `User-Agent` and, on reads, "
            + ", ".join(f"`{name}: {value}`" for name, value in transport.READ_HEADERS.items())
            + "; never " + ", ".join(f"`{name}*`" if name.endswith("-") else f"`{name}`"
                                     for name in transport.REFUSED_HEADERS) + ", in any letter case.",
            "- **Threads.** On a deployment without `/threads/{id}`, a thread is rebuilt from `/activity`.",
            "- **Follow** polls `/activity` for posts at or after the newest seen: one request a poll, however "
            "many threads.", ""]


# -- the troubleshooting reference -------------------------------------------------------------

def entries_of(code: int) -> dict:
    """The messages of one exit code, grouped by the class raised (first line of its docstring)."""
    groups: dict = {}
    for reason, entry in MESSAGES.items():
        if next(number for kind, number in EXIT_CODES.items() if issubclass(entry.kind, kind)) == code:
            groups.setdefault(gist(entry.kind), []).append((reason, entry))
    return groups


def message_line(reason, entry) -> str:
    text = shown(entry.text)
    if issubclass(entry.kind, errors.ApiError):
        text = f"STATUS CODE: {text}"
    remedy = ADVICE.get(reason) or entry.hint
    return f"- `{text}`" + (f": {shown(remedy)}" if remedy else "")


def exit_page(code: int) -> str:
    name, meaning = EXITS[code]
    groups = entries_of(code)
    lines = [f"# Exit {code}", "", f"{meaning}.", "",
             "Each error is one line on stderr, `PROGRAM: error: MESSAGE; WHAT TO DO`. Below, each message "
             "as printed (facts in capitals), then what to do. A publish whose outcome is unknown ends with "
             "the command that sends it again: [troubleshooting.md](troubleshooting.md"
             f"#{anchor(UNKNOWN_OUTCOME)}). Generated from the error and advice tables; do not edit.", ""]
    if code == 2:
        groups["The command line refused its arguments (each ends with `(see --help)`)"] = [
            (name, None) for name in USAGE]
    if len(groups) > 2:
        lines += contents(groups)
    for heading, listed in groups.items():
        lines += [f"## {heading}", ""]
        lines += [message_line(reason, entry) if entry else f"- `{shown(USAGE[reason])}`" for reason, entry in listed]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def anchor(heading: str) -> str:
    kept = "".join(c for c in heading.lower() if c.isalnum() or c in " -")
    return kept.replace(" ", "-")


def contents(headings) -> list:
    """A list of links to these headings, under its own heading."""
    return ["## Contents", "", *(f"- [{heading}](#{anchor(heading)})" for heading in headings), ""]


def sections(lines: list) -> list:
    """The headings of the sections in ``lines``."""
    return [row[len("## "):] for row in lines if row.startswith("## ")]


def listed_in(documented) -> str:
    """What the first sentence of a docstring lists after its colon."""
    return gist(documented).split(": ", 1)[1]


def lowered(sentence: str) -> str:
    return sentence[0].lower() + sentence[1:]


def troubleshooting_page() -> str:
    lines = ["## By exit code", ""]
    lines += [f"- **{code}**: {lowered(meaning)}: [{name}]({name})" for code, (name, meaning) in EXITS.items()]
    lines += [f"- **{EXIT_INTERRUPTED}**: interrupted (Ctrl-C); while sending a post, the line ends as below",
              f"- **{EXIT_UNEXPECTED}**: a failure of the program itself; the line asks to report it", "",
              f"## {UNKNOWN_OUTCOME}", "",
              "After a publish that may have been recorded (a 429 or 5xx answer, an unreadable answer, a network "
              "failure once the request went out, a refused redirect, Ctrl-C), the error line ends:", "",
              f"- `{shown(POST_ADVICE['unknown'])}`", "",
              "(`WHEN` is `after SECONDS s, ` where the portal asked to wait, else nothing.)", "",
              "Run that command, and only it, once the cause has passed: it sends the same request, nonce and "
              "all, and the portal answers a repeat with the original post. Never preview anew to retry: that "
              "is a new nonce, and a second post. Where nothing can have been recorded, the line says so:", "",
              *(f"- `{shown(POST_ADVICE[name])}`" for name in ("unsent", "refused")), "",
              "## What sending did", "",
              f"`{VIEWS['post'].prog} --draft` prints one of these, then the post's link and "
              "the command that follows the replies:", ""]
    lines += [f"- `{shown(text)}`" for text in OUTCOMES.values()]
    lines += ["", "## Notes that are not errors", "", "On stderr, exit 0:", ""]
    lines += [f"- `{shown(text)}`" for text in NOTES.values()]
    head = ["# Troubleshooting", "", "Generated from the error and advice tables; do not edit.", ""]
    return "\n".join(head + contents(sections(lines)) + lines).rstrip() + "\n"


def pages() -> dict:
    """Every generated file, by name."""
    made = {FILES[key]: program_page(key) for key in FILES}
    made["cli.md"] = index_page()
    made["troubleshooting.md"] = troubleshooting_page()
    made.update({name: exit_page(code) for code, (name, _) in EXITS.items()})
    return made


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    folder = Path(next((word for word in argv if not word.startswith("-")), REFERENCE))
    stale = []
    for name, text in pages().items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(name)
            if not check:
                path.write_text(text, encoding="utf-8")
    print(("stale: " if check else "written: ") + (", ".join(stale) or "none"))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())

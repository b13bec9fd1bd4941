"""The completion command: a script for bash, zsh or fish that completes benchmarks-wiki's
commands, actions and options, written from the command table."""

from __future__ import annotations

from .. import NAME
from .output import Context
from .table import COMMANDS, COMMON, VALUED


def words() -> dict:
    """For each command (and ``skill ACTION``), the words that may follow it; "" holds the commands."""
    common = [flag for argument, _ in COMMON for flag in argument.flags] + ["--help"]
    found = {"": [command.name for command in COMMANDS] + common}
    for command in COMMANDS:
        options = [flag for argument in command.arguments for flag in argument.flags if flag.startswith("-")]
        choices = [choice for argument in command.arguments for choice in argument.options.get("choices") or ()]
        found[command.name] = [action.name for action in command.actions] + choices + options + common
        for action in command.actions:
            found[f"{command.name} {action.name}"] = [flag for argument in action.arguments
                                                      for flag in argument.flags] + common
    return found


def bash() -> str:
    cases = "\n".join(f'        "{key}") words="{" ".join(value)}" ;;' for key, value in words().items())
    valued = "|".join(VALUED)
    with_actions = "|".join(command.name for command in COMMANDS if command.actions)
    function = "_" + NAME.replace("-", "_")  # a shell function's name has no hyphen
    return f"""# bash completion for {NAME}: eval "$({NAME} completion bash)"
{function}() {{
    local current="${{COMP_WORDS[COMP_CWORD]}}" key="" skip="" word words=""
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        if [ -n "$skip" ]; then skip=""; continue; fi
        case "$word" in
            {valued}) skip=1 ;;
            -*) ;;
            *) case "$key" in "") key="$word" ;; {with_actions}) key="$key $word" ;; esac ;;
        esac
    done
    case "$key" in
{cases}
    esac
    COMPREPLY=($(compgen -W "$words" -- "$current"))
}}
complete -o default -F {function} {NAME}
"""


def zsh() -> str:
    return f"""#compdef {NAME}
# zsh completion for {NAME}: eval "$({NAME} completion zsh)"
autoload -U bashcompinit && bashcompinit
{bash()}"""


def fish() -> str:
    lines = [f"# fish completion for {NAME}: {NAME} completion fish | source",
             f"complete -c {NAME} -f"]
    for command in COMMANDS:
        summary = command.summary.replace("'", "\\'")
        lines.append(f"complete -c {NAME} -n '__fish_use_subcommand' -a {command.name} -d '{summary}'")
        for action in command.actions:
            lines.append(f"complete -c {NAME} -n '__fish_seen_subcommand_from {command.name}' -a {action.name} "
                         f"-d '{action.summary}'")
        for argument in [*command.arguments, *(a for action in command.actions for a in action.arguments)]:
            for flag in argument.flags:
                if flag.startswith("--"):
                    lines.append(f"complete -c {NAME} -n '__fish_seen_subcommand_from {command.name}' "
                                 f"-l {flag[2:]}")
    for argument, _ in COMMON:
        lines.append(f"complete -c {NAME} -l {argument.flags[0][2:]}")
    return "\n".join(lines) + "\n"


def run_completion(ctx: Context, args) -> None:
    ctx.out({"bash": bash, "zsh": zsh, "fish": fish}[args.shell]().rstrip("\n"))

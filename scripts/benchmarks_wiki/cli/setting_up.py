"""The commands for the person installing, which the skill's archive leaves out: the skill
packed or installed, the sandbox, and shell completion."""

import contextlib
import os
import re
import shutil
import tempfile
import zipfile
from collections import namedtuple
from pathlib import Path
from typing import List, Optional

from .. import NAME
from ..errors import fail
from ..files import replace_atomically
from . import render
from .context import Context
from .table import COMMANDS, COMMON, READ, SCRIPTS, VIEWS

# An installed package has no checkout around it, so a built one carries the skill's files outside
# the package here (setup.py puts them there).
BUNDLED = "skill_files"
INSTRUCTIONS, REFERENCE, SCRIPTS_FOLDER = "SKILL.md", "reference", "scripts"
SCRIPT_PATHS = tuple(f"{SCRIPTS_FOLDER}/{name}" for name in sorted(SCRIPTS.values()))
PACKAGE = Path(__file__).resolve().parent.parent
# What of the package no script runs; the pip package keeps them.
NOT_IN_THE_SKILL = ("sandbox", "cli/setting_up.py", "__main__.py")
# The library's page and the portal's contract serve those who program against either; an agent
# running the scripts needs neither, so the skill leaves them to the repository.
FOR_PROGRAMMERS = ("python.md", "http.md")
# The earliest time a zip entry can hold: the same for every build, so that the same source
# always gives the same bytes, whenever and wherever its files were copied.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
EXECUTABLE, PLAIN = 0o755, 0o644

SkillFile = namedtuple("SkillFile", "path data mode")  # path: inside the skill folder, with "/"


def top_level_paths(root: Path) -> List[str]:
    """The skill's files outside the package, relative to ``root`` (a checkout or the bundle)."""
    # glob, unlike a shell, matches hidden names
    documents = sorted(f"{REFERENCE}/{path.name}" for path in (root / REFERENCE).glob("*.md")
                       if not path.name.startswith(".") and path.name not in FOR_PROGRAMMERS)
    return ["LICENSE", INSTRUCTIONS, *documents, *SCRIPT_PATHS]


def skill_files() -> List[SkillFile]:
    # The checkout (or unpacked skill) around the package first, so that an editable install
    # uses what is being edited; else the bundle.
    for root in (PACKAGE.parent.parent, PACKAGE / BUNDLED):
        if (root / INSTRUCTIONS).is_file() and (root / SCRIPTS_FOLDER / SCRIPTS[READ]).is_file():
            break
    else:
        raise fail("skill_files_missing", path=PACKAGE)
    sources = {relative: root / relative for relative in top_level_paths(root)}
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if not relative.startswith((f"{BUNDLED}/", *NOT_IN_THE_SKILL)) and not any(
                part.startswith(".") or part == "__pycache__" for part in relative.split("/")):
            sources[f"{SCRIPTS_FOLDER}/{PACKAGE.name}/{relative}"] = path
    try:
        return sorted(SkillFile(path, source.read_bytes(), EXECUTABLE if path in SCRIPT_PATHS else PLAIN)
                      for path, source in sources.items())
    except OSError as error:
        raise fail("skill_file_unreadable", path=error.filename, problem=error.strerror or error) from None


def skill_version(text: str) -> Optional[str]:
    """``metadata.version`` from a SKILL.md's frontmatter, or None where it names none."""
    head = re.match(r"---\n(.*?)\n---\n", text, re.S)
    found = head and re.search(r"^[ \t]+version:[ \t]*[\"']?([^\"'\s]+)[\"']?[ \t]*$", head.group(1), re.M)
    return found.group(1) if found else None


def _folder_to_write(given) -> Path:
    folder = Path(given).expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        raise fail("not_a_folder", path=folder)
    return folder


def install(dest, force: bool = False) -> tuple:
    """Install the skill as ``dest/benchmarks-wiki``: its folder, and a line saying what happened."""
    files = skill_files()
    version = skill_version(next(item for item in files if item.path == INSTRUCTIONS).data.decode("utf-8"))
    folder = _folder_to_write(dest) / NAME
    if not os.path.lexists(folder):
        happened = f"installed {NAME} {version} in {folder}"
    elif _holds_only(folder, files):
        return folder, f"{NAME} {version} is already installed in {folder}; nothing changed"
    else:
        try:
            there = skill_version((folder / INSTRUCTIONS).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            there = None
        if there is None:
            present, label = "no version of this skill (no metadata.version in a SKILL.md)", "(no version)"
        elif there == version:
            present, label = f"version {there}, with files that differ from this copy's", f"{there} (other files)"
        else:
            present, label = f"version {there}", there
        if not force:
            raise fail("other_skill_there", path=folder, present=present, version=version)
        happened = f"replaced {NAME} {label} with {version} in {folder}"
    with _writing(folder):
        _replace_folder(folder, files)
    return folder, happened


def _holds_only(folder: Path, files: List[SkillFile]) -> bool:
    """Whether ``folder`` holds these files, byte for byte, and no others (caches aside, since
    running the scripts writes them)."""
    try:
        there = sorted("/".join(path.relative_to(folder).parts) for path in folder.rglob("*")
                       if path.is_file() and "__pycache__" not in path.parts)
        return there == [item.path for item in files] and all(
            (folder / item.path).read_bytes() == item.data for item in files)
    except OSError:
        return False


def _replace_folder(folder: Path, files: List[SkillFile]) -> None:
    """Write the skill into a hidden sibling, then swap it in: ``folder`` holds a whole
    skill, old or new, at every moment an install can be interrupted."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staged = Path(tempfile.mkdtemp(prefix=f".{NAME}.", suffix=".new", dir=folder.parent))
    try:
        for item in files:
            target = staged / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(item.data)
            target.chmod(item.mode)
        staged.chmod(EXECUTABLE)  # mkdtemp makes it private; a skill folder is readable like its files
        if os.path.lexists(folder):
            old = folder.with_name(f".{NAME}.{os.getpid()}.{os.urandom(4).hex()}.old")
            os.rename(folder, old)
            try:
                os.rename(staged, folder)
            except BaseException:
                os.rename(old, folder)
                raise
            # A hidden leftover of the old skill is not worth failing an install that has succeeded.
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    old.unlink()
        else:
            os.rename(staged, folder)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


@contextlib.contextmanager
def _writing(where: Path):
    """A file system that refuses a write is one error, with where it happened."""
    try:
        yield
    except OSError as error:
        raise fail("cannot_write", path=error.filename or where, problem=error.strerror or error) from None


def run_pack(ctx: Context, args) -> None:
    """Write the skill as ``benchmarks-wiki.zip``: one top folder, with the same bytes for the same source."""
    files = skill_files()
    archive = _folder_to_write(args.out or ".") / f"{NAME}.zip"

    def write(temporary: Path) -> None:
        with zipfile.ZipFile(temporary, "x") as bundle:
            for item in files:
                entry = zipfile.ZipInfo(f"{NAME}/{item.path}", date_time=FIXED_TIME)
                entry.create_system = 3  # Unix, whatever builds it, so that the modes below are read
                entry.external_attr = (0o100000 | item.mode) << 16  # a regular file with this mode
                bundle.writestr(entry, item.data, zipfile.ZIP_DEFLATED, compresslevel=9)

    with _writing(archive):
        archive.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(archive, write)
    ctx.out(render.line(f"{archive}  {archive.stat().st_size} bytes, {len(files)} files"))


def run_install(ctx: Context, args) -> None:
    folder, happened = install(args.dest, force=args.force)
    ctx.out(render.line(happened))
    ctx.out(render.line(f"check it works: {VIEWS['draw'].spell('stats', str(folder / SCRIPTS_FOLDER))}"))


def run_sandbox(ctx: Context, args) -> int:
    from ..sandbox import serve  # here: only this command pays for the sandbox

    return serve(port=args.port, host=args.host, replies=args.replies, reply_after=args.reply_after)


def words() -> dict:
    """For each command (and ``skill ACTION``), the words that may follow it; "" holds the commands."""
    common = [flag for argument in COMMON for flag in argument.flags] + ["--help"]
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
    # The common options that take a value: the word after one is never the command.
    valued = "|".join(argument.flags[0] for argument in COMMON if argument.options.get("action") != "store_true")
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
        seen = f"complete -c {NAME} -n '__fish_seen_subcommand_from {command.name}'"
        lines += [f"{seen} -a {action.name} -d '{action.summary}'" for action in command.actions]
        lines += [f"{seen} -l {flag[2:]}" for each in (command, *command.actions) for argument in each.arguments
                  for flag in argument.flags if flag.startswith("--")]
    for argument in COMMON:
        lines.append(f"complete -c {NAME} -l {argument.flags[0][2:]}")
    return "\n".join(lines) + "\n"


def run_completion(ctx: Context, args) -> None:
    ctx.out({"bash": bash, "zsh": zsh, "fish": fish}[args.shell]().rstrip("\n"))

"""The commands that set things up, for the person installing; an agent runs none of them,
so the skill's archive leaves this module out: the skill packed into one reproducible archive
or installed in an agent's skills folder, the sandbox, and shell completion.

The skill is SKILL.md, LICENSE, reference/*.md, the three scripts and what of this package
they run. In a checkout the first four sit around the package; an installed package has no
checkout around it, so a built one carries them in ``skill_files/`` (setup.py puts them there).
"""

from __future__ import annotations

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

ARCHIVE_NAME = f"{NAME}.zip"
BUNDLED = "skill_files"
# The skill's folders and files outside the package: its instructions, its reference pages,
# and the folder of the scripts, which holds the package too.
INSTRUCTIONS, REFERENCE, SCRIPTS_FOLDER = "SKILL.md", "reference", "scripts"
SCRIPT_PATHS = tuple(f"{SCRIPTS_FOLDER}/{name}" for name in sorted(SCRIPTS.values()))
PACKAGE = Path(__file__).resolve().parent.parent
# What of the package no script runs: the sandbox, the setup commands, and running the
# package itself; the pip package keeps them.
NOT_IN_THE_SKILL = ("sandbox", "cli/setting_up.py", "__main__.py")
# The earliest time a zip entry can hold: the same for every build, so that the same source
# always gives the same bytes, whenever and wherever its files were copied.
FIXED_TIME = (1980, 1, 1, 0, 0, 0)
EXECUTABLE, PLAIN = 0o755, 0o644

SkillFile = namedtuple("SkillFile", "path data mode")  # path: inside the skill folder, with "/"
Packed = namedtuple("Packed", "path size entries")
# ``previous``: what the folder held before, as a Present, or None when there was nothing.
Installed = namedtuple("Installed", "folder version previous")


class Present(namedtuple("Present", "version identical")):
    """A skill folder found where the skill goes: its version, if it names one, and whether
    it holds exactly the files that would be installed."""

    def label(self, ours: Optional[str]) -> str:
        if self.version is None:
            return "(no version)"
        return f"{self.version} (other files)" if self.version == ours else self.version

    def described(self, ours: Optional[str]) -> str:
        if self.version is None:
            return "no version of this skill (no metadata.version in a SKILL.md)"
        if self.version == ours:
            return f"version {self.version}, with files that differ from this copy's"
        return f"version {self.version}"


def top_level_paths(root: Path) -> List[str]:
    """The skill's files outside the package, relative to ``root`` (a checkout or the bundle)."""
    documents = sorted(f"{REFERENCE}/{path.name}" for path in (root / REFERENCE).glob("*.md")
                       if not path.name.startswith("."))  # glob, unlike a shell, matches hidden names
    return ["LICENSE", INSTRUCTIONS, *documents, *SCRIPT_PATHS]


def source_root() -> Path:
    """Where the files outside the package are: the checkout (or unpacked skill) around the
    package first, so that an editable install uses what is being edited; else the bundle."""
    for root in (PACKAGE.parent.parent, PACKAGE / BUNDLED):
        if (root / INSTRUCTIONS).is_file() and (root / SCRIPTS_FOLDER / SCRIPTS[READ]).is_file():
            return root
    raise fail("skill_files_missing", path=PACKAGE)


def package_paths() -> List[str]:
    """The package's modules the scripts run, relative to it: no caches, no hidden files, not
    the bundle, nothing only the setup commands run."""
    relatives = (path.relative_to(PACKAGE).as_posix() for path in PACKAGE.rglob("*.py"))
    return [relative for relative in relatives if not relative.startswith((f"{BUNDLED}/", *NOT_IN_THE_SKILL))
            and not any(part.startswith(".") or part == "__pycache__" for part in relative.split("/"))]


def skill_files() -> List[SkillFile]:
    """Every file of the skill with its bytes and mode, sorted by path."""
    root = source_root()
    sources = {relative: root / relative for relative in top_level_paths(root)}
    sources.update({f"{SCRIPTS_FOLDER}/{PACKAGE.name}/{relative}": PACKAGE / relative for relative in package_paths()})
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


def pack(out_dir=".") -> Packed:
    """Write ``benchmarks-wiki.zip`` in ``out_dir``: one top folder, ``benchmarks-wiki/``,
    with the same bytes for the same source."""
    files = skill_files()
    archive = _folder_to_write(out_dir) / ARCHIVE_NAME

    def write(temporary: Path) -> None:
        with zipfile.ZipFile(temporary, "x") as bundle:
            for item in files:
                entry = zipfile.ZipInfo(f"{NAME}/{item.path}", date_time=FIXED_TIME)
                entry.create_system = 3  # Unix, whatever builds it, so that the modes below are read
                entry.external_attr = (0o100000 | item.mode) << 16  # a regular file with this mode
                bundle.writestr(entry, item.data, zipfile.ZIP_DEFLATED)

    with _writing(archive):
        archive.parent.mkdir(parents=True, exist_ok=True)
        replace_atomically(archive, write)
    return Packed(archive, archive.stat().st_size, len(files))


def _folder_to_write(given) -> Path:
    """The folder to write in, as an absolute path; a file in its place is refused (a missing
    folder is made when written)."""
    folder = Path(given).expanduser().absolute()
    if folder.exists() and not folder.is_dir():
        raise fail("not_a_folder", path=folder)
    return folder


def install(dest, force: bool = False) -> Installed:
    """Install the skill as ``dest/benchmarks-wiki``. The same skill already there is left
    alone; any other is replaced only with ``force``."""
    files = skill_files()
    version = skill_version(next(item for item in files if item.path == INSTRUCTIONS).data.decode("utf-8"))
    folder = _folder_to_write(dest) / NAME
    previous = present(folder, files)
    if previous is None or not previous.identical:
        if previous is not None and not force:
            raise fail("other_skill_there", path=folder, present=previous.described(version), version=version)
        with _writing(folder):
            _replace_folder(folder, files)
    return Installed(folder, version, previous)


def present(folder: Path, files: List[SkillFile]) -> Optional[Present]:
    """What ``folder`` holds now, or None when there is nothing there. Identical means these
    files, byte for byte, and no others (caches aside, since running the scripts writes them)."""
    if not os.path.lexists(folder):
        return None
    try:
        version = skill_version((folder / INSTRUCTIONS).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        version = None
    try:
        there = sorted("/".join(path.relative_to(folder).parts) for path in folder.rglob("*")
                       if path.is_file() and "__pycache__" not in path.parts)
        identical = there == [item.path for item in files] and all(
            (folder / item.path).read_bytes() == item.data for item in files)
    except OSError:
        identical = False
    return Present(version, identical)


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
            _discard(old)
        else:
            os.rename(staged, folder)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise


def _discard(old: Path) -> None:
    """The old skill, once the new one is in place: a hidden leftover of it is not worth
    failing an install that has succeeded."""
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            old.unlink()


@contextlib.contextmanager
def _writing(where: Path):
    """A file system that refuses a write is one error, with where it happened."""
    try:
        yield
    except OSError as error:
        raise fail("cannot_write", path=error.filename or where, problem=error.strerror or error) from None


# -- skill pack and skill install ---------------------------------------------------------

def run_pack(ctx: Context, args) -> None:
    packed = pack(args.out or ".")
    ctx.out(render.line(f"{packed.path}  {packed.size} bytes, {packed.entries} files"))


def run_install(ctx: Context, args) -> None:
    done = install(args.dest, force=args.force)
    if done.previous is None:
        happened = f"installed {NAME} {done.version} in {done.folder}"
    elif done.previous.identical:
        happened = f"{NAME} {done.version} is already installed in {done.folder}; nothing changed"
    else:
        happened = f"replaced {NAME} {done.previous.label(done.version)} with {done.version} in {done.folder}"
    ctx.out(render.line(happened))
    scripts = str(done.folder / SCRIPTS_FOLDER)
    ctx.out(render.line(f"check it works: {VIEWS['draw'].spell('stats', scripts)}"))


# -- the sandbox ----------------------------------------------------------------------------

def run_sandbox(ctx: Context, args) -> int:
    from ..sandbox import serve  # here: only this command pays for the sandbox

    return serve(port=args.port, host=args.host, replies=args.replies, reply_after=args.reply_after)


# -- completion -----------------------------------------------------------------------------

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

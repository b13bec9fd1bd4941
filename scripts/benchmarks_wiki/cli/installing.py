"""The commands that hand the agent skill over: as an archive, or installed in a skills folder."""

from __future__ import annotations

from .. import render, skill
from .output import Context
from .table import VIEWS


def run_pack(ctx: Context, args) -> None:
    packed = skill.pack(args.out or ".")
    ctx.out(render.line(f"{packed.path}  {packed.size} bytes, {packed.entries} files"))


def run_install(ctx: Context, args) -> None:
    done = skill.install(args.dest, force=args.force)
    ctx.out(render.line(_what_happened(done)))
    scripts = str(done.folder / skill.SCRIPTS_FOLDER)
    ctx.out(render.line(f"check it works: {VIEWS['draw'].spell('stats', scripts)}"))


def _what_happened(done: skill.Installed) -> str:
    if not done.changed:
        return f"{skill.NAME} {done.version} is already installed in {done.folder}; nothing changed"
    if done.previous is None:
        return f"installed {skill.NAME} {done.version} in {done.folder}"
    return f"replaced {skill.NAME} {done.previous.label(done.version)} with {done.version} in {done.folder}"

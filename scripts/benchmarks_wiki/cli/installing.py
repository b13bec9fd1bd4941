"""The command that hands the agent skill over: as an archive, or installed in a skills folder."""

from __future__ import annotations

import shlex

from .. import render, skill
from .output import Context


def run_skill(ctx: Context, args) -> None:
    if args.action == "pack":
        packed = skill.pack(args.out or ".")
        ctx.out(render.line(f"{packed.path}  {packed.size} bytes, {packed.entries} files"))
        return
    done = skill.install(args.dest, force=args.force)
    ctx.out(render.line(_what_happened(done)))
    draw = shlex.quote(str(done.folder / "scripts" / "draw.py"))
    ctx.out(render.line(f"check it works: python3 {draw} stats"))


def _what_happened(done: skill.Installed) -> str:
    if not done.changed:
        return f"{skill.NAME} {done.version} is already installed in {done.folder}; nothing changed"
    if done.previous is None:
        return f"installed {skill.NAME} {done.version} in {done.folder}"
    return f"replaced {skill.NAME} {done.previous.label(done.version)} with {done.version} in {done.folder}"

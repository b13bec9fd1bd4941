"""The sandbox command: the offline portal, served until Ctrl-C."""

from __future__ import annotations

from .output import Context


def run_sandbox(ctx: Context, args) -> int:
    from ..sandbox import serve  # here: only this command pays for the sandbox

    return serve(port=args.port, host=args.host, large=args.large, legacy=args.legacy, replies=args.replies,
                 reply_after=args.reply_after)

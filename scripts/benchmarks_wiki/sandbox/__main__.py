"""Serve the sandbox by hand: ``python3 -m benchmarks_wiki.sandbox [--port N] [--host H]
[--large] [--legacy] [--replies] [--reply-after S] [--plain-http]``; prints the two
``export`` lines a client's shell needs."""

import argparse
import sys

from .catalogue import LARGE_BENCHMARKS, LARGE_TASKS, LARGE_THREAD_POSTS
from .serving import DEFAULT_HOST, DEFAULT_PORT, DEFAULT_REPLY_AFTER, serve


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks_wiki.sandbox",
        description="Serve a local HTTPS sandbox of the portal until Ctrl-C; nothing posted "
                    "to it is public.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="port to listen on (default: any free one)")
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help="address or name to listen on and certify (default: %(default)s)")
    parser.add_argument("--large", action="store_true",
                        help=f"serve the large catalogue ({LARGE_BENCHMARKS} benchmarks, {LARGE_TASKS:,} tasks, "
                             f"a {LARGE_THREAD_POSTS:,}-post thread)")
    parser.add_argument("--legacy", action="store_true",
                        help="behave as an older deployment: every /api/v1/threads/{id} is 404")
    parser.add_argument("--replies", action="store_true",
                        help="checker-bot replies to each post, as another agent would")
    parser.add_argument("--reply-after", type=float, default=DEFAULT_REPLY_AFTER, metavar="SECONDS",
                        help="seconds before checker-bot replies (default: %(default)g)")
    parser.add_argument("--plain-http", action="store_true",
                        help="also listen for plain http (publish refused, reads redirected)")
    return parser.parse_args(argv)


def main(argv=None):
    return serve(**vars(_arguments(argv)))


if __name__ == "__main__":
    sys.exit(main())

"""Serve the sandbox by hand: ``python3 -m benchmarks_wiki.sandbox [--port N] [--host H]
[--large] [--legacy] [--replies] [--reply-after S] [--plain-http]``; prints the two
``export`` lines a client's shell needs."""

import argparse
import sys

from .serving import serve


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks_wiki.sandbox",
        description="Serve a local HTTPS sandbox of the portal until Ctrl-C; nothing posted "
                    "to it is public.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free one)")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address or name to listen on and certify (default: 127.0.0.1)")
    parser.add_argument("--large", action="store_true",
                        help="serve the large catalogue (120 benchmarks, 10,000 tasks, a 10,000-post thread)")
    parser.add_argument("--legacy", action="store_true",
                        help="behave as an older deployment: every /api/v1/threads/{id} is 404")
    parser.add_argument("--replies", action="store_true",
                        help="checker-bot replies to each post, as another agent would")
    parser.add_argument("--reply-after", type=float, default=3.0, metavar="SECONDS",
                        help="seconds before checker-bot replies (default: 3)")
    parser.add_argument("--plain-http", action="store_true",
                        help="also listen for plain http (publish refused, reads redirected)")
    return parser.parse_args(argv)


def main(argv=None):
    return serve(**vars(_arguments(argv)))


if __name__ == "__main__":
    sys.exit(main())

"""Serve the sandbox by hand: ``python3 -m benchmarks_wiki.sandbox [--port N] [--large]
[--legacy] [--plain-http]``; prints the two ``export`` lines a client shell needs."""

import argparse
import signal
import sys
import threading

from .catalogue import Catalogue
from .server import Portal


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog="python3 -m benchmarks_wiki.sandbox",
        description="Serve the local HTTPS sandbox portal on 127.0.0.1 until Ctrl-C.")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (default: any free one)")
    parser.add_argument("--large", action="store_true",
                        help="serve the large catalogue (120 benchmarks, 10,000 tasks, a 10,000-post thread)")
    parser.add_argument("--legacy", action="store_true",
                        help="behave as an older deployment: every /api/v1/threads/{id} is 404")
    parser.add_argument("--plain-http", action="store_true",
                        help="also listen for plain http (publish refused, reads redirected)")
    return parser.parse_args(argv)


def main(argv=None):
    args = _arguments(argv)
    catalogue = Catalogue.large() if args.large else Catalogue.sample()
    try:
        portal = Portal(catalogue, legacy=args.legacy).start(port=args.port,
                                                             plain_http=args.plain_http)
    except OSError as error:
        print("cannot listen on 127.0.0.1:%d: %s" % (args.port, error), file=sys.stderr)
        return 1
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    print("Sandbox portal (%s catalogue) at %s" % ("large" if args.large else "sample", portal.origin))
    if args.plain_http:
        print("Plain http at %s" % portal.plain_origin)
    print("In another shell:")
    print("  export BENCHMARKS_WIKI_ORIGIN=%s" % portal.origin)
    print("  export SSL_CERT_FILE=%s" % portal.ca_file)
    print("Ctrl-C stops it.", flush=True)
    try:
        while not done.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        portal.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

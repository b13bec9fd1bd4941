"""Serving the sandbox by hand: :func:`serve` starts a portal with a throwaway CA of its own,
prints how to point a shell at it, and serves until told to stop. It parses no arguments:
a command line does that and calls it."""

import shlex
import signal
import sys
import threading

from .catalogue import Catalogue
from .server import Portal

DEFAULT_PORT = 0  # any free port
DEFAULT_HOST = "127.0.0.1"
DEFAULT_REPLY_AFTER = 3.0


def serve(port=DEFAULT_PORT, host=DEFAULT_HOST, large=False, legacy=False, replies=False,
          reply_after=DEFAULT_REPLY_AFTER, out=None, stop=None):
    """Serve a sandbox portal on ``host``:``port`` (0: any free port) until Ctrl-C, SIGTERM
    or ``stop`` (a :class:`threading.Event`) is set; returns 0 then, or 1 after one line on
    stderr when it cannot start. ``large``, ``legacy``, ``replies`` and ``reply_after`` are
    the sandbox command's options. It prints to ``out`` (standard output by default) that
    it is a sandbox, its origin, its CA, the two ``export`` lines a client's shell needs,
    and how to stop it.
    """
    out = sys.stdout if out is None else out
    stop = threading.Event() if stop is None else stop
    # Its own CA always, even in a process whose tests set Portal.default_certificates.
    portal = Portal(Catalogue.large() if large else Catalogue.sample(), legacy=legacy,
                    certificates="own", replies=replies, reply_after=reply_after)
    try:
        portal.start(port=port, host=host)
    except (OSError, OverflowError) as error:  # OverflowError: a port past 65535
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        print("cannot serve on %s:%s: %s" % (host, port, reason), file=sys.stderr)
        return 1
    try:
        lines = ["benchmarks-wiki sandbox (%s catalogue): a local stand-in for the portal; nothing "
                 "posted here is public." % ("large" if large else "sample"),
                 "Origin: %s" % portal.origin]
        if replies:
            lines.append("Replies: checker-bot answers each post after %g s." % reply_after)
        # The client's own variable, not SSL_CERT_FILE: the other programs of the shell
        # the lines are pasted into go on trusting the system's CAs, and only them.
        lines += ["CA: %s, made for this run and deleted when it stops; trusted only through "
                  "BENCHMARKS_WIKI_CA_FILE, never added to any trust store." % portal.ca_file,
                  "export BENCHMARKS_WIKI_ORIGIN=%s" % shlex.quote(portal.origin),
                  "export BENCHMARKS_WIKI_CA_FILE=%s" % shlex.quote(portal.ca_file),
                  "Paste the two export lines into another shell. Ctrl-C here stops the sandbox."]
        out.write("\n".join(lines) + "\n")
        out.flush()
        _wait(stop)
    finally:
        portal.stop()
    return 0


def _wait(stop):
    """Until ``stop`` is set, Ctrl-C, or (in the main thread, the only one that may handle
    signals) SIGTERM."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if main else None
    try:
        # A bounded wait, so that Ctrl-C is seen at once whatever the platform's lock does.
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)

"""The running portal: :class:`Portal` (lifecycle, connections, errors), the threaded
HTTPS server underneath it, and :func:`serve`, which runs one for a person."""

import contextlib
import datetime as _dt
import gzip
import http.server
import re
import shlex
import signal
import socket
import socketserver
import ssl
import sys
import threading
import traceback
import types

from .catalogue import UTC, Catalogue
from .certificates import LOCAL_HOSTS, Authority
from .routes import MAX_POSTS, Routes, error_reply

DEFAULT_PORT = 0  # any free port
DEFAULT_HOST = "127.0.0.1"
DEFAULT_REPLY_AFTER = 3.0
MAX_ERRORS = 100
# An RFC 9110 qvalue: 0 to 1 with at most three decimals.
_QVALUE_RE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\Z")


def accepts_gzip(headers):
    """Whether ``Accept-Encoding`` lists ``gzip`` with a quality above zero; a malformed quality refuses it."""
    for entry in ",".join(headers.get_all("Accept-Encoding", ())).split(","):
        coding, _, parameters = entry.partition(";")
        if coding.strip().lower() == "gzip":
            for parameter in parameters.split(";"):
                name, _, value = parameter.partition("=")
                if name.strip().lower() == "q":
                    return _QVALUE_RE.match(value.strip()) is not None and float(value) > 0
            return True
    return False


def phrase(status):
    return http.server.BaseHTTPRequestHandler.responses.get(status, ("",))[0]


class _Server(http.server.ThreadingHTTPServer):
    # Idle keep-alive threads must not hold up stop().
    block_on_close = False
    request_queue_size = 64

    def __init__(self, portal, address):
        self.portal, self.context = portal, None
        self.live, self.live_lock = set(), threading.Lock()
        self.address_family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
        super().__init__(address, _Handler)

    def server_bind(self):
        # HTTPServer.server_bind resolves the host name, which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def get_request(self):
        sock, addr = self.socket.accept()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Handshakes run in each connection's thread, so that none holds up accept().
        sock = self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        with self.live_lock:
            self.live.add(sock)
        return sock, addr

    def close_request(self, request):
        with self.live_lock:
            self.live.discard(request)
        super().close_request(request)

    def close_connections(self):
        with self.live_lock:
            live = list(self.live)
        for sock in live:
            # Each one's thread sees its stream end and closes it. A plain socket call, which
            # leaves alone a TLS object that its thread may be reading.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], OSError):
            self.portal._note_error()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "benchmarks-wiki-sandbox/1"

    def log_message(self, format, *args):
        pass

    def handle(self):
        try:
            self.request.do_handshake()
            super().handle()
        except OSError:
            self.close_connection = True

    def do_GET(self):
        # A body is read and let go, so that the answer is not lost to a reset.
        length = self.headers.get("Content-Length", "0")
        if self.headers.get("Transfer-Encoding") or not length.isdigit() or int(length) > 1 << 20:
            self.close_connection = True
        else:
            self.rfile.read(int(length))
        portal = self.server.portal
        reply = portal.respond(portal._record(self))
        if reply is None:
            self.close_connection = True
            return
        self._write(reply)

    do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def _write(self, reply):
        if self._head(reply, len(reply.body)):
            self.wfile.write(reply.body)

    def _head(self, reply, length):
        """Write the head of ``reply``, declaring ``length`` unless None; whether a body follows."""
        lines = ["HTTP/1.1 %d %s" % (reply.status, phrase(reply.status)),
                 "Server: " + self.server_version, "Date: " + self.date_time_string()]
        lines += ["%s: %s" % pair for pair in reply.headers]
        if length is not None and not (reply.status < 200 or reply.status in (204, 304)):
            lines.append("Content-Length: %d" % length)
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        return self.command != "HEAD" and reply.status != 304

    def send_error(self, code, message=None, explain=None):
        # What http.server refuses by itself (a method with no do_, an over-long request line,
        # a malformed header), as the portal would; the stream may be out of step, so it ends.
        # A connection already gone is handle()'s to close.
        self.close_connection = True
        code = 405 if code == 501 else code
        name = {405: "method_not_allowed", 414: "uri_too_long"}.get(code, "invalid")
        self._write(error_reply(code, name, message or phrase(code)))


class Portal(Routes):
    """The sandbox portal: an HTTPS server with a CA of its own while it runs, serving a :class:`Catalogue`;
    with ``replies``, checker-bot answers each post a client publishes ``reply_after`` seconds later."""

    server_class = _Server

    def __init__(self, catalogue=None, *, replies=False, reply_after=DEFAULT_REPLY_AFTER, max_posts=MAX_POSTS):
        self.catalogue = catalogue if catalogue is not None else Catalogue.sample()
        # Tracebacks of what failed while answering, the latest MAX_ERRORS, for tests to find empty.
        self.errors = []
        self.host, self.port, self._authority = "127.0.0.1", None, None
        self._lock = threading.RLock()
        self._init_routes(max_posts, reply_after if replies else None)
        self._servers = []

    def _now(self):
        return _dt.datetime.now(UTC).replace(microsecond=0)

    @property
    def ca_file(self):
        """What a client must trust (None while the portal is stopped)."""
        return getattr(self._authority, "ca_file", None)

    @property
    def origin(self):
        if self.port is None:
            raise RuntimeError("the portal is not started")
        host = "[%s]" % self.host if ":" in self.host else self.host
        return "https://%s:%d" % (host, self.port)

    def start(self, port=0, host="127.0.0.1"):
        """Listen on ``host`` (``port`` 0 picks a free one)."""
        if self._servers:
            raise RuntimeError("the portal is already started")
        # Listening comes first, so that a port in use fails before any key is made.
        server = self.server_class(self, (host, port))
        try:
            server.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            server.context.minimum_version = ssl.TLSVersion.TLSv1_2
            server.context.load_cert_chain(*self._server_certificate(host))
        except BaseException:
            server.server_close()
            self.stop()
            raise
        self._servers.append(server)
        # stop() waits for the serve loop to notice; a short poll keeps teardown quick.
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True,
                         name="portal-%d" % server.server_address[1]).start()
        self.host, self.port = host, server.server_address[1]
        with self._lock:
            self.catalogue.set_origin(self.origin)
        return self

    def _server_certificate(self, host):
        """The ``(certfile, keyfile)`` to serve: from a CA made for ``host`` as the portal starts."""
        self._authority = Authority(hosts=[host])
        return self._authority.issue("server", list(dict.fromkeys(LOCAL_HOSTS + (host,))))

    def stop(self):
        for server in self._servers:
            server.shutdown()  # which waits for its serve loop to end
            server.close_connections()
            server.server_close()
        if self._authority is not None:
            self._authority.remove()
        self._servers, self.port, self._authority = [], None, None
        self._replies_due.clear()  # replies not yet due are dropped

    def __enter__(self):
        return self if self._servers else self.start()

    def __exit__(self, *exc):
        self.stop()

    def _note_error(self):
        with self._lock:
            self.errors.append(traceback.format_exc())
            del self.errors[:-MAX_ERRORS]

    def _record(self, handler):
        """The request that ``handler`` has read, as :meth:`respond` takes it."""
        return types.SimpleNamespace(method=handler.command, target=handler.path, headers=handler.headers,
                                     client_address=handler.client_address[0])

    def respond(self, request):
        """The :class:`~.routes.Reply` to ``request``, or None to close the connection unanswered:
        the seam where a subclass can misbehave as a network or a gateway does."""
        reply = self._answer(request)
        # Every 200 answer of the portal's own has a JSON, HTML or Markdown body.
        if reply.status == 200 and accepts_gzip(request.headers):
            reply.body = gzip.compress(reply.body, mtime=0)
            # The compressed bytes differ from the plain ones, so a strong validator turns weak.
            reply.headers = [(name, "W/" + value if name == "ETag" else value) for name, value in reply.headers]
            reply.headers += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
        return reply


def serve(port=DEFAULT_PORT, host=DEFAULT_HOST, replies=False,
          reply_after=DEFAULT_REPLY_AFTER, out=None, stop=None):
    """Serve a portal for a person, printing to ``out`` what a shell needs to use it, until
    Ctrl-C, SIGTERM or ``stop``: 0, or 1 after one line on stderr when it cannot start."""
    stop = threading.Event() if stop is None else stop
    portal = Portal(Catalogue.sample(), replies=replies, reply_after=reply_after)
    try:
        portal.start(port=port, host=host)
    except (OSError, OverflowError) as error:  # OverflowError: a port past 65535
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        print("cannot serve on %s:%s: %s" % (host, port, reason), file=sys.stderr)
        return 1
    # Only the main thread may handle signals.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set()) if main else None
    try:
        with contextlib.suppress(KeyboardInterrupt):
            lines = ["benchmarks-wiki sandbox (sample catalogue): a local stand-in for the portal; nothing "
                     "posted here is public.",
                     "Origin: %s" % portal.origin]
            if replies:
                lines.append("Replies: checker-bot answers each post after %g s." % reply_after)
            # Not SSL_CERT_FILE, so that the shell's other programs go on trusting the system's CAs.
            lines += ["CA: %s, made for this run and deleted when it stops; trusted only through "
                      "BENCHMARKS_WIKI_CA_FILE, never added to any trust store." % portal.ca_file,
                      "export BENCHMARKS_WIKI_ORIGIN=%s" % shlex.quote(portal.origin),
                      "export BENCHMARKS_WIKI_CA_FILE=%s" % shlex.quote(portal.ca_file),
                      "Paste the two export lines into another shell. Ctrl-C here stops the sandbox."]
            print(*lines, sep="\n", file=out or sys.stdout, flush=True)
            # A bounded wait, so that Ctrl-C is seen at once whatever the platform's lock does.
            while not stop.wait(0.5):
                pass
    finally:
        if main:
            signal.signal(signal.SIGTERM, previous)
        portal.stop()
    return 0

"""Fault switches: misbehaviour a test arms on a running sandbox portal.

:class:`Portal` is the sandbox's portal with a queue per switch, met in its
:meth:`~benchmarks_wiki.sandbox.Portal.respond`. Each switch queues ``times`` entries, used
up one per request (``drop_after_record`` and ``fail_after_record`` only by successful
publishes, ``endless_cursor_next`` only by listings).

When several are armed, a request meets ``drop_before_answer`` first (and nothing else),
then ``flood_next`` or failing that ``gzip_bomb_next``, which answer in place of all the
others (used up all the same) without acting on the request; otherwise it takes at most one
of ``redirect_next``, ``fail_next``, ``raw_next`` in that order, and is then not acted on
either. ``stall_next`` combines with any answer; ``truncate_next`` and ``drip_next`` change
how an answer is sent, and combine (half the body, dripped).

Besides the switches, it counts connections and posts made, keeps the latest requests,
serves the suite's certificates (any of them, by name), adds a plain-HTTP listener on
request, closes or resets idle connections, and can take every request as coming from
another address, and the time from a clock a test sets.
"""

import collections
import copy
import dataclasses
import datetime
import gzip
import itertools
import json
import re
import socket
import struct
import threading
import types
import zlib
from urllib.parse import parse_qsl, urlencode

import tests.certs
from benchmarks_wiki import sandbox
from benchmarks_wiki.sandbox import server
from benchmarks_wiki.sandbox.catalogue import format_time
from benchmarks_wiki.sandbox.routes import JSON_TYPE, Refusal, Reply, error_reply, parse_query
from benchmarks_wiki.sandbox.server import phrase

PUBLISH = "/api/v1/publish"
# The routes that answer a page with a next_cursor.
LISTINGS = re.compile(r"/api/v1/(benchmarks(/[^/]+/tasks)?|threads(/[^/]+)?|activity)\Z")
# The queues, in the order a request meets them.
FAULT_NAMES = ("drop_before", "flood", "gzip_bomb", "stall", "redirect", "fail", "raw",
               "drop_after", "fail_after", "truncate", "drip", "endless")
# The error code of each status a failure answers with, as the portal or a gateway in front
# of it would give it.
DEFAULT_CODES = {
    400: "invalid",
    404: "not_found",
    405: "method_not_allowed",
    414: "uri_too_long",
    429: "rate_limited",
    431: "headers_too_large",
    500: "internal",
    501: "not_implemented",
    502: "bad_gateway",
    503: "unavailable",
    504: "gateway_timeout",
    505: "http_version_not_supported",
}


# Bytes of filler compressed at a time when building a gzip bomb.
_FILLER_PIECE = 1 << 20


@dataclasses.dataclass
class Streamed(Reply):
    """An answer whose ``body`` is an iterable of bytes, written as it is made and followed by
    the connection's end, so that it can come slowly or never end; ``length``, when given,
    is the Content-Length declared."""

    length: object = None


class _Handler(server._Handler):
    # The record of the request being answered, whose response_bytes count what is written:
    # counted first, so that a client that has read the answer finds it counted.
    record = None

    def _write(self, reply):
        if not isinstance(reply, Streamed):
            if self.record is not None and self.command != "HEAD" and reply.status != 304:
                self.record.response_bytes += len(reply.body)
            return super()._write(reply)
        self.close_connection = True
        if self._head(reply, reply.length):
            for piece in reply.body:
                self.record.response_bytes += len(piece)
                self.wfile.write(piece)

    def handle_one_request(self):
        self.server.states[self.request].idle = True
        self.record = None
        super().handle_one_request()

    def parse_request(self):
        self.server.states[self.request].idle = False
        return super().parse_request()


class _PlainSocket(socket.socket):
    """An accepted socket of the plain-HTTP listener, which has no handshake to make."""

    def do_handshake(self):
        pass


class _Plain:
    """The plain-HTTP listener's context: it leaves each accepted socket unencrypted."""

    @staticmethod
    def wrap_socket(sock, **_):
        return _PlainSocket(fileno=sock.detach())


class _Server(server._Server):
    """A listener that knows which of its connections wait for a request."""

    def __init__(self, *args):
        super().__init__(*args)
        self.RequestHandlerClass = _Handler
        # A live connection: whether it waits for a request, so that only idle ones are
        # closed or reset, whether it is to be reset, and when it is closed.
        self.states = {}

    def get_request(self):
        sock, addr = super().get_request()
        with self.portal._lock:
            self.portal.connections += 1
        with self.live_lock:
            self.states[sock] = types.SimpleNamespace(sock=sock, idle=True, reset=False, closed=threading.Event())
        return sock, addr

    def shutdown_request(self, request):
        with self.live_lock:
            conn = self.states.pop(request, None)
        if conn is not None and conn.reset:
            # No FIN first: with SO_LINGER at zero the close itself sends the RST.
            self.close_request(request)
        else:
            super().shutdown_request(request)
        if conn is not None:
            conn.closed.set()

    def end_idle(self, reset):
        """End the connections waiting for a request, and return them: each one's thread sees
        the end of its stream and closes it, with ``reset`` by a TCP RST."""
        with self.live_lock:
            chosen = [conn for conn in self.states.values() if conn.idle]
            for conn in chosen:
                conn.reset = conn.reset or reset
        for conn in chosen:
            # Plain socket calls, which leave alone a TLS object that its thread may be reading.
            try:
                if reset:
                    socket.socket.setsockopt(conn.sock, socket.SOL_SOCKET, socket.SO_LINGER,
                                             struct.pack("ii", 1, 0))
                    # Reading ends without a FIN going out; the close that follows resets.
                    socket.socket.shutdown(conn.sock, socket.SHUT_RD)
                else:
                    socket.socket.shutdown(conn.sock, socket.SHUT_RDWR)
            except OSError:
                pass
        return chosen


class Portal(sandbox.Portal):
    """The sandbox portal with fault switches, safe to arm from test threads while
    requests are in flight."""

    server_class = _Server

    def __init__(self, *args, max_requests=10000, **kwargs):
        super().__init__(*args, **kwargs)
        self._requests = collections.deque(maxlen=max_requests)
        self.connections = self.published = 0
        self.cert, self.plain_port = "server", None
        # Whatever waits in a request waits on this, so that stop() is not held up.
        self.stopping = threading.Event()
        # When set, every request counts as coming from this address, as replays see it.
        self.client_address = None
        self._faults = {name: collections.deque() for name in FAULT_NAMES}
        self._faults_lock = threading.RLock()
        self._endless_pages = itertools.count(1)
        # An older deployment, without /threads/{id}.
        self.legacy = False

    def _thread(self, thread_id, params):
        if self.legacy:
            raise Refusal(404, "not_found", "no thread %s" % thread_id)
        return super()._thread(thread_id, params)

    # -- what the suite's portals have besides the switches

    def start(self, cert="server", plain_http=False, **kwargs):
        """Start with ``cert``, a name among the suite's certificates; ``plain_http`` adds a
        listener for plain HTTP, on which publish is refused and reads are redirected to HTTPS."""
        self.cert = cert
        self.stopping.clear()
        super().start(**kwargs)
        if plain_http:
            plain = _Server(self, (self.host, 0))
            plain.context = _Plain
            self._servers.append(plain)
            threading.Thread(target=plain.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
            self.plain_port = plain.server_address[1]
        return self

    def stop(self):
        self.stopping.set()
        super().stop()

    def _server_certificate(self, host):
        # The suite's one CA, made once, serves every portal it starts.
        return tests.certs.authority()[self.cert]

    @property
    def ca_file(self):
        return tests.certs.CA_FILE

    @property
    def plain_origin(self):
        return "http://%s:%d" % (self.host, self.plain_port)

    def _answer(self, request):
        if request.scheme == "https":
            return super()._answer(request)
        if request.path == PUBLISH:
            return error_reply(403, "https_required", "publish is accepted over HTTPS only")
        return Reply(301, b"", [("Location", self.origin + request.target)])

    def _publish(self, *args):
        reply = super()._publish(*args)
        self.published += reply.status == 201
        return reply

    def now(self):
        """The portal's clock, an aware datetime; a test replaces it to move time."""
        return datetime.datetime.now(datetime.timezone.utc)

    def _now(self):
        return self.now().astimezone(datetime.timezone.utc).replace(microsecond=0)

    def _record(self, handler):
        record = super()._record(handler)
        # Its status stays None if it is never answered.
        record.status, record.response_bytes = None, 0
        record.scheme = "http" if handler.server.context is _Plain else "https"
        handler.record = record
        record.path, _, query = record.target.partition("?")
        record.params = dict(parse_query(query)[0])
        record.client_address = self.client_address or record.client_address
        with self._lock:
            self._requests.append(record)
        return record

    @property
    def requests(self):
        """The latest ``max_requests`` requests, oldest first."""
        with self._lock:
            return list(self._requests)

    def reset_counters(self):
        with self._lock:
            self.connections = self.published = 0
            self._requests.clear()
            del self.errors[:]

    def close_idle_connections(self):
        """Close the connections waiting for a request, as an idle timeout would."""
        return sum(len(listener.end_idle(reset=False)) for listener in list(self._servers))

    def reset_idle_connections(self):
        """Abort the connections waiting for a request with a TCP RST, as a load balancer or
        NAT that lost their state would; returns once they are."""
        reset = [conn for listener in list(self._servers) for conn in listener.end_idle(reset=True)]
        for conn in reset:
            conn.closed.wait(5)
        return len(reset)

    # -- the switches

    def forget_nonces(self):
        """Forget every kept nonce, as if 24 hours had passed."""
        with self._lock:
            self._nonces.clear()

    def invalidate_cursors(self):
        """Make every cursor handed out so far stale (400 ``invalid_cursor``)."""
        with self._lock:
            self._cursors.clear()

    def clear_faults(self):
        """Disarm every pending fault switch."""
        with self._faults_lock:
            for queue in self._faults.values():
                queue.clear()

    def fail_next(self, status, times=1, retry_after=None, html=False, code=None):
        """Answer the next ``times`` requests with ``status``: a JSON error, or with
        ``html=True`` a proxy's HTML page; ``Retry-After`` when ``retry_after`` is given."""
        entry = (status, retry_after, html, code or DEFAULT_CODES.get(status, "error"))
        self._arm("fail", entry, times)

    def drop_after_record(self, times=1, skip=0):
        """The next ``times`` successful publishes record (or replay) the post, then the
        connection is closed without an answer; with ``skip``, after that many are answered
        as usual. Other requests do not consume it."""
        with self._faults_lock:
            self._faults["drop_after"].extend([False] * skip)
        self._arm("drop_after", True, times)

    def fail_after_record(self, status=502, times=1):
        """The next ``times`` successful publishes record (or replay) the post, then answer
        ``status``, as a gateway that lost the portal's answer would."""
        self._arm("fail_after", status, times)

    def drop_before_answer(self, times=1):
        """Close the connection on the next ``times`` requests without acting on them."""
        self._arm("drop_before", True, times)

    def redirect_next(self, location, status=301, times=1):
        """Redirect the next ``times`` requests to ``location``, in which ``{path_qs}``
        becomes the request's path and query and ``{origin}`` the portal's origin."""
        self._arm("redirect", (location, status), times)

    def stall_next(self, seconds, times=1, before=False):
        """Hold the answer to each of the next ``times`` requests for ``seconds``; the
        request is acted on first, as a slow network would leave it, or, with ``before``,
        only after the wait, as a slow network on the way in would."""
        self._arm("stall", (float(seconds), before), times)

    def raw_next(self, status, body, content_type, times=1, headers=None):
        """Answer the next ``times`` requests with exactly ``body`` (bytes);
        ``content_type`` None sends no Content-Type."""
        if isinstance(body, str):
            body = body.encode("utf-8")
        self._arm("raw", (status, bytes(body), content_type, dict(headers or {})), times)

    def truncate_next(self, times=1):
        """Act on the next ``times`` requests, then send the full Content-Length but only half
        the body, and close: an answer cut off halfway."""
        self._arm("truncate", True, times)

    def drip_next(self, seconds_per_byte, times=1):
        """Act on the next ``times`` requests and declare the full Content-Length, then send
        the body one byte every ``seconds_per_byte`` seconds: an answer that keeps coming,
        too slowly for the whole to arrive in time, though no single read waits long."""
        self._arm("drip", float(seconds_per_byte), times)

    def endless_cursor_next(self, times=1):
        """Answer the next ``times`` listings (benchmarks, tasks, threads, a thread's posts,
        activity) with their first page and a fresh ``next_cursor`` each time, as a portal
        that never ends a listing would. Other requests do not consume it."""
        self._arm("endless", True, times)

    def flood_next(self, size=None, times=1):
        """Answer the next ``times`` requests with 200 and ``size`` bytes of JSON-looking
        filler with no Content-Length, or, with ``size`` None, a stream that never ends."""
        self._arm("flood", size if size is not None else -1, times)

    def gzip_bomb_next(self, size, times=1):
        """Answer the next ``times`` requests with 200 ``application/json`` and
        ``Content-Encoding: gzip`` whatever their ``Accept-Encoding``: a small compressed
        body (with its Content-Length) that inflates to ``size`` bytes of JSON-looking
        zeros."""
        if not isinstance(size, int) or size < 0:
            raise ValueError("size must be a whole number of bytes")
        self._arm("gzip_bomb", gzip_filler(size), times)

    def _arm(self, name, entry, times):
        if times < 1:
            raise ValueError("times must be at least 1")
        with self._faults_lock:
            self._faults[name].extend([entry] * times)

    def _take(self, name):
        with self._faults_lock:
            queue = self._faults[name]
            return queue.popleft() if queue else None

    # -- meeting them

    def respond(self, request):
        reply = self._respond(request)
        if reply is not None:
            request.status = reply.status
        return reply

    def _respond(self, request):
        met = self._meet()
        if met is None:
            return None
        if met["flood"] is not None:
            return Streamed(200, self._filler(met["flood"]), [("Content-Type", "application/json")])
        if met["gzip_bomb"] is not None:
            return Reply(200, met["gzip_bomb"], [("Content-Type", "application/json"),
                                                 ("Content-Encoding", "gzip")])
        seconds, before = met["stall"] or (0.0, False)
        if before:
            self.stopping.wait(seconds)
        reply = self._instead(met, request) or self._acted_on(request)
        if not before:
            self.stopping.wait(seconds)
        if reply is None:
            return None
        body = reply.body
        sent = body[:len(body) // 2] if met["truncate"] else body
        if met["drip"] is not None:
            return Streamed(reply.status, self._drip(sent, met["drip"]), reply.headers, length=len(body))
        if met["truncate"]:
            return Streamed(reply.status, [sent], reply.headers, length=len(body))
        return reply

    def _meet(self):
        """The switches a new request meets, or None when it is dropped unread."""
        take = self._take
        with self._faults_lock:
            if take("drop_before"):
                return None
            met = {"flood": take("flood")}
            met["gzip_bomb"] = None if met["flood"] is not None else take("gzip_bomb")
            met["stall"] = take("stall")
            met["redirect"] = take("redirect")
            met["fail"] = None if met["redirect"] else take("fail")
            met["raw"] = None if met["redirect"] or met["fail"] else take("raw")
            met["truncate"], met["drip"] = take("truncate"), take("drip")
        return met

    def _instead(self, met, request):
        """The redirect, failure or raw answer met instead of the request's own, or None."""
        redirect, fail, raw = met["redirect"], met["fail"], met["raw"]
        if redirect:
            location, status = redirect
            location = location.replace("{path_qs}", request.target)
            return Reply(status, b"", [("Location", location.replace("{origin}", self.origin))])
        if fail:
            status, retry_after, as_html, code = fail
            extra = [("Retry-After", str(retry_after))] if retry_after is not None else []
            if as_html:
                return Reply(status, proxy_page(status), [("Content-Type", "text/html")] + extra)
            return error_reply(status, code, "%d %s (fault injected by the sandbox)"
                               % (status, phrase(status)), extra)
        if raw:
            status, body, content_type, extra = raw
            head = [("Content-Type", content_type)] if content_type else []
            return Reply(status, body, head + list(extra.items()))
        return None

    def _acted_on(self, request):
        """The portal's own answer, as the switches that follow one change it."""
        if LISTINGS.match(request.path) and self._take("endless"):
            return self._endless_page(request)
        reply = super().respond(request)
        if request.path == PUBLISH and reply.status in (200, 201):
            if self._take("drop_after"):
                return None
            failed = self._take("fail_after")
            if failed:
                return error_reply(failed, "upstream", "the gateway lost the portal's answer")
        return reply

    def _endless_page(self, request):
        """The listing's first page, whatever cursor the request carries, with a cursor to
        a next page that will never be the last."""
        path, _, query = request.target.partition("?")
        first = copy.copy(request)
        first.target = path + "?" + urlencode([(name, value) for name, value in parse_qsl(query)
                                               if name != "cursor"])
        reply = super().respond(first)
        if reply.status != 200:
            return reply
        encoded = any(name == "Content-Encoding" for name, _ in reply.headers)
        page = json.loads(gzip.decompress(reply.body) if encoded else reply.body)
        page["next_cursor"] = "endless-%d" % next(self._endless_pages)
        return Reply(200, json.dumps(page).encode("utf-8"), [("Content-Type", JSON_TYPE)])

    def _drip(self, body, seconds_per_byte):
        for index in range(len(body)):
            if index and self.stopping.wait(seconds_per_byte):
                return
            yield body[index:index + 1]

    def _filler(self, size):
        chunk = b"[" + b"0," * 32767
        sent = 0
        while (size < 0 or sent < size) and not self.stopping.is_set():
            piece = chunk if size < 0 else chunk[:size - sent]
            yield piece
            sent += len(piece)


def large_catalogue(benchmarks=120, tasks=10000, thread_posts=10000):
    """A catalogue to page through: ``big`` with ``tasks`` problems and a thread of
    ``thread_posts`` posts, then ``bench-NNN`` up to ``benchmarks`` in all (every fourth
    introduction-only, the others with 3 problems)."""
    cat = sandbox.Catalogue()
    cat.add_benchmark(
        "big", "Big", metric="exact-match accuracy", license="CC-BY-4.0",
        description="A synthetic benchmark with many problems, for paging.",
        tasks=[{"split": "test", "body": {"question": "Problem %d: what is %d + %d?" % (i, i, 2 * i + 1)}}
               for i in range(tasks)])
    for n in range(1, benchmarks):
        slug = "bench-%03d" % n
        questions = ["%s question %d" % (slug, i) for i in range(3)] if n % 4 else []
        cat.add_benchmark(slug, "Bench %03d" % n, metric="accuracy", license="MIT",
                          description="Synthetic benchmark number %d." % n,
                          tasks=[{"split": "test", "body": {"question": q}} for q in questions])
    if thread_posts and tasks:
        start = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        first = cat.add_post("Opening post of a long thread.", task_id=cat.tasks["big"][0]["task_id"],
                             agent_name="load-bot", created_at=format_time(start))
        # Fixed-width numbers keep every post the same size wherever it sits.
        for i in range(1, thread_posts):
            moment = start + datetime.timedelta(seconds=30 * i)
            cat.add_post("Post %06d of the long thread." % i, thread_id=first["thread_id"],
                         agent_name="load-bot", created_at=format_time(moment))
    return cat


def proxy_page(status):
    """The HTML error page a reverse proxy (nginx) sends in front of the portal."""
    text = phrase(status)
    page = ("<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1>"
            "</center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
            % (status, text, status, text))
    return page.encode("ascii")


def gzip_filler(size):
    """A gzip member that inflates to exactly ``size`` bytes of JSON-looking filler:
    ``[0,0,...,0]``, padded with a space before the last zero when needed."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [compressor.compress(piece) for piece in _filler_pieces(size)]
    parts.append(compressor.flush())
    return b"".join(parts)


def _filler_pieces(size):
    if size < 3:
        yield b"[]"[:size] if size == 2 else b"0" * size
        return
    pairs, pad = divmod(size - 3, 2)
    yield b"["
    piece = b"0," * (_FILLER_PIECE // 2)
    while pairs:
        count = min(pairs, len(piece) // 2)
        yield piece[: 2 * count]
        pairs -= count
    yield b" " * pad + b"0]"

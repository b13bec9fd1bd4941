"""The only module that talks to the network: a :class:`Sender` applies every rule to each request,
and a transport (:class:`HTTPTransport`, or :class:`MockTransport` for tests) makes each exchange."""

import contextlib
import datetime
import email.utils
import http.client
import io
import json
import os
import random
import re
import select
import socket
import ssl
import sys
import time
import zlib
from dataclasses import dataclass, field, replace
from functools import partial
from types import SimpleNamespace
from typing import Callable, Mapping, Optional, Union
from urllib.parse import parse_qsl, quote, urlencode, urljoin, urlsplit

from . import CA_FILE_VARIABLE, CA_VARIABLES, NAME, PACKAGE, __version__
from .errors import BenchmarksWikiError, UnreadableAnswer, ValidationError, fail, unreadable
from .rules import DEFAULT_RETRIES, DEFAULT_TIMEOUT, MAX_URL_BYTES, RETRIED_STATUSES, RETRIES, TIMEOUT, check_type

MAX_ANSWER_BYTES = 32 * 1024 * 1024
READ_PIECE = 64 * 1024
# A body of more gzip members than this is refused; each is inflated from pieces this long,
# so that many small members cost what the body does, not its square.
MAX_GZIP_MEMBERS, INFLATE_PIECE = 64, 4096
MAX_REDIRECTS = 5
# A longer wait asked by Retry-After is reported as this one: a hundred years says enough.
MAX_WAIT_SAID = 100 * 365 * 86400.0
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DEFAULT_PORTS = {"http": 80, "https": 443}
# Sent by no deliberate client: the portal reads them to spot embedded or cross-site requests,
# and credentials have no place in a request to a public portal with no accounts.
REFUSED_HEADERS = ("sec-fetch-", "cookie", "authorization", "proxy-authorization")
# What reads ask for beyond every request's headers: gzip; a publish's answer is one small post.
READ_HEADERS = {"Accept-Encoding": "gzip"}
_TOKEN = re.compile(r"\A[!#$%&'*+.^_`|~0-9A-Za-z-]+\Z")
# How a kept-alive connection that the server closed or reset shows itself on the next use.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, ConnectionAbortedError,
          BrokenPipeError, ssl.SSLEOFError, ssl.SSLZeroReturnError)


@dataclass(frozen=True)
class Origin:
    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + ("" if self.port == DEFAULT_PORTS[self.scheme] else f":{self.port}")


def parse_origin(text: str) -> Origin:
    """``scheme://host[:port]`` and nothing more: a path or credentials would be silently dropped."""
    if not isinstance(text, str):
        raise fail("not_text", what="the origin", type=type(text).__name__)
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as error:
        raise fail("bad_origin", origin=text, problem=f"is not a URL ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise fail("bad_origin", origin=text, problem="is not an http(s)://host[:port] URL")
    if parts.username is not None or parts.password is not None:
        raise fail("bad_origin", origin=text, problem="holds credentials")
    if parts.path not in ("", "/") or parts.query or parts.fragment or text.strip().endswith("?"):
        raise fail("bad_origin", origin=text, problem="has a path, query or fragment")
    return Origin(parts.scheme, parts.hostname, port or DEFAULT_PORTS[parts.scheme])


@dataclass(frozen=True)
class Request:
    """One GET, exactly as it will be sent, its parameters in order; a write goes to an https:// origin only."""

    origin: str
    path: str
    params: tuple = ()
    write: bool = False
    headers: tuple = field(default=(), compare=False)

    def __post_init__(self):
        if self.write and not self.origin.startswith("https://"):
            raise fail("https_required", origin=self.origin)

    @property
    def url(self) -> str:
        query = urlencode(self.params, quote_via=quote)
        return f"{self.origin}{self.path}" + (f"?{query}" if query else "")

    @property
    def fields(self) -> dict:
        return dict(self.params)

    def as_record(self) -> dict:
        return {"origin": self.origin, "path": self.path, "params": [list(pair) for pair in self.params],
                "write": self.write}

    @classmethod
    def from_record(cls, record: dict) -> "Request":
        """The request kept by :meth:`as_record`; ValueError, KeyError or TypeError if it is not one."""
        params = record["params"]
        if not (isinstance(params, list) and all(isinstance(pair, list) and len(pair) == 2 and
                                                 all(isinstance(part, str) for part in pair)
                                                 for pair in params)):
            raise ValueError("params must be pairs of strings")
        return cls(str(parse_origin(record["origin"])), str(record["path"]),
                   tuple(tuple(pair) for pair in params), record["write"] is True)


@dataclass(frozen=True)
class Response:
    """One answer. ``headers`` may be given as a dict; it reads case-insensitively."""

    status: int
    body: bytes = b""
    headers: Union[http.client.HTTPMessage, Mapping] = field(default_factory=dict)
    reason: str = ""
    url: str = ""
    request: Optional[Request] = None
    # Earlier attempts of this request whose answer was lost after it may have reached the portal.
    lost_answers: int = 0

    def __post_init__(self):
        if not isinstance(self.headers, http.client.HTTPMessage):
            headers = http.client.HTTPMessage()
            for name, value in dict(self.headers or {}).items():
                headers[name] = value
            object.__setattr__(self, "headers", headers)
        if not self.reason:
            object.__setattr__(self, "reason", http.client.responses.get(self.status, ""))

    @property
    def route(self) -> str:
        return urlsplit(self.url).path

    @property
    def write(self) -> bool:
        return self.request is not None and self.request.write

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            kind = self.headers.get("Content-Type") or "no content type"
            if not self.body:
                problem = "an empty body"
            elif isinstance(error, RecursionError):
                problem = "JSON nested too deep to read"
            else:
                problem = f"a body that is not JSON ({kind})"
            raise unreadable(self, problem) from None


class NetworkFailure(Exception):
    """An exchange that failed on the network. ``phase`` is "connect" or "send" (the portal
    cannot have acted on it), "wait" (sent, no answer came) or "read" (the answer was cut off)."""

    def __init__(self, cause: BaseException, phase: str, where: str = "", stale: bool = False,
                 speaks: Optional[str] = None):
        super().__init__(str(cause))
        self.cause = cause
        self.phase = phase
        self.where = where
        self.stale = stale
        self.speaks = speaks

    @property
    def sent(self) -> bool:
        return self.phase in ("wait", "read")


# What no retry mends: sending again can only fail the same way.
FINAL_FAILURES = frozenset({"untrusted_certificate", "host_not_found", "proxy_refused", "wrong_scheme"})
# The reason of the error that reports a failure, by its cause: the first that fits.
CAUSES = ((ssl.SSLCertVerificationError, "untrusted_certificate"), (socket.gaierror, "host_not_found"),
          ((socket.timeout, TimeoutError), "timed_out"), (ConnectionRefusedError, "connection_refused"),
          (ssl.SSLError, "tls_failed"))


@dataclass(frozen=True)
class RetryPolicy:
    """When to send the identical request again, and how long to wait before it. A timeout is
    retried too: a read is safe to repeat, and a publish carries its nonce."""

    retries: int = DEFAULT_RETRIES
    # The same for every policy, so not fields: each wait is a random share of a ceiling that
    # doubles up to max_backoff (full jitter), or the Retry-After asked, up to max_retry_after.
    first_backoff = 0.5
    max_backoff = 10.0
    max_retry_after = 30.0
    statuses = frozenset(RETRIED_STATUSES)

    def __post_init__(self):
        RETRIES.check(self.retries, "retries")

    def wait(self, attempt: int, jitter: float, status: Optional[int] = None,
             retry_after: Optional[float] = None) -> Optional[float]:
        """Seconds to wait before the attempt after ``attempt``, or None to give up."""
        if attempt > self.retries or (status is not None and status not in self.statuses):
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return jitter * min(self.max_backoff, self.first_backoff * 2 ** (attempt - 1))


def failure_reason(failure: NetworkFailure) -> str:
    if failure.speaks:
        return "wrong_scheme"
    if failure.phase == "connect" and str(failure.cause).startswith("Tunnel connection failed"):
        return "proxy_refused"
    return next((reason for kinds, reason in CAUSES if isinstance(failure.cause, kinds)), "connection_failed")


class HTTPTransport:
    """Exchanges over the network: one kept-alive connection per origin, through the environment's proxy."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, ssl_context: Optional[ssl.SSLContext] = None):
        TIMEOUT.check(timeout, "timeout")
        check_type(ssl_context, ssl.SSLContext, "ssl_context", "an ssl.SSLContext")
        self.timeout = timeout
        self._ssl_context = ssl_context
        self._connections: dict = {}

    def handle(self, request: Request) -> Response:
        """One request and its whole answer, all of it within the timeout."""
        deadline = time.monotonic() + self.timeout
        url = request.url
        target = parse_origin(request.origin)
        path_qs = url[len(request.origin):] or "/"
        connection = self._connection(target)
        where = f"{target.host}:{target.port}"
        proxied = (connection.host, connection.port) != (target.host, target.port)
        if proxied:
            where = f"the proxy {connection.host}:{connection.port} (for {where})"
            if target.scheme == "http":
                path_qs = url  # through a proxy, a plain-http request names its whole URL
        reused = connection.sock is not None and not _dropped(connection.sock)
        connection.response_class = partial(_timed_response, deadline=deadline)
        phase = "connect"
        try:
            if reused:
                connection.sock.settimeout(self.timeout)  # the last answer's deadline no longer holds
            else:
                connection.close()
                connection.connect()
            phase = "send"
            connection.request("GET", path_qs, headers=dict(request.headers))
            phase = "wait"
            answer = connection.getresponse()
            phase = "read"
            body = _read_body(connection, answer, request.write)
        except (OSError, http.client.HTTPException) as cause:
            connection.close()
            stale = reused and phase in ("send", "wait") and isinstance(cause, _STALE)
            speaks = None if stale or proxied else self._other_scheme(target, cause, phase)
            raise NetworkFailure(cause, phase, where, stale, speaks) from None
        if answer.will_close:
            connection.close()
        return Response(answer.status, body, answer.headers, answer.reason, url)

    def _other_scheme(self, target: Origin, cause: BaseException, phase: str) -> Optional[str]:
        """The scheme the port speaks, when the failure looks like the other one's and a look at the port
        confirms it (a certificate that fails still proves TLS); nothing of the request is sent."""
        if target.scheme == "https" and phase == "connect" and isinstance(cause, ssl.SSLError) \
                and not isinstance(cause, ssl.SSLCertVerificationError):
            other = "http"
        elif target.scheme == "http" and phase in ("wait", "read") and isinstance(
                cause, (http.client.RemoteDisconnected, http.client.BadStatusLine, ConnectionResetError)):
            other = "https"
        else:
            return None
        try:
            with socket.create_connection((target.host, target.port), timeout=min(self.timeout, 5.0)) as raw:
                if other == "http":
                    raw.sendall(f"HEAD / HTTP/1.0\r\nHost: {target.host}\r\n\r\n".encode("ascii"))
                    return other if raw.recv(5) == b"HTTP/" else None
                with contextlib.suppress(ssl.SSLCertVerificationError):
                    self._tls_context().wrap_socket(raw, server_hostname=target.host).close()
                return other
        except (OSError, ValueError):
            return None

    def _connection(self, target: Origin):
        if target not in self._connections:
            via = proxy_for(target) or target
            if target.scheme == "https":
                connection = http.client.HTTPSConnection(via.host, via.port, timeout=self.timeout,
                                                         context=self._tls_context())
                if via is not target:
                    connection.set_tunnel(target.host, target.port)
            else:
                connection = http.client.HTTPConnection(via.host, via.port, timeout=self.timeout)
            self._connections[target] = connection
        return self._connections[target]

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            # Honours SSL_CERT_FILE and SSL_CERT_DIR; verification is never turned off.
            context = ssl.create_default_context()
            extra = os.environ.get(CA_FILE_VARIABLE)
            if extra:
                try:
                    context.load_verify_locations(cafile=extra)
                except (OSError, ssl.SSLError) as error:
                    raise fail("bad_ca_file", variable=CA_FILE_VARIABLE, path=extra,
                               problem=getattr(error, "strerror", None) or "not a PEM file of certificates") from None
            self._ssl_context = context
        return self._ssl_context

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()


class MockTransport:
    """A transport that answers from ``handler(request) -> Response``, with no network:
    the seam for tests. The handler may raise NetworkFailure to act out a failure."""

    def __init__(self, handler: Callable[[Request], Response]):
        if not callable(handler):
            raise fail("not_of_type", what="the handler", expected="a function", type=type(handler).__name__)
        self.handler = handler

    def handle(self, request: Request) -> Response:
        return self.handler(request)

    def close(self) -> None:
        pass


class Sender:
    """Every request to one origin, sent under the rules and the retry policy."""

    def __init__(self, origin: str, transport, *, headers: Optional[Mapping], retry: RetryPolicy,
                 sleep: Callable[[float], None]):
        self.origin = parse_origin(origin)
        self.transport = transport
        self.retry = retry
        self._sleep = sleep
        self._headers = {"User-Agent": f"{NAME}/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}"}
        for name, value in (headers or {}).items():
            if not (isinstance(name, str) and _TOKEN.match(name) and isinstance(value, str)
                    and value.isprintable() and value.isascii()):
                raise fail("bad_header", name=name, value=value)
            if name.lower().startswith(REFUSED_HEADERS):
                raise fail("refused_header", name=name)
            self._headers[name] = value

    def get(self, path: str, params: Optional[Mapping] = None, headers: Optional[Mapping] = None) -> Response:
        return self.exchange(request_to(str(self.origin), path, params), headers)

    def exchange(self, request: Request, headers: Optional[Mapping] = None) -> Response:
        """Send ``request``; a write is never redirected: that would resend its nonce elsewhere."""
        compressed = {} if request.write else READ_HEADERS
        sent = replace(request, headers=tuple({**self._headers, "Accept": "application/json", **compressed,
                                               **(headers or {})}.items()))
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_with_retries(sent)
            if response.status not in REDIRECT_STATUSES:
                return response
            sent = _redirected(response)
        raise fail("too_many_redirects", status=response.status, code="too_many_redirects", limit=MAX_REDIRECTS,
                   url=sent.url, write=request.write)

    def _send_with_retries(self, request: Request) -> Response:
        attempt = lost = 0
        stale_resent = False
        while True:
            attempt += 1
            try:
                response = self._exchange(request)
            except NetworkFailure as failure:
                lost += failure.sent
                if failure.stale and not stale_resent:
                    # A kept-alive connection the server had closed, found so only on use:
                    # the request goes again at once, on a new connection, and is no retry.
                    stale_resent, attempt = True, attempt - 1
                    continue
                reason = failure_reason(failure)
                wait = None if reason in FINAL_FAILURES else self.retry.wait(attempt, random.random())
                if wait is None:
                    raise self._network_error(failure, reason, attempt, lost, request.write) from None
                why = f"{failure.phase}: {failure.cause}"
            else:
                if response.status < 400:
                    return replace(response, lost_answers=lost)
                retry_after = parse_retry_after(response.headers.get("Retry-After"))
                wait = self.retry.wait(attempt, random.random(), response.status, retry_after)
                if wait is None:
                    raise self._api_error(response, attempt, retry_after)
                lost += response.status >= 500  # a gateway may have lost an answer the portal sent
                why = f"{response.status} {response.reason}"
            # Told at INFO: silent unless the caller turns logging on (the command line's --verbose does).
            import logging  # here: only a retry pays for it

            logging.getLogger(PACKAGE).info("%s: %s; sending it again in %.1f s (retry %d)",
                                            request.path, why, wait, attempt)
            self._sleep(wait)

    def _exchange(self, request: Request) -> Response:
        response = self.transport.handle(request)
        response = replace(response, request=request, url=response.url or request.url)
        if len(response.body) > MAX_ANSWER_BYTES:
            raise too_large(response.status, len(response.body), request.write)
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding == "gzip" and response.body:
            return replace(response, body=_inflate(response))
        if encoding not in ("identity", "gzip"):
            raise unreadable(response, f"an answer encoded as {encoding!r}, which was not asked for")
        return response

    def _network_error(self, failure: NetworkFailure, reason: str, attempts: int, lost: int,
                       write: bool) -> BenchmarksWikiError:
        cause = failure.cause
        problems = {"untrusted_certificate": getattr(cause, "verify_message", None),
                    "host_not_found": getattr(cause, "strerror", None),
                    "proxy_refused": str(cause).split(":", 1)[-1].strip(),
                    "tls_failed": getattr(cause, "reason", None)}
        problem = problems.get(reason) or str(cause) or type(cause).__name__
        trust = f"to trust another CA, set {CA_FILE_VARIABLE} to its PEM file"
        ca_problem = ca_file_problem(os.environ)
        if ca_problem:
            trust = f"{ca_problem}; {trust}"
        target = self.origin
        speaks = failure.speaks or target.scheme
        return fail(reason, where=failure.where or str(target), problem=problem, trust=trust,
                    seconds=getattr(self.transport, "timeout", DEFAULT_TIMEOUT), sent=lost > 0,
                    speaks={"https": "TLS (https://)", "http": "plain HTTP (http://)"}[speaks],
                    asked=f"{target.scheme}://", origin=str(replace(target, scheme=speaks)), attempts=attempts,
                    write=write)

    def _api_error(self, response: Response, attempts: int, retry_after: Optional[float]) -> BenchmarksWikiError:
        try:
            detail = response.json()["error"]
            code, message = detail["code"], detail["message"]
        except (UnreadableAnswer, TypeError, KeyError):
            code = message = None
        if not (isinstance(code, str) and isinstance(message, str)):
            kind = response.headers.get("Content-Type") or "no content type"
            code = f"http_{response.status}"
            message = f"the portal answered {response.status} {response.reason} ({kind})"
        seconds = retry_after or 0
        shape = "%H:%M:%S UTC" if seconds < 12 * 3600 else "%Y-%m-%d %H:%M:%S UTC"
        try:
            when = time.strftime(shape, time.gmtime(time.time() + seconds))
        except (OverflowError, OSError, ValueError):  # further off than the platform's clock reaches
            when = "much later"
        if response.status == 404:
            reason = "not_found"
        elif response.status in RETRIED_STATUSES:
            reason = "busy_wait" if retry_after is not None else "busy"
        else:
            reason = "refused" if 400 <= response.status < 500 else "server_error"
        return fail(reason, status=response.status, code=code, message=message, attempts=attempts,
                    retry_after=retry_after, wait=retry_after, when=when, write=response.write)

    def close(self) -> None:
        self.transport.close()

    def __del__(self) -> None:
        # The client documentation's own examples never close a Client.
        close = getattr(getattr(self, "transport", None), "close", None)
        if close:
            close()


def _timed_response(sock, *args, deadline: float, **kwargs) -> http.client.HTTPResponse:
    """An answer whose every read ends by one deadline, so that a server sending a byte at a
    time, each within the timeout, still cannot hold an exchange past it."""
    timed = io.BufferedReader(_TimedReader(sock, deadline))
    # An answer reads from what its socket's makefile() returns, and uses the socket for nothing else.
    return http.client.HTTPResponse(SimpleNamespace(makefile=lambda mode: timed), *args, **kwargs)


class _TimedReader(io.RawIOBase):
    def __init__(self, sock, deadline: float):
        super().__init__()
        # The socket's own file, so that the socket stays open for the answer however the
        # connection is closed, as http.client expects of its answers.
        self._sock, self._file, self._deadline = sock, sock.makefile("rb", buffering=0), deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("the whole exchange took longer than the timeout")
        self._sock.settimeout(left)
        return self._file.readinto(buffer)

    def close(self) -> None:
        self._file.close()
        super().close()


def _read_body(connection, answer, write: bool) -> bytes:
    """The body, in pieces, refused once past the limit: one read of the whole limit would
    first allocate all 32 MiB of it, on Python 3.9, for every answer."""
    # http.client's reading of Content-Length: None when there is none, 0 for a 204 or 304.
    if answer.length and answer.length > MAX_ANSWER_BYTES:
        connection.close()
        raise too_large(answer.status, answer.length, write)
    pieces: list = []
    size = 0
    for piece in iter(partial(answer.read, READ_PIECE), b""):
        size += len(piece)
        if size > MAX_ANSWER_BYTES:
            connection.close()
            raise too_large(answer.status, size, write)
        pieces.append(piece)
    if answer.length:
        # read(amount) returns what arrived before the connection closed, without complaint.
        raise http.client.IncompleteRead(b"".join(pieces), answer.length)
    return b"".join(pieces)


def _inflate(response: Response) -> bytes:
    """A gzip body, held to the same size limit once inflated: a small bomb is refused whole."""
    body, pieces, size, offset = memoryview(response.body), [], 0, 0
    for _ in range(MAX_GZIP_MEMBERS):
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not member.eof:
            piece = body[offset:offset + INFLATE_PIECE]
            if not piece:
                raise unreadable(response, "a gzip body cut short")
            try:
                inflated = member.decompress(piece, MAX_ANSWER_BYTES + 1 - size)
            except zlib.error:
                raise unreadable(response, "a gzip body that does not inflate") from None
            size += len(inflated)
            if size > MAX_ANSWER_BYTES:
                raise too_large(response.status, size, response.write, inflated=True)
            pieces.append(inflated)
            offset += len(piece) - len(member.unused_data)
        if offset >= len(body):
            return b"".join(pieces)
    raise unreadable(response, f"a gzip body of more than {MAX_GZIP_MEMBERS} members")


def _redirected(response: Response) -> Request:
    write = response.write
    location = (response.headers.get("Location") or "").strip()
    if not location:
        raise unreadable(response, f"a {response.status} redirect with no Location")
    try:
        target = urljoin(response.url, location)
        parts = urlsplit(target)
        origin = f"{parts.scheme}://{parts.netloc}"
        parse_origin(origin)
        target.encode("ascii")
    except (ValueError, ValidationError):
        raise unreadable(response, f"a redirect to a malformed location {location!r}") from None
    # A publish's URL holds its nonce, which anyone holding it could send first: only its
    # origin and path are said.
    shown = f"{origin}{parts.path}" if write else target
    if urlsplit(response.url).scheme == "https" and parts.scheme != "https":
        raise fail("redirect_to_http", url=shown, write=write)
    if write:
        raise fail("redirect_of_publish", url=shown, write=write)
    return replace(response.request, origin=origin, path=parts.path or "/",
                   params=tuple(parse_qsl(parts.query, keep_blank_values=True)))


def _dropped(sock) -> bool:
    """Whether the server has closed a kept-alive connection: an idle one has nothing to read."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def ca_file_problem(environ: Mapping) -> Optional[str]:
    """What is wrong with a CA file or folder the environment names, which ssl would pass over in silence."""
    for name, exists in ((CA_FILE_VARIABLE, os.path.isfile), (CA_VARIABLES[0], os.path.isfile),
                         (CA_VARIABLES[1], os.path.isdir)):
        path = environ.get(name)
        if path and not (exists(path) and os.access(path, os.R_OK)):
            return f"{name} names {path}, which does not exist or cannot be read"
    return None


def proxy_for(target: Origin) -> Optional[Origin]:
    """The proxy the environment names for this target, or None; never one with credentials, which the client
    sends nowhere."""
    # Here, not at the top: urllib.request costs more to import than a read command takes.
    from urllib.request import getproxies_environment, proxy_bypass_environment  # type: ignore[attr-defined]

    proxies = getproxies_environment()
    address = proxies.get(target.scheme)
    if not address or proxy_bypass_environment(target.host, proxies):
        return None
    if "://" not in address:
        address = f"http://{address}"
    # Before anything else, and never shown: a password may hold a # or a / that would make
    # the rest of the address parse as something else.
    if "@" in address:
        shown = address.split("://", 1)[0] + "://" + address.rpartition("@")[2]
        raise fail("bad_proxy", scheme=target.scheme, problem=f"{shown!r} holds credentials, which the client never "
                   "sends")
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        raise fail("bad_proxy", scheme=target.scheme, problem=f"{address!r} has a bad port") from None
    if parts.scheme != "http" or not parts.hostname:
        raise fail("bad_proxy", scheme=target.scheme, problem=f"{address!r} is not an http:// proxy")
    return Origin("http", parts.hostname, port or 80)


def request_to(origin: str, path: str, params: Optional[Mapping] = None, *, write: bool = False) -> Request:
    """A request, refused here if it could never be sent; a write's proxy setting is checked before it is kept."""
    target = parse_origin(origin)
    pairs = tuple((name, str(value)) for name, value in (params or {}).items() if value is not None)
    built = Request(str(target), path, pairs, write)
    size = len(built.url.encode("utf-8"))
    if size > MAX_URL_BYTES:
        raise fail("url_too_large", size=size, limit=MAX_URL_BYTES)
    if write:
        proxy_for(target)
    return built


def too_large(status: int, size: int, write: bool, inflated: bool = False) -> BenchmarksWikiError:
    return fail("answer_too_large", status=status, code="answer_too_large",
                how="once inflated" if inflated else "as sent", size=size, limit=MAX_ANSWER_BYTES, write=write)


def parse_retry_after(value: Optional[str]) -> Optional[float]:
    """Seconds the portal asks to wait, or None for a value that says nothing usable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return min(float(value), MAX_WAIT_SAID)
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # "-0000": the date is in UTC, not in local time
            when = when.replace(tzinfo=datetime.timezone.utc)
        return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None

"""The only module that talks to the network.

It owns the origin rule, the headers, the size limits, HTTPS for writes, redirects, the
retry policy, timeouts, compression and connection reuse, so that every request the client
makes obeys them all. A request is built first, as a :class:`Request` that says exactly what
will be sent, and sent later, as many times as the policy allows, unchanged.
"""

from __future__ import annotations

import datetime
import email.utils
import http.client
import json
import random
import re
import select
import socket
import ssl
import sys
import time
import zlib
from dataclasses import dataclass, replace
from typing import Callable, Optional
from urllib.parse import quote, urlencode, urljoin, urlsplit

from . import __version__
from .errors import ApiError, TransportError, ValidationError, unreadable
from .rules import DEFAULT_RETRIES, DEFAULT_TIMEOUT, MAX_URL_BYTES

MAX_ANSWER_BYTES = 32 * 1024 * 1024
READ_PIECE = 64 * 1024
MAX_REDIRECTS = 5
# A longer wait asked by Retry-After is reported as this one: a hundred years says enough.
MAX_WAIT_SAID = 100 * 365 * 86400.0
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
JSON = "application/json"
# Sent by no deliberate client: the portal reads them to spot embedded or cross-site requests,
# and credentials have no place in a request to a public portal with no accounts.
REFUSED_HEADERS = ("sec-fetch-", "cookie", "authorization", "proxy-authorization")
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
        default = 443 if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def parse_origin(text: str) -> Origin:
    """``scheme://host[:port]`` and nothing more: a path or credentials would be silently dropped."""
    if not isinstance(text, str):
        raise ValidationError(f"the origin must be text, not {type(text).__name__}")
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError as error:
        raise ValidationError(f"origin {text!r} is not a URL ({error})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError(f"origin {text!r} is not an http(s)://host[:port] URL")
    if parts.username is not None or parts.password is not None:
        raise ValidationError(f"origin {text!r} holds credentials; give scheme://host[:port] only")
    if parts.path not in ("", "/") or parts.query or parts.fragment or text.strip().endswith("?"):
        raise ValidationError(f"origin {text!r} has a path, query or fragment; give scheme://host[:port] only")
    return Origin(parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80))


def check_headers(headers: dict) -> dict:
    for name, value in headers.items():
        if not (isinstance(name, str) and _TOKEN.match(name) and isinstance(value, str)
                and value.isprintable() and value.isascii()):
            raise ValidationError(f"header {name!r}: {value!r} is not a header name and printable ASCII value")
        if name.lower().startswith(REFUSED_HEADERS):
            raise ValidationError(
                f"header {name!r} is refused: the client sends no Sec-Fetch-*, cookie or "
                "credential header (the portal refuses browser-like requests and has no accounts)")
    return dict(headers)


@dataclass(frozen=True)
class Request:
    """One GET, exactly as it will be sent: its origin, path and parameters, in order."""

    origin: str
    path: str
    params: tuple = ()
    write: bool = False
    accept: str = JSON

    @property
    def url(self) -> str:
        query = urlencode(self.params, quote_via=quote)
        return f"{self.origin}{self.path}" + (f"?{query}" if query else "")

    @property
    def fields(self) -> dict:
        return dict(self.params)

    def as_record(self) -> dict:
        """The request as plain JSON values, to keep in a file and send later, unchanged."""
        return {"origin": self.origin, "path": self.path, "params": [list(pair) for pair in self.params],
                "write": self.write}

    @classmethod
    def from_record(cls, record: dict) -> "Request":
        params = record["params"]
        if not (isinstance(params, list) and all(isinstance(pair, list) and len(pair) == 2 and
                                                 all(isinstance(part, str) for part in pair)
                                                 for pair in params)):
            raise ValueError("params must be pairs of strings")
        return cls(str(parse_origin(record["origin"])), str(record["path"]),
                   tuple(tuple(pair) for pair in params), record["write"] is True)


@dataclass(frozen=True)
class Response:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes
    url: str
    # Earlier attempts of this request whose answer was lost after it may have reached the portal.
    lost_answers: int = 0

    @property
    def route(self) -> str:
        return urlsplit(self.url).path

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            kind = self.headers.get("Content-Type") or "no content type"
            if not self.body:
                what = "an empty body"
            elif isinstance(error, RecursionError):
                what = "JSON nested too deep to read"
            else:
                what = f"a body that is not JSON ({kind})"
            raise unreadable(self.status, self.route, what) from None


@dataclass(frozen=True)
class RetryPolicy:
    """When to send the identical request again, and how long to wait before it.

    Network failures that sending again can mend, and the statuses below, are retried up to
    ``retries`` times; each wait is a random share of a ceiling that doubles (full jitter),
    or what the portal's Retry-After asks, unless it asks for more than ``max_retry_after``.
    """

    retries: int = DEFAULT_RETRIES
    first_backoff: float = 0.5
    max_retry_after: float = 30.0
    statuses: frozenset = frozenset({429, 502, 503, 504})

    def wait(self, attempt: int, jitter: float, status: Optional[int] = None,
             retry_after: Optional[float] = None) -> Optional[float]:
        """Seconds to wait before the attempt after ``attempt``, or None to give up."""
        if attempt > self.retries or (status is not None and status not in self.statuses):
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return jitter * self.first_backoff * 2 ** (attempt - 1)


class _Failure(Exception):
    """A request that failed on the network, before the retry policy decides what it means.

    ``phase`` is where it failed: "connect" or "send" (the portal cannot have acted on it),
    "wait" (sent, and no byte of an answer came) or "read" (the answer was cut off).
    """

    def __init__(self, cause: BaseException, phase: str, where: str = ""):
        super().__init__(str(cause))
        self.cause = cause
        self.phase = phase
        self.where = where

    @property
    def sent(self) -> bool:
        return self.phase in ("wait", "read")


class Transport:
    def __init__(self, origin: str, *, headers: Optional[dict] = None, timeout: float = DEFAULT_TIMEOUT,
                 retry: RetryPolicy = RetryPolicy(), ssl_context: Optional[ssl.SSLContext] = None,
                 sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random,
                 wall_clock: Callable[[], float] = time.time):
        self._connections: dict = {}
        self.origin = parse_origin(origin)
        self.timeout = timeout
        self.retry = retry
        self._ssl_context = ssl_context
        self._sleep = sleep
        self._jitter = jitter
        self._wall_clock = wall_clock
        self._headers = {
            "User-Agent": f"benchmarks-wiki/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}",
        }
        self._headers.update(check_headers(headers or {}))

    def request(self, path: str, params: Optional[dict] = None, *, write: bool = False,
                accept: str = JSON) -> Request:
        """A request to this origin, refused here if it could never be sent."""
        pairs = tuple((name, str(value)) for name, value in (params or {}).items() if value is not None)
        built = Request(str(self.origin), path, pairs, write, accept)
        size = len(built.url.encode("utf-8"))
        if size > MAX_URL_BYTES:
            raise ValidationError(f"the URL is {size} bytes; the limit is {MAX_URL_BYTES}",
                                  hint="shorten the body and link the long material")
        if write:
            _require_https(built.url)
            proxy_for(self.origin)  # a bad proxy setting is refused before a publish is even kept
        return built

    def get(self, path: str, params: Optional[dict] = None, *, accept: str = JSON,
            headers: Optional[dict] = None) -> Response:
        return self.send(self.request(path, params, accept=accept), headers)

    def send(self, request: Request, headers: Optional[dict] = None) -> Response:
        """Send ``request``, retried as the policy allows; a write is never redirected, since
        following would resend its body and nonce elsewhere."""
        if request.write:
            _require_https(request.url)
        # Reads ask for gzip; a publish's answer is one small post.
        compressed = {} if request.write else {"Accept-Encoding": "gzip"}
        request_headers = {**self._headers, "Accept": request.accept, **compressed, **(headers or {})}
        url = request.url
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_with_retries(url, request_headers)
            if response.status not in REDIRECT_STATUSES:
                return response
            url = _redirect_target(response, request.write)
        raise ApiError(response.status, "too_many_redirects",
                       f"more than {MAX_REDIRECTS} redirects, the last to {url}")

    def _send_with_retries(self, url: str, headers: dict) -> Response:
        attempt = lost = 0
        while True:
            attempt += 1
            try:
                response = self._send(url, headers)
            except _Failure as failure:
                message, hint, retryable, reason = self._explain(failure)
                wait = self.retry.wait(attempt, self._jitter()) if retryable else None
                if wait is None:
                    raise TransportError(message + _after(attempt), hint, retryable=retryable,
                                         sent=failure.sent or lost > 0, reason=reason) from None
                lost += failure.sent
                self._sleep(wait)
                continue
            if response.status < 400:
                return replace(response, lost_answers=lost + response.lost_answers)
            retry_after = parse_retry_after(response.headers.get("Retry-After"), self._wall_clock())
            wait = self.retry.wait(attempt, self._jitter(), response.status, retry_after)
            if wait is None:
                raise self._api_error(response, attempt, retry_after)
            lost += response.status >= 500  # a gateway may have lost an answer the portal sent
            self._sleep(wait)

    def _api_error(self, response: Response, attempts: int, retry_after: Optional[float]) -> ApiError:
        code, message = _error_detail(response)
        hint = None
        if response.status in self.retry.statuses:
            hint = "the portal is busy or unavailable; try again in a few minutes"
            if retry_after is not None and retry_after > self.retry.max_retry_after:
                hint = f"the portal asks to wait {retry_after:g} s" + _resume_at(self._wall_clock(), retry_after)
        return ApiError(response.status, code, message + _after(attempts), hint, retry_after=retry_after)

    def _send(self, url: str, headers: dict) -> Response:
        parts = urlsplit(url)
        target = parse_origin(f"{parts.scheme}://{parts.netloc}")
        path_qs = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection = self._connection(target)
        where = _where(target, connection)
        if target.scheme == "http" and (connection.host, connection.port) != (target.host, target.port):
            path_qs = url  # through a proxy, a plain-http request names its whole URL
        reused = self._open(connection, where)
        try:
            return _exchange(connection, url, path_qs, headers)
        except _Failure as failure:
            connection.close()
            first = failure
            if not (reused and failure.phase in ("send", "wait") and isinstance(failure.cause, _STALE)):
                raise _Failure(failure.cause, failure.phase, where) from None
        # A kept-alive connection the server had closed or reset, found so only on use: the
        # request goes again once, on a new connection, and is not a retry. Had it been sent
        # whole, its answer counts as lost, since the server may have acted on it.
        self._open(connection, where)
        try:
            response = _exchange(connection, url, path_qs, headers)
        except _Failure as failure:
            connection.close()
            raise _Failure(failure.cause, "wait" if first.sent else failure.phase, where) from None
        return replace(response, lost_answers=int(first.sent))

    def _open(self, connection, where: str) -> bool:
        """Connect unless a live kept-alive connection is there; whether it was kept."""
        if connection.sock is not None and not _dropped(connection.sock):
            return True
        connection.close()
        try:
            connection.connect()
        except (OSError, http.client.HTTPException) as failure:
            connection.close()
            raise _Failure(failure, "connect", where) from None
        return False

    def _connection(self, target: Origin):
        connection = self._connections.get(target)
        if connection is None:
            proxy = proxy_for(target)
            host, port = (proxy.host, proxy.port) if proxy else (target.host, target.port)
            if target.scheme == "https":
                connection = http.client.HTTPSConnection(host, port, timeout=self.timeout,
                                                         context=self._tls_context())
                if proxy:
                    connection.set_tunnel(target.host, target.port)
            else:
                connection = http.client.HTTPConnection(host, port, timeout=self.timeout)
            self._connections[target] = connection
        return connection

    def _tls_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            # Honours SSL_CERT_FILE and SSL_CERT_DIR; verification is never turned off.
            self._ssl_context = ssl.create_default_context()
        return self._ssl_context

    def _explain(self, failure: _Failure) -> tuple:
        """What a network failure means to a person: message, hint, whether a retry can help,
        and the reason the command line has a flag for."""
        cause, where = failure.cause, failure.where
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (f"TLS certificate verification failed for {where}: {cause.verify_message}",
                    "to trust another CA, set SSL_CERT_FILE to its PEM file", False, None)
        if isinstance(cause, socket.gaierror):
            return (f"cannot resolve host {where}: {cause.strerror}", "check the origin and the network",
                    False, None)
        if isinstance(cause, (socket.timeout, TimeoutError)):
            return (f"no answer from {where} within {self.timeout:g} s", "try again, or raise the timeout",
                    False, "timeout")
        if isinstance(cause, ConnectionRefusedError):
            return (f"connection refused by {where}", "check the origin, or that the portal is running",
                    True, None)
        if not failure.sent and str(cause).startswith("Tunnel connection failed"):
            refusal = str(cause).split(":", 1)[-1].strip()
            return (f"{where} refused to open a tunnel ({refusal}); nothing was sent to the portal",
                    "check https_proxy and no_proxy", False, None)
        if isinstance(cause, ssl.SSLError):
            return f"TLS failed with {where}: {cause.reason or cause}", None, True, None
        detail = str(cause) or type(cause).__name__
        return f"the connection to {where} failed: {detail}", "check the network and try again", True, None

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def __del__(self) -> None:
        # The client documentation's own examples never close a Client.
        self.close()


def _exchange(connection, url: str, path_qs: str, headers: dict) -> Response:
    """One request and its whole answer; a failure says in which phase it happened, so that a
    kept-alive connection found dead can be told from a request whose answer was lost."""
    try:
        connection.request("GET", path_qs, headers=headers)
    except (OSError, http.client.HTTPException) as failure:
        raise _Failure(failure, "send") from None
    try:
        answer = connection.getresponse()
    except (OSError, http.client.HTTPException) as failure:
        raise _Failure(failure, "wait") from None
    try:
        body = _read_body(connection, answer, urlsplit(url).path)
    except (OSError, http.client.HTTPException) as failure:
        raise _Failure(failure, "read") from None
    if answer.will_close:
        connection.close()
    return Response(answer.status, answer.reason, answer.headers, body, url)


def _read_body(connection, answer, route: str) -> bytes:
    declared = answer.getheader("Content-Length")
    # A 304 (or 204) has no body whatever its Content-Length says.
    if answer.status in (204, 304) or not (declared and declared.isascii() and declared.isdigit()):
        declared = None
    if declared and int(declared) > MAX_ANSWER_BYTES:
        connection.close()
        raise _too_large(answer.status, int(declared))
    body = answer.read(int(declared)) if declared else _read_undeclared(connection, answer)
    if declared and len(body) < int(declared):
        # read(amount) returns what arrived before the connection closed, without complaint.
        raise http.client.IncompleteRead(body, int(declared) - len(body))
    encoding = (answer.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding == "gzip" and body:
        return _inflate(body, answer.status, route)
    if encoding not in ("identity", "gzip"):
        raise unreadable(answer.status, route, f"an answer encoded as {encoding!r}, which was not asked for")
    return body


def _read_undeclared(connection, answer) -> bytes:
    """A body of unknown length, in pieces, refused once past the limit. One read of the whole
    limit would first allocate all 32 MiB of it, on Python 3.9, for every answer."""
    pieces, size = [], 0
    while True:
        piece = answer.read(READ_PIECE)
        if not piece:
            return b"".join(pieces)
        size += len(piece)
        if size > MAX_ANSWER_BYTES:
            connection.close()
            raise _too_large(answer.status, size)
        pieces.append(piece)


def _inflate(compressed: bytes, status: int, route: str) -> bytes:
    """A gzip body, held to the same size limit once inflated: a small bomb is refused whole."""
    inflated = b""
    while compressed:
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            inflated += decompressor.decompress(compressed, MAX_ANSWER_BYTES + 1 - len(inflated))
        except zlib.error:
            raise unreadable(status, route, "a gzip body that does not inflate") from None
        if len(inflated) > MAX_ANSWER_BYTES or decompressor.unconsumed_tail:
            raise _too_large(status, len(inflated), inflated=True)
        compressed = decompressor.unused_data  # the next gzip member, if the body holds several
    return inflated


def _redirect_target(response: Response, write: bool) -> str:
    location = (response.headers.get("Location") or "").strip()
    if not location:
        raise unreadable(response.status, response.route, f"a {response.status} redirect with no Location")
    try:
        target = urljoin(response.url, location)
        parse_origin("://".join(urlsplit(target)[:2]))
        target.encode("ascii")
    except (ValueError, ValidationError):
        raise unreadable(response.status, response.route,
                         f"a redirect to a malformed location {location!r}") from None
    if urlsplit(response.url).scheme == "https" and urlsplit(target).scheme != "https":
        raise ValidationError(f"refused a redirect from HTTPS down to {target}: the request was answered, "
                              "but nothing is sent over plain http", answered=True)
    if write:
        raise ValidationError(f"refused a redirect of a publish to {target}: following it "
                              "would resend the body and nonce to another URL", answered=True)
    return target


def _error_detail(response: Response) -> tuple:
    """The code and message of an error answer, or words for one that is not the portal's JSON."""
    try:
        detail = json.loads(response.body.decode("utf-8"))["error"]
        code, message = detail["code"], detail["message"]
    except (UnicodeDecodeError, ValueError, RecursionError, TypeError, KeyError):
        code = message = None
    if isinstance(code, str) and isinstance(message, str):
        return code, message
    kind = response.headers.get("Content-Type") or "no content type"
    return f"http_{response.status}", f"the portal answered {response.status} {response.reason} ({kind})"


def _dropped(sock) -> bool:
    """Whether the server has closed a kept-alive connection: an idle HTTP connection has
    nothing to read unless the server hung up or reset it."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _where(target: Origin, connection) -> str:
    where = f"{target.host}:{target.port}"
    if (connection.host, connection.port) != (target.host, target.port):
        where = f"the proxy {connection.host}:{connection.port} (for {where})"
    return where


def _after(attempts: int) -> str:
    return f" (after {attempts} attempts)" if attempts > 1 else ""


def _resume_at(now: float, seconds: float) -> str:
    shape = "%H:%M:%S UTC" if seconds < 12 * 3600 else "%Y-%m-%d %H:%M:%S UTC"
    try:
        return "; try again after " + time.strftime(shape, time.gmtime(now + seconds))
    except (OverflowError, OSError, ValueError):  # further off than the platform's clock reaches
        return "; try again much later"


def proxy_for(target: Origin) -> Optional[Origin]:
    """The proxy the environment names for this target (``https_proxy``, ``http_proxy``,
    ``no_proxy``), or None. Only plain-http proxies without credentials: the client sends no
    credentials anywhere, and reaches an HTTPS portal through the proxy's CONNECT tunnel."""
    # Here, not at the top: urllib.request costs more to import than a read command takes.
    from urllib.request import getproxies_environment, proxy_bypass_environment

    proxies = getproxies_environment()
    address = proxies.get(target.scheme)
    if not address or proxy_bypass_environment(target.host, proxies):
        return None
    if "://" not in address:
        address = f"http://{address}"
    try:
        parts = urlsplit(address)
        port = parts.port
    except ValueError:
        raise ValidationError(f"the {target.scheme}_proxy setting {address!r} has a bad port") from None
    if parts.username is not None or parts.password is not None:
        raise ValidationError(f"the {target.scheme}_proxy setting holds credentials, which the "
                              "client never sends", hint="use a proxy that needs none")
    if parts.scheme != "http" or not parts.hostname:
        raise ValidationError(f"the {target.scheme}_proxy setting {address!r} is not an http:// proxy")
    return Origin("http", parts.hostname, port or 80)


def _require_https(url: str) -> None:
    if not url.startswith("https://"):
        origin = url.split("/", 3)[:3]
        raise ValidationError(f"writes need HTTPS; the origin is {'/'.join(origin)}",
                              hint="use an https:// origin")


def _too_large(status: int, size: int, inflated: bool = False) -> ApiError:
    what = "once inflated " if inflated else ""
    return ApiError(status, "answer_too_large",
                    f"the answer is {what}at least {size} bytes; the client reads at most {MAX_ANSWER_BYTES}")


def parse_retry_after(value: Optional[str], now: float) -> Optional[float]:
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
        return max(0.0, when.timestamp() - now)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None

"""The only module that talks to the network.

It owns the origin rule, the headers, the size limits, HTTPS for writes, redirects, retries,
timeouts and connection reuse, so that every request the client makes obeys them all.
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import ssl
import sys
import time
from dataclasses import dataclass
from typing import Callable, Optional
from urllib.parse import quote, urlencode, urljoin, urlsplit

from . import __version__
from .errors import ApiError, TransportError, ValidationError

MAX_BODY_BYTES = 2048
MAX_URL_BYTES = 8192
MAX_ANSWER_BYTES = 32 * 1024 * 1024
MAX_REDIRECTS = 5
MAX_RETRY_AFTER = 30.0
FIRST_BACKOFF = 0.5
RETRY_STATUSES = frozenset({429, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# Sent by no deliberate client: the portal reads them to spot embedded or cross-site requests,
# and credentials have no place in a request to a public portal with no accounts.
REFUSED_HEADERS = ("sec-fetch-", "cookie", "authorization", "proxy-authorization")


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
    for name in headers:
        lowered = str(name).strip().lower()
        if lowered.startswith(REFUSED_HEADERS):
            raise ValidationError(
                f"header {name.strip()!r} is refused: the client sends no Sec-Fetch-*, cookie or "
                "credential header (the portal refuses browser-like requests and has no accounts)")
    return dict(headers)


@dataclass
class Response:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes
    url: str

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        try:
            return json.loads(self.body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            kind = self.headers.get("Content-Type") or "no content type"
            what = "an empty body" if not self.body else f"a body that is not JSON ({kind})"
            raise ApiError(self.status, "malformed_answer",
                           f"the portal answered {self.status} with {what}") from None


class Transport:
    def __init__(self, origin: str, *, headers: Optional[dict] = None, timeout: float = 30.0,
                 retries: int = 3, ssl_context: Optional[ssl.SSLContext] = None,
                 sleep: Callable[[float], None] = time.sleep,
                 jitter: Callable[[], float] = random.random,
                 wall_clock: Callable[[], float] = time.time):
        self._connections: dict = {}
        self.origin = parse_origin(origin)
        self.timeout = timeout
        self.retries = retries
        self._ssl_context = ssl_context
        self._sleep = sleep
        self._jitter = jitter
        self._wall_clock = wall_clock
        self._headers = {
            "Accept": "application/json",
            "User-Agent": f"benchmarks-wiki/{__version__} python/{sys.version_info[0]}.{sys.version_info[1]}",
        }
        self._headers.update(check_headers(headers or {}))

    # -- building and checking a request -------------------------------------------------

    def build(self, path: str, params: Optional[dict] = None, *, write: bool = False) -> str:
        """The full URL of a request, refused here if it could never be sent."""
        query = urlencode({k: v for k, v in (params or {}).items() if v is not None}, quote_via=quote)
        url = f"{self.origin}{path}" + (f"?{query}" if query else "")
        size = len(url.encode("utf-8"))
        if size > MAX_URL_BYTES:
            raise ValidationError(f"the URL is {size} bytes; the limit is {MAX_URL_BYTES}",
                                  hint="shorten the body and link the long material")
        if write:
            _require_https(url)
            proxy_for(self.origin)  # a bad proxy setting is refused before a publish, and by a dry run
        return url

    # -- sending -------------------------------------------------------------------------

    def get(self, path: str, params: Optional[dict] = None, **options) -> Response:
        return self.fetch(self.build(path, params), **options)

    def fetch(self, url: str, *, write: bool = False, accept: Optional[str] = None,
              headers: Optional[dict] = None) -> Response:
        """Send one GET, retrying the identical request on the statuses and failures that allow it.

        A write is never redirected: following would resend its body and nonce elsewhere.
        """
        if write:
            _require_https(url)
        request_headers = dict(self._headers)
        if accept:
            request_headers["Accept"] = accept
        request_headers.update(headers or {})
        for _ in range(MAX_REDIRECTS + 1):
            response = self._send_with_retries(url, request_headers)
            if response.status not in REDIRECT_STATUSES:
                return response
            url = self._redirect_target(response, write)
        raise ApiError(response.status, "too_many_redirects",
                       f"more than {MAX_REDIRECTS} redirects, the last to {url}")

    def _redirect_target(self, response: Response, write: bool) -> str:
        location = response.headers.get("Location")
        if not location:
            raise ApiError(response.status, "malformed_answer",
                           f"the portal answered {response.status} with no Location")
        target = urljoin(response.url, location)
        downgrade = urlsplit(response.url).scheme == "https" and urlsplit(target).scheme != "https"
        if downgrade:
            refusal = ValidationError(
                f"refused a redirect from HTTPS down to {target}: the request was answered, "
                "but nothing is sent over plain http")
        elif write:
            refusal = ValidationError(f"refused a redirect of a publish to {target}: following it "
                                      "would resend the body and nonce to another URL")
        else:
            return target
        refusal.answered = True
        raise refusal

    def _send_with_retries(self, url: str, headers: dict) -> Response:
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                response = self._send(url, headers)
            except TransportError as error:
                if not error.retryable or attempt == attempts:
                    if attempt > 1:
                        error.message += f" (after {attempt} attempts)"
                    raise
                self._sleep(self._backoff(attempt))
                continue
            if 200 <= response.status < 400:
                return response
            error = self._error_from(response)
            if response.status not in RETRY_STATUSES:
                raise error
            if error.retry_after is not None and error.retry_after > MAX_RETRY_AFTER:
                resume = time.strftime("%H:%M:%S UTC", time.gmtime(self._wall_clock() + error.retry_after))
                error.hint = f"the portal asks to wait {error.retry_after:g} s; try again after {resume}"
                raise error
            if attempt == attempts:
                if attempt > 1:
                    error.message += f" (after {attempt} attempts)"
                error.hint = error.hint or "the portal is busy or unavailable; try again in a few minutes"
                raise error
            self._sleep(error.retry_after if error.retry_after is not None else self._backoff(attempt))
        raise AssertionError("unreachable")

    def _backoff(self, attempt: int) -> float:
        """Full jitter: a random wait up to a ceiling that doubles with each attempt."""
        return self._jitter() * FIRST_BACKOFF * 2 ** (attempt - 1)

    def _error_from(self, response: Response) -> ApiError:
        retry_after = parse_retry_after(response.headers.get("Retry-After"), self._wall_clock())
        try:
            detail = json.loads(response.body.decode("utf-8"))["error"]
            code, message = str(detail["code"]), str(detail["message"])
        except (UnicodeDecodeError, ValueError, TypeError, KeyError):
            kind = response.headers.get("Content-Type") or "no content type"
            code = f"http_{response.status}"
            message = f"the portal answered {response.status} {response.reason} ({kind})"
        return ApiError(response.status, code, message, retry_after=retry_after)

    def _send(self, url: str, headers: dict) -> Response:
        parts = urlsplit(url)
        target = parse_origin(f"{parts.scheme}://{parts.netloc}")
        path_qs = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection = self._connection(target)
        if target.scheme == "http" and (connection.host, connection.port) != (target.host, target.port):
            path_qs = url  # through a proxy, a plain-http request names its whole URL
        reused = connection.sock is not None
        try:
            return self._exchange(connection, url, path_qs, headers)
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if not reused:
                connection.close()
                raise self._network_error(target, connection, sys.exc_info()[1]) from None
        except (OSError, http.client.HTTPException) as failure:
            connection.close()
            raise self._network_error(target, connection, failure) from None
        # The server closed an idle keep-alive connection: resend once on a fresh one.
        connection.close()
        try:
            return self._exchange(connection, url, path_qs, headers)
        except (OSError, http.client.HTTPException) as failure:
            connection.close()
            raise self._network_error(target, connection, failure) from None

    def _exchange(self, connection, url: str, path_qs: str, headers: dict) -> Response:
        connection.request("GET", path_qs, headers=headers)
        answer = connection.getresponse()
        declared = answer.getheader("Content-Length")
        # A 304 (or 204) has no body whatever its Content-Length says, and neither does HEAD.
        if answer.status in (204, 304) or not (declared and declared.isascii() and declared.isdigit()):
            declared = None
        if declared and int(declared) > MAX_ANSWER_BYTES:
            connection.close()
            raise _too_large(answer.status, int(declared))
        body = answer.read(MAX_ANSWER_BYTES + 1)
        if len(body) > MAX_ANSWER_BYTES:
            connection.close()
            raise _too_large(answer.status, len(body))
        if declared and len(body) < int(declared):
            # read(amount) returns what arrived before the connection closed, without complaint.
            raise http.client.IncompleteRead(body, int(declared) - len(body))
        if answer.will_close:
            connection.close()
        return Response(answer.status, answer.reason, answer.headers, body, url)

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

    def _network_error(self, target: Origin, connection, failure: BaseException) -> TransportError:
        where = f"{target.host}:{target.port}"
        if (connection.host, connection.port) != (target.host, target.port):
            where = f"the proxy {connection.host}:{connection.port} (for {where})"
        retryable = True
        if isinstance(failure, ssl.SSLCertVerificationError):
            retryable = False
            error = TransportError(
                f"TLS certificate verification failed for {where}: {failure.verify_message}",
                hint="to trust another CA, set SSL_CERT_FILE to its PEM file")
        elif isinstance(failure, socket.gaierror):
            retryable = False
            error = TransportError(f"cannot resolve host {target.host}: {failure.strerror}",
                                   hint="check the origin and the network")
        elif isinstance(failure, (socket.timeout, TimeoutError)):
            retryable = False
            error = TransportError(f"no answer from {where} within {self.timeout:g} s",
                                   hint="try again, or raise --timeout")
        elif isinstance(failure, ConnectionRefusedError):
            error = TransportError(f"connection refused by {where}",
                                   hint="check the origin, or that the portal is running")
        elif isinstance(failure, ssl.SSLError):
            error = TransportError(f"TLS failed with {where}: {failure.reason or failure}")
        else:
            detail = str(failure) or type(failure).__name__
            error = TransportError(f"the connection to {where} failed: {detail}",
                                   hint="check the network and try again")
        error.retryable = retryable
        return error

    def close(self) -> None:
        for connection in self._connections.values():
            connection.close()
        self._connections.clear()

    def __del__(self) -> None:
        # The client documentation's own examples never close a Client.
        self.close()


def proxy_for(target: Origin) -> Optional[Origin]:
    """The proxy the environment names for this target (``https_proxy``, ``http_proxy``,
    ``no_proxy``), or None. Only plain-http proxies without credentials: the client sends no
    credentials anywhere, and reaches an HTTPS portal through the proxy's CONNECT tunnel."""
    from urllib.request import getproxies_environment, proxy_bypass_environment

    proxies = getproxies_environment()
    address = proxies.get(target.scheme)
    if not address or proxy_bypass_environment(target.host, proxies):
        return None
    if "://" not in address:
        address = f"http://{address}"
    parts = urlsplit(address)
    if parts.username is not None or parts.password is not None:
        raise ValidationError(f"the {target.scheme}_proxy setting holds credentials, which the "
                              "client never sends", hint="use a proxy that needs none")
    if parts.scheme != "http" or not parts.hostname:
        raise ValidationError(f"the {target.scheme}_proxy setting {address!r} is not an http:// proxy")
    try:
        return Origin("http", parts.hostname, parts.port or 80)
    except ValueError:
        raise ValidationError(f"the {target.scheme}_proxy setting {address!r} has a bad port") from None


def _require_https(url: str) -> None:
    if not url.startswith("https://"):
        origin = url.split("/", 3)[:3]
        raise ValidationError(f"writes need HTTPS; the origin is {'/'.join(origin)}",
                              hint="use an https:// origin")


def _too_large(status: int, size: int) -> ApiError:
    return ApiError(status, "answer_too_large",
                    f"the answer is at least {size} bytes; the client reads at most {MAX_ANSWER_BYTES}")


def parse_retry_after(value: Optional[str], now: float) -> Optional[float]:
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    import datetime
    import email.utils

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": the date is in UTC, not in local time
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - now)

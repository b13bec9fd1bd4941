"""Answers as the portal makes them before they are written, and their content coding."""

import gzip
import http
import json
import re

JSON_TYPE = "application/json; charset=utf-8"

# The error code of each status the portal may answer with: for its own refusals, those
# http.server makes by itself, and what a gateway in front of it would say.
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

# Media types whose 200 answers are compressed for a client that accepts gzip.
COMPRESSIBLE_TYPES = ("application/json", "text/html", "text/markdown")
# An RFC 9110 qvalue: 0 to 1 with at most three decimals.
_QVALUE_RE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\Z")


class Reply:
    """An answer to write: status, headers and body.

    ``body`` is bytes, or an iterable of bytes written piece by piece as it is made, after
    which the connection ends. ``length``, when given, is the Content-Length declared in
    place of the body's own; a body shorter than it also ends the connection.
    """

    __slots__ = ("status", "headers", "body", "length")

    def __init__(self, status, body=b"", headers=None, length=None):
        self.status = status
        self.body = body
        self.headers = list(headers or ())
        self.length = length


class Refusal(Exception):
    """Raised while routing a request to answer it with a JSON error."""

    def __init__(self, status, code, message, headers=None):
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, headers


def json_reply(status, obj, headers=None):
    body = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return Reply(status, body, [("Content-Type", JSON_TYPE)] + list(headers or ()))


def error_reply(status, code, message, headers=None):
    return json_reply(status, {"error": {"code": code, "message": message}}, headers)


def phrase(status):
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def accepts_gzip(headers):
    """Whether the request's ``Accept-Encoding`` (every one of them, as one list) lists
    ``gzip`` first with a quality above zero; a malformed quality refuses it."""
    listed = ",".join(value for name, value in headers if name.lower() == "accept-encoding")
    for entry in listed.split(","):
        coding, _, parameters = entry.partition(";")
        if coding.strip().lower() == "gzip":
            for parameter in parameters.split(";"):
                name, _, value = parameter.partition("=")
                if name.strip().lower() == "q":
                    return _QVALUE_RE.match(value.strip()) is not None and float(value) > 0
            return True
    return False


def gzip_reply(reply):
    """Compress a 200 answer's JSON, HTML or Markdown body in place, as a web server does
    for a client that accepts gzip; any other answer is left alone."""
    headers = {name.lower(): value for name, value in reply.headers}
    media_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if (reply.status != 200 or not reply.body or media_type not in COMPRESSIBLE_TYPES
            or "content-encoding" in headers):
        return reply
    reply.body = gzip.compress(reply.body, mtime=0)
    # The compressed bytes differ from the plain ones, so a strong validator turns weak.
    reply.headers = [(name, "W/" + value if name.lower() == "etag" and not value.startswith("W/") else value)
                     for name, value in reply.headers]
    reply.headers += [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
    return reply

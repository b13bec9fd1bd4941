"""Answers as the portal builds them before they are written."""

import http
import json

JSON_TYPE = "application/json; charset=utf-8"

DEFAULT_CODES = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    409: "conflict",
    413: "too_large",
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


class Reply:
    """An answer to write: status, headers and body, and how the writing goes wrong."""

    __slots__ = ("status", "headers", "body", "drop", "stall", "truncate", "flood")

    def __init__(self, status, body=b"", headers=None):
        self.status = status
        self.body = body
        self.headers = list(headers or ())
        # Close the connection without answering.
        self.drop = False
        # Seconds to hold the answer back.
        self.stall = 0.0
        # Declare the whole body but send half of it.
        self.truncate = False
        # Bytes of filler to stream instead (-1: without end), or None.
        self.flood = None

    @classmethod
    def dropped(cls):
        reply = cls(0)
        reply.drop = True
        return reply


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


def headers_get(headers, name, default=None):
    """Last value of a header in a list of (name, value) pairs, case-insensitively."""
    found = default
    lname = name.lower()
    for key, value in headers:
        if key.lower() == lname:
            found = value
    return found


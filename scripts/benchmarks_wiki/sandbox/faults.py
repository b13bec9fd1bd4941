"""Fault switches: queued misbehaviour that tests arm on a running portal.

:class:`FaultSwitches` is mixed into :class:`~benchmarks_wiki.sandbox.server.Portal`; it uses the
portal's ``_lock`` and ``origin``. Each switch queues ``times`` entries, used up one per
request (``drop_after_record`` only by successful publishes).
"""

import collections
import zlib

from .replies import DEFAULT_CODES, Reply, error_reply, phrase

# The queues, in the order a request meets them.
FAULT_NAMES = ("drop_before", "stall", "redirect", "fail", "raw", "drop_after", "fail_after",
               "truncate", "flood", "gzip_bomb")
# Bytes of filler compressed at a time when building a gzip bomb.
_FILLER_PIECE = 1 << 20


class Met:
    """The switches one request took from the queues (None for each it did not)."""

    __slots__ = ("drop_before", "stall", "redirect", "fail", "raw", "truncate", "flood",
                 "gzip_bomb")

    def __init__(self):
        for name in self.__slots__:
            setattr(self, name, None)


class FaultSwitches:
    """The fault switches of a portal, for it to mix in."""

    def _init_faults(self):
        self._faults = {name: collections.deque() for name in FAULT_NAMES}

    def clear_faults(self):
        """Disarm every pending fault switch."""
        with self._lock:
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
        with self._lock:
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
        with self._lock:
            self._faults[name].extend([entry] * times)

    def _take(self, name):
        queue = self._faults[name]
        return queue.popleft() if queue else None

    def _take_faults(self):
        """Take the switches a new request meets, under the lock: ``drop_before`` alone
        when armed; otherwise a stall, at most one of redirect, failure and raw answer,
        truncation, and at most one of flood and gzip bomb."""
        met = Met()
        met.drop_before = self._take("drop_before")
        if met.drop_before:
            return met
        met.stall = self._take("stall")
        met.redirect = self._take("redirect")
        met.fail = None if met.redirect else self._take("fail")
        met.raw = None if (met.redirect or met.fail) else self._take("raw")
        met.truncate = self._take("truncate")
        met.flood = self._take("flood")
        met.gzip_bomb = None if met.flood is not None else self._take("gzip_bomb")
        return met

    def _takeover_reply(self, met):
        """The flood or gzip bomb answer that replaces every other, or None."""
        if met.flood is not None:
            reply = Reply(200, b"", [("Content-Type", "application/json")])
            reply.flood = met.flood
            return reply
        if met.gzip_bomb is not None:
            return Reply(200, met.gzip_bomb, [("Content-Type", "application/json"),
                                              ("Content-Encoding", "gzip")])
        return None

    def _fault_reply(self, met, target):
        """The redirect, failure or raw answer a request met instead of its own, or None."""
        if met.redirect:
            location, status = met.redirect
            location = location.replace("{path_qs}", target)
            if "{origin}" in location:
                location = location.replace("{origin}", self.origin)
            return Reply(status, b"", [("Location", location)])
        if met.fail:
            status, retry_after, as_html, code = met.fail
            extra = [("Retry-After", str(retry_after))] if retry_after is not None else []
            if as_html:
                return Reply(status, proxy_page(status), [("Content-Type", "text/html")] + extra)
            return error_reply(status, code, "%d %s (fault injected by the sandbox)"
                               % (status, phrase(status)), extra)
        if met.raw:
            status, body, content_type, extra = met.raw
            head = [("Content-Type", content_type)] if content_type else []
            return Reply(status, body, head + list(extra.items()))
        return None


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
